/**
 * Objects shared with the cluster (program/preflight.ts): the decision table, what the program
 * registers for each answer of the cluster, and the config errors. The cluster's answer is a fixture
 * (`cluster` in the render options); the cluster tier (tests/cluster/shared-objects.test.ts) asks a
 * real API server.
 */
import { expect } from "chai";
import { LiveObject, planSharedObjects, sharedObjectRefs } from "../../program/preflight";
import { classifyNeighbours, meshReachQuery, planMeshReach } from "../../program/mesh-reach";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";
import { planOfConfig, resolveSettings } from "../../program/config-args";
import { MeshRateLimitPlan } from "../../mesh/mesh-plan";
import { MeshReachState } from "../../program/mesh-reach";
import { InputError } from "../../lib/problems";
import { Registration, registerProgram } from "../../render/render";
import { DEV, render } from "./helpers";
import { OWNER_ANNOTATION } from "../../components/common/ownership";

/** The stack the offline render runs as (render/render.ts: organization, project, stack "render"). */
/** The stack the offline render runs as (render/render.ts), with the render's placeholder stack id. */
const RENDER_OWNER = "organization/mesh-ratelimit/render@render-only-stack-id";
/** Metadata of an object this very stack created: its owner annotation. */
const OURS = { annotations: { [OWNER_ANNOTATION]: RENDER_OWNER }, labels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } };
/** Another stack of the same program: the same part-of label, another owner. */
const SECOND_STACK = { annotations: { [OWNER_ANNOTATION]: "organization/mesh-ratelimit/second" }, labels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } };
type Marks = { labels?: Record<string, string>; annotations?: Record<string, string> };

function ingressClass(name: string, controller: string, marks: Marks = {}): LiveObject {
    return { apiVersion: "networking.k8s.io/v1", kind: "IngressClass", metadata: { name, ...marks }, spec: { controller } };
}

function peerAuth(spec: any, marks: Marks = {}, namespace = "istio-system"): LiveObject {
    return { apiVersion: "security.istio.io/v1", kind: "PeerAuthentication", metadata: { name: "default", namespace, ...marks }, spec };
}

function envoyFilter(name: string, marks: Marks = {}): LiveObject {
    return { apiVersion: "networking.istio.io/v1alpha3", kind: "EnvoyFilter", metadata: { name, namespace: "istio-system", ...marks }, spec: {} };
}

/** The PeerAuthentication `default` decisions concern mutual TLS for the whole mesh (`mutualTlsScope` mesh). */
const MESH_WIDE = { mutualTlsScope: "mesh" };
const stack = (over: Record<string, string> = {}) => planOfConfig({ ...DEV, ...MESH_WIDE, ...over });
const settings = (over: Record<string, string> = {}) => stack(over).settings;
/** The shared objects a stack would look up, from its plan. */
const refsOf = (p: MeshRateLimitPlan) => sharedObjectRefs(p.settings, p.global);
/** The mesh-reach plan of a stack config (its settings and its GlobalRateLimit plan). */
const reachOf = (raw: Record<string, string>, state: MeshReachState) => {
    const p = planOfConfig(raw);
    return planMeshReach(p.settings, state, p.global);
};

/** Runs the program under mocks with a cluster fixture; returns registrations, messages and the error. */
async function run(cluster: LiveObject[], over: Record<string, string> = {}) {
    const seen: Registration[] = [];
    const reports: string[] = [];
    let error: unknown;
    try {
        await registerProgram({ base: { ...DEV, ...MESH_WIDE }, overrides: over, cluster, onRegister: (r) => seen.push(r), onReport: (m) => reports.push(m) });
    } catch (e) {
        error = e;
    }
    const kinds = (kind: string) => seen.filter((r) => r.inputs?.kind === kind);
    return { seen, reports, error, kinds };
}

