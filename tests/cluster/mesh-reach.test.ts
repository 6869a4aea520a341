/**
 * The reach preflight (program/preflight.ts, planMeshReach) against a real API server: the
 * program as `pulumi preview` runs it (program/program.ts, buildProgram) with the kubectl lookups
 * index.ts passes (cluster/cluster-lookup.ts: lookupSharedObjects, lookupMeshReach). kubectl
 * reaches the tier's API server through the KUBECONFIG that tests/cluster/run.sh exports, as it
 * reaches a real cluster through the user's; nothing is mocked but Pulumi's engine.
 *
 * The cluster holds what a shared mesh has: the stack's gateway pods in istio-system (Istio's root
 * namespace, the default gatewayNamespace), another team's gateway pods with the same label
 * `istio: ingressgateway` in `team-b`, and a mesh-wide PeerAuthentication `legacy-mesh` (no
 * selector) in istio-system. Plain Pods stand for the gateways (kwok may schedule them; the lookup
 * reads them either way).
 *
 * Negative controls: without the team-b pod nothing is refused (a check that always refuses would
 * fail them); a PeerAuthentication with a selector, or a mesh-wide one in another namespace, is not
 * reported.
 */
import * as pulumi from "@pulumi/pulumi";
import { expect } from "chai";
import { lookupMeshReach, lookupSharedObjects } from "../../cluster/cluster-lookup";
import { PROJECT } from "../../program/config-keys";
import { MeshReachQuery, MeshReachState, meshReachQuery } from "../../program/mesh-reach";
import { resolveSettings } from "../../program/config-args";
import { InputError } from "../../lib/problems";
import { FilterLayout } from "../../builders/envoy-filters";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";
import { K8sObject } from "../../lib/k8s-object";
import { Registration, programConfig, toObjects } from "../../render/render";
import { deleteNamespace, ensureNamespace, kubeconfig, kubectl, kubectlJson, kubectlRaw, waitFor } from "./kube";

const DEV: Record<string, string> = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

const ROOT_NS = "istio-system"; // meshNamespace and gatewayNamespace by default
const TEAM_B = "team-b"; // another team's gateway, same labels
const OWN_GW = "shop-gateway"; // a gateway namespace of the stack's own
const GW_LABELS = { istio: "ingressgateway", app: "istio-ingressgateway" };
const STACK_GW_POD = "istio-ingressgateway-5d8b9c7f6-x2k4p";
const TEAM_B_POD = "team-b-ingressgateway-7c9f8d6b5-q8r2m";
const OWN_GW_POD = "shop-ingressgateway-6f7d8c9b4-m3n5t";
const PA = "peerauthentications.security.istio.io";

interface Preview {
    error?: unknown;
    reports: string[];
    objects: K8sObject[];
    queries: MeshReachQuery[];
    answers: MeshReachState[];
}

let previewSeq = 0;

/**
 * `pulumi preview`'s program run: buildProgram with the real kubectl lookups (as index.ts passes
 * them), under Pulumi's mocks. Returns the Kubernetes objects it registered (none when refused),
 * the preflight's messages, and what lookupMeshReach was asked and answered.
 */
async function preview(over: Record<string, string> = {}): Promise<Preview> {
    const registrations: Registration[] = [];
    const out: Preview = { reports: [], objects: [], queries: [], answers: [] };
    await pulumi.runtime.setMocks(
        {
            newResource(args: pulumi.runtime.MockResourceArgs) {
                const state = { ...args.inputs };
                if (args.type === "random:index/randomPassword:RandomPassword") state.result = "mock-password-0123456789";
                if (args.custom !== false) registrations.push({ type: args.type, name: args.name, inputs: args.inputs });
                return { id: `${args.name}-id`, state };
            },
            call: (args: pulumi.runtime.MockCallArgs) => args.inputs,
        },
        PROJECT,
        `cluster-reach-${++previewSeq}`,
        false,
    );
    pulumi.runtime.setAllConfig(programConfig({ base: { ...DEV, ...over } }));
    // Loaded after the mocks are in place (as render/render.ts does).
    const { buildProgram } = require("../../program/program") as typeof import("../../program/program");
    try {
        buildProgram(pulumi.runtime.allConfig(), {
            lookupShared: (refs) => lookupSharedObjects(refs, []),
            lookupMeshReach: (q) => {
                out.queries.push(q);
                const a = lookupMeshReach(q, []);
                out.answers.push(a);
                return a;
            },
            report: (m) => out.reports.push(m),
        });
    } catch (e) {
        out.error = e;
    }
    await (require("@pulumi/pulumi/runtime/settings") as { waitForRPCs(): Promise<void> }).waitForRPCs();
    out.objects = toObjects(registrations);
    return out;
}

