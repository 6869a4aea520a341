/**
 * What the `sidecar.istio.io/inject: "true"` label of the rate-limit service's and Redis's pods
 * (ad6cbc7) leads to in a `restricted` namespace: the rendered Deployments run through Istio's own
 * injection template (`istioctl kube-inject` with the injector config, values and mesh config that
 * `istioctl manifest generate` writes for a default install, asking this API server as it would ask
 * a real cluster), then admitted by the real API server.
 *
 * - Without Istio's CNI plugin the injector adds `istio-init` (root, NET_ADMIN, NET_RAW): Pod
 *   Security `restricted` refuses the pods; the Deployment itself is accepted with a warning only,
 *   so its pods never appear (README, "Istio sidecars").
 * - With the CNI plugin (`components.cni.enabled=true`): `istio-validation` instead, uid 1337, no
 *   capabilities; the pods are admitted without a warning, scheduled on kwok, the Deployments
 *   become Available. The proxy starts first (holdApplicationUntilProxyStarts), and the tcpSocket
 *   liveness probes are rewritten to the agent's port 15020, which still checks the app's port.
 *
 * Needs istioctl (MESH_RL_ISTIOCTL, exported by run.sh when `npm run tools` or the istio tier has
 * built it); without it this file is SKIPPED loudly (a failure under CI=true or MESH_RL_REQUIRE_TOOLS=1).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
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

const ROOT = path.resolve(__dirname, "../..");
const NS = "mesh-rl-inject"; // workloadNamespace and ratelimitNamespace, restricted
const FIELD_MANAGER = "mesh-rl-cluster-test";

interface Obj {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: any;
}

function run(cmd: string, args: string[], input?: string): string {
    const r = spawnSync(cmd, args, {
        cwd: ROOT,
        input,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000,
        env: { ...process.env, KUBECONFIG: kubeconfig() },
    });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
}

/** The injector's config, values and mesh config of a default install (`istioctl manifest generate`), CNI on or off. */
function injectorFiles(istioctl: string, dir: string, cni: boolean): string[] {
    const out = run(istioctl, ["manifest", "generate", "--set", `components.cni.enabled=${cni}`]);
    let config: string | undefined, values: string | undefined, mesh: string | undefined;
    for (const doc of parseAllDocuments(out)) {
        const o = doc.toJS();
        if (o?.kind !== "ConfigMap") continue;
        if (o.metadata.name === "istio-sidecar-injector") ({ config, values } = o.data);
        if (o.metadata.name === "istio") mesh = o.data.mesh;
    }
    if (!config || !values || !mesh) throw new Error(`istioctl manifest generate (cni ${cni}): no istio-sidecar-injector config/values or mesh config`);
    const files = [`inject-${cni}.yaml`, `values-${cni}.json`, `mesh-${cni}.yaml`].map((f) => path.join(dir, f));
    [config, values, mesh].forEach((text, i) => fs.writeFileSync(files[i], text));
    return files;
}

/** `istioctl kube-inject` of one Deployment with the given injector files. */
function inject(istioctl: string, dir: string, d: Obj, [config, values, mesh]: string[]): Obj {
    const file = path.join(dir, `${d.metadata.name}.yaml`);
    fs.writeFileSync(file, stringify(d));
    const out = run(istioctl, ["kube-inject", "-f", file, "--injectConfigFile", config, "--valuesFile", values, "--meshConfigFile", mesh]);
    const docs = parseAllDocuments(out)
        .map((x) => x.toJS() as Obj)
        .filter((o) => o?.kind === "Deployment");
    expect(docs, `kube-inject ${d.metadata.name}`).to.have.length(1);
    return docs[0];
}

/** The Pod the Deployment's ReplicaSet would create (what Pod Security enforces on). */
function podOf(d: Obj): Obj {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { ...d.spec.template.metadata, name: `${d.metadata.name}-probe`, namespace: d.metadata.namespace },
        spec: d.spec.template.spec,
    };
}

function dryRunCreate(o: Obj): { status: number; stderr: string } {
    return kubectlRaw(["create", "--dry-run=server", "-f", "-"], JSON.stringify(o));
}

