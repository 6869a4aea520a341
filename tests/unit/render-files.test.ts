/**
 * The renderer's file handling: it never deletes or overwrites a file it did not write, removes
 * only its own stale files on a re-render, and refuses targets no render belongs in.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { writeRender } from "../../render/cli";
import { parseAllDocuments } from "yaml";
import { K8sObject } from "../../lib/k8s-object";
import { REDACTED, registerProgram, toObjects } from "../../render/render";
import { dangerousTarget, MANIFEST, OutDirError } from "../../render/write";

const REPO = path.resolve(__dirname, "..", "..");

function cm(name: string): K8sObject {
    return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { k: name } };
}

describe("render output folder", () => {
    let tmp: string;
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "render-files-"));
    });
    afterEach(() => {
        fs.rmSync(tmp, { recursive: true, force: true });
    });
    /** Options that keep the tests independent of where mocha runs: cwd and home are elsewhere. */
    const opts = () => ({ cwd: REPO, home: path.join(tmp, "no-home") });

    it("creates a new folder, with a manifest of exactly the files it wrote", () => {
        const out = path.join(tmp, "new", "out");
        writeRender([cm("a"), cm("b")], out, opts());
        const listed = JSON.parse(fs.readFileSync(path.join(out, MANIFEST), "utf8")).files;
        const onDisk = fs
            .readdirSync(out)
            .filter((f) => f !== MANIFEST)
            .sort();
        expect(onDisk).to.include.members(["all.yaml", "configmap_default_a.yaml", "configmap_default_b.yaml"]);
        expect(listed).to.deep.equal(onDisk);
    });

    it("an empty existing folder is used", () => {
        writeRender([cm("a")], tmp, opts());
        expect(fs.existsSync(path.join(tmp, "configmap_default_a.yaml"))).to.equal(true);
    });

    it("refuses a non-empty folder it did not write, and the user's file survives untouched", () => {
        const notes = path.join(tmp, "notes.md");
        fs.writeFileSync(notes, "my notes\n");
        expect(() => writeRender([cm("a")], tmp, opts())).to.throw(OutDirError, /not empty \(notes\.md\).*no \.mesh-ratelimit-render\.json/);
        expect(fs.readFileSync(notes, "utf8")).to.equal("my notes\n");
        expect(fs.readdirSync(tmp)).to.deep.equal(["notes.md"]);
    });

    it("re-rendering into its own folder removes only its own stale files; a foreign file added since survives", () => {
        writeRender([cm("a"), cm("b")], tmp, opts());
        fs.writeFileSync(path.join(tmp, "notes.md"), "added by the user\n");
        const r = writeRender([cm("a")], tmp, opts());
        expect(r.removed).to.deep.equal(["configmap_default_b.yaml"]);
        expect(fs.readdirSync(tmp).sort()).to.deep.equal([MANIFEST, "all.yaml", "configmap_default_a.yaml", "notes.md"].sort());
        expect(fs.readFileSync(path.join(tmp, "notes.md"), "utf8")).to.equal("added by the user\n");
        expect(JSON.parse(fs.readFileSync(path.join(tmp, MANIFEST), "utf8")).files).to.deep.equal(["all.yaml", "configmap_default_a.yaml"]);
    });

    it("never overwrites a file of the same name that it did not write", () => {
        writeRender([cm("a")], tmp, opts());
        fs.writeFileSync(path.join(tmp, "configmap_default_b.yaml"), "user's own\n");
        expect(() => writeRender([cm("a"), cm("b")], tmp, opts())).to.throw(OutDirError, /configmap_default_b\.yaml already exists/);
        expect(fs.readFileSync(path.join(tmp, "configmap_default_b.yaml"), "utf8")).to.equal("user's own\n");
    });

    it("a manifest entry pointing outside the folder is never followed", () => {
        const victim = path.join(tmp, "victim.txt");
        fs.writeFileSync(victim, "keep\n");
        const out = path.join(tmp, "out");
        writeRender([cm("a")], out, opts());
        const m = JSON.parse(fs.readFileSync(path.join(out, MANIFEST), "utf8"));
        m.files.push("../victim.txt", victim);
        fs.writeFileSync(path.join(out, MANIFEST), JSON.stringify(m));
        writeRender([cm("a")], out, opts());
        expect(fs.readFileSync(victim, "utf8")).to.equal("keep\n");
    });

    it("refuses dangerous targets: /, the home folder, the repository and its parents, a .git folder, a parent of the current directory", () => {
        const home = path.join(tmp, "home");
        const work = path.join(tmp, "work", "sub");
        fs.mkdirSync(work, { recursive: true });
        fs.mkdirSync(home);
        const gitRepo = path.join(tmp, "clone");
        fs.mkdirSync(path.join(gitRepo, ".git"), { recursive: true });
        expect(dangerousTarget("/", work, home)).to.match(/file-system root/);
        expect(dangerousTarget(home, work, home)).to.match(/home directory/);
        expect(dangerousTarget(REPO, work, home)).to.match(/is this repository/);
        expect(dangerousTarget(path.dirname(REPO), work, home)).to.match(/contains this repository/);
        expect(dangerousTarget(gitRepo, work, home)).to.match(/\.git/);
        expect(dangerousTarget(path.join(tmp, "work"), work, home)).to.match(/contains the current directory/);
        expect(dangerousTarget(path.join(REPO, "."), work, home)).to.match(/this repository/);
        // The rule is not "refuse everything": a fresh folder, and the current directory's own child, are fine.
        expect(dangerousTarget(path.join(tmp, "fresh"), work, home)).to.equal(undefined);
        expect(dangerousTarget(path.join(work, "rendered"), work, home)).to.equal(undefined);
        expect(dangerousTarget(path.join(REPO, "rendered"), work, home)).to.equal(undefined);
    });

    it("writeRender refuses the dangerous targets before writing anything", () => {
        const home = path.join(tmp, "home");
        fs.mkdirSync(home);
        fs.writeFileSync(path.join(home, ".bashrc"), "x\n");
        expect(() => writeRender([cm("a")], home, { cwd: REPO, home })).to.throw(OutDirError, /home directory/);
        expect(fs.readdirSync(home)).to.deep.equal([".bashrc"]);
        const before = fs.readdirSync(REPO).sort();
        expect(() => writeRender([cm("a")], REPO, { cwd: REPO, home })).to.throw(OutDirError, /this repository/);
        expect(() => writeRender([cm("a")], "/", { cwd: REPO, home })).to.throw(OutDirError, /root/);
        expect(fs.readdirSync(REPO).sort()).to.deep.equal(before);
    });

    it("rendered/ (the default --out) is ignored by git", () => {
        const ignore = fs
            .readFileSync(path.join(REPO, ".gitignore"), "utf8")
            .split("\n")
            .map((l) => l.trim());
        expect(ignore).to.include("rendered/");
    });
});