const where = (o: K8sObject) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const filtersIn = (p: Preview, ns: string) =>
    p.objects
        .filter((o) => o.kind === "EnvoyFilter" && o.metadata.namespace === ns)
        .map((o) => o.metadata.name)
        .sort();
// The specification's three gateway filters and the per-path counters' own three (counterStore split).
const GATEWAY_FILTERS = [
    "filter-ratelimit",
    "filter-ratelimit-per-value",
    "filter-ratelimit-per-value-svc",
    "filter-ratelimit-per-value-svc-api",
    "filter-ratelimit-svc",
    "filter-ratelimit-svc-api",
];

function expectPasses(p: Preview): void {
    if (p.error) throw new Error(`expected the preview to pass, it was refused: ${(p.error as Error).message}`);
    expect(p.objects.length, "objects registered").to.be.greaterThan(20);
}

function expectRefused(p: Preview): string {
    expect(p.error, "the preview must be refused").to.be.instanceOf(InputError);
    expect(p.objects.map(where), "nothing registered before the refusal").to.deep.equal([]);
    return (p.error as Error).message;
}

function createPod(ns: string, name: string, labels: Record<string, string>): string {
    const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: ns, labels },
        spec: { containers: [{ name: "istio-proxy", image: "docker.io/istio/proxyv2:1.30.3", args: ["proxy", "router"] }] },
    };
    kubectl(["create", "-f", "-"], JSON.stringify(pod));
    return kubectlJson(["get", "pod", name, "-n", ns]).metadata.uid;
}

async function deletePod(ns: string, name: string): Promise<void> {
    kubectl(["delete", "pod", name, "-n", ns, "--ignore-not-found", "--wait=false"]);
    await waitFor(`pod ${ns}/${name} gone`, () => kubectlRaw(["get", "pod", name, "-n", ns]).status !== 0, 60_000);
}

function createPeerAuthentication(ns: string, name: string, spec: Record<string, unknown>): void {
    kubectl(
        ["create", "-f", "-"],
        JSON.stringify({ apiVersion: "security.istio.io/v1", kind: "PeerAuthentication", metadata: { name, namespace: ns, labels: { team: "mesh" } }, spec }),
    );
}

