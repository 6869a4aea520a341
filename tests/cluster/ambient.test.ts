/**
 * The ambient stack's render (`meshMode: ambient`, docs/guide/ambient.md) on a real API server,
 * variants A and B: every object applied server-side (first as a server dry run) in namespaces that
 * enforce Pod Security `restricted`, admitted with no warning; the Gateway API Gateway (the ambient
 * ingress, served by the CRDs scripts/cluster/up.sh loads) stored as rendered; every EnvoyFilter
 * aimed at it by `targetRefs` and by nothing else; every pod created with the ambient enrolment
 * labels (`istio.io/dataplane-mode: ambient`, `sidecar.istio.io/inject: "false"`) and every other
 * field of its template; and after deleting what was applied, nothing the render created is left.
 *
 * Controls: the API server refuses a broken copy of the render's Gateway (a listener on port 0) and
 * an EnvoyFilter aimed both by `targetRefs` and by `workloadSelector` (Istio's CRD), and each refusal
 * is detected when the object sits in the whole render's apply; the enrolment check fails on the
 * sidecar render's pod templates.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
    deleteNamespace,
    ensureNamespace,
    kubeconfig,
    kubectl,
    kubectlJson,
    kubectlRaw,
    podSecurityLabels,
    waitFor,
    waitForDeploymentPods,
    warnings,
} from "./kube";
import { Obj, diff, id, listableTypes, notKept, readRender, renderCombination, snapshot } from "./render-objects";

const APPS_NS = "mesh-rl-ambient-apps"; // bookinfo (workloadNamespace)
const LIMITS_NS = "mesh-rl-ambient-limits"; // rate-limit service and Redis (ratelimitNamespace)
const MESH_NS = "istio-system"; // the Gateway API Gateway and the EnvoyFilters aimed at it (gatewayNamespace)
const WATCHED_NS = [APPS_NS, LIMITS_NS, MESH_NS];
const FIELD_MANAGER = "mesh-rl-cluster-ambient";
const GATEWAY_API = "gateway.networking.k8s.io";
const ENROLMENT = { "istio.io/dataplane-mode": "ambient", "sidecar.istio.io/inject": "false" };
const NAMESPACE_ARGS = ["--set", `workloadNamespace=${APPS_NS}`, "--set", `ratelimitNamespace=${LIMITS_NS}`, "--set", `meshNamespace=${MESH_NS}`];
const AMBIENT_ARGS = ["--profile", "current", "--set", "meshMode=ambient", "--set", "localBucketEnabled=false", "--set", "managedApi=false"];

/** Deployments whose pod template lacks one of the ambient enrolment labels, each with what it has. */
function notEnrolled(deployments: Obj[]): string[] {
    return deployments.flatMap((d) => {
        const labels = d.spec.template.metadata?.labels ?? {};
        const wrong = Object.entries(ENROLMENT).filter(([k, v]) => labels[k] !== v);
        return wrong.length ? [`${id(d)}: ${wrong.map(([k]) => `${k}=${labels[k] ?? "(none)"}`).join(", ")}`] : [];
    });
}

/** EnvoyFilters not aimed at exactly the Gateway API Gateway `gateway` (by targetRefs, no workloadSelector). */
function notAimedAt(filters: Obj[], gateway: string): string[] {
    const want = [{ group: GATEWAY_API, kind: "Gateway", name: gateway }];
    return filters.flatMap((f) =>
        JSON.stringify(f.spec.targetRefs) === JSON.stringify(want) && f.spec.workloadSelector === undefined
            ? []
            : [`${id(f)}: targetRefs ${JSON.stringify(f.spec.targetRefs)}, workloadSelector ${JSON.stringify(f.spec.workloadSelector)}`],
    );
}

/** `kubectl apply --server-side --dry-run=server` of the objects as one List: exit status and stderr. */
function dryRun(objects: Obj[], file: string): { status: number; stderr: string } {
    fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
    return kubectlRaw(["apply", "--server-side", "--dry-run=server", `--field-manager=${FIELD_MANAGER}`, "-f", file]);
}