describe("cluster: the rate-limit service's and Redis's pods after Istio's sidecar injection, under Pod Security restricted", function () {
    this.timeout(180_000);
    const istioctl = process.env.MESH_RL_ISTIOCTL ?? "";
    let dir = "";
    let rendered: Obj[] = [];
    let deployments: Obj[] = [];
    let accounts: Obj[] = [];

    before(async function () {
        if (!istioctl || !fs.existsSync(istioctl)) {
            const msg =
                "SKIPPED: cluster: sidecar-injection.test.ts: istioctl not built (MESH_RL_ISTIOCTL unset); run 'npm run tools' (scripts/tools/build-istioctl.sh)";
            if (process.env.CI === "true" || process.env.MESH_RL_REQUIRE_TOOLS === "1") throw new Error(msg);
            console.log(msg);
            this.skip();
        }
        ensureNamespace(NS, podSecurityLabels("restricted"));
        await waitFor(`${NS}: default ServiceAccount`, () => kubectlRaw(["get", "serviceaccount/default", "-n", NS]).status === 0);
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-inject-"));
        run("npx", ["tsx", "render/cli.ts", "--set", `workloadNamespace=${NS}`, "--set", `ratelimitNamespace=${NS}`, "--out", path.join(dir, "render")]);
        rendered = parseAllDocuments(fs.readFileSync(path.join(dir, "render", "all.yaml"), "utf8"), { version: "1.1" })
            .map((x) => x.toJS() as Obj)
            .filter((o) => o?.kind);
        deployments = ["ratelimit", "redis"].map((n) => rendered.find((o) => o.kind === "Deployment" && o.metadata.name === n)!);
        for (const d of deployments) {
            expect(d.metadata.namespace).to.equal(NS);
            expect(d.spec.template.metadata.labels["sidecar.istio.io/inject"]).to.equal("true");
        }
        // A pod is admitted only when its ServiceAccount exists (checked before Pod Security).
        accounts = rendered.filter((o) => o.kind === "ServiceAccount" && ["ratelimit", "redis"].includes(o.metadata.name));
        expect(accounts).to.have.length(2);
        kubectl(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: accounts }));
    });

    after(async function () {
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
        if (istioctl && fs.existsSync(istioctl)) await deleteNamespace(NS);
    });

    it("control: the rendered pods as they are (no injector in this cluster) are admitted under restricted without a warning", () => {
        for (const d of deployments) {
            const r = dryRunCreate(podOf(d));
            expect(r.status, r.stderr).to.equal(0);
            expect(warnings(r.stderr)).to.deep.equal([]);
        }
    });

    it("without Istio CNI: the injected istio-init (root, NET_ADMIN, NET_RAW) makes restricted refuse the pods; the Deployment is accepted with a warning only", () => {
        const files = injectorFiles(istioctl, dir, false);
        for (const d of deployments) {
            const inj = inject(istioctl, dir, d, files);
            const init = inj.spec.template.spec.initContainers.map((c: any) => c.name);
            expect(init).to.deep.equal(["istio-init"]);
            const r = dryRunCreate(podOf(inj));
            expect(r.status, `${d.metadata.name}: pod admitted`).to.not.equal(0);
            expect(r.stderr).to.match(/violates PodSecurity "restricted:latest"/);
            expect(r.stderr).to.match(/"istio-init" must not include "NET_ADMIN", "NET_RAW"/);
            expect(r.stderr).to.match(/runAsNonRoot != true \(container "istio-init" must not set securityContext.runAsNonRoot=false\)/);
            expect(r.stderr).to.match(/runAsUser=0 \(container "istio-init"/);
            expect(r.stderr, "only the injected init container is the problem").to.not.match(/container "(istio-proxy|ratelimit|redis)"/);
            // What `kubectl apply` / `pulumi up` shows: only a warning; the ReplicaSet then fails to create pods.
            const a = kubectlRaw(["apply", "--server-side", "--dry-run=server", `--field-manager=${FIELD_MANAGER}`, "-f", "-"], JSON.stringify(inj));
            expect(a.status, a.stderr).to.equal(0);
            expect(warnings(a.stderr).join("\n")).to.match(/would violate PodSecurity "restricted:latest".*istio-init/);
        }
    });

    it("with Istio CNI: the injected pods are admitted without a warning, keep every injected field, run on kwok, Deployments Available; proxy first, tcpSocket liveness through the agent", async () => {
        const files = injectorFiles(istioctl, dir, true);
        const injected = deployments.map((d) => inject(istioctl, dir, d, files));
        for (const inj of injected) {
            const t = inj.spec.template;
            const name = inj.metadata.name;
            expect(
                t.spec.initContainers.map((c: any) => c.name),
                name,
            ).to.deep.equal(["istio-validation"]);
            // holdApplicationUntilProxyStarts: the proxy is the first container and blocks the next one until ready.
            expect(
                t.spec.containers.map((c: any) => c.name),
                name,
            ).to.deep.equal(["istio-proxy", name]);
            expect(t.spec.containers[0].lifecycle?.postStart?.exec?.command).to.deep.equal(["pilot-agent", "wait"]);
            // The app's tcpSocket liveness probe goes through the agent (port 15020), which dials the app's own port.
            const app = t.spec.containers[1];
            expect(app.livenessProbe.httpGet).to.deep.equal({ path: `/app-health/${name}/livez`, port: 15020 });
            const probers = JSON.parse(t.spec.containers[0].env.find((e: any) => e.name === "ISTIO_KUBE_APP_PROBERS").value);
            const original = deployments.find((d) => d.metadata.name === name)!.spec.template.spec.containers[0].livenessProbe.tcpSocket;
            expect(probers[`/app-health/${name}/livez`]).to.deep.equal({ tcpSocket: original });
            expect(app.resources, "the app's ephemeral-storage bounds survive injection").to.deep.equal(
                deployments.find((d) => d.metadata.name === name)!.spec.template.spec.containers[0].resources,
            );

            const r = dryRunCreate(podOf(inj));
            expect(r.status, r.stderr).to.equal(0);
            expect(warnings(r.stderr), `${name}: warnings`).to.deep.equal([]);
        }
        // For real: the injected Deployments (their ServiceAccounts exist, before()).
        const list = { apiVersion: "v1", kind: "List", items: injected };
        const applied = kubectlRaw(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "-f", "-"], JSON.stringify(list));
        expect(applied.status, applied.stderr).to.equal(0);
        expect(warnings(applied.stderr)).to.deep.equal([]);
        for (const d of injected) {
            const pods = await waitForDeploymentPods(d);
            await waitFor(
                `${NS}/${d.metadata.name} Available`,
                () =>
                    kubectlJson<any>(["get", "deployment", "-n", NS, d.metadata.name]).status?.conditions?.some(
                        (c: any) => c.type === "Available" && c.status === "True",
                    ),
                60_000,
            );
            for (const p of pods) {
                expect(p.metadata.labels["sidecar.istio.io/inject"]).to.equal("true");
                expect(p.spec.containers.map((c: any) => c.name)).to.deep.equal(["istio-proxy", d.metadata.name]);
                expect(p.spec.initContainers.map((c: any) => c.name)).to.deep.equal(["istio-validation"]);
            }
        }
        kubectl(["delete", "-f", "-", "--wait=true"], JSON.stringify(list));
    });
});