describe("cluster: the reach preflight (gateway selector, mesh-wide mutual TLS) with kubectl against a real API server", function () {
    this.timeout(120_000);

    before(function () {
        kubeconfig();
        ensureNamespace(TEAM_B);
        ensureNamespace(OWN_GW);
        // The tests decide which gateway pods and root-namespace policies exist: none to start with.
        expect(kubectl(["get", "pods", "--all-namespaces", "-l", "istio=ingressgateway", "-o", "name"]).trim(), "gateway pods left by another test").to.equal(
            "",
        );
        expect(kubectl(["get", PA, "-n", ROOT_NS, "-o", "name"]).trim(), "PeerAuthentications left in istio-system").to.equal("");
    });

    after(async function () {
        this.timeout(240_000);
        kubectlRaw(["delete", "pod", STACK_GW_POD, "-n", ROOT_NS, "--ignore-not-found", "--wait=false"]);
        kubectlRaw(["delete", PA, "--all", "-n", ROOT_NS, "--ignore-not-found"]);
        for (const ns of [TEAM_B, OWN_GW]) await deleteNamespace(ns);
        await waitFor(`pod ${ROOT_NS}/${STACK_GW_POD} gone`, () => kubectlRaw(["get", "pod", STACK_GW_POD, "-n", ROOT_NS]).status !== 0, 60_000);
    });

    it("no gateway pod anywhere: nothing refused; preview says no pod labelled istio=ingressgateway runs in istio-system", async () => {
        const p = await preview();
        expectPasses(p);
        expect(p.queries).to.deep.equal([{ gatewaySelector: "istio=ingressgateway", meshNamespace: ROOT_NS, envoyFilterNamespaces: [ROOT_NS] }]);
        expect(p.queries[0]).to.deep.equal(meshReachQuery(resolveSettings(DEV)));
        expect(p.answers[0].gatewayPods).to.deep.equal([]);
        expect(p.reports.join("\n")).to.contain(`no pod labelled istio=ingressgateway runs in ${ROOT_NS} (gatewayNamespace)`);
    });

    it("negative control: the stack's gateway pods in istio-system only: nothing refused, the gateway filters registered in istio-system", async () => {
        const uid = createPod(ROOT_NS, STACK_GW_POD, GW_LABELS);
        // Pods with other labels are not the selector's, wherever they run.
        createPod(TEAM_B, "team-b-egressgateway-0", { istio: "egressgateway" });
        const p = await preview();
        expectPasses(p);
        // lookupMeshReach read the real API server: the very pod just created (same uid).
        expect(p.answers[0].gatewayPods.map((o) => `${o.metadata.namespace}/${o.metadata.name}/${o.metadata.uid}`)).to.deep.equal([
            `${ROOT_NS}/${STACK_GW_POD}/${uid}`,
        ]);
        expect(p.reports.join("\n")).to.not.contain("no pod labelled");
        expect(filtersIn(p, ROOT_NS)).to.deep.equal(GATEWAY_FILTERS);
    });

    it("another team's gateway pod with the same label in team-b: refused at preview, naming team-b and its pod, nothing registered", async () => {
        const uid = createPod(TEAM_B, TEAM_B_POD, GW_LABELS);
        const p = await preview();
        expect(p.answers[0].gatewayPods.map((o) => o.metadata.uid)).to.include(uid);
        const msg = expectRefused(p);
        expect(msg).to.contain(`${PROJECT}:gatewaySelector = "istio=ingressgateway"`);
        expect(msg).to.contain(`also selects gateway pods outside ${ROOT_NS}: ${TEAM_B} (${TEAM_B_POD})`);
        expect(msg).to.contain("Istio's root namespace");
        expect(msg).to.contain("pulumi config set gatewaySelector");
        expect(msg).to.contain("pulumi config set gatewayNamespace");
        expect(msg).to.not.contain("egressgateway");
        expect(msg, "the stack's own pod is not the problem").to.not.contain(STACK_GW_POD);
    });

    it("the gateway in a namespace of its own (gatewayNamespace=shop-gateway): passes with team-b's pod there, the filters move with it; filterNamespaces=root puts them back in reach and is refused", async () => {
        expect(kubectlRaw(["get", "pod", TEAM_B_POD, "-n", TEAM_B]).status, "team-b's pod still there").to.equal(0);
        createPod(OWN_GW, OWN_GW_POD, GW_LABELS);
        const own = await preview({ gatewayNamespace: OWN_GW });
        expectPasses(own);
        expect(filtersIn(own, OWN_GW)).to.deep.equal(GATEWAY_FILTERS);
        expect(filtersIn(own, ROOT_NS)).to.deep.equal([]);
        expect(own.reports.join("\n")).to.not.contain("no pod labelled");

        const root = await preview({ gatewayNamespace: OWN_GW, filterNamespaces: "root" });
        const msg = expectRefused(root);
        expect(msg).to.contain(`also selects gateway pods outside ${OWN_GW}: ${ROOT_NS} (${STACK_GW_POD}); ${TEAM_B} (${TEAM_B_POD})`);
        await deletePod(OWN_GW, OWN_GW_POD);
    });

    it("team-b's pod removed: the default config passes again", async () => {
        await deletePod(TEAM_B, TEAM_B_POD);
        const p = await preview();
        expectPasses(p);
        expect(p.answers[0].gatewayPods.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).to.deep.equal([`${ROOT_NS}/${STACK_GW_POD}`]);
        expect(filtersIn(p, ROOT_NS)).to.deep.equal(GATEWAY_FILTERS);
    });

    it("mesh-wide PeerAuthentication legacy-mesh (no selector) in istio-system: reported with mutualTlsScope workloads, refused with mutualTlsScope mesh", async () => {
        createPeerAuthentication(ROOT_NS, "legacy-mesh", { mtls: { mode: "PERMISSIVE" } });

        const workloads = await preview();
        expectPasses(workloads);
        expect(workloads.answers[0].peerAuthentications.map((o) => o.metadata.name)).to.deep.equal(["legacy-mesh"]);
        expect(workloads.reports.join("\n")).to.contain(
            `mesh-wide PeerAuthentication in ${ROOT_NS}: legacy-mesh (PERMISSIVE); it keeps governing every other workload`,
        );
        // The stack's own pods get STRICT through their own selector policy; nothing goes to istio-system.
        expect(workloads.objects.filter((o) => o.kind === "PeerAuthentication").map(where)).to.deep.equal(["PeerAuthentication default/mesh-ratelimit-mtls"]);

        const mesh = await preview({ mutualTlsScope: "mesh" });
        const msg = expectRefused(mesh);
        expect(msg).to.contain(`${PROJECT}:mutualTlsScope = "mesh"`);
        expect(msg).to.contain(`mesh-wide PeerAuthentication under another name: ${ROOT_NS}/legacy-mesh (PERMISSIVE)`);
        expect(msg).to.contain("Istio applies only the oldest mesh-wide policy");
        expect(msg).to.contain("pulumi config set mutualTlsScope workloads");

        // mutualTls off: no policy of the stack's, nothing to refuse.
        expectPasses(await preview({ mutualTlsScope: "mesh", mutualTls: "false" }));
    });

    it("negative controls: a PeerAuthentication with a selector in istio-system, or a mesh-wide one outside the root namespace, is neither reported nor refused", async () => {
        kubectl(["delete", PA, "legacy-mesh", "-n", ROOT_NS]);
        createPeerAuthentication(ROOT_NS, "gateway-permissive", { selector: { matchLabels: { istio: "ingressgateway" } }, mtls: { mode: "PERMISSIVE" } });
        createPeerAuthentication(TEAM_B, "legacy-mesh", { mtls: { mode: "PERMISSIVE" } });

        const workloads = await preview();
        expectPasses(workloads);
        expect(workloads.answers[0].peerAuthentications.map((o) => o.metadata.name)).to.deep.equal(["gateway-permissive"]);
        expect(workloads.reports.join("\n")).to.not.contain("mesh-wide PeerAuthentication");

        const mesh = await preview({ mutualTlsScope: "mesh" });
        expectPasses(mesh);
        expect(mesh.objects.filter((o) => o.kind === "PeerAuthentication").map(where)).to.deep.equal([`PeerAuthentication ${ROOT_NS}/default`]);
    });
});

