/**
 * Host ownership on a shared gateway, the one rule (builders/host-ownership-rule.ts) and its
 * readers (components/global-ratelimit/host-ownership.ts, host-ownership-lookup.ts): a team's GlobalRateLimit may
 * turn the platform's defaults off only on hosts the platform assigns to its namespace
 * (PlatformRateLimit `teamHosts`); a route makes a host a team's only when the platform opts into
 * route-bound ownership, and then only a route bound to a Gateway that exists and serves that host.
 * Each refusal is checked for its field, its owner and its fix; each has a control with the same
 * arguments that passes (so a check that refuses everything fails the controls). The platform's
 * overrides go on every listener whatever `listenerPorts` says.
 */
import { expect } from "chai";
import { LimitUnit } from "../../builders/rule-args";
import { OwnershipView, ROUTE_BOUND_ANNOTATION, TEAM_HOSTS_ANNOTATION, hostOwners, switchRefusal, teamHostsOf } from "../../builders/host-ownership-rule";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { hostOwnershipProblems } from "../../components/global-ratelimit/host-ownership";
import { httpRoutesOf, ownershipViewOf, readOwnershipView, servingGatewaysOf } from "../../components/global-ratelimit/host-ownership-lookup";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { InputError } from "../../lib/problems";
import { ListenerLayout, listenerCalls, listenerModel } from "../../gateway-model/listener";
import { registerComponents } from "../../render/render";
import { GW, PLATFORM } from "./platform-fixtures";

const FILTER = "istio-system/platform-ratelimit-defaults";
const vs = (namespace: string, hosts: string[], gateways = ["istio-system/shared-gateway"]) => ({ namespace, name: `${namespace}-vs`, hosts, gateways });
const ROUTES = [vs("team-a", ["a.example.com"]), vs("team-b", ["b.example.com"]), vs("team-c", ["c.example.com"], ["mesh"])];
/** The shared gateway serves a. and b.example.com (not d.example.com). */
const SHARED = { kind: "Gateway" as const, namespace: "istio-system", name: "shared-gateway", hosts: ["*/a.example.com", "*/b.example.com"] };

/** The platform assigns a.example.com to team a; b.example.com to no one. */
const VIEW: OwnershipView = {
    platform: { envoyFilter: FILTER, teamHosts: { "team-a": ["a.example.com"] } },
    virtualServices: ROUTES,
    gateways: [SHARED],
};
const ROUTE_BOUND: OwnershipView = { ...VIEW, platform: { ...VIEW.platform!, routeBound: true } };

