/**
 * Every cluster check asks the cluster the Kubernetes provider deploys to (cluster/kube-target.ts,
 * cluster/program-lookups.ts): `kubernetes:kubeconfig` (contents or path), `kubernetes:context`,
 * `kubernetes:cluster`, not kubectl's current context. A stand-in `kubectl` on PATH resolves its
 * flags the way kubectl does (`--kubeconfig`, else `KUBECONFIG`; `--context`, else the file's
 * current-context) and answers with the namespace named after the chosen cluster's server, so a
 * lookup shows which cluster it asked. The ambient kubeconfig's current-context points elsewhere.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { openKubectlTarget, providerTarget } from "../../cluster/kube-target";
import { programLookups, seedEditProblems } from "../../cluster/program-lookups";
import { lookupMeshNamespaces } from "../../cluster/cluster-lookup";
import { planOfConfig } from "../../program/config-args";
import { meshReachQuery } from "../../program/mesh-reach";
import { sharedObjectRefs } from "../../program/preflight";
import { DEV } from "./helpers";

/** A kubeconfig (JSON is YAML) with one context per server; `current` is its current-context. */
function kubeconfig(current: string, contexts: Record<string, string>, token = "t"): string {
    return JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": current,
        clusters: Object.entries(contexts).map(([name, server]) => ({ name, cluster: { server } })),
        contexts: Object.keys(contexts).map((name) => ({ name, context: { cluster: name, user: "u" } })),
        users: [{ name: "u", user: { token } }],
    });
}

/** The stand-in kubectl: logs argv and the kubeconfig file's mode, answers pods in namespace <server host>. */
const FAKE_KUBECTL = `#!/usr/bin/env node
const fs = require("fs");
const argv = process.argv.slice(2);
const flag = (f) => { const i = argv.indexOf(f); return i >= 0 ? argv[i + 1] : undefined; };
const file = flag("--kubeconfig") ?? (process.env.KUBECONFIG || "").split(":")[0];
const cfg = JSON.parse(fs.readFileSync(file, "utf8"));
const ctx = flag("--context") ?? cfg["current-context"];
const context = cfg.contexts.find((c) => c.name === ctx);
if (!context) { process.stderr.write("error: context " + ctx + " does not exist\\n"); process.exit(1); }
const cluster = flag("--cluster") ?? context.context.cluster;
const server = cfg.clusters.find((c) => c.name === cluster).cluster.server;
fs.appendFileSync(process.env.FAKE_KUBECTL_LOG, JSON.stringify({ argv, mode: (fs.statSync(file).mode & 0o777).toString(8) }) + "\\n");
const ns = new URL(server).hostname.split(".")[0];
if (argv.includes("api-versions")) { process.stdout.write("v1\\napps/v1\\nnetworking.istio.io/v1alpha3\\nsecurity.istio.io/v1\\nnetworking.k8s.io/v1\\n"); process.exit(0); }
const items = argv.includes("pods") && argv.includes("--all-namespaces")
  ? [{ kind: "Pod", metadata: { name: "app", namespace: ns }, spec: { containers: [{ name: "istio-proxy" }] } }]
  : [];
process.stdout.write(JSON.stringify({ kind: "List", items }));
`;