describe("shared objects: which fixed-name objects outside the stack's namespaces are looked up", () => {
    it("current profile: the IngressClass, PeerAuthentication default and the EnvoyFilters", () => {
        const refs = refsOf(stack()).map((r) => `${r.kind}/${r.namespace ?? "-"}/${r.name}`);
        expect(refs).to.deep.equal([
            "IngressClass/-/istio",
            "PeerAuthentication/istio-system/default",
            "EnvoyFilter/istio-system/filter-ratelimit",
            "EnvoyFilter/istio-system/filter-ratelimit-svc",
            "EnvoyFilter/istio-system/filter-ratelimit-svc-api",
            "EnvoyFilter/istio-system/filter-ratelimit-per-value",
            "EnvoyFilter/istio-system/filter-ratelimit-per-value-svc",
            "EnvoyFilter/istio-system/filter-ratelimit-per-value-svc-api",
            "EnvoyFilter/default/filter-local-ratelimit-svc",
        ]);
    });

    it("mutual TLS for the stack's pods only (the default scope): no mesh-wide PeerAuthentication is looked up or created", () => {
        const refs = refsOf(planOfConfig({ ...DEV })).map((r) => `${r.kind}/${r.namespace ?? "-"}/${r.name}`);
        expect(refs.filter((r) => r.startsWith("PeerAuthentication"))).to.deep.equal([]);
    });

    it("seed profile: no IngressClass (the annotation selects Istio) and no PeerAuthentication", () => {
        const kinds = refsOf(stack({ apiProfile: "seed" })).map((r) => r.kind);
        expect(kinds).to.not.include("IngressClass");
        expect(kinds).to.not.include("PeerAuthentication");
        expect(kinds.filter((k) => k === "EnvoyFilter")).to.have.length(7);
    });

    it("variant B has no route filter; managedApi=false no IngressClass; mutualTls=false no PeerAuthentication", () => {
        expect(refsOf(stack({ variant: "B" })).map((r) => r.name)).to.not.include("filter-ratelimit-svc-api");
        expect(refsOf(stack({ managedApi: "false" })).map((r) => r.kind)).to.not.include("IngressClass");
        expect(refsOf(stack({ mutualTls: "false" })).map((r) => r.kind)).to.not.include("PeerAuthentication");
    });

    it("the IngressClass looked up is the configured class name", () => {
        expect(refsOf(stack({ ingressClassName: "istio-mesh" })).find((r) => r.kind === "IngressClass")?.name).to.equal("istio-mesh");
    });
});