describe("rendered files mark what cannot be applied as written", function () {
    this.timeout(60_000);
    let tmp: string;
    beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "render-marks-"));
    });
    afterEach(() => {
        fs.rmSync(tmp, { recursive: true, force: true });
    });
    const opts = () => ({ cwd: REPO, home: path.join(tmp, "no-home") });
    const secret: K8sObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "redis-auth", namespace: "default" }, stringData: { password: REDACTED } };
    const meshPatch: K8sObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
            name: "istio",
            namespace: "istio-system",
            annotations: { "mesh-ratelimit/patch": "sets the top-level line 'authPolicy: MUTUAL_TLS' inside data.mesh" },
        },
        data: { mesh: "authPolicy: MUTUAL_TLS\n" },
    };
    const realSecret: K8sObject = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "given", namespace: "default" },
        stringData: { password: "typed-by-the-user" },
    };

    it("placeholders and patches go to not-appliable/ with a header; all.yaml holds only the rest and says what it lacks", () => {
        const r = writeRender([cm("a"), secret, meshPatch, realSecret], tmp, opts());
        expect(r.held.map((h) => h.file).sort()).to.deep.equal([
            "not-appliable/configmap_istio-system_istio.yaml",
            "not-appliable/secret_default_redis-auth.yaml",
        ]);
        const all = fs.readFileSync(path.join(tmp, "all.yaml"), "utf8");
        const docs = parseAllDocuments(all).map((d) => d.toJS());
        expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).to.deep.equal(["ConfigMap/a", "Secret/given"]);
        expect(all).not.to.contain(REDACTED);
        expect(all).to.match(/^# .*every object that applies as written \(2\)/);
        expect(all).to.match(
            /NOT in this file \(not-appliable\/\)[\s\S]*Secret default\/redis-auth: create it yourself: kubectl -n default create secret generic redis-auth --from-literal=password=/,
        );
        expect(all).to.match(/ConfigMap istio-system\/istio: add the line 'authPolicy: MUTUAL_TLS' to data\.mesh/);
        const s = fs.readFileSync(path.join(tmp, "not-appliable/secret_default_redis-auth.yaml"), "utf8");
        expect(s).to.match(/^# NOT APPLIABLE AS WRITTEN: Secret default\/redis-auth holds PLACEHOLDER values \(stringData\.password\)/);
        const p = fs.readFileSync(path.join(tmp, "not-appliable/configmap_istio-system_istio.yaml"), "utf8");
        expect(p).to.match(/^# NOT APPLIABLE AS WRITTEN: ConfigMap istio-system\/istio is a PATCH, not an object/);
        // The header is a comment: the object itself still reads back unchanged.
        expect(parseAllDocuments(p).map((d) => d.toJS())).to.deep.equal([meshPatch]);
        expect(fs.existsSync(path.join(tmp, "configmap_default_a.yaml"))).to.equal(true);
    });

    it("a later render without such objects removes the stale not-appliable/ files and the then empty folder", () => {
        writeRender([cm("a"), secret, meshPatch], tmp, opts());
        const r = writeRender([cm("a")], tmp, opts());
        expect(r.removed.sort()).to.deep.equal(["not-appliable/configmap_istio-system_istio.yaml", "not-appliable/secret_default_redis-auth.yaml"]);
        expect(fs.existsSync(path.join(tmp, "not-appliable"))).to.equal(false);
        expect(fs.readFileSync(path.join(tmp, "all.yaml"), "utf8")).not.to.contain("NOT in this file");
    });

    it("the real seed render holds back exactly its Secret and, with mesh-wide mutual TLS, its mesh ConfigMap edit", async () => {
        const scoped = writeRender(toObjects((await registerProgram({ apiProfile: "seed" })).registrations), tmp, opts()).held.map(
            (h) => `${h.object.kind}/${h.object.metadata.namespace}/${h.object.metadata.name}`,
        );
        expect(scoped).to.deep.equal(["Secret/default/redis-auth", "Secret/default/redis-per-value-auth"]);
        const { registrations } = await registerProgram({ apiProfile: "seed", overrides: { mutualTlsScope: "mesh" } });
        const held = writeRender(toObjects(registrations), tmp, opts()).held.map(
            (h) => `${h.object.kind}/${h.object.metadata.namespace}/${h.object.metadata.name}`,
        );
        expect(held.sort()).to.deep.equal(["ConfigMap/istio-system/istio", "Secret/default/redis-auth", "Secret/default/redis-per-value-auth"]);
    });
});