describe("cluster: other rate-limit filters on the gateway's listener (many teams, one gateway), with kubectl against a real API server", function () {
    this.timeout(180_000);
    const POD = "istio-ingressgateway-neighbours-0";
    const EF = "envoyfilters.networking.istio.io";
    /** Another team's program, applied as it would be: its EnvoyFilters in istio-system. */
    const teamX = (layout: FilterLayout) =>
        planGlobalRateLimit({
            domain: "team-x",
            gateway: { selector: { istio: "ingressgateway" }, virtualHosts: ["x.example.com:8080"] },
            namespace: "team-x",
            rules: [{ name: "all", requestsPerUnit: 10, unit: LimitUnit.Minute }],
            filterLayout: layout,
            filterNamePrefix: layout === FilterLayout.Shared ? "team-x-shared" : "team-x-own",
        }).filters.map((f) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: ROOT_NS, labels: { team: "x" } },
            spec: f.spec,
        }));
    const apply = (objects: object[]) => {
        for (const o of objects) kubectl(["create", "-f", "-"], JSON.stringify(o));
    };
    const cleanup = () => kubectlRaw(["delete", EF, "-n", ROOT_NS, "-l", "team=x", "--ignore-not-found"]);

    before(function () {
        kubeconfig();
        createPod(ROOT_NS, POD, GW_LABELS);
        cleanup();
    });
    after(async function () {
        cleanup();
        await deletePod(ROOT_NS, POD);
    });

    it("the default (shared) layout beside another team's shared-layout filters: refused at preview, naming them, filterLayout and the minimum Istio version; nothing registered", async () => {
        apply(teamX(FilterLayout.Shared));
        const p = await preview();
        // lookupMeshReach read them from the real API server.
        expect((p.answers[0].envoyFilters ?? []).map((o) => o.metadata.name)).to.include("team-x-shared");
        const msg = expectRefused(p);
        expect(msg).to.contain(`${PROJECT}:filterLayout = "shared"`);
        expect(msg).to.contain(`(EnvoyFilter ${ROOT_NS}/team-x-shared)`).and.contain("would leak");
        expect(msg).to.contain("pulumi config set filterLayout per-instance").and.contain("Istio 1.25");
    });

    it("filterLayout=per-instance beside the same filters: passes, preview says each coexists; a hand-written one on every virtual host is reported as leaking, with its owner's fix", async () => {
        const p = await preview({ filterLayout: "per-instance" });
        expectPasses(p);
        expect(p.reports.join("\n")).to.contain(`(EnvoyFilter ${ROOT_NS}/team-x-shared) on the gateway's listener 8080: coexists safely`);
        const leaky = teamX(FilterLayout.Shared)
            .filter((o) => o.metadata.name === "team-x-shared-svc")
            .map((o) => ({ ...o, metadata: { ...o.metadata, name: "team-x-every-host" } }));
        for (const patch of (leaky[0] as any).spec.configPatches) patch.match.routeConfiguration.vhost.name = "";
        // The hand-written filter's HTTP filter: it comes with the shared-layout filter already applied.
        apply(leaky);
        const q = await preview({ filterLayout: "per-instance" });
        expectPasses(q);
        expect(q.reports.join("\n")).to.contain(`(EnvoyFilter ${ROOT_NS}/team-x-shared) on the gateway's listener 8080 would leak into the stack's hosts`);
        expect(q.reports.join("\n")).to.contain('never ""');
    });

    it("negative control: without other filters, neither layout reports a neighbour", async () => {
        cleanup();
        for (const over of [{}, { filterLayout: "per-instance" }] as Record<string, string>[]) {
            const p = await preview(over);
            expectPasses(p);
            expect(p.reports.join("\n")).to.not.contain("rate-limit filter envoy.filters.http.ratelimit");
        }
    });
});

