/**
 * Host ownership and the platform's coverage against a real API server: the platform's defaults
 * EnvoyFilter (as PlatformRateLimit renders it, with its teamHosts annotation), teams'
 * VirtualServices and Gateways are applied to the tier's cluster, and the component's own kubectl
 * lookups (components/global-ratelimit/host-ownership-lookup.ts, platform-coverage.ts: the code GlobalRateLimit and
 * PlatformRateLimit run at preview) read them. Each test uses namespaces of its own.
 *
 * Hosts are a team's by the platform's assignment only; with route-bound ownership, by a route bound
 * to a Gateway that exists and serves the host. Negative controls: an assigned host is not refused,
 * and with no platform filter on the gateway nothing is refused (a check that refused every host
 * would fail them); an HTTP server is not listed.
 */
import { expect } from "chai";
import { hostOwnershipProblems } from "../../components/global-ratelimit/host-ownership";
import { lookupOwnershipView } from "../../components/global-ratelimit/host-ownership-lookup";
import { lookupUncoveredServers } from "../../components/platform-ratelimit/platform-coverage";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";
import { deleteNamespace, ensureNamespace, kubectl } from "./kube";

const tag = `${process.pid}`;
const GW_NS = `own-gw-${tag}`;
const TEAM_A = `own-a-${tag}`;
const TEAM_B = `own-b-${tag}`;
const TEAM_C = `own-c-${tag}`;
const LABELS = { istio: `own-gw-${tag}` };

const apply = (o: unknown) => kubectl(["apply", "--server-side", "--field-manager=mesh-rl-cluster-test", "-f", "-"], JSON.stringify(o));
const virtualService = (namespace: string, host: string) => ({
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { namespace, name: "web" },
    spec: { hosts: [host], gateways: [`${GW_NS}/shared`], http: [{ route: [{ destination: { host: "web" } }] }] },
});

function applyPlatform(teamHosts?: Record<string, string[]>, routeBoundOwnership = false): void {
    const plan = planPlatformRateLimit({
        gateway: { selector: LABELS, namespace: GW_NS },
        namespace: GW_NS,
        routeBoundOwnership,
        defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 2, unit: LimitUnit.Minute }] },
        ...(teamHosts ? { teamHosts } : {}),
    });
    expect(plan.problems).to.deep.equal([]);
    for (const f of plan.filters)
        apply({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: f.namespace, ...(f.annotations ? { annotations: f.annotations } : {}) },
            spec: f.spec,
        });
}

describe("cluster: host ownership read from the API server (GlobalRateLimit's preview check)", function () {
    this.timeout(180_000);
    before(() => {
        for (const ns of [GW_NS, TEAM_A, TEAM_B, TEAM_C]) ensureNamespace(ns);
        apply(virtualService(TEAM_A, "a.example.com"));
        apply(virtualService(TEAM_B, "b.example.com"));
    });
    after(async () => {
        await Promise.all([GW_NS, TEAM_A, TEAM_B, TEAM_C].map((ns) => deleteNamespace(ns)));
    });

    it("control: no platform defaults filter on the gateway, nothing refused, whatever host is named", () => {
        const view = lookupOwnershipView(GW_NS);
        expect(view.platform).to.equal(undefined);
        expect(hostOwnershipProblems(TEAM_A, ["b.example.com:8080"], view)).to.deep.equal([]);
    });

    it("with the platform's filter and no assignment: team a's VirtualService does not make a.example.com its own", () => {
        applyPlatform();
        const view = lookupOwnershipView(GW_NS);
        expect(view.platform?.envoyFilter).to.equal(`${GW_NS}/platform-ratelimit-defaults`);
        const ps = hostOwnershipProblems(TEAM_A, ["a.example.com:8080"], view);
        expect(ps.map((p) => p.key)).to.deep.equal(["gateway.virtualHosts[0]"]);
        expect(ps[0]!.problem).to.include("assigns a.example.com to no one");
        applyPlatform({ [TEAM_A]: ["a.example.com"] });
        expect(hostOwnershipProblems(TEAM_A, ["a.example.com:8080"], lookupOwnershipView(GW_NS))).to.deep.equal([]);
    });

    it("route-bound ownership: a route to a Gateway that exists and serves the host owns it; to none that exists, not", () => {
        applyPlatform(undefined, true);
        expect(hostOwnershipProblems(TEAM_A, ["a.example.com:8080"], lookupOwnershipView(GW_NS))).to.have.length(1);
        apply({
            apiVersion: "networking.istio.io/v1",
            kind: "Gateway",
            metadata: { namespace: GW_NS, name: "shared" },
            spec: { selector: LABELS, servers: [{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["*/a.example.com"] }] },
        });
        const view = lookupOwnershipView(GW_NS);
        expect(view.platform?.routeBound).to.equal(true);
        expect(hostOwnershipProblems(TEAM_A, ["a.example.com:8080"], view)).to.deep.equal([]);
        // Team b's VirtualService binds b.example.com to the same Gateway, which does not serve it.
        expect(hostOwnershipProblems(TEAM_B, ["b.example.com:8080"], view)).to.have.length(1);
    });

    it("the platform's teamHosts, read back from its filter's annotation, assign b.example.com to team c over team b's VirtualService", () => {
        applyPlatform({ [TEAM_C]: ["b.example.com"] });
        const view = lookupOwnershipView(GW_NS);
        expect(hostOwnershipProblems(TEAM_C, ["b.example.com:8080"], view)).to.deep.equal([]);
        expect(hostOwnershipProblems(TEAM_B, ["b.example.com:8080"], view)[0]!.problem).to.include(`the platform assigns b.example.com to namespace ${TEAM_C}`);
    });

    it("the platform's preview lists team c's TCP and TLS passthrough servers on its pods, not its HTTP server", () => {
        apply({
            apiVersion: "networking.istio.io/v1",
            kind: "Gateway",
            metadata: { namespace: TEAM_C, name: "mixed" },
            spec: {
                selector: LABELS,
                servers: [
                    { port: { number: 8443, name: "web", protocol: "HTTP" }, hosts: ["c.example.com"] },
                    { port: { number: 15432, name: "db", protocol: "TCP" }, hosts: ["*"] },
                    { port: { number: 8444, name: "tls", protocol: "TLS" }, hosts: ["c.example.com"], tls: { mode: "PASSTHROUGH" } },
                ],
            },
        });
        const found = lookupUncoveredServers(LABELS).map((s) => `${s.gateway} ${s.port}`);
        expect(found).to.have.members([`Gateway ${TEAM_C}/mixed 15432`, `Gateway ${TEAM_C}/mixed 8444`]);
    });
});
