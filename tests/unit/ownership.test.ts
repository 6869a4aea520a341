/**
 * A stack owns only what it created (components/common/ownership.ts, program/preflight.ts
 * ownershipProblems): the owner annotation is per stack, every object the program would create is
 * asked about before any registration, a refusal registers nothing, an existing bookinfo is a choice,
 * and two GlobalRateLimits of one program never write the same objects. The cluster's answer is a
 * fixture here; the e2e tier asks a real API server through the real engine.
 */
import { expect } from "chai";
import * as pulumi from "@pulumi/pulumi";
import {
    LiveObjectMeta,
    OWNER_ANNOTATION,
    ObjectRef,
    apiOfType,
    classifyObjects,
    currentStackOwner,
    duplicateObjects,
    ownerTransformation,
    plannedObjects,
} from "../../components/common/ownership";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { InputError } from "../../lib/problems";
import { Registration, registerComponents, registerProgram } from "../../render/render";
import { DEV, render } from "./helpers";
import { ingressClassKept, peerAuthenticationKept, peerAuthenticationOnDestroy } from "../../program/kept-on-destroy";
import { SharedObjectsPlan } from "../../program/preflight";
import { resolveSettings } from "../../program/config-args";
import { SHOP_RULES } from "./rules.test";

/** The stack the offline render runs as (render/render.ts), with the render's placeholder stack id. */
const RENDER_OWNER = "organization/mesh-ratelimit/render@render-only-stack-id";

function live(kind: string, name: string, namespace: string | undefined, meta: Partial<LiveObjectMeta["metadata"]> = {}): LiveObjectMeta {
    return { kind, metadata: { name, ...(namespace ? { namespace } : {}), ...meta } };
}

/** Istio's bookinfo sample as `kubectl apply -f samples/bookinfo/platform/kube/bookinfo.yaml` leaves it (the fields read here). */
const ISTIO_BOOKINFO: LiveObjectMeta[] = [
    live("Deployment", "productpage-v1", "default", {
        labels: { app: "productpage", version: "v1" },
        managedFields: [{ manager: "kubectl-client-side-apply" }, { manager: "kube-controller-manager" }],
    }),
    live("Service", "productpage", "default", {
        labels: { app: "productpage", service: "productpage" },
        managedFields: [{ manager: "kubectl-client-side-apply" }],
    }),
    live("ServiceAccount", "bookinfo-productpage", "default", { labels: { account: "productpage" } }),
];

/** Runs the program under mocks with the cluster's answer for the ownership check. */
async function run(objects: LiveObjectMeta[], over: Record<string, string> = {}) {
    const seen: Registration[] = [];
    const reports: string[] = [];
    const asked: ObjectRef[] = [];
    let error: unknown;
    try {
        await registerProgram({
            base: DEV,
            overrides: over,
            objects,
            onRegister: (r) => seen.push(r),
            onReport: (m) => reports.push(m),
            onLookupObjects: (refs) => asked.push(...refs),
        });
    } catch (e) {
        error = e;
    }
    return { seen, reports, asked, error };
}

describe("ownership: the decision for each object", () => {
    const ref: ObjectRef = { apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "redis", resourceName: "r" };

    it("absent, this stack's, another stack's, and one without the annotation (the part-of label proves nothing)", () => {
        const owner = "org/mesh-ratelimit/dev";
        const partOf = { "app.kubernetes.io/part-of": "mesh-ratelimit" };
        const cases: [LiveObjectMeta[], string, string | undefined][] = [
            [[], "absent", undefined],
            [[live("Deployment", "redis", "default", { annotations: { [OWNER_ANNOTATION]: owner } })], "ours", undefined],
            [
                [live("Deployment", "redis", "default", { annotations: { [OWNER_ANNOTATION]: "org/mesh-ratelimit/second" }, labels: partOf })],
                "foreign",
                "org/mesh-ratelimit/second",
            ],
            [[live("Deployment", "redis", "default", { labels: partOf })], "foreign", undefined],
            // Same name in another namespace, or another kind: not the object.
            [[live("Deployment", "redis", "shop"), live("Service", "redis", "default")], "absent", undefined],
        ];
        for (const [objects, state, other] of cases) {
            const [v] = classifyObjects([ref], objects, owner);
            expect(v!.state, JSON.stringify(objects)).to.equal(state);
            expect(v!.otherOwner).to.equal(other);
        }
    });

    it("two recorded objects of one kind, namespace and name are reported with both resources", () => {
        const a = { ...ref, resourceName: "a-redis", component: "mesh-ratelimit:index:Redis" };
        const b = { ...ref, resourceName: "b-redis", component: "mesh-ratelimit:index:Redis" };
        expect(duplicateObjects([a, b, { ...ref, namespace: "shop", resourceName: "c" }])).to.deep.equal([
            { id: "Deployment default/redis", resources: ["a-redis (mesh-ratelimit:index:Redis)", "b-redis (mesh-ratelimit:index:Redis)"] },
        ]);
    });

    it("resource types map to apiVersion and kind; providers and YAML groups are not objects", () => {
        expect(apiOfType("kubernetes:apps/v1:Deployment")).to.deep.equal({ apiVersion: "apps/v1", kind: "Deployment" });
        expect(apiOfType("kubernetes:core/v1:Secret")).to.deep.equal({ apiVersion: "v1", kind: "Secret" });
        expect(apiOfType("kubernetes:networking.istio.io/v1alpha3:EnvoyFilter")).to.deep.equal({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
        });
        expect(apiOfType("pulumi:providers:kubernetes")).to.equal(undefined);
        expect(apiOfType("kubernetes:yaml/v2:ConfigGroup")).to.equal(undefined);
    });
});

