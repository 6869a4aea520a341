/**
 * The servers on the platform's gateway pods that no HTTP filter covers (components/platform-ratelimit/platform-coverage.ts):
 * TLS passthrough and TCP-like servers are listed with the reason; HTTP servers, TLS servers the
 * gateway terminates into HTTP, and Gateways of other pods are not (the controls: a lister that named
 * every server would fail them).
 */
import { expect } from "chai";
import { uncoveredMessage, uncoveredServers } from "../../components/platform-ratelimit/platform-coverage";
import { foreignSwitchMessages } from "../../components/platform-ratelimit/platform-switches";
import { OwnershipView, teamSwitches } from "../../builders/host-ownership-rule";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";

const PODS = { istio: "ingressgateway", app: "istio-ingressgateway" };
const gateway = (namespace: string, name: string, selector: Record<string, string>, servers: unknown[]) => ({
    metadata: { namespace, name },
    spec: { selector, servers },
});
const server = (number: number, protocol: string, tls?: Record<string, string>) => ({
    port: { number, protocol, name: `p${number}` },
    hosts: ["*"],
    ...(tls ? { tls } : {}),
});

describe("platform coverage: servers no HTTP filter reaches", () => {
    const gateways = [
        gateway("team-a", "web", { istio: "ingressgateway" }, [server(8080, "HTTP"), server(8443, "HTTPS", { mode: "SIMPLE", credentialName: "a" })]),
        gateway("team-b", "db", { istio: "ingressgateway" }, [server(15432, "TCP"), server(8444, "TLS", { mode: "PASSTHROUGH" })]),
        gateway("team-c", "mtls", { istio: "ingressgateway" }, [
            server(8445, "TLS", { mode: "ISTIO_MUTUAL" }),
            server(8446, "HTTPS", { mode: "AUTO_PASSTHROUGH" }),
        ]),
        gateway("team-d", "other-pods", { istio: "eastwestgateway" }, [server(15443, "TLS", { mode: "AUTO_PASSTHROUGH" })]),
    ];

    it("lists TCP, TLS passthrough and TLS proxied as bytes on the platform's pods, each with its reason", () => {
        const found = uncoveredServers(gateways, PODS);
        expect(found.map((s) => `${s.gateway} ${s.port} ${s.protocol}`)).to.deep.equal([
            "Gateway team-b/db 15432 TCP",
            "Gateway team-b/db 8444 TLS",
            "Gateway team-c/mtls 8445 TLS",
            "Gateway team-c/mtls 8446 HTTPS",
        ]);
        expect(found[1]!.reason).to.include("PASSTHROUGH").and.include("encrypted");
        expect(found[0]!.reason).to.include("TCP proxy");
        expect(uncoveredMessage(found[0]!)).to.include("Gateway team-b/db port 15432").and.include("none of the platform's overrides or defaults");
    });

    it("controls: HTTP and terminated HTTPS servers, and another gateway's pods, are not listed", () => {
        expect(uncoveredServers([gateways[0]!], PODS)).to.deep.equal([]);
        expect(uncoveredServers([gateways[3]!], PODS)).to.deep.equal([]);
        expect(uncoveredServers([gateways[3]!], { istio: "eastwestgateway" })).to.have.length(1);
    });
});

describe("platform preview: teams' switches of the defaults on hosts they do not own (teams deployed first)", () => {
    const teamFilters = (virtualHosts: string[]) => {
        const plan = planGlobalRateLimit({
            domain: "a",
            namespace: "team-a",
            gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts },
            rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
        });
        expect(plan.problems).to.deep.equal([]);
        return plan.filters.map((f) => ({ metadata: { namespace: f.namespace, name: f.name }, spec: f.spec }));
    };
    const VS = [
        { namespace: "team-a", name: "a", hosts: ["a.example.com"], gateways: ["gw"] },
        { namespace: "team-b", name: "b", hosts: ["b.example.com"], gateways: ["gw"] },
    ];
    /** The platform's view: its assignments (the rule reads routes only with route-bound ownership). */
    const view = (teamHosts: Record<string, string[]>): OwnershipView => ({
        platform: { envoyFilter: "istio-system/platform-ratelimit-defaults", teamHosts },
        virtualServices: VS,
    });
    const ASSIGNED = { "team-a": ["a.example.com"], "team-b": ["b.example.com"] };

    it("reads the switch and the namespace that wrote it from the team's rendered EnvoyFilter", () => {
        expect(teamSwitches(teamFilters(["b.example.com:8080"]))).to.deep.equal([
            { envoyFilter: "istio-system/team-a-ratelimit", team: "team-a", virtualHost: "b.example.com:8080" },
        ]);
    });

    it("names team a's switch on team b's host, with the owner", () => {
        const lines = foreignSwitchMessages(teamSwitches(teamFilters(["b.example.com:8080"])), view(ASSIGNED));
        expect(lines).to.have.length(1);
        expect(lines[0])
            .to.include("namespace team-a's GlobalRateLimit")
            .and.include("b.example.com:8080")
            .and.include("assigns b.example.com to namespace team-b");
    });

    it("a host assigned to no one is no one's: team a's VirtualService does not make a.example.com its own", () => {
        const lines = foreignSwitchMessages(teamSwitches(teamFilters(["a.example.com:8080"])), view({}));
        expect(lines).to.have.length(1);
        expect(lines[0]).to.include("assigns a.example.com to no one");
    });

    it("controls: a host the platform assigns to the writing team is not named", () => {
        expect(foreignSwitchMessages(teamSwitches(teamFilters(["a.example.com:8080"])), view(ASSIGNED))).to.deep.equal([]);
        expect(foreignSwitchMessages(teamSwitches(teamFilters(["b.example.com:8080"])), view({ "team-a": ["b.example.com"] }))).to.deep.equal([]);
    });

    it("an earlier release's switch on every host (the empty name) is named, even for the host's own team", () => {
        const old = teamFilters(["a.example.com:8080"]);
        for (const p of (old[0]!.spec as any).configPatches) if (p.applyTo === "VIRTUAL_HOST") p.match.routeConfiguration.vhost.name = "";
        expect(foreignSwitchMessages(teamSwitches(old), view(ASSIGNED))[0]).to.include("every host of the gateway");
    });
});
