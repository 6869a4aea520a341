/**
 * The stack on an ambient mesh (docs/guide/ambient.md): the local bucket on the waypoint
 * (LocalRateLimit on its own and the stack's) with preview's warning, what ambient refuses, and what the
 * ambient plan hands its components (the Gateway API target, the pods' enrolment). Each case has
 * its sidecar control beside it: the same arguments with `meshMode` sidecar pass.
 */
import { expect } from "chai";
import { ambientWarning, planLocalRateLimit, resolveLocalRateLimit, LocalRateLimitArgs } from "../../components/local-ratelimit/component";
import { checkMeshArgs } from "../../mesh/mesh-checks";
import { bookinfoArgsOf, globalArgsOf, localArgsOf, planMeshRateLimit } from "../../mesh/mesh-plan";
import { bookinfoDeploymentSpec, bookinfoGatewaySpec, bookinfoServiceMeshLabels } from "../../builders/bookinfo";
import { planBookinfo } from "../../components/bookinfo/resolve";
import { MeshRateLimitArgs } from "../../mesh/mesh-ratelimit-args.generated";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { K8sObject } from "../../lib/k8s-object";
import { localBuckets } from "../../gateway-model/workload-buckets";
import { Simulator } from "../../prove/simulate";
import { buildProgram } from "../../program/program";
import { LiveObjectMeta } from "../../components/common/ownership";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";

/** A committed golden render (tests/golden/out/<name>), one object per file. */
function renderOf(name: string): K8sObject[] {
    const dir = path.join(__dirname, "..", "golden", "out", name);
    return fs.readdirSync(dir).map((f) => parse(fs.readFileSync(path.join(dir, f), "utf8")) as K8sObject);
}

/** The committed ambient render of a variant (tests/golden/out/ambient-<v>). */
function ambientRender(variant: "A" | "B"): K8sObject[] {
    return renderOf(`ambient-${variant}`);
}

/** The pod template's metadata of a Deployment spec the builder returns (plain values, no outputs). */
function podMeta(spec: ReturnType<typeof bookinfoDeploymentSpec>): { labels: Record<string, string>; annotations?: unknown } {
    return (spec.template as { metadata: { labels: Record<string, string>; annotations?: unknown } }).metadata;
}

