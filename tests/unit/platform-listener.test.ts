/**
 * A platform team's limits and a team's own on one gateway listener, on the listener MODEL
 * (gateway-model/listener.ts; the istio tier checks the same on Istio's generated configuration):
 * the platform's stack and a team's stack planned as two programs that share nothing. What each
 * request calls, and who refuses it. The promise checked for every team input: a team cannot
 * loosen an override, whatever its GlobalRateLimit declares. The negative controls: without the
 * platform, only the team's descriptors; a hand-written EnvoyFilter (outside the package) can.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { LimitUnit, MissingHeader } from "../../builders/rule-args";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { PlatformDefaults } from "../../components/global-ratelimit/platform-defaults";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { ListenerLayout, callsPerService, listenerCalls, listenerModel } from "../../gateway-model/listener";
import { refusedBy, sourcesCalled } from "../../gateway-model/platform-sources";
import { K8sObject } from "../../lib/k8s-object";
import { PLATFORM, rogueOverridesOff } from "./platform-fixtures";

const M = LimitUnit.Minute;
const GW = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };
const PLATFORM_CLUSTER = "outbound|8081||ratelimit-platform.platform.svc.cluster.local";
const TEAM_CLUSTER = "outbound|8081||ratelimit.team-a.svc.cluster.local";
const LAYOUT: ListenerLayout = {
    port: 8080,
    podLabels: { istio: "ingressgateway", app: "istio-ingressgateway" },
    namespace: "istio-system",
    virtualHosts: [
        { name: "a.example.com:8080", routes: ["checkout", "web"] },
        { name: "other.example.com:8080", routes: ["web"] },
    ],
};

const asObjects = (filters: { name: string; namespace: string; spec: unknown }[]): K8sObject[] =>
    filters.map((f) => ({ apiVersion: "networking.istio.io/v1alpha3", kind: "EnvoyFilter", metadata: { name: f.name, namespace: f.namespace }, spec: f.spec }));

function platformObjects(): K8sObject[] {
    const plan = planPlatformRateLimit(PLATFORM);
    expect(plan.problems).to.deep.equal([]);
    return asObjects(plan.filters);
}

const TEAM: GlobalRateLimitArgs = {
    domain: "team-a",
    gateway: { ...GW, virtualHosts: ["a.example.com:8080"] },
    namespace: "team-a",
    rules: [
        { name: "everything", requestsPerUnit: 100, unit: M },
        { name: "checkout", route: { name: "checkout" }, requestsPerUnit: 5, unit: M },
    ],
};

function teamObjects(args: GlobalRateLimitArgs): K8sObject[] {
    const plan = planGlobalRateLimit(args);
    expect(plan.problems, JSON.stringify(plan.problems)).to.deep.equal([]);
    return asObjects(plan.filters);
}

/** The descriptors each service gets for a request, as `key=value/...` text per service. */
function sent(objects: K8sObject[], vhost: string, route: string, path = "/x"): Record<string, string[]> {
    const calls = listenerCalls(listenerModel(objects, LAYOUT), { virtualHost: vhost, route, path, clientAddress: "203.0.113.7" });
    const out: Record<string, string[]> = {};
    for (const c of calls) for (const d of c.descriptors) (out[c.filter.cluster] ??= []).push(d.map((e) => `${e.key}=${e.value}`).join("/"));
    return out;
}

const OVERRIDE = "platform_override=per-client-ceiling/masked_remote_address=203.0.113.7/32";
const DEFAULT_CLIENT = "platform_default=per-client/masked_remote_address=203.0.113.7/32";

