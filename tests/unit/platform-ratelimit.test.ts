/**
 * PlatformRateLimit (components/platform-ratelimit/component*.ts, builders/platform-filters.ts) and a team's
 * side of it in GlobalRateLimit (components/global-ratelimit/platform-defaults.ts): the plan's refused inputs, each
 * with its field and fix; the builders' output; the component under Pulumi's mocks. Expected names
 * and values are written from the doc comments and Envoy's API, not read from the code.
 */
import { expect } from "chai";
import { parse } from "yaml";
import { FilterLayout } from "../../builders/envoy-filters";
import { LimitUnit } from "../../builders/rule-args";
import { defaultsOffPatches, platformFilter, PlatformSource } from "../../builders/platform-filters";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { PlatformDefaults } from "../../components/global-ratelimit/platform-defaults";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { InputError, Problem } from "../../lib/problems";
import { registerComponents } from "../../render/render";
import { GW, PLATFORM } from "./platform-fixtures";

const M = LimitUnit.Minute;
const OVERRIDES_NAME = "envoy.filters.http.ratelimit.platform-overrides";
const DEFAULTS_NAME = "envoy.filters.http.ratelimit.platform-defaults";
const FILTER_CONFIG = "type.googleapis.com/envoy.config.route.v3.FilterConfig";

const keys = (ps: Problem[]) => ps.map((p) => p.key);
const httpValue = (spec: any) => spec.configPatches[0].patch.value;