const LOCAL: LocalRateLimitArgs = { selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop" };
const AMBIENT_LOCAL: LocalRateLimitArgs = { meshMode: "ambient", service: "orders", port: 8080, bucket: 10, namespace: "shop" };
const AMBIENT: MeshRateLimitArgs = { meshMode: "ambient", local: { enabled: false }, managedApi: { enabled: false } };

describe("ambient mesh: the local bucket on the waypoint, and what stays refused", () => {
    it("LocalRateLimit meshMode ambient: a bucket on the waypoint by targetRefs, scoped to the Service's chain; the sidecar's fields refused", () => {
        const v = resolveLocalRateLimit("orders", { ...AMBIENT_LOCAL }).value!;
        expect(v.bucket.waypoint).to.deep.equal({ name: "waypoint", host: "orders.shop.svc.cluster.local" });
        expect(v.bucket).not.to.have.property("selector");
        expect(v.createWaypoint).to.equal("waypoint");
        const taken = resolveLocalRateLimit("orders", { ...AMBIENT_LOCAL, waypoint: "shop-wp", createWaypoint: false, clusterDomain: "corp.example" }).value!;
        expect(taken.bucket.waypoint).to.deep.equal({ name: "shop-wp", host: "orders.shop.svc.corp.example" });
        expect(taken).not.to.have.property("createWaypoint");
        // Controls: the sidecar's fields on ambient, the ambient fields on the sidecar, each refused with its fix.
        const refused = resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "ambient", reachAllNamespaces: true });
        expect(refused.value).to.equal(undefined);
        expect(refused.problems.map((p) => p.key)).to.deep.equal(["service", "selector", "reachAllNamespaces"]);
        expect(refused.problems[0].fix).to.match(/istio\.io\/use-waypoint/);
        expect(resolveLocalRateLimit("orders", { ...LOCAL, service: "orders" }).problems.map((p) => p.key)).to.deep.equal(["service"]);
        expect(resolveLocalRateLimit("orders", { ...AMBIENT_LOCAL, service: "Orders_" }).problems.map((p) => p.key)).to.deep.equal(["service"]);
        expect(resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "sidecar" }).problems).to.deep.equal([]);
        expect(resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "wide" as never }).problems.map((p) => p.key)).to.deep.equal(["meshMode"]);
    });

    it("the waypoint bucket's filter: targetRefs to the waypoint, SIDECAR_INBOUND, main_internal and the Service's chain by name, both forms", () => {
        const chain = "inbound-vip|8080|http|orders.shop.svc.cluster.local";
        const whole = planLocalRateLimit("orders", AMBIENT_LOCAL).spec!;
        expect(whole.targetRefs).to.deep.equal([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }]);
        expect(whole).not.to.have.property("workloadSelector");
        expect(whole.configPatches).to.have.length(1);
        const m = whole.configPatches[0]!.match as any;
        expect(m.context).to.equal("SIDECAR_INBOUND");
        expect(m.listener).to.deep.equal({
            name: "main_internal",
            filterChain: { name: chain, filter: { name: "envoy.filters.network.http_connection_manager" } },
        });
        const perRoute = planLocalRateLimit("orders", { ...AMBIENT_LOCAL, routes: ["checkout"] }).spec!;
        expect(perRoute.configPatches.map((p) => (p.match as any).routeConfiguration?.name)).to.deep.equal([undefined, chain]);
        expect((perRoute.configPatches[1]!.match as any).routeConfiguration.vhost).to.deep.equal({
            name: "inbound|http|8080",
            route: { name: "checkout", action: "ANY" },
        });
        // The same bucket value as the sidecar's: only the target and the match differ.
        const side = planLocalRateLimit("orders", LOCAL).spec!;
        expect((whole.configPatches[0]!.patch as any).value).to.deep.equal((side.configPatches[0]!.patch as any).value);
        expect((side.configPatches[0]!.match as any).listener).to.deep.equal({
            portNumber: 8080,
            filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } },
        });
        expect(side).not.to.have.property("targetRefs");
    });

    it("preview's warning names the upstream state, the per-waypoint-pod count and the Service's labels; a taken waypoint must exist", () => {
        const w = ambientWarning(resolveLocalRateLimit("orders", AMBIENT_LOCAL).value!);
        for (const re of [
            /#55149/,
            /#56476/,
            /#57350/,
            /#57971/,
            /unsupported/,
            /per waypoint pod/,
            /shop\/orders must carry istio\.io\/use-waypoint: waypoint/,
        ])
            expect(w).to.match(re);
        expect(w).not.to.match(/must exist/);
        expect(ambientWarning(resolveLocalRateLimit("orders", { ...AMBIENT_LOCAL, createWaypoint: false }).value!)).to.match(
            /shop\/waypoint is taken as it is: it must exist/,
        );
    });

    it("the stack on ambient with its local bucket: accepted, on the waypoint serving productpage, which Bookinfo labels; sidecar: no label", () => {
        const args: MeshRateLimitArgs = { meshMode: "ambient", managedApi: { enabled: false } };
        expect(checkMeshArgs(args).problems).to.deep.equal([]);
        const s = checkMeshArgs(args).settings;
        expect(localArgsOf(s)).to.include({ meshMode: "ambient", service: "productpage" }).and.not.have.property("selector");
        const b = planBookinfo(bookinfoArgsOf(s)).value!;
        expect(bookinfoServiceMeshLabels(b, "productpage")).to.deep.equal({ "istio.io/use-waypoint": "waypoint", "istio.io/ingress-use-waypoint": "true" });
        expect(bookinfoServiceMeshLabels(b, "reviews")).to.deep.equal({});
        // Controls: no bucket on ambient, no waypoint label; the sidecar stack neither.
        expect(bookinfoServiceMeshLabels(planBookinfo(bookinfoArgsOf(checkMeshArgs(AMBIENT).settings)).value!, "productpage")).to.deep.equal({});
        const side = checkMeshArgs({ managedApi: { enabled: false } }).settings;
        expect(bookinfoServiceMeshLabels(planBookinfo(bookinfoArgsOf(side)).value!, "productpage")).to.deep.equal({});
        expect(localArgsOf(side)).to.have.property("selector").that.deep.equals({ app: "productpage" });
    });

    it("ambient refuses the seed profile, root filter namespaces and the managed API, each under its field; sidecar takes them", () => {
        const keys = (a: MeshRateLimitArgs) => checkMeshArgs(a).problems.map((p) => p.key);
        expect(keys({ ...AMBIENT, apiProfile: "seed" })).to.deep.equal(["apiProfile"]);
        expect(keys({ ...AMBIENT, mesh: { filterNamespaces: "root" } })).to.deep.equal(["mesh.filterNamespaces"]);
        expect(keys({ ...AMBIENT, managedApi: { enabled: true, includeIpRanges: ["10.0.0.0/8"], serviceName: "x.endpoints.p.cloud.goog" } })).to.deep.equal([
            "managedApi.enabled",
        ]);
        expect(keys({ apiProfile: "seed", mesh: { filterNamespaces: "root" }, managedApi: { enabled: false } })).to.deep.equal([]);
        // A whole ambient plan is accepted (nothing refused by a component either).
        expect(() => planMeshRateLimit(AMBIENT)).not.to.throw();
    });
});

