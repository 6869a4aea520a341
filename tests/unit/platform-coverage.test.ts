/**
 * The servers on the platform's gateway pods that no HTTP filter covers (components/platform-coverage.ts):
 * TLS passthrough and TCP-like servers are listed with the reason; HTTP servers, TLS servers the
 * gateway terminates into HTTP, and Gateways of other pods are not (the controls: a lister that named
 * every server would fail them).
 */
import { expect } from "chai";
import { uncoveredMessage, uncoveredServers } from "../../components/platform-coverage";

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