describe("ownership: the program asks about every object before registering any", function () {
    this.timeout(60_000);

    it("every Kubernetes object the stack registers was asked about, with the kind, namespace and name it has", async () => {
        const { seen, asked, error } = await run([]);
        expect(error).to.equal(undefined);
        const registered = seen
            .filter((r) => r.type.startsWith("kubernetes:"))
            .map((r) => `${r.inputs.kind} ${r.inputs.metadata.namespace ?? "-"}/${r.inputs.metadata.name}`);
        expect(registered.length).to.be.greaterThan(30);
        expect(asked.map((r) => `${r.kind} ${r.namespace ?? "-"}/${r.name}`).sort()).to.deep.equal([...registered].sort());
    });

    it("every object carries the owner annotation of this stack", async () => {
        const r = await render();
        for (const o of r.objects) expect(o.metadata.annotations?.[OWNER_ANNOTATION], `${o.kind} ${o.metadata.name}`).to.equal(RENDER_OWNER);
    });

    it("Istio's bookinfo already in default: refused under key bookinfo, naming the objects, who manages them and both fixes; nothing registered", async () => {
        const { seen, error } = await run(ISTIO_BOOKINFO);
        expect(error).to.be.instanceOf(InputError);
        const problems = (error as InputError).problems;
        expect(problems.map((p) => p.key)).to.deep.equal(["bookinfo", "bookinfo", "bookinfo"]);
        const text = problems.map((p) => `${p.problem}\n${p.fix}`).join("\n");
        expect(text).to.match(
            /Deployment default\/productpage-v1 already exists and is not this stack's \(organization\/mesh-ratelimit\/render@render-only-stack-id\)/,
        );
        expect(text).to.match(/field managers: kube-controller-manager, kubectl-client-side-apply/);
        expect(text).to.match(/pulumi config set bookinfo existing/);
        expect(text).to.match(/pulumi config set workloadNamespace <namespace>/);
        // Not one resource (component or object) reached the engine.
        expect(seen).to.deep.equal([]);
    });

    it("negative control: the same program with an empty cluster registers its objects", async () => {
        const { seen, error } = await run([]);
        expect(error).to.equal(undefined);
        expect(seen.some((r) => r.inputs?.kind === "Deployment" && r.inputs.metadata.name === "productpage-v1")).to.equal(true);
    });

    it("a redis of another team in default: refused under ratelimitNamespace", async () => {
        const { error, seen } = await run([live("Deployment", "redis", "default", { labels: { app: "redis" }, managedFields: [{ manager: "helm" }] })]);
        expect(error).to.be.instanceOf(InputError);
        const [p] = (error as InputError).problems;
        expect(p!.key).to.equal("ratelimitNamespace");
        expect(p!.problem).to.match(/Deployment default\/redis .*field managers: helm/);
        expect(seen).to.deep.equal([]);
    });

    it("another stack of this program: refused, naming that stack; the fix names destroying it or separate namespaces", async () => {
        const other = { annotations: { [OWNER_ANNOTATION]: "organization/mesh-ratelimit/second" }, labels: { "app.kubernetes.io/part-of": "mesh-ratelimit" } };
        const { error } = await run([live("ConfigMap", "ratelimit-config", "default", other)]);
        expect(error).to.be.instanceOf(InputError);
        const [p] = (error as InputError).problems;
        expect(p!.problem).to.match(/it belongs to stack organization\/mesh-ratelimit\/second/);
        expect(p!.fix).to.match(/destroy stack organization\/mesh-ratelimit\/second first/);
    });

    it("objects this very stack created (its owner annotation): kept, and the preview counts them", async () => {
        const mine = { annotations: { [OWNER_ANNOTATION]: RENDER_OWNER } };
        const { error, reports } = await run([live("Deployment", "redis", "default", mine), live("Service", "redis", "default", mine)]);
        expect(error).to.equal(undefined);
        expect(reports.join("\n")).to.match(/checked \d+ objects in the cluster before creating any: .*Deployment \d+ \(1 this stack's\)/);
    });

    it("bookinfo existing: no bookinfo object is created or asked about; the limits still go on its virtual hosts", async () => {
        const { seen, asked, error } = await run(ISTIO_BOOKINFO, { variant: "B", bookinfo: "existing" });
        expect(error).to.equal(undefined);
        const names = seen.filter((r) => r.inputs?.kind).map((r) => `${r.inputs.kind}/${r.inputs.metadata.name}`);
        for (const n of ["Deployment/productpage-v1", "Service/productpage", "Gateway/bookinfo-gateway", "VirtualService/bookinfo"])
            expect(names).to.not.include(n);
        expect(asked.some((r) => r.name === "productpage-v1")).to.equal(false);
        expect(names).to.include.members(["EnvoyFilter/filter-ratelimit", "EnvoyFilter/filter-ratelimit-svc", "EnvoyFilter/filter-local-ratelimit-svc"]);
    });

    it("bookinfo existing with variant A: refused (Istio's sample has no api route)", async () => {
        const { error } = await run([], { variant: "A", bookinfo: "existing" });
        expect(error).to.be.instanceOf(InputError);
        expect((error as InputError).problems.map((p) => p.key)).to.deep.equal(["bookinfo"]);
        expect((error as InputError).problems[0]!.fix).to.match(/pulumi config set variant B/);
    });
});

describe("ownership: per stack, and per component instance", function () {
    this.timeout(60_000);

    it("the owner annotation differs between two stacks of one project", async () => {
        const annotationOf = async (stack: string) => {
            const { objects } = await registerComponents(
                () => {
                    new GlobalRateLimit(
                        "limits",
                        {
                            domain: "shop",
                            gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] },
                            namespace: "shop",
                            rules: SHOP_RULES,
                        },
                        { transformations: [ownerTransformation()] },
                    );
                },
                "shop",
                stack,
            );
            return [...new Set(objects.map((o) => o.metadata.annotations?.[OWNER_ANNOTATION]))];
        };
        expect(await annotationOf("team-a")).to.deep.equal(["organization/shop/team-a"]);
        expect(await annotationOf("team-b")).to.deep.equal(["organization/shop/team-b"]);
    });

    it("plannedObjects sends nothing to the program's monitor, and finds the objects the real construction registers", async () => {
        const build = (t: pulumi.ResourceTransformation[]) =>
            new GlobalRateLimit(
                "limits",
                { domain: "shop", gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] }, namespace: "shop", rules: SHOP_RULES },
                { transformations: t },
            );
        let planned: ObjectRef[] = [];
        const dry = await registerComponents(() => void (planned = plannedObjects((record) => build([record]))), "shop", "planned");
        expect(dry.all).to.deep.equal([]);
        const real = await registerComponents(() => void build([]), "shop", "planned");
        const id = (o: { kind: string; namespace?: string; name: string }) => `${o.kind} ${o.namespace ?? "-"}/${o.name}`;
        expect(planned.length).to.be.greaterThan(5);
        expect(planned.map(id).sort()).to.deep.equal(
            real.objects.map((o) => id({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name })).sort(),
        );
        expect(planned.find((r) => r.kind === "Deployment" && r.name === "redis")!.component).to.equal("mesh-ratelimit:index:Redis");
    });

    it("two GlobalRateLimits of one program in one namespace: the second is refused in its constructor, naming the first and the argument", async () => {
        let error: unknown;
        await registerComponents(
            () => {
                const gw = { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] };
                new GlobalRateLimit("orders", { domain: "orders", gateway: gw, namespace: "shop", rules: SHOP_RULES });
                try {
                    new GlobalRateLimit("search", { domain: "search", gateway: gw, namespace: "shop", rules: SHOP_RULES });
                } catch (e) {
                    error = e;
                }
            },
            "shop",
            "two-instances",
        );
        expect(error).to.be.instanceOf(InputError);
        const [p] = (error as InputError).problems;
        expect(p!.key).to.equal("namespace");
        expect(p!.problem).to.match(
            /GlobalRateLimit orders of this program already writes Service\/Deployment ratelimit, ConfigMap ratelimit-config, Deployment\/Service redis, Service\/Deployment ratelimit-per-value, ConfigMap ratelimit-config-per-value, Deployment\/Service redis-per-value in namespace shop/,
        );
    });

    it("negative control: in namespaces of their own, both register", async () => {
        const { objects } = await registerComponents(
            () => {
                new GlobalRateLimit("orders", {
                    domain: "orders",
                    gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] },
                    namespace: "orders",
                    rules: SHOP_RULES,
                });
                new GlobalRateLimit("search", {
                    domain: "search",
                    gateway: { selector: { app: "gw" }, namespace: "shop", virtualHosts: ["*:80"] },
                    namespace: "search",
                    rules: SHOP_RULES,
                });
            },
            "shop",
            "two-namespaces",
        );
        expect(
            objects
                .filter((o) => o.kind === "Deployment" && o.metadata.name === "redis")
                .map((o) => o.metadata.namespace)
                .sort(),
        ).to.deep.equal(["orders", "search"]);
    });
});

