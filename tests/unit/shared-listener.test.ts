/**
 * Many teams, one gateway (issue 26), on the listener MODEL (gateway-model/listener.ts; no Envoy
 * here, the istio tier checks the same on Istio's generated listener): two teams' GlobalRateLimits
 * planned as two separate programs (no shared state, so no in-program refusal can help) on one
 * gateway listener, plus a hand-written third filter. Which filter calls which service, and what a
 * client of one team gets when another team's service is down. The old layout (shared names, route
 * and virtual-host rate_limits) is the negative control.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";
import { K8sObject } from "../../lib/k8s-object";
import { ListenerLayout, answerWith, callsPerService, listenerCalls, listenerModel } from "../../gateway-model/listener";

const M = LimitUnit.Minute;
const GATEWAY = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };

/** One team's program: its own plan, its own objects (nothing shared with the other program). */
function teamProgram(team: "a" | "b", layout?: FilterLayout): { objects: K8sObject[]; cluster: string; httpFilters: { global: string; local?: string } } {
    const args: GlobalRateLimitArgs = {
        domain: `team-${team}`,
        gateway: { ...GATEWAY, virtualHosts: [`${team}.example.com:8080`] },
        namespace: `team-${team}`,
        rules: [
            { name: "everything", requestsPerUnit: 100, unit: M },
            { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 5, unit: M },
        ],
        ...(layout ? { filterLayout: layout } : {}),
    };
    const plan = planGlobalRateLimit(args);
    expect(plan.problems, `team ${team}`).to.deep.equal([]);
    return {
        objects: plan.filters.map((f) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: f.namespace },
            spec: f.spec,
        })),
        cluster: `outbound|8081||ratelimit.team-${team}.svc.cluster.local`,
        httpFilters: plan.httpFilterNames,
    };
}

/** Team C's hand-written filter: the canonical name, stage 0, fail closed, rate_limits on its own virtual host. */
const C_CLUSTER = "outbound|8081||rls.team-c.svc.cluster.local";
function handWritten(vhostName: string): K8sObject {
    return {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { name: "team-c-ratelimit", namespace: "istio-system" },
        spec: {
            workloadSelector: { labels: { istio: "ingressgateway" } },
            configPatches: [
                {
                    applyTo: "HTTP_FILTER",
                    match: {
                        context: "GATEWAY",
                        listener: {
                            filterChain: {
                                filter: { name: "envoy.filters.network.http_connection_manager", subFilter: { name: "envoy.filters.http.router" } },
                            },
                        },
                    },
                    patch: {
                        operation: "INSERT_BEFORE",
                        value: {
                            name: "envoy.filters.http.ratelimit",
                            typed_config: {
                                "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit",
                                domain: "team-c",
                                failure_mode_deny: true,
                                rate_limit_service: { grpc_service: { envoy_grpc: { cluster_name: C_CLUSTER } }, transport_api_version: "V3" },
                            },
                        },
                    },
                },
                {
                    applyTo: "VIRTUAL_HOST",
                    match: { context: "GATEWAY", routeConfiguration: { vhost: { name: vhostName } } },
                    patch: { operation: "MERGE", value: { rate_limits: [{ actions: [{ generic_key: { descriptor_value: "team-c" } }] }] } },
                },
            ],
        },
    };
}

const LAYOUT: ListenerLayout = {
    port: 8080,
    podLabels: { istio: "ingressgateway", app: "istio-ingressgateway" },
    namespace: "istio-system",
    virtualHosts: [
        { name: "a.example.com:8080", routes: ["checkout", "web"] },
        { name: "b.example.com:8080", routes: ["checkout", "web"] },
        { name: "c.example.com:8080", routes: ["web"] },
    ],
};

const requests = [
    { team: "a", virtualHost: "a.example.com:8080", route: "web", path: "/" },
    { team: "a", virtualHost: "a.example.com:8080", route: "checkout", path: "/checkout" },
    { team: "b", virtualHost: "b.example.com:8080", route: "web", path: "/" },
    { team: "b", virtualHost: "b.example.com:8080", route: "checkout", path: "/checkout" },
    { team: "c", virtualHost: "c.example.com:8080", route: "web", path: "/" },
];

