/**
 * The seed profile's mesh-ConfigMap edit (components/mesh-mtls/component.ts), its dynamic provider driven
 * through create / update / delete with `kubectl` stubbed: no API server, so the unit tier (and a
 * mutation run over it) sees a `delete` that does nothing. The cluster tier runs the same promises
 * against a real kube-apiserver (tests/cluster/mesh-configmap.test.ts).
 *
 * The provider loads `child_process` when it runs (`require("child_process").execFileSync`), so the
 * stub replaces `execFileSync` on the module object and is put back after each test. The fake holds
 * one ConfigMap in memory and answers only the two calls the provider makes: `get configmap ... -o
 * json` and `replace -f -` (with the API server's resourceVersion check). Anything else fails.
 */
import { expect } from "chai";
import { MeshConfigSettingInputs, MeshConfigSettingOutputs, meshConfigSettingProvider as provider } from "../../components/mesh-mtls/component";

const childProcess = require("child_process") as typeof import("child_process");

/** An Istio mesh config as an install writes it: comments, blank lines, nested maps, the switch commented out, trailing blanks. */
const MESH = [
    "# Set the following variable to true to disable policy checks by Mixer.",
    "disablePolicyChecks: false",
    "",
    'accessLogFile: "/dev/stdout"',
    "# Uncomment the following line to enable mutual TLS between proxies   ",
    "# authPolicy: MUTUAL_TLS",
    "",
    "defaultConfig:",
    "  connectTimeout: 10s",
    "  proxyAdminPort: 15000",
    "rootNamespace: istio-system",
    "",
].join("\n");
const OTHER_DATA = { meshNetworks: "networks: {}", "values.json": '{"global":{"mtls":{"enabled":false}}}\n' };
const NS = "istio-system";
const CM = "istio";
const CONTEXT = "kind-test";

interface ConfigMap {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
    data: Record<string, string>;
}

/** An error shaped like the one execFileSync throws when kubectl exits non-zero. */
function kubectlExit(stderr: string): Error {
    return Object.assign(new Error(`Command failed: kubectl\n${stderr}`), { status: 1, stderr });
}

/** The API server's side: one ConfigMap (or none), what kubectl was asked, and what was written. */
class FakeCluster {
    cm: ConfigMap | undefined;
    calls: string[][] = [];
    writes: ConfigMap[] = [];
    private version = 100;

    constructor(mesh: string | undefined) {
        if (mesh !== undefined) this.put(mesh);
    }

    put(mesh: string, extra: Record<string, string> = {}): void {
        this.cm = {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: CM, namespace: NS, resourceVersion: String(++this.version), labels: { app: "istio" } },
            data: { mesh, ...OTHER_DATA, ...extra },
        };
    }

    /** Someone else (an operator with `kubectl edit`, another controller) changes the ConfigMap. */
    editByOthers(edit: (cm: ConfigMap) => void): void {
        const cm = JSON.parse(JSON.stringify(this.cm)) as ConfigMap;
        edit(cm);
        this.cm = { ...cm, metadata: { ...cm.metadata, resourceVersion: String(++this.version) } };
    }

    get mesh(): string | undefined {
        return this.cm?.data.mesh;
    }

    execFileSync(file: string, args: readonly string[], options: { input?: string; encoding?: string }): string {
        expect(file).to.equal("kubectl");
        this.calls.push([...args]);
        expect(args.slice(0, 2), "every call carries the provider's context").to.deep.equal(["--context", CONTEXT]);
        const rest = args.slice(2);
        if (rest.join(" ") === `get configmap ${CM} -n ${NS} -o json`) {
            if (!this.cm) throw kubectlExit(`Error from server (NotFound): configmaps "${CM}" not found`);
            return JSON.stringify(this.cm);
        }
        if (rest.join(" ") === "replace -f -") {
            const sent = JSON.parse(options.input ?? "") as ConfigMap;
            expect(sent.metadata.name).to.equal(CM);
            expect(sent.metadata.namespace).to.equal(NS);
            if (!this.cm) throw kubectlExit(`Error from server (NotFound): configmaps "${CM}" not found`);
            if (sent.metadata.resourceVersion !== this.cm.metadata.resourceVersion) {
                throw kubectlExit(`Error from server (Conflict): Operation cannot be fulfilled on configmaps "${CM}": the object has been modified`);
            }
            this.cm = { ...sent, metadata: { ...sent.metadata, resourceVersion: String(++this.version) } };
            this.writes.push(JSON.parse(JSON.stringify(this.cm)));
            return `configmap/${CM} replaced\n`;
        }
        throw new Error(`the fake kubectl does not answer: kubectl ${args.join(" ")}`);
    }
}

const inputs = (value = "MUTUAL_TLS"): MeshConfigSettingInputs => ({
    namespace: NS,
    configMap: CM,
    dataKey: "mesh",
    setting: "authPolicy",
    value,
    kubeContext: CONTEXT,
});