describe("platform defaults and a team's limits on one listener (gateway MODEL)", () => {
    const both = () => [...platformObjects(), ...teamObjects(TEAM)];

    it("the team's host: its own descriptors and the overrides, not the defaults", () => {
        for (const route of ["checkout", "web"]) {
            const s = sent(both(), "a.example.com:8080", route);
            expect(s[PLATFORM_CLUSTER], route).to.deep.equal([OVERRIDE]);
            expect(s[TEAM_CLUSTER], route).to.include("rule=everything");
        }
        expect(sent(both(), "a.example.com:8080", "checkout")[TEAM_CLUSTER]).to.include("rule=checkout");
    });

    it("another host: the defaults (per client and per path) and the overrides, nothing to the team's service", () => {
        const s = sent(both(), "other.example.com:8080", "web", "/catalog");
        expect(s[PLATFORM_CLUSTER]).to.have.members([OVERRIDE, DEFAULT_CLIENT, "platform_default_path=/catalog"]);
        expect(s[TEAM_CLUSTER]).to.equal(undefined);
    });

    it("calls per request: one to the platform's service on the team's host (overrides), two on another host (overrides, then defaults)", () => {
        const calls = (vh: string, r: string) => listenerCalls(listenerModel(both(), LAYOUT), { virtualHost: vh, route: r, path: "/x" });
        expect(callsPerService(calls("a.example.com:8080", "web"))).to.deep.equal({ [PLATFORM_CLUSTER]: 1, [TEAM_CLUSTER]: 1 });
        expect(callsPerService(calls("other.example.com:8080", "web"))).to.deep.equal({ [PLATFORM_CLUSTER]: 2 });
        expect(sourcesCalled(calls("a.example.com:8080", "web"))).to.deep.equal(["platform override", "team"]);
        expect(sourcesCalled(calls("other.example.com:8080", "web"))).to.deep.equal(["platform override", "platform default"]);
    });

    it("who refuses: the platform's service over the limit is a platform override on the team's host, an override first elsewhere too", () => {
        const calls = (vh: string) => listenerCalls(listenerModel(both(), LAYOUT), { virtualHost: vh, route: "web", path: "/x" });
        expect(refusedBy(calls("a.example.com:8080"), new Set([PLATFORM_CLUSTER]))).to.equal("platform override");
        expect(refusedBy(calls("a.example.com:8080"), new Set([TEAM_CLUSTER]))).to.equal("team");
        expect(refusedBy(calls("a.example.com:8080"), new Set())).to.equal(undefined);
    });

    it("platformDefaults: merge keeps the defaults on the team's host beside its own rules", () => {
        const s = sent([...platformObjects(), ...teamObjects({ ...TEAM, platformDefaults: PlatformDefaults.Merge })], "a.example.com:8080", "web", "/p");
        expect(s[PLATFORM_CLUSTER]).to.have.members([OVERRIDE, DEFAULT_CLIENT, "platform_default_path=/p"]);
        expect(s[TEAM_CLUSTER]).to.include("rule=everything");
    });

    it("order-independence: the EnvoyFilters in either order give the same calls", () => {
        const ab = sent([...platformObjects(), ...teamObjects(TEAM)], "a.example.com:8080", "web");
        const ba = sent([...teamObjects(TEAM), ...platformObjects()], "a.example.com:8080", "web");
        expect(ba).to.deep.equal(ab);
    });

    it("negative control: without the platform's stack, only the team's descriptors (its defaults-off switch changes nothing)", () => {
        const s = sent(teamObjects(TEAM), "a.example.com:8080", "web");
        expect(Object.keys(s)).to.deep.equal([TEAM_CLUSTER]);
        expect(sent(teamObjects(TEAM), "other.example.com:8080", "web")).to.deep.equal({});
    });

    it("without a team's stack the platform's defaults cover its host again (removing one restores the other)", () => {
        const s = sent(platformObjects(), "a.example.com:8080", "web", "/p");
        expect(s[PLATFORM_CLUSTER]).to.have.members([OVERRIDE, DEFAULT_CLIENT, "platform_default_path=/p"]);
    });
});

describe("many teams: a team cannot loosen an override, whatever its GlobalRateLimit declares (gateway MODEL)", () => {
    // Every way the package lets a team shape what it writes on the gateway.
    const variants: [string, Partial<GlobalRateLimitArgs>][] = [
        ["defaults", {}],
        ["merge", { platformDefaults: PlatformDefaults.Merge }],
        ["shared layout", { filterLayout: FilterLayout.Shared }],
        ["every virtual host", { gateway: { ...GW, allVirtualHosts: true } }],
        ["no pre-limit, fail open", { preLimit: false, failureModeDeny: false }],
        ["shadow service", { service: { shadowMode: true } }],
        ["a filter name prefix of its own", { filterNamePrefix: "team-a-limits" }],
        ["a per-path catch-all (split counter store)", { perPath: { eachPath: { requestsPerUnit: 1, unit: M } } }],
        [
            "per-value header and per-client rules",
            {
                rules: [
                    { name: "per-key", header: { name: "x-api-key", perValue: true, whenMissing: MissingHeader.SharedCounter }, requestsPerUnit: 1, unit: M },
                    { name: "per-client", perClientAddress: true, requestsPerUnit: 1_000_000, unit: M },
                ],
            },
        ],
        ["a huge limit on the same client", { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 4_294_967_295, unit: M }] }],
        ["the platform's rule key", { ruleKey: "platform_override", rules: [{ name: "per-client-ceiling", requestsPerUnit: 4_294_967_295, unit: M }] }],
    ];
    for (const [what, change] of variants) {
        it(`${what}: every route of every host still sends the override to the platform's service, first`, () => {
            const objects = [...platformObjects(), ...teamObjects({ ...TEAM, ...change })];
            for (const vh of LAYOUT.virtualHosts)
                for (const route of vh.routes) {
                    const calls = listenerCalls(listenerModel(objects, LAYOUT), { virtualHost: vh.name, route, path: "/x", clientAddress: "203.0.113.7" });
                    const first = calls.find((c) => c.descriptors.length);
                    expect(first?.filter.cluster, `${vh.name} ${route}`).to.equal(PLATFORM_CLUSTER);
                    expect(first?.domain).to.equal("mesh-ratelimit-platform");
                    expect(first?.descriptors.map((d) => d.map((e) => `${e.key}=${e.value}`).join("/"))).to.deep.equal([OVERRIDE]);
                }
        });
    }

    it("what the package refuses a team at preview: the platform's domain, its EnvoyFilter names", () => {
        const keys = (c: Partial<GlobalRateLimitArgs>) => planGlobalRateLimit({ ...TEAM, ...c }).problems.map((p) => p.key);
        expect(keys({ domain: "mesh-ratelimit-platform" })).to.include("domain");
        expect(keys({ filterNamePrefix: "platform-ratelimit-overrides" })).to.include("filterNamePrefix");
    });

    it("negative control: a hand-written EnvoyFilter (outside the package) that disables the overrides filter on a host does loosen it, and this check sees it", () => {
        const rogue = rogueOverridesOff("a.example.com:8080");
        const s = sent([...platformObjects(), ...teamObjects(TEAM), rogue], "a.example.com:8080", "web");
        expect(s[PLATFORM_CLUSTER]).to.equal(undefined);
    });
});