describe("host ownership: the one rule (builders/host-ownership-rule.ts)", () => {
    it("by assignment only: team b's VirtualService binding b.example.com does not make it team b's", () => {
        expect(hostOwners("a.example.com", VIEW)).to.deep.equal({ namespaces: ["team-a"], by: "assignment" });
        expect(hostOwners("b.example.com", VIEW)).to.deep.equal({ namespaces: [], by: "none" });
        expect(switchRefusal("team-b", "b.example.com:8080", VIEW)!.reason).to.include("assigns b.example.com to no one");
    });

    it("route-bound ownership (opted into): a route bound to an existing Gateway serving the host makes it the route's namespace's", () => {
        expect(hostOwners("b.example.com", ROUTE_BOUND)).to.deep.equal({ namespaces: ["team-b"], by: "route" });
        expect(switchRefusal("team-b", "b.example.com:8080", ROUTE_BOUND)).to.equal(undefined);
        // The assignment still wins over a route.
        expect(hostOwners("a.example.com", { ...ROUTE_BOUND, virtualServices: [vs("team-b", ["a.example.com"])] }).namespaces).to.deep.equal(["team-a"]);
    });

    it("route-bound: a route to a Gateway that does not exist, to one that does not serve the host, or to mesh owns nothing", () => {
        const missing: OwnershipView = { ...ROUTE_BOUND, virtualServices: [vs("team-b", ["b.example.com"], ["istio-system/no-such-gateway"])] };
        expect(hostOwners("b.example.com", missing).by).to.equal("none");
        const notServed: OwnershipView = { ...ROUTE_BOUND, virtualServices: [vs("team-d", ["d.example.com"])] };
        expect(hostOwners("d.example.com", notServed).by).to.equal("none");
        expect(hostOwners("c.example.com", ROUTE_BOUND).by).to.equal("none");
        // Istio's `<namespace>/<host>`: a server for namespace team-x only does not serve team b's route.
        const onlyX: OwnershipView = { ...ROUTE_BOUND, gateways: [{ ...SHARED, hosts: ["team-x/b.example.com"] }] };
        expect(hostOwners("b.example.com", onlyX).by).to.equal("none");
    });

    it("a switch that names no virtual host (every host) is refused for every team, the assigned one included", () => {
        expect(switchRefusal("team-a", "", VIEW)!.reason).to.include("every host");
        expect(switchRefusal("team-a", "a.example.com:8080", VIEW)).to.equal(undefined);
    });

    it("team a on its own host: no problem (the control of the refusals below)", () => {
        expect(hostOwnershipProblems("team-a", ["a.example.com:8080"], VIEW)).to.deep.equal([]);
    });

    it("refuses team b switching the defaults off on a host assigned to team a, naming the owner and the fix", () => {
        const ps = hostOwnershipProblems("team-b", ["b.example.com:8080", "a.example.com:8080"], ROUTE_BOUND);
        expect(ps.map((p) => p.key)).to.deep.equal(["gateway.virtualHosts[1]"]);
        expect(ps[0]!.problem).to.include("assigns a.example.com to namespace team-a").and.include(FILTER);
        expect(ps[0]!.fix).to.include('platformDefaults: "merge"').and.include("remove a.example.com:8080");
    });

    it("refuses a host assigned to no one, the fix naming teamHosts", () => {
        const ps = hostOwnershipProblems("team-a", ["b.example.com:8080"], VIEW);
        expect(ps).to.have.length(1);
        expect(ps[0]!.fix).to.include("assign b.example.com to team-a").and.include("teamHosts");
    });

    it("no platform defaults on the gateway: nothing to switch off, nothing refused (the same arguments are refused with one)", () => {
        expect(hostOwnershipProblems("team-a", ["b.example.com:8080"], { virtualServices: ROUTES })).to.deep.equal([]);
        expect(hostOwnershipProblems("team-a", ["b.example.com:8080"], VIEW)).to.have.length(1);
    });

    it("reads the assignments back from the annotation; anything unreadable is no assignment", () => {
        expect(teamHostsOf('{"team-a":["a.example.com",3]}')).to.deep.equal({ "team-a": ["a.example.com"] });
        expect(teamHostsOf("not json")).to.deep.equal({});
        expect(teamHostsOf(undefined)).to.deep.equal({});
    });

    it("reads kubectl's JSON: the filter's annotations (assignments, route-bound opt-in) and every VirtualService", () => {
        const filter = {
            metadata: {
                namespace: "istio-system",
                name: "platform-ratelimit-defaults",
                annotations: { [TEAM_HOSTS_ANNOTATION]: '{"team-b":["b.example.com"]}', [ROUTE_BOUND_ANNOTATION]: "true" },
            },
        };
        const view = ownershipViewOf(filter, [{ metadata: { namespace: "team-b", name: "b" }, spec: { hosts: ["b.example.com"], gateways: ["gw"] } }]);
        expect(view).to.deep.equal({
            platform: { envoyFilter: FILTER, teamHosts: { "team-b": ["b.example.com"] }, routeBound: true },
            virtualServices: [{ namespace: "team-b", name: "b", hosts: ["b.example.com"], gateways: ["gw"] }],
        });
        expect(ownershipViewOf(undefined, []).platform).to.equal(undefined);
    });

    it("route-bound: a Gateway API HTTPRoute's hostnames are bound when its parent Gateway exists and lists the hostname", () => {
        const routes = httpRoutesOf([
            { metadata: { namespace: "team-b", name: "r" }, spec: { hostnames: ["b.example.com"], parentRefs: [{ name: "shared", namespace: "gw" }] } },
            { metadata: { namespace: "team-c", name: "r" }, spec: { hostnames: ["c.example.com"] } },
        ]);
        const gateways = servingGatewaysOf([], [{ metadata: { namespace: "gw", name: "shared" }, spec: { listeners: [{ hostname: "*.example.com" }] } }]);
        const view: OwnershipView = { platform: ROUTE_BOUND.platform, virtualServices: routes, gateways };
        expect(hostOwners("b.example.com", view)).to.deep.equal({ namespaces: ["team-b"], by: "route" });
        expect(hostOwners("c.example.com", view).by).to.equal("none");
        expect(hostOwners("b.example.com", { ...view, gateways: [] }).by).to.equal("none");
    });

    it("under Pulumi's mocks there is no cluster: not read (no kubectl call, no warning)", async function () {
        this.timeout(30_000);
        const warnings: string[] = [];
        let view: OwnershipView | undefined = { virtualServices: [] };
        await registerComponents(() => {
            view = readOwnershipView("istio-system", (m) => warnings.push(m));
        }, "ownership-mocks");
        expect(view).to.equal(undefined);
        expect(warnings).to.deep.equal([]);
    });
});

