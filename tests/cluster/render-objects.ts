/**
 * The cluster tier's view of an offline render (render/cli.ts): render one combination into a temp
 * folder, read every object of it (any file layout, each once), compare an admitted object with the
 * rendered one field by field, and list what exists in a set of namespaces (to show that deleting
 * what was applied leaves the cluster as before). Used by tests/cluster/apply.test.ts (the sidecar
 * combinations) and tests/cluster/ambient.test.ts (the ambient render).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { kubectl, kubectlJson, kubectlRaw } from "./kube";

const ROOT = path.resolve(__dirname, "../..");
const PATCH_ANNOTATION = "mesh-ratelimit/patch";

export interface Obj {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
    spec?: any;
}

/** `group/Kind/namespace/name` (group `core` for the core API). */
export const id = (o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }) =>
    `${o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "core"}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** Renders one combination with the CLI into a fresh temp folder; returns the folder. */
export function renderCombination(args: string[]): string {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-apply-"));
    const r = spawnSync("npx", ["tsx", "render/cli.ts", ...args, "--out", out], { cwd: ROOT, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`render ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
    return out;
}

/** Every Kubernetes object under the folder (any file layout), each once; the mesh patch left out. */
export function readRender(dir: string): { objects: Obj[]; patches: Obj[] } {
    const files: string[] = [];
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) walk(p);
            else if (/\.ya?ml$/.test(e.name)) files.push(p);
        }
    };
    walk(dir);
    const byId = new Map<string, Obj>();
    for (const f of files.sort()) {
        for (const doc of parseAllDocuments(fs.readFileSync(f, "utf8"), { version: "1.1" })) {
            if (doc.errors.length) throw new Error(`${f}: ${doc.errors[0].message}`);
            const o = doc.toJS() as Obj | null;
            if (!o || !o.kind) continue;
            const prev = byId.get(id(o));
            if (prev) expect(o, `${f}: ${id(o)} written twice with different content`).to.deep.equal(prev);
            else byId.set(id(o), o);
        }
    }
    const all = [...byId.values()];
    return { objects: all.filter((o) => !o.metadata.annotations?.[PATCH_ANNOTATION]), patches: all.filter((o) => o.metadata.annotations?.[PATCH_ANNOTATION]) };
}

/** Every namespaced kind the API server lists (events aside, which the control plane writes on its own). */
export function listableTypes(): string[] {
    return kubectl(["api-resources", "--verbs=list", "--namespaced", "-o", "name"])
        .split("\n")
        .map((s) => s.trim())
        .filter((s) => s && s !== "events" && s !== "events.events.k8s.io");
}

/** Identities of every object of `types` in `namespaces`, and of the given cluster-scoped ones that exist. */
export function snapshot(types: string[], namespaces: string[], clusterScoped: Obj[]): Set<string> {
    const list = kubectlJson<{ items: Obj[] }>(["get", types.join(","), "--all-namespaces"]);
    const ids = list.items.filter((o) => namespaces.includes(o.metadata.namespace ?? "")).map(id);
    for (const o of clusterScoped) {
        if (kubectlRaw(["get", `${o.kind}.${o.apiVersion.split("/")[0]}`, o.metadata.name]).status === 0) ids.push(id(o));
    }
    return new Set(ids);
}

/** What `a` has and `b` lacks. */
export const diff = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x));

/**
 * Paths (`.a.b[0]`) where `actual` lacks or differs from a field `expected` has. Extra fields in
 * `actual` are fine (API defaults), and so are extra objects in a list of objects (the service
 * account token volume and mounts admission adds); lists of strings (args, command) must be equal.
 */
export function notKept(actual: any, expected: any, at = ""): string[] {
    if (expected === null || typeof expected !== "object")
        return actual === expected ? [] : [`${at}: rendered ${JSON.stringify(expected)}, admitted ${JSON.stringify(actual)}`];
    if (Array.isArray(expected)) {
        if (!Array.isArray(actual)) return [`${at}: rendered a list, admitted ${JSON.stringify(actual)}`];
        if (expected.every((e) => e === null || typeof e !== "object"))
            return JSON.stringify(actual) === JSON.stringify(expected)
                ? []
                : [`${at}: rendered ${JSON.stringify(expected)}, admitted ${JSON.stringify(actual)}`];
        return expected.flatMap((e, i) =>
            actual.some((a) => notKept(a, e).length === 0)
                ? []
                : [`${at}[${i}]: rendered ${JSON.stringify(e)}, not among the admitted ${JSON.stringify(actual)}`],
        );
    }
    return Object.entries(expected).flatMap(([k, v]) => notKept(actual?.[k], v, `${at}.${k}`));
}