describe("PlatformRateLimit: the builders (builders/platform-filters.ts)", () => {
    const o = {
        target: { selector: { istio: "ingressgateway" } },
        ports: [8080],
        failureModeDeny: false,
        timeout: "10s",
        clusterName: "outbound|8081||ratelimit-platform.platform.svc.cluster.local",
        authority: "ratelimit-platform.platform.svc.cluster.local",
        rateLimits: [{ actions: [{ generic_key: { descriptor_key: "platform_override", descriptor_value: "x" } }] }],
    };

    it("the overrides filter: its own name, the platform's domain, its descriptors in the filter's own rate_limits, applied before every team's (priority under 10)", () => {
        const spec = platformFilter(PlatformSource.Overrides, o);
        const v = httpValue(spec);
        expect(v.name).to.equal(OVERRIDES_NAME);
        expect(v.typed_config.domain).to.equal("mesh-ratelimit-platform");
        expect(v.typed_config.rate_limits).to.deep.equal(o.rateLimits);
        expect(v.typed_config.failure_mode_deny).to.equal(false);
        expect(spec.configPatches[0]!.match).to.deep.include({ context: "GATEWAY" });
        expect((spec.configPatches[0] as any).match.listener.portNumber).to.equal(8080);
        expect(spec.priority).to.be.below(10);
    });

    it("the defaults filter: its own name, applied after every team's filters (priority over the per-value side's 11)", () => {
        const spec = platformFilter(PlatformSource.Defaults, o);
        expect(httpValue(spec).name).to.equal(DEFAULTS_NAME);
        expect(spec.priority).to.be.above(11);
    });

    it("no listener port: one patch without a port (every listener of the gateway)", () => {
        const spec = platformFilter(PlatformSource.Defaults, { ...o, ports: [] });
        expect(spec.configPatches).to.have.length(1);
        expect((spec.configPatches[0] as any).match.listener.portNumber).to.equal(undefined);
    });

    it("a team's switch: FilterConfig { disabled: true } under the defaults filter's name and its pre-limit's, one VIRTUAL_HOST MERGE per virtual host", () => {
        const ps = defaultsOffPatches(["a.example.com:8080", "b.example.com:8080"]) as any[];
        expect(ps.map((p) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["a.example.com:8080", "b.example.com:8080"]);
        for (const p of ps) {
            expect(p.applyTo).to.equal("VIRTUAL_HOST");
            expect(p.patch).to.deep.equal({
                operation: "MERGE",
                value: {
                    typed_per_filter_config: {
                        [DEFAULTS_NAME]: { "@type": FILTER_CONFIG, disabled: true },
                        "envoy.filters.http.local_ratelimit.platform-defaults": { "@type": FILTER_CONFIG, disabled: true },
                    },
                },
            });
        }
    });
});

describe("PlatformRateLimit: the plan", () => {
    it("the issue's example plans without a problem: two EnvoyFilters, one service config under the platform's domain with one key per source", () => {
        const plan = planPlatformRateLimit(PLATFORM);
        expect(plan.problems).to.deep.equal([]);
        expect(plan.filters.map((f) => `${f.namespace}/${f.name}`)).to.deep.equal([
            "istio-system/platform-ratelimit-overrides",
            "istio-system/platform-ratelimit-defaults",
        ]);
        const cfg = parse(plan.configYaml);
        expect(cfg.domain).to.equal("mesh-ratelimit-platform");
        const top = cfg.descriptors.map((d: any) => `${d.key}=${d.value ?? "*"}`);
        expect(top).to.have.members(["platform_default=per-client", "platform_default_path=*", "platform_override=per-client-ceiling"]);
        expect(plan.grpcAddress).to.equal("ratelimit-platform.platform.svc.cluster.local:8081");
        expect(plan.service.ratelimit.configName).to.equal("ratelimit-platform-config");
    });

    it("fails open by default (every team's traffic crosses the platform's filters); failureModeDeny: true closes it", () => {
        const open = planPlatformRateLimit(PLATFORM);
        expect(open.filters.map((f) => httpValue(f.spec).typed_config.failure_mode_deny)).to.deep.equal([false, false]);
        const closed = planPlatformRateLimit({ ...PLATFORM, failureModeDeny: true });
        expect(closed.filters.map((f) => httpValue(f.spec).typed_config.failure_mode_deny)).to.deep.equal([true, true]);
    });

    it("only the sources given: overrides alone give one filter", () => {
        const plan = planPlatformRateLimit({ ...PLATFORM, defaults: undefined });
        expect(plan.problems).to.deep.equal([]);
        expect(plan.filters.map((f) => f.name)).to.deep.equal(["platform-ratelimit-overrides"]);
    });

    const refused: [string, Partial<PlatformRateLimitArgs>, string, RegExp][] = [
        ["no source", { defaults: undefined, overrides: undefined }, "defaults", /give defaults, overrides or both/],
        [
            "a rule on one route",
            { overrides: { rules: [{ name: "x", route: { name: "checkout" }, requestsPerUnit: 1, unit: M }] } },
            "overrides.rules[0].route",
            /remove route/,
        ],
        [
            "a per-path descriptor key",
            { defaults: { perPath: { descriptorKey: "PATH", eachPath: { requestsPerUnit: 1, unit: M } } } },
            "defaults.perPath.descriptorKey",
            /remove descriptorKey/,
        ],
        [
            "a limit over the service's uint32",
            { overrides: { rules: [{ name: "x", requestsPerUnit: 2 ** 32, unit: M }] } },
            "overrides.rules[0].requestsPerUnit",
            /./,
        ],
        [
            "one rule name in both sources",
            { defaults: { rules: [{ name: "same", requestsPerUnit: 1, unit: M }] }, overrides: { rules: [{ name: "same", requestsPerUnit: 2, unit: M }] } },
            "defaults.rules",
            /rename/,
        ],
        [
            "a virtual-host list (the platform covers every host)",
            { gateway: { ...GW, virtualHosts: ["a.example.com:80"] } as any },
            "gateway.virtualHosts",
            /remove virtualHosts/,
        ],
        ["a bad listener port", { gateway: { ...GW, listenerPorts: [0] } }, "gateway.listenerPorts[0]", /8081/],
        ["no gateway pods", { gateway: { namespace: "istio-system" } }, "gateway", /ingressgateway/],
        ["a bad namespace", { namespace: "Platform_NS" }, "namespace", /set namespace to "platform-ns"/],
        ["a bad timeout (the fix: the platform's default, not GlobalRateLimit's 10s)", { timeout: "ten seconds" }, "timeout", /"1s"/],
    ];
    for (const [what, change, key, fix] of refused) {
        it(`refuses ${what}, under ${key}, with a fix`, () => {
            const plan = planPlatformRateLimit({ ...PLATFORM, ...change } as PlatformRateLimitArgs);
            const p = plan.problems.find((x) => x.key === key || x.key.startsWith(`${key}.`));
            expect(p, `${key} in ${JSON.stringify(keys(plan.problems))}`).to.not.equal(undefined);
            expect(p!.fix).to.match(fix);
        });
    }

    it("nothing is registered when the arguments are refused: every problem in one error", async function () {
        this.timeout(30_000);
        const bad = {
            ...PLATFORM,
            namespace: "Bad_NS",
            overrides: { rules: [{ name: "x", route: { name: "r" }, requestsPerUnit: 1, unit: M }] },
        } as PlatformRateLimitArgs;
        let err: Error | undefined;
        const { all } = await registerComponents(() => {
            try {
                new PlatformRateLimit("platform", bad);
            } catch (e) {
                err = e as Error;
            }
        }, "platform-refused");
        expect(all).to.deep.equal([]);
        expect(err).to.be.instanceOf(InputError);
        expect(err!.message).to.match(/namespace[\s\S]*overrides\.rules\[0\]\.route/);
    });

    it("under mocks: the service, Redis, the two filters and the dashboard, each under its own name", async function () {
        this.timeout(30_000);
        let c: PlatformRateLimit | undefined;
        const { objects } = await registerComponents(() => {
            c = new PlatformRateLimit("platform", PLATFORM);
        }, "platform-ok");
        const names = objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
        expect(names).to.include.members([
            "EnvoyFilter istio-system/platform-ratelimit-overrides",
            "EnvoyFilter istio-system/platform-ratelimit-defaults",
            "ConfigMap platform/ratelimit-platform-config",
            "Deployment platform/ratelimit-platform",
            "Deployment platform/redis",
        ]);
        expect(names.some((n) => n.startsWith("ConfigMap ") && n.includes("dashboard"))).to.equal(true);
        expect(c!.httpFilterNames).to.deep.equal([OVERRIDES_NAME, DEFAULTS_NAME]);
    });
});

describe("GlobalRateLimit's side of a platform (components/global-ratelimit/platform-defaults.ts)", () => {
    const TEAM: GlobalRateLimitArgs = {
        domain: "team-a",
        gateway: { ...GW, virtualHosts: ["a.example.com:8080"] },
        namespace: "team-a",
        rules: [{ name: "everything", requestsPerUnit: 100, unit: M }],
    };
    const offPatches = (args: GlobalRateLimitArgs) =>
        planGlobalRateLimit(args)
            .filters.flatMap((f) => f.spec.configPatches)
            .filter((p: any) => p.patch?.value?.typed_per_filter_config?.[DEFAULTS_NAME]);

    it("by default its virtual hosts turn the platform's defaults off (replace), whether or not a platform exists", () => {
        const ps = offPatches(TEAM) as any[];
        expect(ps.map((p) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["a.example.com:8080"]);
        expect(ps[0].patch.value.typed_per_filter_config[DEFAULTS_NAME]).to.deep.equal({ "@type": FILTER_CONFIG, disabled: true });
    });

    it("platformDefaults: merge keeps them on (no switch); the shared layout (Istio 1.24) writes none", () => {
        expect(offPatches({ ...TEAM, platformDefaults: PlatformDefaults.Merge })).to.deep.equal([]);
        expect(offPatches({ ...TEAM, filterLayout: FilterLayout.Shared })).to.deep.equal([]);
    });

    it("allVirtualHosts: the defaults off only on the hosts it lists, never on every virtual host (the empty name)", () => {
        expect(offPatches({ ...TEAM, gateway: { ...GW, allVirtualHosts: true } })).to.deep.equal([]);
        const listed = offPatches({ ...TEAM, gateway: { ...GW, allVirtualHosts: true, virtualHosts: ["a.example.com:8080"] } }) as any[];
        expect(listed.map((p) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["a.example.com:8080"]);
    });

    it("nothing a team writes is put under the overrides filter's name, in any layout or mode", () => {
        for (const extra of [{}, { platformDefaults: PlatformDefaults.Merge }, { filterLayout: FilterLayout.Shared }]) {
            const text = JSON.stringify(planGlobalRateLimit({ ...TEAM, ...extra }).filters);
            expect(text).to.not.include("platform-overrides");
        }
    });

    const refused: [string, Partial<GlobalRateLimitArgs>, string, RegExp][] = [
        ["the platform's domain", { domain: "mesh-ratelimit-platform" }, "domain", /domain of your own/],
        [
            "the platform's EnvoyFilter names as filterNamePrefix",
            { filterNamePrefix: "platform-ratelimit-overrides" },
            "filterNamePrefix",
            /another filterNamePrefix/,
        ],
        [
            "a namespace and service name that derive the platform's EnvoyFilter names",
            { namespace: "platform", service: { name: "ratelimit-defaults" } },
            "namespace",
            /filterNamePrefix/,
        ],
        ["a platformDefaults value it does not know", { platformDefaults: "ignore" as PlatformDefaults }, "platformDefaults", /./],
    ];
    for (const [what, change, key, fix] of refused) {
        it(`refuses ${what} at preview, under ${key}`, () => {
            const plan = planGlobalRateLimit({ ...TEAM, ...change });
            const p = plan.problems.find((x) => x.key === key);
            expect(p, JSON.stringify(keys(plan.problems))).to.not.equal(undefined);
            expect(p!.fix).to.match(fix);
        });
    }
});

describe("PlatformRateLimit: its series on the dashboard", () => {
    it("a panel per limit, named by its source's key (platform_override, platform_default), its query selecting the source's counters", () => {
        const plan = planPlatformRateLimit(PLATFORM);
        const panels: any[] = JSON.parse(plan.monitoring.dashboard!.json).panels;
        const byTitle = (start: string) => panels.filter((p) => String(p.title).startsWith(start));
        expect(byTitle("platform_override=per-client-ceiling")).to.have.length(1);
        expect(byTitle("platform_default=per-client")).to.have.length(1);
        expect(byTitle("platform_default_path")).to.have.length(1);
        const expr = byTitle("platform_override=")[0]
            .targets.map((t: any) => t.expr)
            .join(" ");
        expect(expr).to.include('domain="mesh-ratelimit-platform"').and.include('key1="platform_override_per-client-ceiling"');
        expect(plan.monitoring.dashboard!.namespace).to.be.a("string");
    });
});
