/**
 * builders/counter-stores.ts and what the stack does with it: which counters go to the per-value
 * store, which fixed rules the per-path catch-all leaves out (and which it must keep), and the
 * hardening that comes with it (nothing of the service but gRPC published, no secret in a process's
 * arguments, ESP without a token and on a pinned image). Expected values are written from the
 * reasoning in the comments, not read back from the code.
 */
import { expect } from "chai";
import { compileFullMatch } from "../../lib/formats";
import { CounterStore, OTHER_PATHS_KEY, hasBothKinds, splitLimits } from "../../builders/counter-stores";
import { GlobalLimitsInput, LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { resolveCheckedLimits } from "../../components/global-ratelimit/limits-plan";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { explain, explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { render } from "./helpers";
import { shopObjects } from "./rules.test";

/** The split of limits as given (planned, so resolved, first), the filter's headers on unless said. */
const splitOf = (input: GlobalLimitsInput) => splitLimits(resolveCheckedLimits({ headersOn: true, ...input }));

const M = LimitUnit.Minute;
const each = { requestsPerUnit: 100, unit: M };

describe("counter stores: which counters a flood of new keys can reach", () => {
    it("fixed and per-value rules go to their sides; named paths stay fixed, the catch-all is per-value", () => {
        const rules: RateLimitRuleArgs[] = [
            { name: "search", path: { prefix: "/search" }, requestsPerUnit: 50, unit: M },
            { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 20, unit: M },
            { name: "per-client", perClientAddress: true, requestsPerUnit: 300, unit: M },
            { name: "lab", clientCidr: { cidr: "10.0.0.0/8", perAddress: true }, requestsPerUnit: 5, unit: M },
            { name: "office", clientCidr: { cidr: "10.0.0.0/8" }, requestsPerUnit: 5, unit: M },
        ];
        const s = splitOf({ rules, perPath: { paths: [{ path: "/productpage", requestsPerUnit: 1, unit: M }], eachPath: each } });
        const values = (d: { key: string; value?: string }[]) => d.map((x) => `${x.key}=${x.value ?? "*"}`);
        expect(values(s.fixed.configDescriptors)).to.deep.equal(["PATH=/productpage", "rule=search", "rule=office"]);
        expect(values(s.perValue.configDescriptors)).to.deep.equal(["rule=per-key", "rule=per-client", "rule=lab", `${OTHER_PATHS_KEY}=each`]);
    });

    it("the catch-all leaves out only the paths a fixed limit refuses first: a named path, a path-only rule with a window as long and a limit no higher", () => {
        const rules: RateLimitRuleArgs[] = [
            { name: "tight", path: { exact: "/a" }, requestsPerUnit: 2, unit: M },
            { name: "hourly", path: { exact: "/b" }, requestsPerUnit: 50, unit: LimitUnit.Hour },
            // Higher than the catch-all's 100: each /c path could pass 100 a minute only under the catch-all.
            { name: "loose", path: { exact: "/c" }, requestsPerUnit: 1000, unit: M },
            // A shorter window: 2 a second is 120 a minute, over the catch-all's 100.
            { name: "per-second", path: { exact: "/d" }, requestsPerUnit: 2, unit: LimitUnit.Second },
            // Shadow never refuses; a header condition does not cover every request of the path.
            { name: "observe", path: { exact: "/e" }, requestsPerUnit: 1, unit: M, shadow: true },
            { name: "with-header", path: { exact: "/f" }, header: { name: "x-plan", value: "free" }, requestsPerUnit: 1, unit: M },
            // Nor does a method or a query parameter; a cost may take nothing (0), so the rule may never refuse.
            { name: "posts", path: { exact: "/g" }, methods: ["POST"], requestsPerUnit: 1, unit: M },
            { name: "free-tier", path: { exact: "/h" }, query: { name: "tier", value: "free" }, requestsPerUnit: 1, unit: M },
            { name: "costed", path: { exact: "/i" }, cost: { fixed: 0 }, requestsPerUnit: 1, unit: M },
            // An option that changes no count keeps the rule path-only.
            { name: "hidden", path: { exact: "/j" }, rateLimitHeaders: false, perClientAddress: false, requestsPerUnit: 1, unit: M },
        ];
        const s = splitOf({ rules, perPath: { paths: [{ path: "/p", requestsPerUnit: 1, unit: M }], eachPath: each } });
        const [exclusion] = s.perValue.vhostRateLimits[0]!.actions as any[];
        expect(exclusion.header_value_match.expect_match).to.equal(false);
        const regex: string = exclusion.header_value_match.headers[0].safe_regex_match.regex;
        // Left out: those paths in any spelling; every other path meets the catch-all.
        const excluded = compileFullMatch(regex);
        for (const p of ["/p", "/a", "/b", "/j", "/P", "/a/", "/j;x"]) expect(excluded.test(p), p).to.equal(true);
        for (const p of ["/c", "/d", "/e", "/f", "/g", "/h", "/i", "/C", "/q"]) expect(excluded.test(p), p).to.equal(false);
    });

    it("a GET to a path whose fixed rule counts only POSTs still meets the catch-all in the split layout, as with one store (model)", () => {
        const rules: RateLimitRuleArgs[] = [{ name: "posts", path: { exact: "/x" }, methods: ["POST"], requestsPerUnit: 1, unit: M }];
        const limitsOf = (counterStore: CounterStore) =>
            explainWith(gatewayModel(shopObjects(rules, { perPath: { eachPath: each }, counterStore })), "/x")
                .descriptors.filter((d) => d.limit !== undefined)
                .map((d) => d.limit!.entry);
        expect(limitsOf(CounterStore.Single)).to.deep.equal(["PATH (catch-all)"]);
        expect(limitsOf(CounterStore.Split)).to.deep.equal(["PATH (catch-all)"]);
    });

    it("a fixed rule on a route is left out of the catch-all on that route only; the route's per-value list replaces the virtual host's", () => {
        const rules: RateLimitRuleArgs[] = [{ name: "api", path: { regex: "/api/[0-9]+" }, route: { name: "api" }, requestsPerUnit: 2, unit: M }];
        const s = splitOf({ rules, perPath: { eachPath: each } });
        const regexOf = (e: any) => e.actions[0].header_value_match?.headers[0].safe_regex_match.regex;
        // Nothing named on the virtual host: its catch-all entry has the (always present) scope entry only.
        expect(s.perValue.vhostRateLimits[0]!.actions[0]).to.deep.equal({ generic_key: { descriptor_key: OTHER_PATHS_KEY, descriptor_value: "each" } });
        expect(s.perValue.routePatches).to.have.length(1);
        expect(regexOf(s.perValue.routePatches[0]!.rateLimits[0])).to.equal("(?:(?:/api/[0-9]+)(?:\\?.*)?)");
    });

    it("both kinds are needed for a second store; CounterStore.Single keeps one service", () => {
        expect(hasBothKinds({ perPath: { eachPath: each } })).to.equal(false);
        expect(hasBothKinds({ rules: [{ name: "a", requestsPerUnit: 1, unit: M }] })).to.equal(false);
        expect(hasBothKinds({ rules: [{ name: "a", requestsPerUnit: 1, unit: M }], perPath: { eachPath: each } })).to.equal(true);
        const args = (counterStore?: CounterStore) => ({
            domain: "shop",
            gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] },
            namespace: "shop",
            rules: [
                { name: "a", path: { exact: "/a" }, requestsPerUnit: 1, unit: M },
                { name: "k", header: { name: "x-k", perValue: true }, requestsPerUnit: 1, unit: M },
            ],
            ...(counterStore ? { counterStore } : {}),
        });
        expect(planGlobalRateLimit(args()).perValue?.service.ratelimit.serviceName).to.equal("ratelimit-per-value");
        expect(planGlobalRateLimit(args(CounterStore.Single)).perValue).to.equal(undefined);
        expect(planGlobalRateLimit({ ...args(), counterStore: "both" as never }).problems.map((p) => p.key)).to.deep.equal(["counterStore"]);
    });

    it("a request matching a fixed and a per-value rule calls the fixed service first; the per-value filter comes after it on the listener (priority 11)", () => {
        const m = gatewayModel(
            shopObjects([
                { name: "a", path: { exact: "/a" }, requestsPerUnit: 1, unit: M },
                { name: "k", perClientAddress: true, requestsPerUnit: 9, unit: M },
            ]),
        );
        const x = explainWith(m, "/a");
        expect(x.calls.map((c) => c.service)).to.deep.equal([
            "outbound|8081||ratelimit.shop.svc.cluster.local",
            "outbound|8081||ratelimit-per-value.shop.svc.cluster.local",
        ]);
    });
});