describe("ambient mesh: what the plan hands the components", () => {
    it("the global filters target the Gateway API Gateway by name in the gateway's namespace (no selector); sidecar: the selector", () => {
        const amb = checkMeshArgs(AMBIENT).settings;
        const g = globalArgsOf(AMBIENT, amb, amb.bookinfo).gateway;
        expect(g).to.include({ gatewayApiName: "bookinfo-gateway", namespace: "istio-system" });
        expect(g).not.to.have.property("selector");
        expect(globalArgsOf(AMBIENT, amb, amb.bookinfo).meshMode).to.equal("ambient");
        const side = checkMeshArgs({ managedApi: { enabled: false } }).settings;
        expect(globalArgsOf({}, side, side.bookinfo).gateway)
            .to.have.property("selector")
            .that.deep.equals({ istio: "ingressgateway" });
    });

    it("the default access principal on ambient is the Gateway API pods' account <name>-istio", () => {
        expect(checkMeshArgs(AMBIENT).settings.access.gatewayPrincipal).to.equal("cluster.local/ns/istio-system/sa/bookinfo-gateway-istio");
        expect(checkMeshArgs({ managedApi: { enabled: false } }).settings.access.gatewayPrincipal).to.match(/istio-ingressgateway-service-account$/);
    });

    it("bookinfo on ambient: pods enrolled (dataplane-mode ambient, injection off, no sidecar stats annotation), the Gateway selecting the Gateway API pods", () => {
        const b = planBookinfo(bookinfoArgsOf(checkMeshArgs(AMBIENT).settings)).value!;
        const pod = podMeta(bookinfoDeploymentSpec(b, "productpage", "v1", {}));
        expect(pod.labels).to.include({ "istio.io/dataplane-mode": "ambient", "sidecar.istio.io/inject": "false" });
        expect(pod.annotations).to.equal(undefined);
        expect(bookinfoGatewaySpec(b).selector).to.deep.equal({ "gateway.networking.k8s.io/gateway-name": "bookinfo-gateway" });
        const s = planBookinfo(bookinfoArgsOf(checkMeshArgs({ managedApi: { enabled: false } }).settings)).value!;
        const sidecarPod = podMeta(bookinfoDeploymentSpec(s, "productpage", "v1", {}));
        expect(sidecarPod.labels).to.include({ "sidecar.istio.io/inject": "true" }).and.not.have.property("istio.io/dataplane-mode");
        expect(bookinfoGatewaySpec(s).selector).to.deep.equal({ istio: "ingressgateway" });
    });
});

describe("ambient mesh: explain models the ambient render as the sidecar one", () => {
    it("the model reads Istio's Gateway (not the Gateway API one) and the filters aimed at its pods by name; aimed elsewhere, none", () => {
        for (const v of ["A", "B"] as const) {
            const objects = ambientRender(v);
            const m = gatewayModel(objects);
            expect(m.gateway.selector).to.deep.equal({ "gateway.networking.k8s.io/gateway-name": "bookinfo-gateway" });
            expect(m.filterNames).to.include.members(["filter-ratelimit", "filter-ratelimit-svc"]);
            // Control: every filter aimed at another Gateway reaches nothing the model reads.
            const other = objects.map((o) =>
                o.kind === "EnvoyFilter"
                    ? { ...o, spec: { ...o.spec, targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "other" }] } }
                    : o,
            );
            expect(() => gatewayModel(other)).to.throw(/no EnvoyFilter inserts envoy.filters.http.ratelimit/);
        }
    });
});