describe("cluster: another namespace's VirtualService on the stack's Gateway (side doors), with kubectl against a real API server", function () {
    this.timeout(120_000);
    const SIDE_NS = "team-side";
    const VS = "virtualservices.networking.istio.io";
    const POD = "istio-ingressgateway-side-0";
    /** tests/istio/fixtures/side-door.yaml, the object Istio's generator binds only with the hosts "*". */
    const side = {
        apiVersion: "networking.istio.io/v1",
        kind: "VirtualService",
        metadata: { name: "side", namespace: SIDE_NS },
        spec: {
            hosts: ["side.example.com"],
            gateways: ["default/bookinfo-gateway"],
            http: [{ name: "side", route: [{ destination: { host: "productpage.default.svc.cluster.local", port: { number: 9080 } } }] }],
        },
    };

    before(function () {
        kubeconfig();
        ensureNamespace(SIDE_NS);
        createPod(ROOT_NS, POD, GW_LABELS);
    });
    after(async function () {
        this.timeout(240_000);
        await deleteNamespace(SIDE_NS);
        await deletePod(ROOT_NS, POD);
    });

    it("negative control: no such VirtualService, gatewayHostScope=any-namespace passes", async () => {
        expectPasses(await preview({ gatewayHostScope: "any-namespace" }));
    });

    it("with the specification's hosts (*): refused at preview, naming team-side/side, its host, its virtual host, its field manager and the fix; nothing registered", async () => {
        kubectl(["create", "-f", "-"], JSON.stringify(side));
        const p = await preview({ gatewayHostScope: "any-namespace" });
        // lookupMeshReach read it from the real API server, with its managed fields.
        const found = (p.answers[0].virtualServices ?? []).find((v) => v.metadata.name === "side");
        expect(found?.metadata.managedFields?.map((f) => f.manager)).to.deep.equal(["kubectl-create"]);
        const msg = expectRefused(p);
        expect(msg).to.contain(`${PROJECT}:gatewayHostScope = "any-namespace"`);
        expect(msg).to.contain(
            "admits VirtualService team-side/side (hosts side.example.com; no mesh-ratelimit.io/owner annotation; field managers: kubectl-create)",
        );
        expect(msg).to.contain("side.example.com:8080").and.contain("productpage.default.svc.cluster.local");
        expect(msg).to.contain("pulumi config set gatewayHostScope own-namespace");
    });

    it("the default hosts (default/*): the same VirtualService passes, reported as harmless; the Gateway registered with hosts default/*", async () => {
        const p = await preview();
        expectPasses(p);
        expect(p.reports.join("\n"))
            .to.contain("VirtualService team-side/side (hosts side.example.com) names the stack's Gateway default/bookinfo-gateway")
            .and.contain("harmless");
        const gw = p.objects.find((o) => o.kind === "Gateway" && o.metadata.name === "bookinfo-gateway") as any;
        expect(gw?.spec?.servers?.[0]?.hosts).to.deep.equal(["default/*"]);
        kubectl(["delete", VS, "side", "-n", SIDE_NS]);
    });
});