describe("mesh-ConfigMap provider (seed profile) with kubectl stubbed", () => {
    const realExecFileSync = childProcess.execFileSync;
    let cluster: FakeCluster;

    function install(mesh: string | undefined): FakeCluster {
        cluster = new FakeCluster(mesh);
        (childProcess as { execFileSync: unknown }).execFileSync = (file: string, args: readonly string[], options: { input?: string }) =>
            cluster.execFileSync(file, args, options);
        return cluster;
    }

    afterEach(() => {
        (childProcess as { execFileSync: unknown }).execFileSync = realExecFileSync;
    });

    const create = async (value?: string) => (await provider.create(inputs(value))).outs as MeshConfigSettingOutputs;
    const del = (outs: MeshConfigSettingOutputs) => provider.delete!(`${NS}/${CM}#mesh.authPolicy`, outs);

    it("the stub is in place: the provider's kubectl calls reach the fake, not a real kubectl", async () => {
        install(MESH);
        await create();
        expect(cluster.calls.length).to.be.greaterThan(0);
    });

    it("create sets the one line `authPolicy: MUTUAL_TLS` (the commented one stays) and remembers original and applied", async () => {
        install(MESH);
        const before = cluster.cm!.metadata.resourceVersion;
        const outs = await create();
        const applied = `${MESH}authPolicy: MUTUAL_TLS\n`;
        expect(cluster.mesh).to.equal(applied);
        expect(cluster.mesh).to.contain("# authPolicy: MUTUAL_TLS\n");
        expect(cluster.cm!.data).to.deep.equal({ mesh: applied, ...OTHER_DATA });
        expect(cluster.cm!.metadata.labels).to.deep.equal({ app: "istio" });
        expect(outs.original).to.equal(MESH);
        expect(outs.applied).to.equal(applied);
        expect(cluster.writes).to.have.length(1);
        expect(cluster.cm!.metadata.resourceVersion).to.not.equal(before);
    });

    it("delete puts the original text back byte for byte, with every other data entry as it was", async () => {
        install(MESH);
        const outs = await create();
        expect(cluster.mesh).to.not.equal(MESH);
        await del(outs);
        expect(cluster.mesh).to.equal(MESH);
        expect(Buffer.from(cluster.mesh!, "utf8").equals(Buffer.from(MESH, "utf8"))).to.equal(true);
        expect(cluster.cm!.data).to.deep.equal({ mesh: MESH, ...OTHER_DATA });
        expect(cluster.writes).to.have.length(2);
    });

    it("delete restores an active line the original had (`authPolicy: NONE`) as it was", async () => {
        const withNone = MESH.replace("# authPolicy: MUTUAL_TLS\n", "# authPolicy: MUTUAL_TLS\nauthPolicy: NONE\n");
        install(withNone);
        const outs = await create();
        expect(cluster.mesh).to.equal(withNone.replace("\nauthPolicy: NONE\n", "\nauthPolicy: MUTUAL_TLS\n"));
        await del(outs);
        expect(cluster.mesh).to.equal(withNone);
    });

    it("delete after Istio was uninstalled (ConfigMap NotFound) succeeds and writes nothing", async () => {
        install(MESH);
        const outs = await create();
        cluster.cm = undefined;
        const writes = cluster.writes.length;
        await del(outs);
        expect(cluster.cm).to.equal(undefined);
        expect(cluster.writes).to.have.length(writes);
        expect(cluster.calls.at(-1)!.slice(2, 4)).to.deep.equal(["get", "configmap"]);
    });

    it("delete fails on any other kubectl error (e.g. Forbidden) instead of dropping the restore", async () => {
        install(MESH);
        const outs = await create();
        (childProcess as { execFileSync: unknown }).execFileSync = () => {
            throw kubectlExit('Error from server (Forbidden): configmaps "istio" is forbidden: User "ci" cannot get resource "configmaps"');
        };
        let err: unknown;
        try {
            await del(outs);
        } catch (e) {
            err = e;
        }
        expect(String(err)).to.match(/Forbidden/);
        expect(String(err)).to.contain("make sure kubectl is on PATH");
    });

    it("someone else's edit in between is kept: only the stack's line is reverted", async () => {
        install(MESH);
        const outs = await create();
        const theirs = (text: string) =>
            text
                .replace('accessLogFile: "/dev/stdout"', 'accessLogFile: ""')
                .replace("  proxyAdminPort: 15000\n", "  proxyAdminPort: 15000\n  concurrency: 2\n");
        cluster.editByOthers((cm) => {
            cm.data.mesh = theirs(cm.data.mesh);
            cm.data.extra = "added by someone else";
        });
        expect(cluster.mesh).to.contain("authPolicy: MUTUAL_TLS\n");
        await del(outs);
        const expected = theirs(MESH);
        expect(expected).to.not.equal(MESH);
        expect(cluster.mesh).to.equal(expected);
        expect(cluster.cm!.data).to.deep.equal({ mesh: expected, ...OTHER_DATA, extra: "added by someone else" });
    });

    it("someone else's edit that appends after the stack's line: their line stays, the stack's goes", async () => {
        install(MESH);
        const outs = await create();
        cluster.editByOthers((cm) => {
            cm.data.mesh = `${cm.data.mesh}enableTracing: false\n`;
        });
        await del(outs);
        expect(cluster.mesh).to.equal(`${MESH}enableTracing: false\n`);
    });

    it("delete writes nothing when the text is already what it should be (create found the line set)", async () => {
        const already = `${MESH}authPolicy: MUTUAL_TLS\n`;
        install(already);
        const outs = await create();
        expect(cluster.writes).to.have.length(0);
        expect(outs.original).to.equal(already);
        await del(outs);
        expect(cluster.writes).to.have.length(0);
        expect(cluster.mesh).to.equal(already);
    });

    it("update toggles the value in place and keeps the first original, which delete restores", async () => {
        install(MESH);
        const first = await create();
        const none = (await provider.update!(`${NS}/${CM}`, first, inputs("NONE"))).outs as MeshConfigSettingOutputs;
        expect(cluster.mesh).to.equal(`${MESH}authPolicy: NONE\n`);
        expect(none.original).to.equal(MESH);
        await del(none);
        expect(cluster.mesh).to.equal(MESH);
    });
});