/** Renders the ambient stack of `variant` into a temp folder; reads it; removes the folder. */
function ambientRender(variant: string, extra: string[] = AMBIENT_ARGS): Obj[] {
    const dir = renderCombination(["--variant", variant, ...extra, ...NAMESPACE_ARGS]);
    try {
        const { objects, patches } = readRender(dir);
        expect(patches, "the ambient render patches no mesh ConfigMap").to.deep.equal([]);
        return objects;
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

/** What the ambient render must be before it is applied: otherwise the checks below would prove nothing. */
function expectAmbientShape(objects: Obj[]): { gateway: Obj; deployments: Obj[]; filters: Obj[] } {
    const gateways = objects.filter((o) => o.kind === "Gateway" && o.apiVersion === `${GATEWAY_API}/v1`);
    expect(gateways.map(id)).to.deep.equal([`${GATEWAY_API}/Gateway/${MESH_NS}/bookinfo-gateway`]);
    const gateway = gateways[0];
    expect(gateway.spec.gatewayClassName).to.equal("istio");
    const deployments = objects.filter((o) => o.kind === "Deployment");
    expect(deployments.map((d) => d.metadata.name)).to.include.members(["productpage-v1", "ratelimit", "redis"]);
    expect(notEnrolled(deployments), "pod templates without the ambient enrolment").to.deep.equal([]);
    const filters = objects.filter((o) => o.kind === "EnvoyFilter");
    expect(filters.length).to.be.greaterThan(2);
    expect(notAimedAt(filters, gateway.metadata.name), "EnvoyFilters not aimed at the Gateway alone").to.deep.equal([]);
    expect(
        filters.map((f) => f.metadata.name).filter((n) => /local/.test(n)),
        "no local bucket (localBucketEnabled false)",
    ).to.deep.equal([]);
    for (const o of objects.filter((x) => x.metadata.namespace)) expect(WATCHED_NS, id(o)).to.include(o.metadata.namespace);
    return { gateway, deployments, filters };
}

/** Every replica Running on a kwok node with the ambient labels and every rendered field of its template. */
async function expectPodsEnrolled(deployments: Obj[]): Promise<number> {
    let n = 0;
    for (const d of deployments) {
        const pods = await waitForDeploymentPods(d);
        const want = d.spec.replicas ?? 1;
        await waitFor(
            `${id(d)} ready`,
            () => (kubectlJson<any>(["get", "deployment", "-n", d.metadata.namespace!, d.metadata.name]).status?.readyReplicas ?? 0) === want,
            60_000,
        );
        for (const p of pods) {
            const what = `${p.metadata.namespace}/${p.metadata.name}`;
            for (const [k, v] of Object.entries(ENROLMENT)) expect(p.metadata.labels?.[k], `${what}: label ${k}`).to.equal(v);
            const lost = [...notKept(p.metadata, d.spec.template.metadata, "metadata"), ...notKept(p.spec, d.spec.template.spec, "spec")];
            expect(lost, what).to.deep.equal([]);
            expect(
                p.spec.containers.map((c: any) => c.name),
                `${what}: no sidecar container`,
            ).to.not.include("istio-proxy");
            n++;
        }
    }
    return n;
}

describe("cluster: the ambient stack's render admitted under Pod Security restricted, its Gateway and enrolment kept, removed without a trace", function () {
    let types: string[] = [];
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-ambient-"));

    before(async function () {
        kubeconfig();
        ensureNamespace(APPS_NS, podSecurityLabels("restricted"));
        ensureNamespace(LIMITS_NS, podSecurityLabels("restricted"));
        for (const ns of [APPS_NS, LIMITS_NS]) {
            await waitFor(
                `${ns}: default ServiceAccount and kube-root-ca.crt`,
                () => kubectlRaw(["get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-n", ns]).status === 0,
            );
        }
        const crd = kubectlRaw(["get", "crd", `gateways.${GATEWAY_API}`, "-o", 'jsonpath={.status.conditions[?(@.type=="Established")].status}']);
        if (crd.status !== 0 || crd.stdout.trim() !== "True")
            throw new Error(
                `the API server does not serve gateways.${GATEWAY_API} (${crd.stderr.trim() || crd.stdout.trim()}): the ambient stack's ingress is a Gateway API Gateway; scripts/cluster/up.sh loads the Gateway API CRDs, start the cluster with it`,
            );
        types = listableTypes();
        expect(types, "Gateway API kinds listed in the snapshot").to.include(`gateways.${GATEWAY_API}`);
    });

    after(async function () {
        for (const ns of [APPS_NS, LIMITS_NS]) await deleteNamespace(ns);
        fs.rmSync(work, { recursive: true, force: true });
    });

    it("control: the enrolment check fails on the sidecar render's pod templates, naming each label", function () {
        const sidecar = ambientRender("A", ["--profile", "current", "--set", "managedApi=false"]);
        const found = notEnrolled(sidecar.filter((o) => o.kind === "Deployment"));
        expect(found.length).to.be.greaterThan(2);
        expect(found.join("\n")).to.match(/istio\.io\/dataplane-mode=\(none\), sidecar\.istio\.io\/inject=true/);
    });

    it("controls: the API server refuses a Gateway listener on port 0 and an EnvoyFilter aimed by targetRefs and workloadSelector, and the whole render's apply with either fails naming it", function () {
        const objects = ambientRender("A");
        const { gateway, filters } = expectAmbientShape(objects);
        const ok = dryRun(objects, path.join(work, "control-ok.json"));
        expect(ok.status, ok.stderr).to.equal(0);
        const badGateway = JSON.parse(JSON.stringify(gateway));
        badGateway.spec.listeners[0].port = 0;
        const g = dryRun([...objects.filter((o) => o !== gateway), badGateway], path.join(work, "control-gateway.json"));
        expect(g.status, "a Gateway listener on port 0 admitted").to.not.equal(0);
        // spec.listeners is the Gateway API's (Istio's own Gateway has spec.servers).
        expect(g.stderr).to.match(/Gateway "bookinfo-gateway" is invalid: spec\.listeners\[0\]\.port/);
        const badFilter = JSON.parse(JSON.stringify(filters[0]));
        badFilter.spec.workloadSelector = { labels: { istio: "ingressgateway" } };
        const f = dryRun([...objects.filter((o) => o !== filters[0]), badFilter], path.join(work, "control-filter.json"));
        expect(f.status, "an EnvoyFilter with targetRefs and workloadSelector admitted").to.not.equal(0);
        expect(f.stderr).to.contain(`EnvoyFilter "${badFilter.metadata.name}" is invalid`);
        expect(f.stderr).to.contain("only one of targetRefs or workloadSelector can be set");
    });

    for (const variant of ["A", "B"]) {
        it(`ambient ${variant}: applied server-side and admitted, Gateway and filters as rendered, pods enrolled on kwok nodes, deleted without a trace`, async function () {
            this.timeout(300_000);
            const objects = ambientRender(variant);
            const { gateway, deployments, filters } = expectAmbientShape(objects);
            const clusterScoped = objects.filter((o) => !o.metadata.namespace);
            const before = snapshot(types, WATCHED_NS, clusterScoped);
            const file = path.join(work, `ambient-${variant}.json`);
            const dry = dryRun(objects, file);
            expect(dry.status, dry.stderr).to.equal(0);
            expect(diff(snapshot(types, WATCHED_NS, clusterScoped), before), "a server dry run creates nothing").to.deep.equal([]);

            const applied = kubectlRaw(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", file]);
            expect(applied.status, applied.stderr).to.equal(0);
            expect(warnings(applied.stderr), "API server warnings").to.deep.equal([]);
            const got = kubectlJson<{ items: Obj[] }>(["get", "-f", file]).items;
            expect(got.map(id).sort()).to.deep.equal(objects.map(id).sort());
            const byId = new Map(got.map((o) => [id(o), o]));
            // Every object as the server stores it keeps every rendered field (the Gateway's listeners,
            // the filters' targetRefs and patches, the enrolment labels of each template).
            for (const o of objects.filter((x) => x.kind !== "Secret")) {
                expect(notKept(byId.get(id(o)), o), id(o)).to.deep.equal([]);
            }
            expect(
                notAimedAt(
                    filters.map((f) => byId.get(id(f))!),
                    gateway.metadata.name,
                ),
            ).to.deep.equal([]);
            const live = byId.get(id(gateway))!;
            expect(live.spec.listeners.map((l: any) => `${l.name}:${l.protocol}:${l.port}`)).to.deep.equal(["http:HTTP:8080"]);

            const pods = await expectPodsEnrolled(deployments);
            expect(pods).to.be.at.least(deployments.length);
            const during = snapshot(types, WATCHED_NS, clusterScoped);
            expect(diff(during, before).length, "the render created its dependents too (ReplicaSets, Pods)").to.be.greaterThan(objects.length);

            const del = kubectlRaw(["delete", "-f", file, "--cascade=foreground", "--wait=true", "--timeout=120s"]);
            expect(del.status, del.stderr).to.equal(0);
            let left: string[] = [];
            await waitFor(
                "nothing the ambient render created remains",
                () => (left = diff(snapshot(types, WATCHED_NS, clusterScoped), before)).length === 0,
                90_000,
                1000,
                () => left.join(", "),
            );
            expect(diff(before, snapshot(types, WATCHED_NS, clusterScoped)), "objects that existed before and are gone").to.deep.equal([]);
            expect(kubectlRaw(["get", `gateways.${GATEWAY_API}`, "-n", MESH_NS, gateway.metadata.name]).status, "the Gateway is gone").to.not.equal(0);
        });
    }

    it("no Gateway API Gateway or HTTPRoute is left in any namespace", function () {
        const left = kubectl(["get", `gateways.${GATEWAY_API},httproutes.${GATEWAY_API}`, "-A", "-o", "name"]).trim();
        expect(left).to.equal("");
    });
});