describe("shared objects: the decision table", () => {
    const table: { name: string; live: LiveObject[]; ingressClass?: string; peerAuth?: string; ic: boolean; pa: boolean; error?: RegExp }[] = [
        { name: "cluster lacks everything", live: [], ingressClass: "create", peerAuth: "create", ic: true, pa: true },
        {
            name: "IngressClass istio for Istio, someone else's",
            live: [ingressClass("istio", "istio.io/ingress-controller")],
            ingressClass: "leave",
            ic: false,
            pa: true,
        },
        {
            name: "IngressClass istio created by this stack",
            live: [ingressClass("istio", "istio.io/ingress-controller", OURS)],
            ingressClass: "manage",
            ic: true,
            pa: true,
        },
        {
            name: "IngressClass istio of another controller",
            live: [ingressClass("istio", "k8s.io/ingress-nginx")],
            ic: false,
            pa: true,
            error: /IngressClass istio already exists with controller 'k8s\.io\/ingress-nginx'/,
        },
        {
            name: "an IngressClass of another name is irrelevant",
            live: [ingressClass("nginx", "k8s.io/ingress-nginx")],
            ingressClass: "create",
            ic: true,
            pa: true,
        },
        { name: "PeerAuthentication default STRICT, someone else's", live: [peerAuth({ mtls: { mode: "STRICT" } })], peerAuth: "leave", ic: true, pa: false },
        {
            name: "PeerAuthentication default created by this stack",
            live: [peerAuth({ mtls: { mode: "STRICT" } }, OURS)],
            peerAuth: "manage",
            ic: true,
            pa: true,
        },
        {
            name: "PeerAuthentication default PERMISSIVE",
            live: [peerAuth({ mtls: { mode: "PERMISSIVE" } })],
            ic: true,
            pa: false,
            error: /PeerAuthentication istio-system\/default already exists with mtls\.mode PERMISSIVE/,
        },
        { name: "PeerAuthentication default without a mode", live: [peerAuth({})], ic: true, pa: false, error: /mtls\.mode unset/ },
        {
            name: "PeerAuthentication default STRICT but with a selector",
            live: [peerAuth({ selector: { matchLabels: { app: "x" } }, mtls: { mode: "STRICT" } })],
            ic: true,
            pa: false,
            error: /not mesh-wide/,
        },
        {
            name: "PeerAuthentication default in another namespace is irrelevant",
            live: [peerAuth({ mtls: { mode: "PERMISSIVE" } }, undefined, "other")],
            peerAuth: "create",
            ic: true,
            pa: true,
        },
        {
            name: "EnvoyFilter filter-ratelimit from Istio's rate-limit task",
            live: [envoyFilter("filter-ratelimit")],
            ic: true,
            pa: true,
            error: /EnvoyFilter istio-system\/filter-ratelimit already exists and was not created by this stack/,
        },
        { name: "EnvoyFilter filter-ratelimit of this stack", live: [envoyFilter("filter-ratelimit", OURS)], ingressClass: "create", ic: true, pa: true },
        {
            name: "EnvoyFilter filter-ratelimit of another stack of this program (same part-of label, another owner)",
            live: [envoyFilter("filter-ratelimit", SECOND_STACK)],
            ic: true,
            pa: true,
            error: /EnvoyFilter istio-system\/filter-ratelimit already exists and was not created by this stack \(it belongs to stack organization\/mesh-ratelimit\/second\)/,
        },
        {
            name: "IngressClass istio labelled part-of mesh-ratelimit, no owner annotation: left alone, never managed",
            live: [ingressClass("istio", "istio.io/ingress-controller", { labels: OURS.labels })],
            ingressClass: "leave",
            ic: false,
            pa: true,
        },
    ];
    for (const c of table) {
        it(c.name, () => {
            const plan = planSharedObjects(settings(), c.live, stack().global, RENDER_OWNER);
            const action = (kind: string) => plan.decisions.find((d) => d.ref.kind === kind)?.action;
            if (c.error) {
                expect(plan.problems, "problems").to.have.length(1);
                expect(plan.problems[0].problem).to.match(c.error);
                return;
            }
            expect(plan.problems, JSON.stringify(plan.problems)).to.deep.equal([]);
            if (c.ingressClass) expect(action("IngressClass")).to.equal(c.ingressClass);
            if (c.peerAuth) expect(action("PeerAuthentication")).to.equal(c.peerAuth);
            expect(plan.ingressClass, "registers the IngressClass").to.equal(c.ic);
            expect(plan.peerAuthentication, "registers the PeerAuthentication").to.equal(c.pa);
        });
    }

    it("every problem names the object and a fix; the fix never modifies the object silently", () => {
        const plan = planSharedObjects(
            settings(),
            [ingressClass("istio", "example.com/other"), peerAuth({ mtls: { mode: "PERMISSIVE" } }), envoyFilter("filter-ratelimit-svc")],
            stack().global,
        );
        expect(plan.problems.map((p) => p.key)).to.deep.equal(["ingressClassName", "mutualTls", "meshNamespace"]);
        expect(plan.problems[0].fix).to.match(/pulumi config set ingressClassName /);
        expect(plan.problems[1].fix).to.match(/kubectl -n istio-system patch peerauthentication default .*STRICT.*pulumi config set mutualTls false/);
        expect(plan.problems[2].fix).to.match(/kubectl -n istio-system delete envoyfilter filter-ratelimit-svc/);
    });
});