// The Pulumi runtime's own project and stack names reach the owner value (not a constant).
describe("ownership: the owner value", () => {
    it("is <organization>/<project>/<stack> of the running stack", async () => {
        await registerComponents(
            () => {
                expect(currentStackOwner()).to.equal(`organization/${pulumi.getProject()}/${pulumi.getStack()}`);
                expect(pulumi.getStack()).to.equal("named");
            },
            "proj",
            "named",
        );
    });
});

describe("ownership: pulumi destroy leaves an IngressClass others use", () => {
    const s = resolveSettings(DEV);
    const created = { ingressClass: true } as SharedObjectsPlan;
    it("other Ingresses of the class: the message says destroy leaves it, naming them; the stack's own Ingress does not count", () => {
        const m = ingressClassKept(s, created, () => ["default/simple-ingress", "team-c/web"]);
        expect(m).to.match(/^IngressClass istio: other Ingresses use it \(team-c\/web\); pulumi destroy will leave it in place/);
    });
    it("controls: only the stack's own Ingress, a class the stack does not create, or no lookup: deleted with the stack", () => {
        expect(ingressClassKept(s, created, () => ["default/simple-ingress"])).to.equal(undefined);
        expect(ingressClassKept(s, { ingressClass: false } as SharedObjectsPlan, () => ["team-c/web"])).to.equal(undefined);
        expect(ingressClassKept(s, created, undefined)).to.equal(undefined);
    });
});