describe("many teams, one gateway: two programs and a hand-written filter on one listener (listener MODEL)", () => {
    const a = teamProgram("a");
    const b = teamProgram("b");
    const m = listenerModel([...a.objects, ...b.objects, handWritten("c.example.com:8080")], LAYOUT);
    const clusterOf: Record<string, string> = { a: a.cluster, b: b.cluster, c: C_CLUSTER };

    it("names: every EnvoyFilter and every HTTP filter of the two programs is named apart", () => {
        const objectNames = [...a.objects, ...b.objects].map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        expect(new Set(objectNames).size).to.equal(objectNames.length);
        expect(m.filters.map((f) => f.name)).to.deep.equal([
            "envoy.filters.http.ratelimit", // team C's, priority 0 first
            "envoy.filters.http.ratelimit/team-a/ratelimit",
            "envoy.filters.http.ratelimit/team-b/ratelimit",
        ]);
        expect(a.httpFilters.local).to.equal("envoy.filters.http.local_ratelimit/team-a/ratelimit");
        expect(b.httpFilters.local).to.equal("envoy.filters.http.local_ratelimit/team-b/ratelimit");
    });

    it("a request to one team's host calls that team's service only, once, under its domain", () => {
        for (const r of requests) {
            const calls = listenerCalls(m, r);
            expect(callsPerService(calls), `${r.virtualHost} ${r.route}`).to.deep.equal({ [clusterOf[r.team]]: 1 });
            const own = calls.find((c) => c.descriptors.length)!;
            expect(own.domain).to.equal(`team-${r.team}`);
        }
    });

    it("B's virtual host carries no descriptor for A's filter and the reverse (per-filter config only under the owner's name)", () => {
        for (const [team, other] of [
            [a, b],
            [b, a],
        ]) {
            const ownHost = team === a ? "a.example.com:8080" : "b.example.com:8080";
            const otherHost = team === a ? "b.example.com:8080" : "a.example.com:8080";
            const keysOn = (host: string) => [
                ...Object.keys(m.virtualHosts[host].typedPerFilterConfig),
                ...Object.values(m.virtualHosts[host].routes).flatMap((r) => Object.keys(r.typedPerFilterConfig)),
            ];
            expect(keysOn(otherHost)).to.not.include(team.httpFilters.global);
            expect(keysOn(otherHost)).to.not.include(team.httpFilters.local);
            expect(keysOn(ownHost)).to.include(team.httpFilters.global).and.include(team.httpFilters.local);
            expect(keysOn(ownHost)).to.not.include(other.httpFilters.global);
            // No stage-0 rate_limits from either program, which every hand-written filter would read.
            expect(m.virtualHosts[ownHost].rateLimits).to.deep.equal([]);
        }
    });

    it("A's service down (fail closed): B's and C's answers unchanged and no call to A; the reverse; C down changes neither", () => {
        for (const down of [a.cluster, b.cluster, C_CLUSTER]) {
            for (const r of requests) {
                const calls = listenerCalls(m, r);
                const expected = clusterOf[r.team] === down ? 500 : 200;
                expect(answerWith(calls, new Set([down])), `${r.virtualHost} with ${down} down`).to.equal(expected);
                if (clusterOf[r.team] !== down) expect(callsPerService(calls)[down], `${r.virtualHost} calls ${down}`).to.equal(undefined);
            }
        }
    });

    it("statusOnError: A's refusals for want of an answer carry A's chosen status, B's stay Envoy's 500", () => {
        const plan = planGlobalRateLimit({
            domain: "team-a",
            gateway: { ...GATEWAY, virtualHosts: ["a.example.com:8080"] },
            namespace: "team-a",
            rules: [{ name: "everything", requestsPerUnit: 100, unit: M }],
            statusOnError: "ServiceUnavailable",
        });
        const objs = plan.filters.map((f) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: f.namespace },
            spec: f.spec,
        }));
        const m2 = listenerModel([...objs, ...b.objects], LAYOUT);
        const down = new Set([a.cluster, b.cluster]);
        expect(answerWith(listenerCalls(m2, requests[0]), down)).to.equal(503);
        expect(answerWith(listenerCalls(m2, requests[2]), down)).to.equal(500);
    });
});

describe("many teams, one gateway: NEGATIVE CONTROL, the old layout (shared names, route and virtual-host rate_limits) on the same listener (listener MODEL)", () => {
    const a = teamProgram("a", FilterLayout.Shared);
    const b = teamProgram("b", FilterLayout.Shared);
    const m = listenerModel([...a.objects, ...b.objects], LAYOUT);

    it("the two programs' EnvoyFilters and HTTP filters share names (the second pulumi up fails on, or takes over, the first's)", () => {
        const names = (p: typeof a) => p.objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        expect(names(a)).to.deep.equal(names(b));
        expect(a.httpFilters).to.deep.equal(b.httpFilters);
    });

    it("leak: each request calls both services, the other team's under its own domain with this team's descriptors", () => {
        for (const r of requests.filter((x) => x.team !== "c")) {
            const calls = listenerCalls(m, r);
            expect(callsPerService(calls), `${r.virtualHost} ${r.route}`).to.deep.equal({ [a.cluster]: 1, [b.cluster]: 1 });
            const foreign = calls.find((c) => c.filter.cluster !== (r.team === "a" ? a.cluster : b.cluster))!;
            expect(foreign.domain).to.equal(r.team === "a" ? "team-b" : "team-a");
        }
    });

    it("A's service down: B's requests get 500", () => {
        expect(answerWith(listenerCalls(m, requests[2]), new Set([a.cluster]))).to.equal(500);
        expect(answerWith(listenerCalls(m, requests[0]), new Set([b.cluster]))).to.equal(500);
    });

    it("the pre-limits share a name: B's per-virtual-host config is read by A's local filter too", () => {
        const keys = Object.keys(m.virtualHosts["b.example.com:8080"].typedPerFilterConfig);
        expect(keys).to.include(a.httpFilters.local!);
    });

    it("figure: calls per request to each service with two stacks on one listener, before (shared) and after (per-instance)", () => {
        const after = listenerModel([...teamProgram("a").objects, ...teamProgram("b").objects], LAYOUT);
        const per = (model: typeof m) =>
            requests.filter((r) => r.team !== "c").map((r) => Object.values(callsPerService(listenerCalls(model, r))).reduce((x, y) => x + y, 0));
        const before = per(m);
        const now = per(after);
        expect(before).to.deep.equal([2, 2, 2, 2]);
        expect(now).to.deep.equal([1, 1, 1, 1]);
        console.log(`      calls per request (4 requests, 2 stacks on one listener): before ${before.join(", ")}; after ${now.join(", ")}`);
    });
});
