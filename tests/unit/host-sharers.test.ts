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
import { InputError } from "../../lib/problems";
import { registerProgram } from "../../render/render";

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

    it("a VirtualService bound to the stack's own Gateway from another namespace: merged with gatewayHostScope any-namespace; not bound by default (harmless)", () => {
        const docs = kinds(
            tenantWith((_g, v) => (v.spec.gateways = ["default/bookinfo-gateway"])),
            "VirtualService",
        );
        const any = messages(docs, { gatewayHostScope: "any-namespace" });
        expect(any).to.have.length(1);
        expect(any[0]).to.match(
            /^VirtualService team-star\/star \(host \*, Gateway default\/bookinfo-gateway\) is merged by Istio into the stack's virtual host \*:8080/,
        );
        // The default server hosts default/*: Istio binds none of its hosts, nothing is merged.
        const own = messages(docs);
        expect(own).to.have.length(1);
        expect(own[0]).to.match(
            /^VirtualService team-star\/star \(hosts \*\) names the stack's Gateway default\/bookinfo-gateway \(server hosts default\/\*\).*harmless/,
        );
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

/**
 * Side doors (program/side-doors.ts): a VirtualService that is not the stack's, bound to the stack's
 * own Gateway with a host of its own, gets a virtual host the stack's patches do not name. The
 * object is tests/istio/fixtures/side-door.yaml, which the istio tier gives Istio's generator
 * (bound, with a virtual host without rate_limits, only when the Gateway's hosts are `*`).
 */
const SIDE = parseAllDocuments(fs.readFileSync(path.join(__dirname, "..", "istio", "fixtures", "side-door.yaml"), "utf8")).map(
    (d) => d.toJS() as IstioRouting,
)[0]!;
/** The stack's owner value in these tests. */
const OWNER = "organization/mesh-ratelimit/dev";

/** The side-door VirtualService with its metadata and spec changed (a deep copy), managed by kubectl. */
function side(change: (v: any) => void = () => {}): IstioRouting {
    const v = JSON.parse(JSON.stringify(SIDE));
    v.metadata.managedFields = [{ manager: "kubectl-client-side-apply" }, { manager: "argocd-controller" }];
    change(v);
    return v;
}

/** The reach plan of the dev stack (plus `over`) with these VirtualServices in the cluster. */
function reach(vs: IstioRouting[], over: Record<string, string> = {}, gateways: IstioRouting[] = []) {
    const gatewayPod = { kind: "Pod", metadata: { name: "gw-1", namespace: "istio-system", labels: { istio: "ingressgateway" } } };
    const plan = planOfConfig({ ...DEV, ...over });
    return planMeshReach(plan.settings, { gatewayPods: [gatewayPod], peerAuthentications: [], gateways, virtualServices: vs }, plan.global, OWNER);
}

/** What the preflight says of the side VirtualService: refused (a problem), harmless (a message), merged (a message), or nothing. */
function verdict(vs: IstioRouting, over: Record<string, string> = {}): string {
    const r = reach([vs], over);
    const p = r.problems.filter((x) => x.problem.includes(`VirtualService ${idOf(vs)}`));
    if (p.length) return `refused:${p[0]!.key}`;
    const m = r.messages.filter((x) => x.includes(`VirtualService ${idOf(vs)}`));
    if (m.some((x) => /harmless/.test(x))) return "harmless";
    if (m.some((x) => /is merged by Istio/.test(x))) return "merged";
    return m.length ? `other: ${m.join(" | ")}` : "nothing";
}

const idOf = (v: IstioRouting) => `${v.metadata.namespace}/${v.metadata.name}`;
const ANY = { gatewayHostScope: "any-namespace" };

describe("preflight: another namespace's VirtualService with a host of its own on the stack's Gateway (side doors)", () => {
    // Each row: the VirtualService, then what the preflight says with the default hosts (default/*) and with the specification's (*).
    const table: { name: string; vs: IstioRouting; own: string; any: string }[] = [
        { name: "another namespace, namespace-qualified reference", vs: side(), own: "harmless", any: "refused:gatewayHostScope" },
        {
            name: "another namespace, short name (it names a Gateway of its own namespace, not the stack's)",
            vs: side((v) => (v.spec.gateways = ["bookinfo-gateway"])),
            own: "nothing",
            any: "nothing",
        },
        {
            name: "the stack's own namespace, short name (the Gateway admits its namespace's)",
            vs: side((v) => ((v.metadata.namespace = "default"), (v.spec.gateways = ["bookinfo-gateway"]))),
            own: "refused:gatewayHosts",
            any: "refused:gatewayHosts",
        },
        {
            name: "the stack's own namespace, carrying the stack's owner annotation (the stack's own)",
            vs: side((v) => ((v.metadata.namespace = "default"), (v.metadata.annotations = { "mesh-ratelimit.io/owner": OWNER }))),
            own: "nothing",
            any: "nothing",
        },
        {
            name: "the stack's VirtualService itself (default/bookinfo)",
            vs: side((v) => ((v.metadata.namespace = "default"), (v.metadata.name = "bookinfo"))),
            own: "nothing",
            any: "nothing",
        },
        {
            name: "another stack's owner annotation is not this stack's",
            vs: side((v) => (v.metadata.annotations = { "mesh-ratelimit.io/owner": "organization/mesh-ratelimit/other" })),
            own: "harmless",
            any: "refused:gatewayHostScope",
        },
        {
            name: "another namespace with the stack's own host * (merged into *:8080, limited: not a door)",
            vs: side((v) => (v.spec.hosts = ["*"])),
            own: "harmless",
            any: "merged",
        },
        { name: "another Gateway (not the stack's)", vs: side((v) => (v.spec.gateways = ["team-side/side-gateway"])), own: "nothing", any: "nothing" },
    ];
    for (const row of table)
        it(`${row.name}: default hosts ${row.own}, gatewayHostScope any-namespace ${row.any}`, () => {
            expect(verdict(row.vs), "default").to.equal(row.own);
            expect(verdict(row.vs, ANY), "any-namespace").to.equal(row.any);
        });

    it("the refusal names the VirtualService, its hosts, its virtual host, where it routes, who manages it and the fix", () => {
        const [p] = reach([side()], ANY).problems;
        expect(p!.key).to.equal("gatewayHostScope");
        expect(p!.value).to.equal("any-namespace");
        expect(p!.problem).to.equal(
            "the stack's Gateway default/bookinfo-gateway (server hosts *) admits VirtualService team-side/side (hosts side.example.com; " +
                "no mesh-ratelimit.io/owner annotation; field managers: argocd-controller, kubectl-client-side-apply): Istio gives it the virtual host(s) " +
                "side.example.com:8080 of its own on port 8080, without the stack's rate_limits and pre-limit (they name only *:8080), so a client " +
                "sending that Host header reaches productpage.default.svc.cluster.local around every gateway limit",
        );
        expect(p!.fix).to.match(/^pulumi config set gatewayHostScope own-namespace {3}\(the Gateway then admits only namespace default's VirtualServices/);
    });

    it("with a host of the stack's own (gatewayHosts) the same VirtualService in the stack's namespace is not bound: harmless", () => {
        const inDefault = side((v) => ((v.metadata.namespace = "default"), (v.spec.gateways = ["bookinfo-gateway"])));
        expect(verdict(inDefault, { gatewayHosts: "bookinfo.example.com" })).to.equal("harmless");
        // A wildcard of the stack's that takes side.example.com admits it again: a door.
        expect(verdict(inDefault, { gatewayHosts: "*.example.com" })).to.equal("refused:gatewayHosts");
    });

    it("vhostScope=all limits every virtual host of the gateway: no door to report", () => {
        expect(verdict(side(), { ...ANY, vhostScope: "all" })).to.equal("nothing");
    });

    it("an existing bookinfo: what its live Gateway admits decides; the fix is that Gateway's edit", () => {
        const gw = (hosts: string[]): IstioRouting => ({
            apiVersion: "networking.istio.io/v1",
            kind: "Gateway",
            metadata: { name: "bookinfo-gateway", namespace: "default" },
            spec: { selector: { istio: "ingressgateway" }, servers: [{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts }] },
        });
        const existing = { variant: "B", bookinfo: "existing" };
        const open = reach([side()], existing, [gw(["*"])]).problems;
        expect(open.map((p) => p.key)).to.deep.equal(["gatewayName"]);
        expect(open[0]!.fix).to.contain("kubectl edit gateways.networking.istio.io bookinfo-gateway -n default");
        // Control: the same Gateway narrowed to its namespace admits nothing of team-side.
        expect(reach([side()], existing, [gw(["default/*"])]).problems).to.deep.equal([]);
    });

    it("the program refuses at preview, nothing registered; the default passes and says harmless (the cluster's answer a fixture)", async () => {
        const run = async (over: Record<string, string>) => {
            const seen: unknown[] = [];
            const reports: string[] = [];
            let error: unknown;
            const meshReach = {
                gatewayPods: [{ kind: "Pod", metadata: { name: "gw-1", namespace: "istio-system", labels: { istio: "ingressgateway" } } }],
                peerAuthentications: [],
                gateways: [],
                virtualServices: [side()],
            };
            try {
                await registerProgram({ base: { ...DEV }, overrides: over, meshReach, onRegister: (r) => seen.push(r), onReport: (m) => reports.push(m) });
            } catch (e) {
                error = e;
            }
            return { seen, reports, error };
        };
        const refused = await run(ANY);
        expect(refused.error).to.be.instanceOf(InputError);
        expect((refused.error as Error).message)
            .to.contain('mesh-ratelimit:gatewayHostScope = "any-namespace"')
            .and.contain("team-side/side");
        expect(refused.seen).to.deep.equal([]);
        const passed = await run({});
        expect(passed.error).to.equal(undefined);
        expect(passed.seen.length).to.be.greaterThan(20);
        expect(passed.reports.join("\n"))
            .to.contain("VirtualService team-side/side (hosts side.example.com) names the stack's Gateway")
            .and.contain("harmless");
    });
});