describe("ownership: pulumi destroy leaves a mesh-wide PeerAuthentication other workloads run under", () => {
    const s = resolveSettings({ ...DEV, mutualTlsScope: "mesh" });
    const created = { peerAuthentication: true } as SharedObjectsPlan;
    it("sidecars outside the stack's namespaces: the message says destroy leaves it, naming their namespaces", () => {
        expect(peerAuthenticationKept(s, created, () => ["default", "team-m", "shop", "team-m"])).to.match(
            /^PeerAuthentication istio-system\/default: workloads outside the stack's namespaces run under it \(sidecars in shop, team-m\); pulumi destroy will leave it in place/,
        );
    });
    it("controls: sidecars only in the stack's namespaces, a policy the stack does not create, or no lookup: deleted with the stack", () => {
        expect(peerAuthenticationKept(s, created, () => ["default"])).to.equal(undefined);
        expect(peerAuthenticationKept(s, { peerAuthentication: false } as SharedObjectsPlan, () => ["team-m"])).to.equal(undefined);
        expect(peerAuthenticationKept(s, created, undefined)).to.equal(undefined);
    });
    it("nobody else runs under it: destroy deletes it, and the message says so (sidecars only in the stack's namespaces, or none)", () => {
        expect(peerAuthenticationOnDestroy(s, created, () => ["default"])).to.deep.equal({
            keep: false,
            message:
                "PeerAuthentication istio-system/default: no workload outside the stack's namespaces runs under it (sidecars only in the stack's own namespaces: default); pulumi destroy will delete it with the stack. Workloads that join later are seen by the next pulumi up: run one before destroy",
        });
        expect(peerAuthenticationOnDestroy(s, created, () => [])!.message).to.contain(
            "(no sidecars in the cluster); pulumi destroy will delete it with the stack",
        );
        // Control: one sidecar in team-m turns it into a keep.
        expect(peerAuthenticationOnDestroy(s, created, () => ["default", "team-m"])!.keep).to.equal(true);
        expect(peerAuthenticationOnDestroy(s, { peerAuthentication: false } as SharedObjectsPlan, () => [])).to.equal(undefined);
    });
    it("the program reports which, from the sidecars it finds (preview shows it)", async () => {
        const reportsOf = async (namespaces: string[]) => {
            const reports: string[] = [];
            await registerProgram({
                base: DEV,
                overrides: { mutualTlsScope: "mesh" },
                cluster: [],
                onReport: (m) => reports.push(m),
                lookupMeshNamespaces: () => namespaces,
            });
            return reports.join("\n");
        };
        const alone = await reportsOf(["default"]);
        expect(alone).to.contain("PeerAuthentication istio-system/default: no workload outside the stack's namespaces runs under it");
        expect(alone).to.not.contain("will leave it in place");
        const shared = await reportsOf(["default", "team-m"]);
        expect(shared).to.contain(
            "PeerAuthentication istio-system/default: workloads outside the stack's namespaces run under it (sidecars in team-m); pulumi destroy will leave it in place",
        );
    });
});