describe("cluster checks ask the provider's cluster, not kubectl's current context", () => {
    let dir: string;
    let log: string;
    let ambient: string;
    const saved = { PATH: process.env.PATH, KUBECONFIG: process.env.KUBECONFIG, FAKE_KUBECTL_LOG: process.env.FAKE_KUBECTL_LOG };
    const calls = (): { argv: string[]; mode: string }[] =>
        fs.existsSync(log)
            ? fs
                  .readFileSync(log, "utf8")
                  .trim()
                  .split("\n")
                  .map((l) => JSON.parse(l))
            : [];

    before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-target-test-"));
        fs.writeFileSync(path.join(dir, "kubectl"), FAKE_KUBECTL, { mode: 0o755 });
        ambient = path.join(dir, "ambient-kubeconfig");
        fs.writeFileSync(ambient, kubeconfig("elsewhere", { elsewhere: "https://elsewhere.invalid", target: "https://target.invalid" }));
        log = path.join(dir, "calls.log");
        process.env.PATH = `${dir}${path.delimiter}${process.env.PATH}`;
        process.env.KUBECONFIG = ambient;
        process.env.FAKE_KUBECTL_LOG = log;
    });
    beforeEach(() => fs.rmSync(log, { force: true }));
    after(() => {
        for (const [k, v] of Object.entries(saved))
            if (v === undefined) delete process.env[k];
            else process.env[k] = v;
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("negative control: without the provider's flags, kubectl asks its current context (elsewhere)", () => {
        expect(lookupMeshNamespaces([])).to.deep.equal(["elsewhere"]);
    });

    it("kubernetes:context: the lookups ask that context of the ambient kubeconfig", () => {
        const lookups = programLookups(providerTarget({ "kubernetes:context": "target" }), () => undefined);
        expect(lookups.options.lookupMeshNamespaces!()).to.deep.equal(["target"]);
        expect(calls()[0]!.argv.slice(0, 2)).to.deep.equal(["--context", "target"]);
        lookups.close();
    });

    it("kubernetes:kubeconfig as contents (a secret): a 0600 temp file, never in argv, removed by close(); its current-context is asked", () => {
        const contents = kubeconfig("prod", { prod: "https://provider.invalid" }, "do-not-leak-4711");
        const lookups = programLookups(providerTarget({ "kubernetes:kubeconfig": contents }), () => undefined);
        expect(lookups.options.lookupMeshNamespaces!()).to.deep.equal(["provider"]);
        const [call] = calls();
        expect(call!.argv[0]).to.equal("--kubeconfig");
        const file = call!.argv[1]!;
        expect(call!.mode).to.equal("600");
        expect(JSON.stringify(calls())).to.not.contain("do-not-leak-4711");
        expect(fs.existsSync(file)).to.equal(true);
        lookups.close();
        expect(fs.existsSync(file)).to.equal(false);
        expect(fs.existsSync(path.dirname(file))).to.equal(false);
    });

    it("kubernetes:kubeconfig as a path, with kubernetes:context and kubernetes:cluster: passed as they are, no temp file", () => {
        const file = path.join(dir, "provider-kubeconfig");
        fs.writeFileSync(file, kubeconfig("a", { a: "https://a.invalid", b: "https://b.invalid" }));
        const t = openKubectlTarget(providerTarget({ "kubernetes:kubeconfig": file, "kubernetes:context": "b", "kubernetes:cluster": "a" }));
        expect(t.flags).to.deep.equal(["--kubeconfig", file, "--context", "b", "--cluster", "a"]);
        expect(lookupMeshNamespaces(t.flags)).to.deep.equal(["a"]);
        t.close();
        expect(fs.existsSync(file)).to.equal(true);
    });

    it("every lookup the program makes carries the flags (served APIs, shared objects, reach, owned objects, Ingress users, sidecars, istiod)", () => {
        const contents = kubeconfig("prod", { prod: "https://provider.invalid" });
        const lookups = programLookups(providerTarget({ "kubernetes:kubeconfig": contents, "kubernetes:context": "prod" }), () => undefined);
        const o = lookups.options;
        const { settings, global } = planOfConfig(DEV);
        o.checkCluster!(settings);
        o.lookupShared!(sharedObjectRefs(settings, global));
        o.lookupMeshReach!(meshReachQuery(settings));
        o.lookupObjects!([{ apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "redis", resourceName: "redis" }]);
        o.lookupIngressClassUsers!("istio");
        o.lookupMeshNamespaces!();
        o.lookupIstioTags!("istio-system");
        lookups.close();
        const all = calls();
        expect(all.length).to.be.greaterThan(8);
        for (const c of all) {
            expect(c.argv[0], c.argv.join(" ")).to.equal("--kubeconfig");
            expect(c.argv.slice(2, 4), c.argv.join(" ")).to.deep.equal(["--context", "prod"]);
        }
        const verbs = new Set(all.map((c) => c.argv[4]));
        expect([...verbs].sort()).to.deep.equal(["api-versions", "get"]);
    });

    it("seed profile, mesh scope: refused with kubernetes:kubeconfig (its kubectl edit reads KUBECONFIG); accepted without it or on the current profile", () => {
        const seed = planOfConfig({ ...DEV, apiProfile: "seed", managedApi: "false", mutualTlsScope: "mesh" }).settings;
        const withConfig = seedEditProblems(seed, { kubeconfig: "{}" });
        expect(withConfig.map((p) => p.key)).to.deep.equal(["mutualTlsScope"]);
        expect(withConfig[0]!.problem).to.contain("reads KUBECONFIG and kubernetes:context, not kubernetes:kubeconfig");
        expect(seedEditProblems(seed, { context: "prod" })).to.deep.equal([]);
        expect(seedEditProblems(planOfConfig({ ...DEV, mutualTlsScope: "mesh" }).settings, { kubeconfig: "{}" })).to.deep.equal([]);
    });
});