describe("per-path counters: a path longer than the bound is counted per client, not per path (gateway MODEL, rendered stack)", function () {
    this.timeout(60_000);
    const long = (n: number, i = 0) => `/static/${i}/${"x".repeat(n - `/static/${i}/`.length)}`;
    /** The entries of the descriptor that meets a limit, for the catch-all's two entries (the path's, the long path's). */
    const limited = (objs: Parameters<typeof explain>[0], p: string, clientAddress = "192.0.2.1") =>
        explain(objs, p, { clientAddress })
            .descriptors.filter((d) => d.limit !== undefined && d.entries[0]?.key === "other_paths")
            .map((d) =>
                d.entries
                    .slice(1)
                    .map((e) => `${e.key}=${e.value}`)
                    .join(","),
            );

    it("1,024 bytes: its own counter; 1,025 and 60,000 bytes: the long-path counter of the client (/32, /64), at the catch-all's limit", async () => {
        const objs = (await render()).objects;
        expect(limited(objs, long(1024))).to.deep.equal([`PATH=${long(1024)}`]);
        expect(limited(objs, `${long(1024)}?q=${"a".repeat(5000)}`), "the query does not count").to.deep.equal([`PATH=${long(1024)}`]);
        for (const p of [long(1025), long(1025, 7), long(60_000)])
            expect(limited(objs, p), `${p.length} bytes`).to.deep.equal(["long_path=over-1024-bytes,masked_remote_address=192.0.2.1/32"]);
        expect(limited(objs, long(5000), "2001:db8:7:8::1")).to.deep.equal(["long_path=over-1024-bytes,masked_remote_address=2001:db8:7:8::/64"]);
        const d = explain(objs, long(5000), { clientAddress: "192.0.2.1" }).descriptors.find((x) => x.entries.some((e) => e.key === "long_path"));
        expect(d!.limit?.requests, "at the catch-all's limit").to.equal(100);
    });

    it("negative control: one store (counterStore single, the specification's action) counts each long path apart", async () => {
        const objs = (await render({ overrides: { counterStore: "single" } })).objects;
        const buckets = new Set([1, 2, 3].map((i) => explain(objs, long(5000, i)).descriptors[0]!.bucket));
        expect(buckets.size).to.equal(3);
    });
});