describe("host ownership: GlobalRateLimit refuses at preview, before anything is registered", () => {
    const team = (virtualHosts: string[], extra: Partial<GlobalRateLimitArgs> = {}): GlobalRateLimitArgs => ({
        domain: "team-a",
        gateway: { ...GW, virtualHosts },
        namespace: "team-a",
        rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
        ...extra,
    });
    const build = async (args: GlobalRateLimitArgs, stack: string) => {
        let err: Error | undefined;
        const { all } = await registerComponents(() => {
            try {
                new GlobalRateLimit("team-a", args, { hostOwnership: VIEW });
            } catch (e) {
                err = e as Error;
            }
        }, stack);
        return { all, err };
    };

    it("the issue's rogue team: a rule that matches nothing and team b's host in virtualHosts is refused, nothing registered", async function () {
        this.timeout(30_000);
        const { all, err } = await build(team(["b.example.com:8080"]), "own-refused");
        expect(all).to.deep.equal([]);
        expect(err).to.be.instanceOf(InputError);
        expect(err!.message).to.include("gateway.virtualHosts[0]").and.include("assigns b.example.com to no one");
    });

    it("control: the same team on its own host deploys; with platformDefaults merge it may name team b's host (nothing switched off)", async function () {
        this.timeout(30_000);
        const own = await build(team(["a.example.com:8080"]), "own-ok");
        expect(own.err).to.equal(undefined);
        expect(own.all.length).to.be.above(0);
        const merged = await build(team(["b.example.com:8080"], { platformDefaults: "merge" }), "own-merge");
        expect(merged.err).to.equal(undefined);
    });

    it("allVirtualHosts: team b's host listed beside it is refused; without a list nothing is switched off, so nothing is refused", async function () {
        this.timeout(30_000);
        const listed = await build(
            team(["b.example.com:8080"], { gateway: { ...GW, allVirtualHosts: true, virtualHosts: ["b.example.com:8080"] } }),
            "all-listed",
        );
        expect(listed.err).to.be.instanceOf(InputError);
        const bare = await build(team([], { gateway: { ...GW, allVirtualHosts: true } }), "all-bare");
        expect(bare.err).to.equal(undefined);
        const text = JSON.stringify(bare.all.map((r) => r.inputs));
        expect(text).to.not.include("platform-defaults");
    });
});

describe("PlatformRateLimit: teamHosts and the overrides on every listener", () => {
    it("writes the assignments on the defaults EnvoyFilter only", () => {
        const plan = planPlatformRateLimit({ ...PLATFORM, teamHosts: { "team-b": ["b.example.com"] } });
        expect(plan.problems).to.deep.equal([]);
        const byName = Object.fromEntries(plan.filters.map((f) => [f.name, f.annotations]));
        expect(teamHostsOf(byName["platform-ratelimit-defaults"]?.[TEAM_HOSTS_ANNOTATION])).to.deep.equal({ "team-b": ["b.example.com"] });
        expect(byName["platform-ratelimit-overrides"]).to.equal(undefined);
    });

    const refused: [string, unknown, string][] = [
        ["a list instead of an object", ["b.example.com"], "teamHosts"],
        ["a namespace that is no DNS label", { Team_B: ["b.example.com"] }, "teamHosts.Team_B"],
        ["a host that is no Gateway host", { "team-b": ["b.example.com:80"] }, "teamHosts.team-b[0]"],
        ["one host under two namespaces", { "team-a": ["b.example.com"], "team-b": ["b.example.com"] }, "teamHosts.team-b[0]"],
    ];
    for (const [what, teamHosts, key] of refused) {
        it(`refuses ${what}, under ${key}`, () => {
            const plan = planPlatformRateLimit({ ...PLATFORM, teamHosts } as PlatformRateLimitArgs);
            expect(plan.problems.map((p) => p.key)).to.deep.equal([key]);
            expect(plan.problems[0]!.fix).to.match(/give|keep|use/);
        });
    }

    it("listenerPorts [8080]: the defaults on 8080 only, the overrides on every listener (no port match), so a team's 8443 meets them", () => {
        const plan = planPlatformRateLimit({ ...PLATFORM, gateway: { ...GW, listenerPorts: [8080] } });
        const ports = (name: string) => plan.filters.find((f) => f.name === name)!.spec.configPatches.map((p: any) => p.match?.listener?.portNumber);
        expect(ports("platform-ratelimit-defaults")).to.deep.equal([8080]);
        expect(ports("platform-ratelimit-overrides")).to.deep.equal([undefined]);
    });
});