describe("ambient mesh: explain and replay count the waypoint's bucket as the sidecar's", () => {
    const upstream = "outbound|9080||productpage.default.svc.cluster.local";
    /** Who refused each of five requests to productpage within a second, through the model of the program's objects. */
    function refusals(objects: K8sObject[]): (string | undefined)[] {
        const sim = new Simulator(objects);
        const t0 = Date.UTC(2026, 11, 2, 6, 0, 0);
        return ["a", "b", "c", "d", "e"].map((p, i) => {
            const d = sim.decide({ path: `/static/${p}`, timeMs: t0 + i, upstream });
            return d.allowed ? undefined : d.refusedBy?.by === "local bucket" ? d.refusedBy.envoyFilter : d.refusedBy?.by;
        });
    }
    const edited = (objects: K8sObject[], pick: (o: K8sObject) => boolean, edit: (o: any) => void): K8sObject[] =>
        objects.map((o) => {
            if (!pick(o)) return o;
            const c = JSON.parse(JSON.stringify(o));
            edit(c);
            return c;
        });
    const isBucket = (o: K8sObject) => o.kind === "EnvoyFilter" && o.metadata.name === "filter-local-ratelimit-svc";

    it("the committed ambient render of A: the fifth request within the minute refused by the waypoint's bucket (4 a minute per waypoint pod)", () => {
        const objects = ambientRender("A");
        const buckets = localBuckets(objects);
        expect(buckets).to.have.length(1);
        expect(buckets[0]).to.include({ envoyFilter: "default/filter-local-ratelimit-svc", port: 9080, maxTokens: 4 });
        expect(buckets[0]!.waypoint).to.deep.equal({ name: "waypoint", service: "productpage" });
        const refused = [undefined, undefined, undefined, undefined, "default/filter-local-ratelimit-svc"];
        expect(refusals(objects)).to.deep.equal(refused);
        // The sidecar stack of the same variant refuses the same request by its sidecar's bucket of the same name.
        expect(refusals(renderOf("A-current"))).to.deep.equal(refused);
    });

    it("controls: the Service not sent to the waypoint by the ingress, or the bucket on another Service's chain or listener, refuses nothing", () => {
        const objects = ambientRender("A");
        const none = [undefined, undefined, undefined, undefined, undefined];
        const isPage = (o: K8sObject) => o.kind === "Service" && o.metadata.name === "productpage";
        expect(refusals(edited(objects, isPage, (o) => delete o.metadata.labels["istio.io/ingress-use-waypoint"]))).to.deep.equal(none);
        expect(refusals(edited(objects, isPage, (o) => (o.metadata.labels["istio.io/use-waypoint"] = "other")))).to.deep.equal(none);
        const chain = (o: any) => o.spec.configPatches[0].match.listener;
        expect(
            refusals(edited(objects, isBucket, (o) => (chain(o).filterChain.name = "inbound-vip|9080|http|reviews.default.svc.cluster.local"))),
        ).to.deep.equal(none);
        const onHbone = edited(objects, isBucket, (o) => (chain(o).name = "connect_terminate"));
        expect(localBuckets(onHbone)).to.deep.equal([]);
        expect(refusals(onHbone)).to.deep.equal(none);
    });
});

describe("ambient mesh: the stack's waypoint and someone else's of the same name", () => {
    const config = { "mesh-ratelimit:meshMode": "ambient", "mesh-ratelimit:managedApi": "false" };
    const id = (r: { kind: string; namespace?: string; name: string }) => `${r.kind}/${r.namespace}/${r.name}`;

    it("a Gateway `waypoint` in bookinfo's namespace that the stack did not create stops the program before anything is registered", () => {
        let asked: string[] = [];
        const foreign = { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", metadata: { name: "waypoint", namespace: "default" } };
        const run = (live: LiveObjectMeta[]) => () =>
            buildProgram(config, {
                lookupObjects: (refs) => {
                    asked = refs.map(id);
                    return live;
                },
            });
        expect(run([foreign])).to.throw(/Gateway default\/waypoint already exists and is not this stack's/);
        expect(asked).to.include("Gateway/default/waypoint");
        // Control: the sidecar stack plans no waypoint, so the same live object is nobody's concern.
        asked = [];
        expect(() =>
            buildProgram(
                { "mesh-ratelimit:managedApi": "false" },
                {
                    lookupObjects: (refs) => {
                        asked = refs.map(id);
                        throw new Error("looked up");
                    },
                },
            ),
        ).to.throw(/looked up/);
        expect(asked).to.include("EnvoyFilter/default/filter-local-ratelimit-svc").and.not.include("Gateway/default/waypoint");
    });
});
