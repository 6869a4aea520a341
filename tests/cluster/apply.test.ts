/**
 * Every rendered combination applied to a real API server (server-side apply) in namespaces that
 * enforce Pod Security `restricted`: every object admitted with no warning, every Deployment's pods
 * created and scheduled on kwok's fake nodes, and after deleting what was applied nothing the render
 * created is left (dependents such as ReplicaSets, Pods and EndpointSlices included).
 *
 * The one exemption (README, "Pod Security"): ESP's image runs as root, so the managed-API service
 * goes to its own namespace at `baseline` (config key managedApiNamespace).
 *
 * The rate-limit service and Redis (both in ratelimitNamespace) run in a `restricted` namespace;
 * their pod templates carry the sidecar label and annotation, ephemeral storage, the tcpSocket
 * liveness probes, Redis's uid/gid 10001 and the bounded emptyDir: the test checks that the render
 * has them, that the admitted pods still have every rendered field (nothing dropped or changed by
 * admission), and that every Deployment reports Available. What Istio's injector then adds to those
 * pods is tests/cluster/sidecar-injection.test.ts.
 *
 * The render is read generically (every YAML document under its folder, whatever the layout); the
 * seed profile's mesh-ConfigMap patch is not an object to apply (tests/cluster/mesh-configmap.test.ts
 * drives that edit) and is left out, recognised by its `mesh-ratelimit/patch` annotation.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import {
    NODE_EPHEMERAL_STORAGE,
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
import { Obj, diff, id, listableTypes as listTypes, notKept, readRender, renderCombination, snapshot as snapshotIn } from "./render-objects";

const APPS_NS = "mesh-rl-apps"; // bookinfo (workloadNamespace)
const LIMITS_NS = "mesh-rl-limits"; // rate-limit service and Redis (ratelimitNamespace)
const ESP_NS = "mesh-rl-esp"; // managed-API service (managedApiNamespace): the baseline exemption
const MESH_NS = "istio-system"; // gateway EnvoyFilters; with the literal placement all EnvoyFilters and PeerAuthentication default (no pods)
const WATCHED_NS = [APPS_NS, LIMITS_NS, ESP_NS, MESH_NS];
const FIELD_MANAGER = "mesh-rl-cluster-test";
const EXTRA_NODE = "kwok-node-1";

let listableTypes: string[] = [];

/** Identities of every object (except events) in the watched namespaces, and of the given cluster-scoped ones that exist. */
const snapshot = (clusterScoped: Obj[]) => snapshotIn(listableTypes, WATCHED_NS, clusterScoped);

/**
 * The fields of ad6cbc7 on the rate-limit service's and Redis's pod templates, as rendered: without
 * them the admission checks below would prove nothing about them.
 */
function expectSidecarAndBounds(d: Obj): void {
    const t = d.spec.template;
    const what = `${d.metadata.namespace}/${d.metadata.name}`;
    expect(t.metadata.labels?.["sidecar.istio.io/inject"], `${what}: inject label`).to.equal("true");
    expect(JSON.parse(t.metadata.annotations?.["proxy.istio.io/config"] ?? "{}"), `${what}: proxy config`).to.deep.equal({
        holdApplicationUntilProxyStarts: true,
    });
    for (const c of t.spec.containers) {
        expect(c.resources?.requests?.["ephemeral-storage"], `${what}/${c.name}: ephemeral-storage request`).to.be.a("string");
        expect(c.resources?.limits?.["ephemeral-storage"], `${what}/${c.name}: ephemeral-storage limit`).to.be.a("string");
        expect(c.livenessProbe?.tcpSocket?.port, `${what}/${c.name}: tcpSocket liveness probe`).to.be.a("number");
    }
    if (d.metadata.name === "redis") {
        expect(t.spec.securityContext).to.include({ runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, runAsNonRoot: true });
        expect(t.spec.volumes.map((v: any) => v.emptyDir?.sizeLimit)).to.deep.equal(["64Mi"]);
        expect(t.spec.containers[0].args.join(" ")).to.contain("--maxmemory 160mb --maxmemory-policy volatile-ttl");
    }
}