describe("hardening of the rate-limit service, Redis and ESP (the rendered stack)", function () {
    this.timeout(120_000);

    it("no container's command or arguments hold a secret: no $(VAR) of a variable read from a Secret, no redis-cli -a (every variant, profile and Redis mode)", async () => {
        let containers = 0;
        for (const [variant, apiProfile, overrides] of [
            ["A", "current", {}],
            ["B", "seed", {}],
            ["A", "current", { redisPasswordSecret: "team-redis" }],
            ["A", "current", { redisMode: "external", redisAddress: "cache:6379", redisPasswordSecret: "cache-auth" }],
        ] as const) {
            const r = await render({ variant, apiProfile, overrides });
            for (const d of r.objects.filter((o) => o.kind === "Deployment")) {
                for (const c of [...(d.spec.template.spec.containers ?? []), ...(d.spec.template.spec.initContainers ?? [])]) {
                    containers++;
                    const secretVars = (c.env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.name);
                    const argv = [
                        ...(c.command ?? []),
                        ...(c.args ?? []),
                        ...(c.readinessProbe?.exec?.command ?? []),
                        ...(c.livenessProbe?.exec?.command ?? []),
                    ].join(" ");
                    for (const v of secretVars) expect(argv, `${d.metadata.name}/${c.name}`).to.not.contain(`$(${v})`);
                    expect(argv, `${d.metadata.name}/${c.name}`).to.not.match(/redis-cli[^|]* -a /);
                }
            }
        }
        expect(containers).to.be.greaterThan(20);
    });

    it("negative control: the arguments as rendered before (--requirepass $(REDIS_PASSWORD)) are what the check above refuses", () => {
        const before = {
            env: [{ name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: "redis-auth", key: "password" } } }],
            args: ["--requirepass", "$(REDIS_PASSWORD)"],
        };
        const argv = before.args.join(" ");
        expect(before.env.some((e) => argv.includes(`$(${e.name})`))).to.equal(true);
    });

    it("ESP: no ServiceAccount token in its pod and an image pinned to a release (not a floating major tag)", async () => {
        const r = await render();
        const esp = r.get("Deployment", "esp-echo", "default").spec.template.spec;
        expect(esp.automountServiceAccountToken).to.equal(false);
        const image: string = esp.containers.find((c: any) => c.name === "esp").image;
        expect(image).to.match(/^gcr\.io\/endpoints-release\/endpoints-runtime:1\.\d+\.\d+$/);
    });

    it("the policies are registered before the pods they guard (created first, the Deployments depend on them)", async () => {
        const order: string[] = [];
        await render({ onRegister: (reg) => order.push(`${reg.type.split("/").pop()}/${(reg.inputs.metadata as any)?.name ?? reg.name}`) });
        const first = (prefix: string) => order.findIndex((o) => o.startsWith(prefix));
        for (const [policy, deployment] of [
            ["v1:AuthorizationPolicy/ratelimit-from-gateway", "v1:Deployment/ratelimit"],
            ["v1:NetworkPolicy/redis-from-ratelimit", "v1:Deployment/redis"],
            ["v1:AuthorizationPolicy/ratelimit-per-value-from-gateway", "v1:Deployment/ratelimit-per-value"],
        ]) {
            expect(first(policy), policy).to.be.greaterThan(-1);
            expect(first(policy), `${policy} before ${deployment}`).to.be.lessThan(first(deployment));
        }
    });
});