describe("shared objects: what the program registers for each answer of the cluster", function () {
    this.timeout(60_000);

    it("offline (cluster lacks everything): IngressClass istio for Istio's controller, labelled as the stack's", async () => {
        const r = await render();
        const ic = r.get("IngressClass", "istio");
        expect(ic.apiVersion).to.equal("networking.k8s.io/v1");
        expect(ic.metadata.namespace).to.equal(undefined);
        expect(ic.spec).to.deep.equal({ controller: "istio.io/ingress-controller" });
        expect(ic.metadata.labels).to.include(OURS.labels);
        expect(ic.metadata.annotations).to.include(OURS.annotations);
        expect(r.get("Ingress", "simple-ingress", "default").spec.ingressClassName).to.equal("istio");
        // Mutual TLS for the stack's own pods by default: nothing mesh-wide.
        expect(r.find("PeerAuthentication", "default", "istio-system")).to.equal(undefined);
    });

    it("seed profile: no IngressClass; the annotation carries the class name", async () => {
        const r = await render({ apiProfile: "seed", overrides: { ingressClassName: "istio-mesh" } });
        expect(r.names("IngressClass")).to.deep.equal([]);
        expect(r.get("Ingress", "simple-ingress", "default").metadata.annotations["kubernetes.io/ingress.class"]).to.equal("istio-mesh");
    });

    it("seed Ingress: path /echo with pathType Prefix (else the API server defaults ImplementationSpecific and Istio matches /echo exactly)", async () => {
        const r = await render({ apiProfile: "seed" });
        const [path] = r.get("Ingress", "simple-ingress", "default").spec.rules[0].http.paths;
        expect(path).to.deep.include({ path: "/echo", pathType: "Prefix" });
    });

    it("ingressClassName names both the Ingress's class and the IngressClass created", async () => {
        const r = await render({ overrides: { ingressClassName: "istio-mesh" } });
        expect(r.names("IngressClass")).to.deep.equal(["istio-mesh"]);
        expect(r.get("Ingress", "simple-ingress", "default").spec.ingressClassName).to.equal("istio-mesh");
    });

    it("IngressClass absent: registered, and preview says it will be created", async () => {
        const { kinds, reports, error } = await run([]);
        expect(error).to.equal(undefined);
        expect(kinds("IngressClass").map((r) => r.inputs.metadata.name)).to.deep.equal(["istio"]);
        expect(reports.join("\n")).to.match(/IngressClass istio: not in the cluster; the stack creates it/);
    });

    it("IngressClass present for Istio (not the stack's): not registered, preview says it is left alone", async () => {
        const { kinds, reports, error } = await run([ingressClass("istio", "istio.io/ingress-controller")]);
        expect(error).to.equal(undefined);
        expect(kinds("IngressClass")).to.deep.equal([]);
        expect(kinds("Ingress")).to.have.length(1);
        expect(reports.join("\n")).to.match(/IngressClass istio: already exists with controller istio\.io\/ingress-controller .*leaves it alone/);
    });

    it("IngressClass present, created by this stack: still registered (an update must not delete it)", async () => {
        const { kinds } = await run([ingressClass("istio", "istio.io/ingress-controller", OURS)]);
        expect(kinds("IngressClass")).to.have.length(1);
    });

    it("IngressClass present with another controller: InputError before any registration", async () => {
        const { seen, error } = await run([ingressClass("istio", "k8s.io/ingress-nginx")]);
        expect(error).to.be.instanceOf(InputError);
        expect((error as Error).message).to.match(
            /mesh-ratelimit:ingressClassName = "istio": IngressClass istio already exists with controller 'k8s\.io\/ingress-nginx'/,
        );
        expect((error as Error).message).to.match(/fix: pulumi config set ingressClassName/);
        expect(seen).to.deep.equal([]);
    });

    it("PeerAuthentication default absent: registered STRICT", async () => {
        const { kinds } = await run([]);
        expect(kinds("PeerAuthentication").map((r) => r.inputs.spec)).to.deep.equal([{ mtls: { mode: "STRICT" } }]);
    });

    it("PeerAuthentication default STRICT (not the stack's): nothing created, preview says mesh mTLS is already on", async () => {
        const { kinds, reports, error } = await run([peerAuth({ mtls: { mode: "STRICT" } })]);
        expect(error).to.equal(undefined);
        expect(kinds("PeerAuthentication")).to.deep.equal([]);
        expect(reports.join("\n")).to.match(
            /PeerAuthentication istio-system\/default: already exists with mtls\.mode STRICT .*never changes or deletes this one/,
        );
        // Everything else is still deployed.
        expect(kinds("EnvoyFilter")).to.have.length(7);
    });

    it("PeerAuthentication default PERMISSIVE: InputError naming the object and the fix, nothing registered", async () => {
        const { seen, error } = await run([peerAuth({ mtls: { mode: "PERMISSIVE" } })]);
        expect(error).to.be.instanceOf(InputError);
        const msg = (error as Error).message;
        expect(msg).to.contain("PeerAuthentication istio-system/default already exists with mtls.mode PERMISSIVE");
        expect(msg).to.contain("pulumi config set mutualTls false");
        expect(msg).to.contain("nothing was created");
        expect(seen).to.deep.equal([]);
    });

    it("PeerAuthentication default PERMISSIVE with mutualTls=false: not looked at, no error, no PeerAuthentication", async () => {
        const { kinds, error } = await run([peerAuth({ mtls: { mode: "PERMISSIVE" } })], { mutualTls: "false" });
        expect(error).to.equal(undefined);
        expect(kinds("PeerAuthentication")).to.deep.equal([]);
    });

    it("a foreign EnvoyFilter filter-ratelimit: InputError, nothing registered", async () => {
        const { seen, error } = await run([envoyFilter("filter-ratelimit")]);
        expect(error).to.be.instanceOf(InputError);
        expect((error as Error).message).to.contain("EnvoyFilter istio-system/filter-ratelimit already exists");
        expect(seen).to.deep.equal([]);
    });

    it("every problem at once: one InputError listing all three", async () => {
        const { error } = await run([ingressClass("istio", "example.com/x"), peerAuth({ mtls: { mode: "DISABLE" } }), envoyFilter("filter-ratelimit-svc")]);
        expect((error as Error).message).to.match(/invalid stack configuration \(3 problems\)/);
    });

    it("seed profile ignores an IngressClass and a PERMISSIVE PeerAuthentication (it uses neither)", async () => {
        const { error, kinds } = await run([ingressClass("istio", "k8s.io/ingress-nginx"), peerAuth({ mtls: { mode: "PERMISSIVE" } })], { apiProfile: "seed" });
        expect(error).to.equal(undefined);
        expect(kinds("IngressClass")).to.deep.equal([]);
        expect(kinds("PeerAuthentication")).to.deep.equal([]);
    });
});

