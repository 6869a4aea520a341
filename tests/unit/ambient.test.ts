/**
 * The stack on an ambient mesh (docs/guide/ambient.md): the local bucket refused with the upstream
 * reason (LocalRateLimit on its own and the stack's), what else ambient refuses, and what the
 * ambient plan hands its components (the Gateway API target, the pods' enrolment). Each case has
 * its sidecar control beside it: the same arguments with `meshMode` sidecar pass.
 */
import { expect } from "chai";
import { resolveLocalRateLimit, LocalRateLimitArgs } from "../../components/local-ratelimit";
import { checkMeshArgs } from "../../mesh/mesh-checks";
import { bookinfoArgsOf, globalArgsOf, planMeshRateLimit } from "../../mesh/mesh-plan";
import { bookinfoDeploymentSpec, bookinfoGatewaySpec } from "../../builders/bookinfo";
import { planBookinfo } from "../../components/bookinfo-resolve";
import { MeshRateLimitArgs } from "../../mesh/mesh-ratelimit-args.generated";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { K8sObject } from "../../lib/k8s-object";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";

/** The committed ambient render of a variant (tests/golden/out/ambient-<v>), one object per file. */
function ambientRender(variant: "A" | "B"): K8sObject[] {
    const dir = path.join(__dirname, "..", "golden", "out", `ambient-${variant}`);
    return fs.readdirSync(dir).map((f) => parse(fs.readFileSync(path.join(dir, f), "utf8")) as K8sObject);
}

/** The pod template's metadata of a Deployment spec the builder returns (plain values, no outputs). */
function podMeta(spec: ReturnType<typeof bookinfoDeploymentSpec>): { labels: Record<string, string>; annotations?: unknown } {
    return (spec.template as { metadata: { labels: Record<string, string>; annotations?: unknown } }).metadata;
}

const LOCAL: LocalRateLimitArgs = { selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop" };
const AMBIENT: MeshRateLimitArgs = { meshMode: "ambient", local: { enabled: false }, managedApi: { enabled: false } };

describe("ambient mesh: the local bucket is refused with the upstream reason", () => {
    it("LocalRateLimit meshMode ambient: one problem naming the upstream issues and the ingress alternatives; sidecar passes", () => {
        const refused = resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "ambient" });
        expect(refused.value).to.equal(undefined);
        expect(refused.problems.map((p) => p.key)).to.deep.equal(["meshMode"]);
        expect(refused.problems[0].problem)
            .to.match(/waypoint/)
            .and.match(/#55149/)
            .and.match(/#57971/)
            .and.match(/no WAYPOINT/);
        expect(refused.problems[0].fix)
            .to.match(/GlobalRateLimit rule/)
            .and.match(/preLimit/);
        expect(resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "sidecar" }).problems).to.deep.equal([]);
        expect(resolveLocalRateLimit("orders", { ...LOCAL, meshMode: "wide" as never }).problems.map((p) => p.key)).to.deep.equal(["meshMode"]);
    });

    it("the stack on ambient with its local bucket: refused under local.enabled, the fix turning it off or going back to sidecar", () => {
        const { problems } = checkMeshArgs({ meshMode: "ambient", managedApi: { enabled: false } });
        expect(problems.map((p) => p.key)).to.deep.equal(["local.enabled"]);
        expect(problems[0].problem)
            .to.match(/^must be false with meshMode ambient/)
            .and.match(/#55149/);
        expect(problems[0].fix)
            .to.match(/local\.enabled: false/)
            .and.match(/meshMode: "sidecar"/);
        expect(checkMeshArgs(AMBIENT).problems).to.deep.equal([]);
        expect(checkMeshArgs({ managedApi: { enabled: false } }).problems).to.deep.equal([]);
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
