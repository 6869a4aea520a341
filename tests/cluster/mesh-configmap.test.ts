/**
 * The seed profile's edit of Istio's mesh ConfigMap (components/mesh-mtls/component.ts), driven through its
 * dynamic provider's create / diff / update / delete against a real API server (no Pulumi engine).
 * The ConfigMap belongs to someone else: after delete it must be byte for byte what it was, also
 * when someone edited another line of `mesh` in between (their edit stays).
 */
import { expect } from "chai";
import { MeshConfigSettingInputs, MeshConfigSettingOutputs, meshConfigSettingProvider as provider } from "../../components/mesh-mtls/component";
import { deleteNamespace, ensureNamespace, kubeconfig, kubectl, kubectlJson, kubectlRaw } from "./kube";

/**
 * A mesh config as an Istio install of the specification's era writes it: comments, blank lines,
 * nested maps, the mutual-TLS switch present but commented out, a line with trailing blanks, and
 * the trailing newline of a `mesh: |` block.
 */
const MESH = [
    "# Set the following variable to true to disable policy checks by Mixer.",
    "# Metrics are still reported to Mixer.",
    "disablePolicyChecks: false",
    "",
    "# Set enableTracing to false to disable request tracing.",
    "enableTracing: true",
    "",
    "# Set accessLogFile to empty string to disable access log.",
    'accessLogFile: "/dev/stdout"',
    "",
    "mixerCheckServer: istio-policy.istio-system.svc.cluster.local:9091",
    "mixerReportServer: istio-telemetry.istio-system.svc.cluster.local:9091",
    "",
    "# Uncomment the following line to enable mutual TLS between proxies   ",
    "# authPolicy: MUTUAL_TLS",
    "",
    "outboundTrafficPolicy:",
    "  mode: ALLOW_ANY",
    "defaultConfig:",
    "  # Where envoy keeps its configuration in the istio-proxy container",
    '  configPath: "/etc/istio/proxy"',
    "  connectTimeout: 10s",
    "  discoveryAddress: istio-pilot.istio-system:15010",
    "  proxyAdminPort: 15000",
    "rootNamespace: istio-system",
    "",
].join("\n");
const OTHER_DATA = { meshNetworks: "networks: {}", "values.json": '{"global":{"mtls":{"enabled":false}}}\n' };
const LABELS = { app: "istio", release: "istio", "operator.istio.io/component": "Pilot" };

const CM = "istio";
const ns = `mesh-cm-${process.pid}`;

interface ConfigMap {
    metadata: { resourceVersion: string; labels?: Record<string, string> };
    data: Record<string, string>;
}

function createConfigMap(mesh: string): void {
    kubectl(["delete", "configmap", CM, "-n", ns, "--ignore-not-found"]);
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: CM, namespace: ns, labels: LABELS }, data: { mesh, ...OTHER_DATA } };
    kubectl(["create", "-f", "-"], JSON.stringify(cm));
}

const read = (): ConfigMap => kubectlJson<ConfigMap>(["get", "configmap", CM, "-n", ns]);

/** Someone else edits the ConfigMap (another controller, an operator with kubectl edit). */
function editByOthers(edit: (cm: ConfigMap) => void): void {
    const cm = read();
    edit(cm);
    kubectl(["replace", "-f", "-"], JSON.stringify(cm));
}

/** Every data entry and label exactly as expected: `mesh` compared as a string, byte for byte. */
function assertConfigMap(expectedMesh: string, extraData: Record<string, string> = {}): void {
    const cm = read();
    expect(cm.data.mesh).to.equal(expectedMesh);
    expect(Buffer.from(cm.data.mesh, "utf8").equals(Buffer.from(expectedMesh, "utf8"))).to.equal(true);
    expect(cm.data).to.deep.equal({ mesh: expectedMesh, ...OTHER_DATA, ...extraData });
    expect(cm.metadata.labels).to.deep.equal(LABELS);
}