describe("reach: the gateway filters reach only the stack's gateway; mesh-wide mutual TLS policies seen at preview", function () {
    this.timeout(60_000);
    const pod = (namespace: string, name: string): LiveObject => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace, labels: { istio: "ingressgateway" } },
    });
    const pa = (name: string, spec: any, namespace = "istio-system"): LiveObject => ({
        apiVersion: "security.istio.io/v1",
        kind: "PeerAuthentication",
        metadata: { name, namespace },
        spec,
    });
    const OURS_GW = pod("istio-system", "istio-ingressgateway-7d9f-abcde");
    const reach = (over: Record<string, string>, gatewayPods: LiveObject[], peerAuthentications: LiveObject[] = []) =>
        reachOf({ ...DEV, ...over }, { gatewayPods, peerAuthentications });

    it("asks for the selector's pods in every namespace and the root namespace's policies", () => {
        expect(meshReachQuery(resolveSettings({ ...DEV, gatewaySelector: "app=edge", meshNamespace: "mesh-root" }))).to.deep.equal({
            gatewaySelector: "app=edge",
            meshNamespace: "mesh-root",
            // The gateway's namespace and the root namespace: their EnvoyFilters reach the gateway's pods.
            envoyFilterNamespaces: ["istio-system", "mesh-root"],
        });
    });

    it("only the stack's gateway pods: nothing to say", () => {
        expect(reach({}, [OURS_GW, pod("istio-system", "istio-ingressgateway-7d9f-fghij")])).to.deep.equal({ problems: [], messages: [] });
    });

    it("another team's gateway with the same labels, while the filters live in the root namespace: refused, naming its namespace and pods", () => {
        const r = reach({}, [OURS_GW, pod("team-b", "istio-ingressgateway-1"), pod("team-b", "istio-ingressgateway-2"), pod("edge", "gw-0")]);
        expect(r.problems.map((p) => [p.key, p.value])).to.deep.equal([["gatewaySelector", "istio=ingressgateway"]]);
        expect(r.problems[0].problem).to.contain("edge (gw-0); team-b (istio-ingressgateway-1, istio-ingressgateway-2)");
        expect(r.problems[0].problem).to.contain("live in istio-system, Istio's root namespace");
        expect(r.problems[0].fix).to.match(/pulumi config set gatewaySelector/);
    });

    it("the same pods, with the gateway (and so its filters) in a namespace of its own: no problem (a filter there reaches only that namespace)", () => {
        const r = reach({ gatewayNamespace: "edge-gw" }, [pod("edge-gw", "gw-0"), pod("team-b", "istio-ingressgateway-1")]);
        expect(r.problems).to.deep.equal([]);
    });

    it("filterNamespaces root puts the filters in the root namespace again: refused", () => {
        const r = reach({ gatewayNamespace: "edge-gw", filterNamespaces: "root" }, [pod("edge-gw", "gw-0"), pod("team-b", "istio-ingressgateway-1")]);
        expect(r.problems.map((p) => p.key)).to.deep.equal(["gatewaySelector"]);
    });

    it("no gateway pod in gatewayNamespace: a message, not a refusal", () => {
        const r = reach({}, []);
        expect(r.problems).to.deep.equal([]);
        expect(r.messages).to.deep.equal([
            "no pod labelled istio=ingressgateway runs in istio-system (gatewayNamespace): the gateway limits apply once the gateway's pods run there",
        ]);
    });

    it("a mesh-wide policy under another name: seen at preview; refused only when the stack would add its own mesh-wide one", () => {
        const legacy = pa("mesh-default", { mtls: { mode: "PERMISSIVE" } });
        const scoped = reach({}, [OURS_GW], [legacy, pa("only-db", { selector: { matchLabels: { app: "db" } }, mtls: { mode: "STRICT" } })]);
        expect(scoped.problems).to.deep.equal([]);
        expect(scoped.messages).to.deep.equal([
            "mesh-wide PeerAuthentication in istio-system: mesh-default (PERMISSIVE); it keeps governing every other workload. The stack's own pods are STRICT through their workload-level PeerAuthentications, which take precedence",
        ]);
        const mesh = reach({ mutualTlsScope: "mesh" }, [OURS_GW], [legacy]);
        expect(mesh.problems.map((p) => [p.key, p.value])).to.deep.equal([["mutualTlsScope", "mesh"]]);
        expect(mesh.problems[0].problem).to.contain("istio-system/mesh-default (PERMISSIVE)");
        expect(mesh.problems[0].problem).to.contain("Istio applies only the oldest mesh-wide policy");
        expect(mesh.problems[0].fix).to.match(/^pulumi config set mutualTlsScope workloads/);
        // `default` itself is the shared-object decision's (planSharedObjects), not repeated here.
        expect(reach({ mutualTlsScope: "mesh" }, [OURS_GW], [pa("default", { mtls: { mode: "STRICT" } })]).problems).to.deep.equal([]);
        // A selector makes a policy workload-level, not mesh-wide; one in another namespace is a namespace's.
        expect(
            reach({ mutualTlsScope: "mesh" }, [OURS_GW], [pa("x", { selector: { matchLabels: { a: "b" } } }), pa("y", {}, "team-b")]).problems,
        ).to.deep.equal([]);
    });

    it("the program stops before registering anything when the reach check refuses", async () => {
        const seen: Registration[] = [];
        let error: unknown;
        try {
            await registerProgram({
                base: { ...DEV },
                meshReach: { gatewayPods: [OURS_GW, pod("team-b", "gw")], peerAuthentications: [] },
                onRegister: (r) => seen.push(r),
            });
        } catch (e) {
            error = e;
        }
        expect(error).to.be.instanceOf(InputError);
        expect((error as Error).message).to.match(
            /mesh-ratelimit:gatewaySelector = "istio=ingressgateway": also selects gateway pods outside istio-system: team-b \(gw\)/,
        );
        expect(seen).to.deep.equal([]);
        const reports: string[] = [];
        await registerProgram({
            base: { ...DEV },
            meshReach: { gatewayPods: [OURS_GW], peerAuthentications: [pa("legacy", { mtls: { mode: "PERMISSIVE" } })] },
            onReport: (m) => reports.push(m),
        });
        expect(reports.some((m) => m.startsWith("mesh-wide PeerAuthentication in istio-system: legacy (PERMISSIVE)"))).to.equal(true);
    });
});

