/**
 * Other teams' Gateways and VirtualServices on the stack's host and port (program/host-sharers.ts,
 * reported by the reach preflight). The tenant is tests/istio/fixtures/tenant-star.yaml, the same
 * objects the istio tier gives Istio's generator, which shows their routes merged into the stack's
 * virtual host `*:8080`.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { planMeshReach } from "../../program/mesh-reach";
import { IstioRouting } from "../../program/host-sharers";
import { planOfConfig } from "../../program/config-args";
import { DEV } from "./helpers";

const TENANT = parseAllDocuments(fs.readFileSync(path.join(__dirname, "..", "istio", "fixtures", "tenant-star.yaml"), "utf8")).map(
    (d) => d.toJS() as IstioRouting,
);
const kinds = (docs: IstioRouting[], kind: string) => docs.filter((d) => d.kind === kind);

/** The reach messages for the dev stack (plus `over`) with these Gateways and VirtualServices in the cluster. */
function messages(docs: IstioRouting[], over: Record<string, string> = {}): string[] {
    const gatewayPod = {
        kind: "Pod",
        metadata: { name: "istio-ingressgateway-1", namespace: "istio-system", labels: { istio: "ingressgateway", app: "istio-ingressgateway" } },
    };
    const plan = planOfConfig({ ...DEV, ...over });
    return planMeshReach(
        plan.settings,
        { gatewayPods: [gatewayPod], peerAuthentications: [], gateways: kinds(docs, "Gateway"), virtualServices: kinds(docs, "VirtualService") },
        plan.global,
    ).messages.filter((m) => /team-star|shop/.test(m));
}

/** The tenant with one field changed (a deep copy). */
function tenantWith(change: (g: any, v: any) => void): IstioRouting[] {
    const docs = JSON.parse(JSON.stringify(TENANT)) as IstioRouting[];
    change(kinds(docs, "Gateway")[0], kinds(docs, "VirtualService")[0]);
    return docs;
}

describe("preflight: other teams' Gateways and VirtualServices on the stack's host and port", () => {
    it("a tenant with host * on port 8080: its VirtualService and Gateway are named, with what they inherit and the fix", () => {
        const m = messages(TENANT);
        expect(m).to.have.length(2);
        expect(m.join("\n")).to.match(
            /VirtualService team-star\/star \(host \*, Gateway team-star\/star-gateway\) is merged by Istio into the stack's virtual host \*:8080: .*per-path limits.*500.*pulumi config set gatewayHosts/,
        );
        expect(m.join("\n")).to.match(/Gateway team-star\/star-gateway has a server on the stack's gateway port 8080 for host \*/);
    });

    it("a VirtualService bound to the stack's own Gateway from another namespace is named too", () => {
        const docs = tenantWith((_g, v) => (v.spec.gateways = ["default/bookinfo-gateway"]));
        expect(messages(kinds(docs, "VirtualService"))).to.have.length(1);
    });

    it("controls: a host of its own, another port, another gateway's pods, vhostScope all: nothing named", () => {
        expect(
            messages(
                tenantWith((g, v) => {
                    g.spec.servers[0].hosts = ["star.example.com"];
                    v.spec.hosts = ["star.example.com"];
                }),
            ),
        ).to.deep.equal([]);
        expect(messages(tenantWith((g) => (g.spec.servers[0].port.number = 9090)))).to.deep.equal([]);
        expect(messages(tenantWith((g) => (g.spec.selector = { istio: "team-star-gateway" })))).to.deep.equal([]);
        // Every virtual host is the stack's by choice then: nothing to warn about.
        expect(messages(TENANT, { vhostScope: "all" })).to.deep.equal([]);
        // The stack's own Gateway and VirtualService are never reported.
        expect(
            messages(
                tenantWith(
                    (g, v) => (
                        (g.metadata.namespace = "default"),
                        (g.metadata.name = "bookinfo-gateway"),
                        (v.metadata.namespace = "default"),
                        (v.metadata.name = "bookinfo")
                    ),
                ),
            ),
        ).to.deep.equal([]);
    });

    it("the stack on a host of its own: a tenant Gateway server for * is named (a VirtualService for that host would merge); its VirtualService for * is not", () => {
        const m = messages(TENANT, { gatewayHosts: "bookinfo.example.com" });
        expect(m).to.have.length(1);
        expect(m[0]).to.match(
            /^Gateway team-star\/star-gateway .* host bookinfo\.example\.com is merged by Istio into the stack's virtual host bookinfo\.example\.com:8080/,
        );
    });
});