describe("cluster: seed profile's mesh ConfigMap edit (dynamic provider against kube-apiserver)", function () {
    let inputs: (value?: string) => MeshConfigSettingInputs;

    before(function () {
        kubeconfig();
        // The provider runs plain `kubectl` (KUBECONFIG from the environment) with --context.
        const context = kubectl(["config", "current-context"]).trim();
        inputs = (value = "MUTUAL_TLS") => ({ namespace: ns, configMap: CM, dataKey: "mesh", setting: "authPolicy", value, kubeContext: context });
        ensureNamespace(ns);
    });
    after(async function () {
        await deleteNamespace(ns);
    });
    beforeEach(() => createConfigMap(MESH));

    const create = async (value?: string) => (await provider.create(inputs(value))).outs as MeshConfigSettingOutputs;

    it("create adds the one line `authPolicy: MUTUAL_TLS` (the commented one stays) and remembers the original", async function () {
        const before = read().metadata.resourceVersion;
        const outs = await create();
        expect(outs.original).to.equal(MESH);
        assertConfigMap(`${MESH}authPolicy: MUTUAL_TLS\n`);
        expect(read().data.mesh).to.contain("# authPolicy: MUTUAL_TLS\n");
        expect(read().metadata.resourceVersion).to.not.equal(before);
    });

    it("delete puts the ConfigMap back byte for byte", async function () {
        const outs = await create();
        expect(read().data.mesh).to.not.equal(MESH);
        await provider.delete!(`${ns}/${CM}`, outs);
        assertConfigMap(MESH);
    });

    it("negative control: without a restore the check above fails (it can fail)", async function () {
        await create();
        // A provider whose delete did nothing would leave exactly this state behind.
        expect(() => assertConfigMap(MESH)).to.throw(/expected/);
    });

    it("someone else's edit of another `mesh` line (and a new key) survives delete; only the stack's line is reverted", async function () {
        const outs = await create();
        const theirs = (text: string) =>
            text
                .replace('accessLogFile: "/dev/stdout"', 'accessLogFile: ""')
                .replace("  proxyAdminPort: 15000\n", "  proxyAdminPort: 15000\n  concurrency: 2\n");
        editByOthers((cm) => {
            cm.data.mesh = theirs(cm.data.mesh);
            cm.data.extra = "added by someone else";
        });
        expect(read().data.mesh).to.contain("authPolicy: MUTUAL_TLS\n");
        await provider.delete!(`${ns}/${CM}`, outs);
        const expected = theirs(MESH);
        expect(expected).to.not.equal(MESH);
        assertConfigMap(expected, { extra: "added by someone else" });
    });

    it("update (mutual TLS toggled) changes the line in place, keeps the first original, and delete restores it", async function () {
        const first = await create();
        const d = await provider.diff!(`${ns}/${CM}`, first, inputs("NONE"));
        expect(d.changes).to.equal(true);
        expect(d.replaces ?? []).to.deep.equal([]);
        const none = (await provider.update!(`${ns}/${CM}`, first, inputs("NONE"))).outs as MeshConfigSettingOutputs;
        expect(none.original).to.equal(MESH);
        assertConfigMap(`${MESH}authPolicy: NONE\n`);
        const back = (await provider.update!(`${ns}/${CM}`, none, inputs("MUTUAL_TLS"))).outs as MeshConfigSettingOutputs;
        assertConfigMap(`${MESH}authPolicy: MUTUAL_TLS\n`);
        expect(back.original).to.equal(MESH);
        await provider.delete!(`${ns}/${CM}`, back);
        assertConfigMap(MESH);
    });

    it("diff reports no change for the same value and a replacement for another ConfigMap", async function () {
        const outs = await create();
        expect((await provider.diff!(`${ns}/${CM}`, outs, inputs())).changes).to.equal(false);
        const other = await provider.diff!(`${ns}/${CM}`, outs, { ...inputs(), configMap: "istio-canary" });
        expect(other.changes).to.equal(true);
        expect(other.replaces).to.deep.equal(["configMap"]);
    });

    it("an active `authPolicy` line in the original is changed in place and put back as it was", async function () {
        const withNone = MESH.replace("# authPolicy: MUTUAL_TLS\n", "# authPolicy: MUTUAL_TLS\nauthPolicy: NONE\n");
        createConfigMap(withNone);
        const outs = await create();
        assertConfigMap(withNone.replace("\nauthPolicy: NONE\n", "\nauthPolicy: MUTUAL_TLS\n"));
        await provider.delete!(`${ns}/${CM}`, outs);
        assertConfigMap(withNone);
    });

    it("delete succeeds when Istio (the ConfigMap) is gone, and recreates nothing", async function () {
        const outs = await create();
        kubectl(["delete", "configmap", CM, "-n", ns]);
        await provider.delete!(`${ns}/${CM}`, outs);
        expect(kubectlRaw(["get", "configmap", CM, "-n", ns]).status).to.not.equal(0);
    });

    it("create fails with a clear message when the ConfigMap has no `mesh` entry", async function () {
        kubectl(["delete", "configmap", CM, "-n", ns]);
        kubectl(["create", "configmap", CM, "-n", ns, "--from-literal=meshNetworks=networks: {}"]);
        let err: unknown;
        try {
            await create();
        } catch (e) {
            err = e;
        }
        expect(String(err)).to.match(/has no 'mesh' entry/);
        expect(read().data).to.deep.equal({ meshNetworks: "networks: {}" });
    });
});