describe("reach: a mesh-wide DISABLE policy and the stack's STRICT pods", () => {
    const pa = (name: string, mode: string): LiveObject => ({
        apiVersion: "security.istio.io/v1",
        kind: "PeerAuthentication",
        metadata: { name, namespace: "istio-system" },
        spec: { mtls: { mode } },
    });
    const gw: LiveObject = { apiVersion: "v1", kind: "Pod", metadata: { name: "gw-0", namespace: "istio-system" } };
    const reach = (over: Record<string, string>, pas: LiveObject[]) => reachOf({ ...DEV, ...over }, { gatewayPods: [gw], peerAuthentications: pas });

    it("refused with the default scope: clients would send plain text to pods that accept only mutual TLS", () => {
        const r = reach({}, [pa("mesh-off", "DISABLE")]);
        expect(r.problems.map((p) => [p.key, p.value])).to.deep.equal([["mutualTlsScope", "workloads"]]);
        expect(r.problems[0].problem).to.contain("istio-system/mesh-off has mode DISABLE");
        expect(r.problems[0].fix).to.match(/^pulumi config set mutualTls false/);
    });

    it("not refused: PERMISSIVE or STRICT mesh-wide, or mutualTls off", () => {
        expect(reach({}, [pa("m", "PERMISSIVE")]).problems).to.deep.equal([]);
        expect(reach({}, [pa("m", "STRICT")]).problems).to.deep.equal([]);
        expect(reach({ mutualTls: "false" }, [pa("m", "DISABLE")]).problems).to.deep.equal([]);
    });
});