describe("PlatformRateLimit: each filter's failure mode and timeout", () => {
    const call = (args: PlatformRateLimitArgs, name: string) => {
        const plan = planPlatformRateLimit(args);
        expect(plan.problems).to.deep.equal([]);
        const c = (plan.filters.find((f) => f.name === name)!.spec.configPatches[0] as any).patch.value.typed_config;
        return { failureModeDeny: c.failure_mode_deny, timeout: c.timeout };
    };

    it("by default both fail open and wait 50 ms, not 10 s (a slow platform is every team's latency)", () => {
        expect(call(PLATFORM, "platform-ratelimit-overrides")).to.deep.equal({ failureModeDeny: false, timeout: "1s" });
        expect(call(PLATFORM, "platform-ratelimit-defaults")).to.deep.equal({ failureModeDeny: false, timeout: "1s" });
    });

    it("filters.overrides fails closed with its own timeout while the defaults keep the component's (control: the defaults filter unchanged)", () => {
        const args = { ...PLATFORM, timeout: "0.2s", filters: { overrides: { failureModeDeny: true, timeout: "0.02s" } } };
        expect(call(args, "platform-ratelimit-overrides")).to.deep.equal({ failureModeDeny: true, timeout: "0.02s" });
        expect(call(args, "platform-ratelimit-defaults")).to.deep.equal({ failureModeDeny: false, timeout: "0.2s" });
    });

    it("the service's Redis timeout does not follow the gateway's 50 ms (25 ms crashed the service at start under load): it is 2 s", () => {
        expect(planPlatformRateLimit(PLATFORM).service.ratelimit.redisTimeout).to.equal("2000ms");
    });

    const refused: [string, unknown, string][] = [
        ["a timeout that is no protobuf duration", { defaults: { timeout: "50ms" } }, "filters.defaults.timeout"],
        ["a failure mode that is no boolean", { overrides: { failureModeDeny: "yes" } }, "filters.overrides.failureModeDeny"],
        ["a misspelt filter", { override: {} }, "filters.override"],
    ];
    for (const [what, filters, key] of refused) {
        it(`refuses ${what}, under ${key}`, () => {
            const plan = planPlatformRateLimit({ ...PLATFORM, filters } as PlatformRateLimitArgs);
            expect(plan.problems.map((p) => p.key)).to.deep.equal([key]);
        });
    }
});

describe("PlatformRateLimit: a team's Gateway on 8443 meets the overrides (gateway MODEL, listenerPorts [8080])", () => {
    const objects = (args: PlatformRateLimitArgs) =>
        planPlatformRateLimit(args).filters.map((f) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: f.namespace },
            spec: f.spec,
        }));
    const on8443: ListenerLayout = {
        port: 8443,
        podLabels: { istio: "ingressgateway" },
        namespace: "istio-system",
        virtualHosts: [{ name: "c.example.com:8443", routes: ["web"] }],
    };
    const filterNames = (args: PlatformRateLimitArgs) => listenerModel(objects(args), on8443).filters.map((f) => f.name);

    it("on listener 8443 the overrides filter is in the chain (and sends its descriptor); the defaults stay on 8080", () => {
        const args = { ...PLATFORM, gateway: { ...GW, listenerPorts: [8080] } };
        expect(filterNames(args)).to.deep.equal(["envoy.filters.http.ratelimit.platform-overrides"]);
        const calls = listenerCalls(listenerModel(objects(args), on8443), {
            virtualHost: "c.example.com:8443",
            route: "web",
            path: "/",
            clientAddress: "203.0.113.7",
        });
        expect(calls[0]!.descriptors.map((d) => d.map((e) => `${e.key}=${e.value}`).join("/"))).to.deep.equal([
            "platform_override=per-client-ceiling/masked_remote_address=203.0.113.7/32",
        ]);
    });

    it("negative control: an overrides filter matched on port 8080 (as before this release) is not on 8443", () => {
        const old = objects({ ...PLATFORM, gateway: { ...GW, listenerPorts: [8080] } });
        for (const o of old) for (const p of (o.spec as any).configPatches) p.match.listener = { ...p.match.listener, portNumber: 8080 };
        expect(listenerModel(old, on8443).filters).to.deep.equal([]);
    });
});
