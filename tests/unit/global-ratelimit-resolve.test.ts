/**
 * GlobalRateLimit resolved once (components/global-ratelimit/resolve.ts): problems or a frozen value
 * with every default filled in and every name derived; the caller's arguments left alone; the plan
 * built from that value. Expected values are written from the doc comments.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { PathKeyMode } from "../../builders/rule-args";
import { buildGlobalRateLimit, planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { resolveGlobalRateLimit, resolveWithFallbacks } from "../../components/global-ratelimit/resolve";
import { G, M } from "./global-ratelimit-fixtures";

describe("GlobalRateLimit resolved once (resolveGlobalRateLimit)", () => {
    it("fills in every default and derives every name once", () => {
        const { problems, value } = resolveGlobalRateLimit(G());
        expect(problems).to.deep.equal([]);
        const r = value!;
        expect([r.namespace, r.name, r.layout, r.perInstance, r.prefix, r.pathKey]).to.deep.equal([
            "default",
            "ratelimit",
            FilterLayout.PerInstance,
            true,
            "default-ratelimit",
            PathKeyMode.UrlPath,
        ]);
        // The declared timeout on the filter's call; the service's Redis timeout is its dial bound (2 s: a lost SYN is resent after 1 s).
        expect([r.call.timeout, r.service.ratelimit.redisTimeout]).to.deep.equal(["10s", "2000ms"]);
        expect(r.endpoint).to.deep.equal({
            host: "ratelimit.default.svc.cluster.local",
            grpcAddress: "ratelimit.default.svc.cluster.local:8081",
            clusterName: "outbound|8081||ratelimit.default.svc.cluster.local",
        });
        expect(r.filterNames).to.deep.equal({
            global: "envoy.filters.http.ratelimit/default/ratelimit",
            local: "envoy.filters.http.local_ratelimit/default/ratelimit",
            cost: "envoy.filters.http.header_to_metadata/default/ratelimit",
        });
        expect(r.vhostNames).to.deep.equal(["shop.example.com:80"]);
    });

    it("a given timeout goes on the filter's call; the service's Redis timeout (its dial bound) does not follow it", () => {
        const r = resolveGlobalRateLimit(G({ timeout: "0.25s" })).value!;
        expect(r.call.timeout).to.equal("0.25s");
        expect(r.service.ratelimit.redisTimeout).to.equal(planGlobalRateLimit(G({ timeout: "0.25s" })).service.ratelimit.redisTimeout);
        expect(r.service.ratelimit.redisTimeout).to.equal(resolveGlobalRateLimit(G()).value!.service.ratelimit.redisTimeout);
    });

    it("a shared layout names the filters without the instance, and its prefix is the shared one", () => {
        const r = resolveGlobalRateLimit(G({ filterLayout: FilterLayout.Shared })).value!;
        expect([r.prefix, r.filterNames.global, r.perInstance]).to.deep.equal(["filter-ratelimit", "envoy.filters.http.ratelimit", false]);
    });

    it("returns problems under their property paths and no value", () => {
        const out = resolveGlobalRateLimit(G({ timeout: "1m", namespace: "Bad_NS" }));
        expect(out.value).to.equal(undefined);
        expect(out.problems.map((p) => p.key)).to.include.members(["timeout", "namespace"]);
        // The plan builds from the same resolution (its fallbacks), so it reports the very same problems.
        const words = (ps: typeof out.problems) => ps.map((p) => [p.key, p.value, p.problem, p.fix]);
        expect(words(planGlobalRateLimit(G({ timeout: "1m", namespace: "Bad_NS" })).problems)).to.deep.equal(words(out.problems));
    });

    it("is read-only all the way down, and leaves the caller's arguments alone", () => {
        const args = G();
        const r = resolveGlobalRateLimit(args).value!;
        for (const part of [r, r.service, r.service.ratelimit, r.call, r.filterNames, r.limits.rules, r.limits.rules[0], r.gateway, r.compiled])
            expect(Object.isFrozen(part)).to.equal(true);
        expect(() => ((r.service.ratelimit as { replicas: number }).replicas = 9)).to.throw(TypeError);
        // The value holds copies: the arguments stay writable and unshared.
        expect(Object.isFrozen(args.rules![0])).to.equal(false);
        expect(r.limits.rules[0]).to.not.equal(args.rules![0]);
        expect(r.limits.rules[0]).to.deep.equal(args.rules![0]);
    });

    it("the plan is the build of the resolved value (its objects from that value alone)", () => {
        const args = G({
            accessLog: {},
            rules: [{ name: "all", requestsPerUnit: 10, unit: M, cost: { responseHeader: "x-tokens", acceptSharedBudgetRisk: true } }],
        });
        const plan = planGlobalRateLimit(args);
        expect(plan.problems).to.deep.equal([]);
        const built = buildGlobalRateLimit(resolveWithFallbacks(args).value);
        expect(plan.filters).to.deep.equal(built.filters);
        expect(plan.configYaml).to.equal(built.configYaml);
        // The HTTP filter's EnvoyFilter carries the response costs' patch beside the filter's own, composed (not pushed) into one spec.
        const http = plan.filters[0]!.spec.configPatches.map((p) => (p.patch.value as { name?: string }).name);
        expect(http).to.include("envoy.filters.http.header_to_metadata/default/ratelimit");
        expect(plan.filters.map((f) => f.name)).to.include("default-ratelimit-access-log");
    });
});