describe("reach: other rate-limit filters on the gateway's pods and listener (many teams, one gateway)", () => {
    const gw: LiveObject = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "gw-0", namespace: "istio-system", labels: { istio: "ingressgateway", app: "gw" } },
    };
    const envoyFilter = (name: string, spec: any, namespace = "istio-system"): LiveObject => ({
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { name, namespace },
        spec,
    });
    /** Another team's GlobalRateLimit, planned in its own program. */
    const team = (layout: FilterLayout, host = "shop.example.com:8080"): LiveObject[] => {
        const args: GlobalRateLimitArgs = {
            domain: "shop",
            gateway: { selector: { istio: "ingressgateway" }, virtualHosts: [host] },
            namespace: "shop",
            rules: [{ name: "all", requestsPerUnit: 10, unit: LimitUnit.Minute }],
            filterLayout: layout,
            ...(layout === FilterLayout.Shared ? { filterNamePrefix: "shop-limits" } : {}),
        };
        return planGlobalRateLimit(args).filters.map((f) => envoyFilter(f.name, f.spec, f.namespace));
    };
    /** A hand-written filter: canonical name, stage 0, rate_limits on the virtual host named `vhost`. */
    const handWritten = (vhost: string | undefined, port?: number) =>
        envoyFilter("legacy-ratelimit", {
            workloadSelector: { labels: { istio: "ingressgateway" } },
            configPatches: [
                {
                    applyTo: "HTTP_FILTER",
                    match: {
                        context: "GATEWAY",
                        listener: { ...(port ? { portNumber: port } : {}), filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } },
                    },
                    patch: {
                        operation: "INSERT_BEFORE",
                        value: {
                            name: "envoy.filters.http.ratelimit",
                            typed_config: {
                                "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit",
                                domain: "legacy",
                                failure_mode_deny: true,
                            },
                        },
                    },
                },
                {
                    applyTo: "VIRTUAL_HOST",
                    match: { context: "GATEWAY", routeConfiguration: { vhost: vhost === undefined ? {} : { name: vhost } } },
                    patch: { operation: "MERGE", value: { rate_limits: [{ actions: [{ generic_key: { descriptor_value: "x" } }] }] } },
                },
            ],
        });
    const check = (over: Record<string, string>, envoyFilters: LiveObject[]) => {
        const p = planOfConfig({ ...DEV, ...over });
        return {
            verdicts: classifyNeighbours(p.settings, { gatewayPods: [gw], peerAuthentications: [], envoyFilters }, p.global).map((n) => [
                n.envoyFilter,
                n.verdict,
            ]),
            plan: planMeshReach(p.settings, { gatewayPods: [gw], peerAuthentications: [], envoyFilters }, p.global),
        };
    };

    it("per-instance stack: another per-instance stack and a hand-written filter on its own host coexist (messages, no problem)", () => {
        const r = check({ filterLayout: "per-instance" }, [...team(FilterLayout.PerInstance), handWritten("legacy.example.com:8080")]);
        expect(r.verdicts).to.deep.equal([
            ["istio-system/shop-ratelimit", "coexists"],
            ["istio-system/legacy-ratelimit", "coexists"],
        ]);
        expect(r.plan.problems).to.deep.equal([]);
        expect(r.plan.messages.filter((m) => m.includes("coexists safely"))).to.have.length(2);
    });

    it("per-instance stack: a hand-written filter whose rate_limits name every virtual host (\"\" or none) leaks into the stack's hosts: said, with the owner's fix", () => {
        for (const vhost of ["", undefined]) {
            const r = check({ filterLayout: "per-instance" }, [handWritten(vhost)]);
            expect(r.verdicts, String(vhost)).to.deep.equal([["istio-system/legacy-ratelimit", "leaks"]]);
            expect(r.plan.problems).to.deep.equal([]);
            expect(r.plan.messages.join("\n")).to.contain("would leak into the stack's hosts").and.contain("500 when it is down").and.contain('never ""');
        }
        // Its rate_limits on the stack's own virtual host: the same.
        expect(check({ filterLayout: "per-instance" }, [handWritten("*:8080")]).verdicts).to.deep.equal([["istio-system/legacy-ratelimit", "leaks"]]);
    });

    it("per-instance stack: another team's shared-layout objects whose virtual-host rate_limits (a separate EnvoyFilter) name every host leak into the stack's hosts", () => {
        const objs = team(FilterLayout.Shared);
        expect(check({ filterLayout: "per-instance" }, objs).verdicts).to.deep.equal([["istio-system/shop-limits", "coexists"]]);
        const svc = objs.find((o) => o.metadata.name === "shop-limits-svc")!;
        for (const p of svc.spec.configPatches) p.match.routeConfiguration.vhost.name = "";
        expect(check({ filterLayout: "per-instance" }, objs).verdicts).to.deep.equal([["istio-system/shop-limits", "leaks"]]);
    });

    it("shared stack (the specification's layout): another stage-0 filter on the listener is a problem naming the setting and the minimum Istio version", () => {
        const r = check({}, team(FilterLayout.Shared));
        expect(r.verdicts).to.deep.equal([["istio-system/shop-limits", "leaks"]]);
        expect(r.plan.problems.map((p) => [p.key, p.value])).to.deep.equal([["filterLayout", "shared"]]);
        expect(r.plan.problems[0].fix).to.equal(
            "pulumi config set filterLayout per-instance   (needs Istio 1.25 or later; descriptors under the stack's own filter name)",
        );
        expect(check({}, [handWritten("legacy.example.com:8080")]).plan.problems).to.have.length(1);
    });

    it("shared stack: a per-instance neighbour coexists (stage 10, config under its own name)", () => {
        const r = check({}, team(FilterLayout.PerInstance));
        expect(r.verdicts).to.deep.equal([["istio-system/shop-ratelimit", "coexists"]]);
        expect(r.plan.problems).to.deep.equal([]);
    });

    it("negative controls: another listener port, other pods, another namespace, and the stack's own filters are not neighbours", () => {
        expect(check({}, [handWritten("", 9443)]).verdicts).to.deep.equal([]);
        const otherPods = handWritten("");
        otherPods.spec.workloadSelector.labels = { istio: "eastwestgateway" };
        expect(check({}, [otherPods]).verdicts).to.deep.equal([]);
        expect(check({}, [{ ...handWritten(""), metadata: { name: "legacy-ratelimit", namespace: "team-x" } }]).verdicts).to.deep.equal([]);
        const p = planOfConfig({ ...DEV });
        // The stack's own EnvoyFilter (same namespace and name) is not a neighbour.
        const ownFilter = envoyFilter("filter-ratelimit", handWritten("").spec);
        expect(classifyNeighbours(p.settings, { gatewayPods: [gw], peerAuthentications: [], envoyFilters: [ownFilter] }, p.global)).to.deep.equal([]);
    });
});