interface Combination {
    name: string;
    args: string[];
}

const combinations: Combination[] = [];
for (const variant of ["A", "B"]) {
    for (const placement of ["all-routes", "single-route"]) {
        for (const portMode of ["http", "tcp"]) {
            combinations.push({
                name: `${variant} current ${placement} ${portMode}`,
                args: ["--variant", variant, "--profile", "current", "--local-placement", placement, "--port-mode", portMode],
            });
        }
        // Seed: its extensions/v1beta1 Ingress is not served since Kubernetes 1.22, so the managed
        // API is off (the stack's preflight refuses that combination on such clusters too).
        combinations.push({
            name: `${variant} seed ${placement} (managedApi=false)`,
            args: ["--variant", variant, "--profile", "seed", "--local-placement", placement, "--set", "managedApi=false"],
        });
    }
}
// The specification's literal placement (every EnvoyFilter and, current profile, PeerAuthentication
// default in the mesh namespace; seed profile: the mesh-ConfigMap patch), still reachable through
// config: one combination per profile.
const LITERAL_ARGS = ["--set", "vhostScope=all", "--set", "filterNamespaces=root", "--set", "mutualTlsScope=mesh"];
combinations.push({
    name: "A current all-routes http, literal placement (vhostScope=all filterNamespaces=root mutualTlsScope=mesh)",
    args: ["--variant", "A", "--profile", "current", "--local-placement", "all-routes", "--port-mode", "http", ...LITERAL_ARGS],
});
combinations.push({
    name: "A seed all-routes (managedApi=false), literal placement",
    args: ["--variant", "A", "--profile", "seed", "--local-placement", "all-routes", "--set", "managedApi=false", ...LITERAL_ARGS],
});
const NAMESPACE_ARGS = [
    "--set",
    `workloadNamespace=${APPS_NS}`,
    "--set",
    `ratelimitNamespace=${LIMITS_NS}`,
    "--set",
    `managedApiNamespace=${ESP_NS}`,
    "--set",
    `meshNamespace=${MESH_NS}`,
];