describe("reach: the per-instance layout and the gateway's Istio version", () => {
    const gwPod = (image: string): LiveObject => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "gw-0", namespace: "istio-system", labels: { istio: "ingressgateway" } },
        spec: { containers: [{ name: "istio-proxy", image }] },
    });
    const reach = (over: Record<string, string>, image: string) =>
        reachOf({ ...DEV, ...over }, { gatewayPods: [gwPod(image)], peerAuthentications: [], envoyFilters: [] });

    it("Istio 1.24 gateway proxies with filterLayout=per-instance: refused, naming the minimum version and the setting", () => {
        const r = reach({ filterLayout: "per-instance" }, "docker.io/istio/proxyv2:1.24.3");
        expect(r.problems.map((p) => [p.key, p.value])).to.deep.equal([["filterLayout", "per-instance"]]);
        expect(r.problems[0].problem).to.contain("Istio 1.24").and.contain("need Istio 1.25 or later");
        expect(r.problems[0].fix).to.match(/^pulumi config set filterLayout shared/);
    });

    it("not refused: 1.25, 1.26-distroless, 2.0, an unversioned tag, or the shared layout on 1.24", () => {
        for (const image of ["docker.io/istio/proxyv2:1.25.0", "gcr.io/istio-release/proxyv2:1.26.1-distroless", "x/proxyv2:2.0.0", "x/proxyv2:latest"])
            expect(reach({ filterLayout: "per-instance" }, image).problems, image).to.deep.equal([]);
        expect(reach({}, "docker.io/istio/proxyv2:1.24.3").problems).to.deep.equal([]);
    });
});