describe("cluster: every rendered combination admitted under Pod Security restricted, scheduled, and removed without a trace", function () {
    before(async function () {
        kubeconfig();
        ensureNamespace(APPS_NS, podSecurityLabels("restricted"));
        ensureNamespace(LIMITS_NS, podSecurityLabels("restricted"));
        ensureNamespace(ESP_NS, podSecurityLabels("baseline"));
        // What the controllers add to a new namespace must be there before the first snapshot.
        for (const ns of [APPS_NS, LIMITS_NS, ESP_NS]) {
            await waitFor(
                `${ns}: default ServiceAccount and kube-root-ca.crt`,
                () => kubectlRaw(["get", "serviceaccount/default", "configmap/kube-root-ca.crt", "-n", ns]).status === 0,
            );
        }
        listableTypes = listTypes();
        // A second fake node, so the rate-limit service's spread over nodes can show.
        kubectl(
            ["apply", "-f", "-"],
            JSON.stringify({
                apiVersion: "v1",
                kind: "Node",
                metadata: {
                    name: EXTRA_NODE,
                    annotations: { "node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake" },
                    labels: { "kubernetes.io/hostname": EXTRA_NODE, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", type: "kwok" },
                },
                status: {
                    allocatable: { cpu: "32", memory: "256Gi", pods: "110", "ephemeral-storage": NODE_EPHEMERAL_STORAGE },
                    capacity: { cpu: "32", memory: "256Gi", pods: "110", "ephemeral-storage": NODE_EPHEMERAL_STORAGE },
                },
            }),
        );
        await waitFor(
            `node ${EXTRA_NODE} Ready`,
            () => kubectl(["get", "node", EXTRA_NODE, "-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).trim() === "True",
        );
    });

    after(async function () {
        kubectlRaw(["delete", "node", EXTRA_NODE, "--ignore-not-found"]);
        for (const ns of [APPS_NS, LIMITS_NS, ESP_NS]) await deleteNamespace(ns);
    });

    it("the namespaces really enforce: a pod without a security context is rejected in a restricted namespace", function () {
        const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "plain", namespace: APPS_NS }, spec: { containers: [{ name: "c", image: "busybox" }] } };
        const r = kubectlRaw(["create", "--dry-run=server", "-f", "-"], JSON.stringify(pod));
        expect(r.status).to.not.equal(0);
        expect(r.stderr).to.match(/violates PodSecurity "restricted:latest"/);
    });

    it("the exemption is needed: ESP's Deployment in a restricted namespace draws a Pod Security warning (runAsNonRoot)", function () {
        const dir = renderCombination(["--set", `workloadNamespace=${APPS_NS}`]);
        try {
            const esp = readRender(dir).objects.find((o) => o.kind === "Deployment" && o.metadata.name === "esp-echo")!;
            expect(esp.metadata.namespace).to.equal(APPS_NS);
            const r = kubectlRaw(["apply", "--server-side", "--dry-run=server", `--field-manager=${FIELD_MANAGER}`, "-f", "-"], JSON.stringify(esp));
            expect(r.status, r.stderr).to.equal(0);
            const w = warnings(r.stderr);
            expect(w.join("\n")).to.match(/would violate PodSecurity "restricted:latest"/);
            expect(w.join("\n")).to.match(/runAsNonRoot/);
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });

    for (const c of combinations) {
        it(`${c.name}: applied server-side and admitted, pods on kwok nodes, deleted without a trace`, async function () {
            this.timeout(240_000);
            const dir = renderCombination([...c.args, ...NAMESPACE_ARGS]);
            try {
                const { objects, patches } = readRender(dir);
                // The mesh-ConfigMap patch: seed profile with mesh-wide mutual TLS only (mutualTlsScope=mesh);
                // by default mutual TLS is the stack's own PeerAuthentications, in both profiles.
                expect(patches.length, "mesh ConfigMap patch only in the seed profile with mutualTlsScope=mesh").to.equal(
                    c.args.includes("seed") && c.args.includes("mutualTlsScope=mesh") ? 1 : 0,
                );
                const clusterScoped = objects.filter((o) => !o.metadata.namespace);
                for (const o of objects.filter((x) => x.metadata.namespace)) expect(WATCHED_NS, id(o)).to.include(o.metadata.namespace);
                const deployments = objects.filter((o) => o.kind === "Deployment");
                expect(deployments.length).to.be.greaterThan(0);
                // The rate-limit service and Redis: rendered with the new fields, placed in restricted namespaces.
                const bounded = deployments.filter((d) => d.metadata.name === "ratelimit" || d.metadata.name === "redis");
                expect(bounded.map((d) => `${d.metadata.namespace}/${d.metadata.name}`).sort()).to.deep.equal([`${LIMITS_NS}/ratelimit`, `${LIMITS_NS}/redis`]);
                // Placement: the local bucket in the workload's namespace and mutual TLS by the stack's own
                // policies, or (literal) both in the mesh namespace.
                const literal = c.args.includes("filterNamespaces=root");
                const local = objects.find((o) => o.kind === "EnvoyFilter" && o.metadata.name === "filter-local-ratelimit-svc")!;
                expect(local.metadata.namespace).to.equal(literal ? MESH_NS : APPS_NS);
                expect(objects.filter((o) => o.kind === "PeerAuthentication" && o.metadata.namespace === MESH_NS).map((o) => o.metadata.name)).to.deep.equal(
                    literal && c.args.includes("current") ? ["default"] : [],
                );
                for (const d of bounded) {
                    expectSidecarAndBounds(d);
                    expect(kubectlJson(["get", "namespace", d.metadata.namespace!]).metadata.labels["pod-security.kubernetes.io/enforce"]).to.equal(
                        "restricted",
                    );
                }

                const before = snapshot(clusterScoped);
                const file = path.join(dir, "apply-list.json");
                fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));

                // Apply: exit 0, no warning of any kind (Pod Security `warn` is on in every namespace).
                const applied = kubectlRaw(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", file]);
                expect(applied.status, applied.stderr).to.equal(0);
                expect(warnings(applied.stderr), "API server warnings").to.deep.equal([]);
                const got = kubectlJson<{ items: Obj[] }>(["get", "-f", file]).items;
                expect(got.map(id).sort()).to.deep.equal(objects.map(id).sort());

                // Every Deployment: all replicas created (PodSecurity admitted the pods), scheduled on a kwok node, ready.
                for (const d of deployments) {
                    const ns = d.metadata.namespace!;
                    const want = d.spec.replicas ?? 1;
                    const pods = await waitForDeploymentPods(d);
                    await waitFor(
                        `${ns}/${d.metadata.name} ready`,
                        () => (kubectlJson<any>(["get", "deployment", "-n", ns, d.metadata.name]).status?.readyReplicas ?? 0) === want,
                        60_000,
                    );
                    await waitFor(
                        `${ns}/${d.metadata.name} Available`,
                        () =>
                            kubectlJson<any>(["get", "deployment", "-n", ns, d.metadata.name]).status?.conditions?.some(
                                (c: any) => c.type === "Available" && c.status === "True",
                            ),
                        60_000,
                    );
                    // Admission kept every rendered field of the pod template (labels, annotations, probes, resources, security contexts, volumes).
                    for (const p of pods) {
                        const lost = [...notKept(p.metadata, d.spec.template.metadata, "metadata"), ...notKept(p.spec, d.spec.template.spec, "spec")];
                        expect(lost, `${ns}/${p.metadata.name}`).to.deep.equal([]);
                        // Negative control: the comparison sees a probe or a sizeLimit that is gone.
                        if (d.metadata.name === "redis") {
                            const stripped = JSON.parse(JSON.stringify(p.spec));
                            delete stripped.containers[0].livenessProbe;
                            delete stripped.volumes.find((v: any) => v.name === "data").emptyDir.sizeLimit;
                            expect(notKept(stripped, d.spec.template.spec, "spec")).to.have.length(2);
                        }
                    }
                }
                // The rate-limit service's replicas spread over the two nodes.
                const rls = deployments.find((d) => d.metadata.name === "ratelimit")!;
                const nodes = kubectlJson<{ items: any[] }>(["get", "pods", "-n", LIMITS_NS, "-l", "app=ratelimit"]).items.map((p) => p.spec.nodeName);
                expect(new Set(nodes).size, `ratelimit pods on ${nodes.join(", ")}`).to.equal(Math.min(rls.spec.replicas, 2));
                const pdb = kubectlJson<any>(["get", "poddisruptionbudget", "-n", LIMITS_NS, "ratelimit"]);
                await waitFor(
                    "PodDisruptionBudget ratelimit observes its pods",
                    () => kubectlJson<any>(["get", "poddisruptionbudget", "-n", LIMITS_NS, "ratelimit"]).status?.expectedPods === rls.spec.replicas,
                    30_000,
                );
                expect(pdb.spec.maxUnavailable).to.equal(1);
                // The render created more than it listed (ReplicaSets, Pods, EndpointSlices): all must go.
                const during = snapshot(clusterScoped);
                expect(diff(during, before).length).to.be.greaterThan(objects.length);

                // Delete what was applied; dependents go with it (foreground), then nothing new remains.
                const del = kubectlRaw(["delete", "-f", file, "--cascade=foreground", "--wait=true", "--timeout=120s"]);
                expect(del.status, del.stderr).to.equal(0);
                let left: string[] = [];
                await waitFor(
                    "nothing the render created remains",
                    () => (left = diff(snapshot(clusterScoped), before)).length === 0,
                    90_000,
                    1000,
                    () => left.join(", "),
                );
                expect(diff(before, snapshot(clusterScoped)), "objects that existed before and are gone").to.deep.equal([]);
            } finally {
                fs.rmSync(dir, { recursive: true, force: true });
            }
        });
    }
});
