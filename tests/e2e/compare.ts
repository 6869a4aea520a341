/**
 * Compares the objects of an offline render (`npm run render -- --out DIR`, DIR/all.yaml) with the
 * live objects on the API server (kubectl, KUBECONFIG from the environment).
 *
 *   tsx tests/e2e/compare.ts present DIR [--skip kind/ns/name,...]   every rendered object exists with the same content
 *   tsx tests/e2e/compare.ts absent DIR  [--skip ...]                 no rendered object exists any more
 *   --except-in DIR2: only objects that DIR2's render lacks (what an update must remove).
 *   --state FILE: `pulumi stack export` output; also compares each object with the inputs Pulumi
 *   sent (exact, both ways). Needed for created objects: the provider creates with a plain POST, so
 *   their managedFields entry ("Update") also lists server defaults; only "Apply" entries (updates)
 *   are used for the ownership check.
 *   --manager PREFIX: field manager whose applied fields are compared (default pulumi-kubernetes;
 *   `kubectl` checks a `kubectl apply --server-side` of the render, which tests this comparer).
 *
 * "Same content" (details in docs/proof/e2e.md):
 *  1. values: every field the render writes has the same value on the server (lists matched by
 *     the merge keys the server reports in managedFields); server-filled fields (defaults, status,
 *     uid, resourceVersion, ...) are never looked at;
 *  2. sent (--state): the inputs Pulumi sent, from `pulumi stack export`, equal the render both
 *     ways, except the provider-added label `app.kubernetes.io/managed-by: pulumi` and a Secret's
 *     data (one secret value in state; the render redacts it; key presence checked on the server);
 *  3. ownership: for objects the provider updated with server-side apply (managedFields entry with
 *     operation Apply), the owned field set equals the rendered one. Created objects are POSTed,
 *     and that "Update" entry also lists server defaults, so it is not used for ownership.
 * The seed profile's mesh ConfigMap edit (ConfigMap istio-system/istio) is done by a dynamic
 * resource with kubectl, not by the provider: callers skip it and check it separately.
 * Prints one line per object and `compare: N objects, M differences`; exits 1 on any difference.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";

type Obj = Record<string, any>;

/** Path segment separator: label keys contain dots, so "." would be ambiguous ("app" vs "app.kubernetes.io/x"). */
const SEP = " › ";
const MANAGED_BY = ["metadata", "labels", "app.kubernetes.io/managed-by"].join(SEP);

function kubectlJson(args: string[]): Obj | undefined {
    try {
        return JSON.parse(execFileSync("kubectl", [...args, "-o", "json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
    } catch (e: any) {
        const msg = String(e.stderr || e.message);
        if (/NotFound|not found/.test(msg)) return undefined;
        throw new Error(`kubectl ${args.join(" ")}: ${msg.trim()}`, { cause: e });
    }
}

/** `kind.version.group` so kubectl reads exactly the API version the render names. */
export function resourceArg(o: Obj): string {
    const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
    return group ? `${o.kind.toLowerCase()}.${version}.${group}` : `${o.kind.toLowerCase()}`;
}

export function objectId(o: Obj): string {
    return `${o.kind}/${o.metadata.namespace ?? "cluster"}/${o.metadata.name}`;
}

function getLive(o: Obj): Obj | undefined {
    const args = ["get", resourceArg(o), o.metadata.name, "--show-managed-fields"];
    if (o.metadata.namespace) args.push("-n", o.metadata.namespace);
    return kubectlJson(args);
}

const isMap = (v: any) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Leaf paths of a server-side-apply fieldsV1 tree. */
export function fieldPaths(fields: Obj, prefix = ""): string[] {
    const out: string[] = [];
    for (const [k, sub] of Object.entries(fields)) {
        if (k === ".") continue;
        const p = k.startsWith("f:") ? `${prefix}${prefix ? SEP : ""}${k.slice(2)}` : `${prefix}[${k}]`;
        const children = Object.keys(sub).filter((c) => c !== ".");
        if (children.length === 0) out.push(p);
        else out.push(...fieldPaths(sub, p));
    }
    return out;
}

/** The fieldsV1 list-element key ("k:{...}") that matches a rendered list element, if any. */
function elementKey(fields: Obj | undefined, el: any): string | undefined {
    if (!fields || !isMap(el)) return undefined;
    for (const k of Object.keys(fields)) {
        if (!k.startsWith("k:")) continue;
        const key = JSON.parse(k.slice(2));
        // Service/container ports are keyed by (port|containerPort, protocol); protocol defaults to TCP.
        if (Object.entries(key).every(([kk, vv]) => (el[kk] ?? (kk === "protocol" ? "TCP" : undefined)) === vv)) return k;
    }
    return undefined;
}

/** Live list element that matches a rendered one: by the server's merge key, else by `name`, else by index. */
function liveElement(liveList: any[], el: any, idx: number, keyFields: Obj | undefined): any {
    if (keyFields) return liveList.find((l) => Object.entries(keyFields).every(([kk, vv]) => (l?.[kk] ?? (kk === "protocol" ? "TCP" : undefined)) === vv));
    if (isMap(el) && el.name !== undefined) return liveList.find((l) => l?.name === el.name);
    return liveList[idx];
}

export interface Walk {
    paths: string[];
    diffs: string[];
}

/**
 * Walks a rendered value beside the live value and the Pulumi fieldsV1 tree: collects the
 * rendered leaf paths (in fieldsV1 notation) and value differences.
 */
export function walk(r: any, live: any, fields: Obj | undefined, prefix: string, acc: Walk): void {
    if (Array.isArray(r)) {
        const keyed = fields && Object.keys(fields).some((k) => k.startsWith("k:") || k.startsWith("v:"));
        if (!fields) {
            // no ownership info: element-wise subset check (by name, else by index)
            acc.paths.push(prefix);
            r.forEach((el, i) => {
                const lel = Array.isArray(live) ? liveElement(live, el, i, undefined) : undefined;
                if (lel === undefined) acc.diffs.push(`${prefix}[${i}]: missing on the server`);
                else walk(el, lel, undefined, `${prefix}[${i}]`, { paths: [], diffs: acc.diffs });
            });
            return;
        }
        if (!keyed) {
            // atomic list (or no ownership info): one leaf, compared whole
            acc.paths.push(prefix);
            if (JSON.stringify(r) !== JSON.stringify(live)) acc.diffs.push(`${prefix}: render ${JSON.stringify(r)} != live ${JSON.stringify(live)}`);
            return;
        }
        r.forEach((el, i) => {
            const k = elementKey(fields, el);
            if (k === undefined && fields && Object.keys(fields).some((x) => x.startsWith("v:"))) {
                acc.paths.push(`${prefix}[v:${JSON.stringify(el)}]`);
                if (!Array.isArray(live) || !live.some((l) => JSON.stringify(l) === JSON.stringify(el)))
                    acc.diffs.push(`${prefix}: live lacks ${JSON.stringify(el)}`);
                return;
            }
            const p = k ? `${prefix}[${k}]` : `${prefix}[${i}]`;
            const lel = Array.isArray(live) ? liveElement(live, el, i, k ? JSON.parse(k.slice(2)) : undefined) : undefined;
            if (lel === undefined) acc.diffs.push(`${p}: missing on the server`);
            walk(el, lel, k ? fields![k] : undefined, p, acc);
        });
        return;
    }
    if (isMap(r)) {
        const keys = Object.keys(r);
        if (keys.length === 0) {
            acc.paths.push(prefix);
            if (!isMap(live)) acc.diffs.push(`${prefix}: render {} != live ${JSON.stringify(live)}`);
            return;
        }
        for (const k of keys) {
            const p = `${prefix}${prefix ? SEP : ""}${k}`;
            walk(r[k], isMap(live) ? live[k] : undefined, fields?.[`f:${k}`], p, acc);
        }
        return;
    }
    acc.paths.push(prefix);
    if (r !== live) acc.diffs.push(`${prefix}: render ${JSON.stringify(r)} != live ${JSON.stringify(live)}`);
}

/**
 * What Pulumi sent (the resource's `inputs` in `pulumi stack export`) against the render, both ways.
 * The provider adds the managed-by label to its inputs; a Secret's stringData is a secret value in
 * state (its keys are compared).
 */
export function sentDiffs(r: Obj, sent: Obj, isSecret: boolean, notes: string[]): string[] {
    const s = JSON.parse(JSON.stringify(sent));
    if (s.metadata?.labels?.["app.kubernetes.io/managed-by"] === "pulumi") {
        delete s.metadata.labels["app.kubernetes.io/managed-by"];
        notes.push("provider-added label app.kubernetes.io/managed-by=pulumi");
    }
    if (isSecret) {
        // The provider turns stringData into base64 `data` and stores it as one secret value: the
        // keys are checked on the server instead (compareObject).
        delete s.stringData;
        delete s.data;
        notes.push("Secret data is one secret value in state");
    }
    const out: string[] = [];
    const diff = (a: any, b: any, p: string) => {
        if (isMap(a) && isMap(b)) {
            for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[k], b[k], `${p}${p ? SEP : ""}${k}`);
        } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
            a.forEach((x, i) => diff(x, b[i], `${p}[${i}]`));
        } else if (JSON.stringify(a) !== JSON.stringify(b)) {
            out.push(`${p}: render ${JSON.stringify(a)?.slice(0, 200)} != sent by Pulumi ${JSON.stringify(b)?.slice(0, 200)}`);
        }
    };
    diff(r, s, "");
    return out;
}

export function compareObject(renderedObj: Obj, live: Obj, manager = "pulumi-kubernetes", sent?: Obj): { diffs: string[]; notes: string[] } {
    const notes: string[] = [];
    const diffs: string[] = [];
    const r = JSON.parse(JSON.stringify(renderedObj));
    const isSecret = r.kind === "Secret" && r.apiVersion === "v1";
    if (isSecret && r.stringData) {
        for (const k of Object.keys(r.stringData)) {
            if (!live.data || live.data[k] === undefined) diffs.push(`data.${k}: missing on the server (stringData.${k} in the render)`);
        }
        notes.push(`Secret stringData (${Object.keys(r.stringData).join(",")}) checked for presence only`);
        delete r.stringData;
    }
    const mine = (live.metadata.managedFields ?? []).filter((m: Obj) => String(m.manager).startsWith(manager));
    // List keys can be read from any of our entries; field ownership only from "Apply" entries: an
    // "Update" entry (the provider creates objects with a plain POST) also lists every field the
    // server defaulted during that request.
    const merged = (ms: Obj[]) => (ms.length ? ms.reduce((a: Obj, m: Obj) => deepMerge(a, m.fieldsV1 ?? {}), {}) : undefined);
    const anyFields = merged(mine);
    const pulumiFields = merged(mine.filter((m: Obj) => m.operation === "Apply"));
    const acc: Walk = { paths: [], diffs };
    walk(r, live, anyFields, "", acc);
    if (sent) diffs.push(...sentDiffs(r, sent, isSecret, notes));
    if (!pulumiFields) {
        notes.push(sent ? "created by POST: fields compared with the inputs Pulumi sent (state)" : "no server-side-apply entry: values only");
        return { diffs, notes };
    }
    // Identity fields are never recorded as owned.
    const identity = new Set(["apiVersion", "kind", `metadata${SEP}name`, `metadata${SEP}namespace`]);
    const rendered = new Set(acc.paths.filter((p) => !identity.has(p)));
    const applied = new Set(fieldPaths(pulumiFields).filter((p) => !(isSecret && (p.startsWith(`stringData${SEP}`) || p.startsWith(`data${SEP}`)))));
    // An atomic map or list (e.g. a LabelSelector, a secretKeyRef) is one owned leaf but several
    // rendered leaves: a path is covered when the other side has it, a parent or a child of it.
    const under = (a: string, b: string) => a.startsWith(b + SEP) || a.startsWith(b + "[");
    const covered = (x: string, set: Set<string>) => set.has(x) || [...set].some((y) => under(x, y) || under(y, x));
    for (const p of applied) {
        if (covered(p, rendered)) continue;
        if (p === MANAGED_BY && live.metadata.labels?.["app.kubernetes.io/managed-by"] === "pulumi") {
            notes.push("provider-added label app.kubernetes.io/managed-by=pulumi");
            continue;
        }
        diffs.push(`${p}: applied by Pulumi but not in the render`);
    }
    for (const p of rendered) {
        if (!covered(p, applied)) diffs.push(`${p}: in the render but not applied by Pulumi`);
    }
    return { diffs, notes };
}

function deepMerge(a: Obj, b: Obj): Obj {
    const out: Obj = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = isMap(v) && isMap(out[k]) ? deepMerge(out[k], v) : v;
    return out;
}

export function loadRender(dir: string): Obj[] {
    // all.yaml holds what applies as written; the Secret with placeholder values and the seed mesh
    // ConfigMap patch are in not-appliable/ (the stack creates them too, so they are compared too).
    const held = path.join(dir, "not-appliable");
    const files = [
        "all.yaml",
        ...(fs.existsSync(held)
            ? fs
                  .readdirSync(held)
                  .sort()
                  .map((f) => path.join("not-appliable", f))
            : []),
    ];
    return files.flatMap((f) =>
        parseAllDocuments(fs.readFileSync(path.join(dir, f), "utf8"))
            .map((d) => d.toJS())
            .filter((o) => o && o.kind),
    );
}

/**
 * `gone STATE_FILE`: every Kubernetes object a stack's state says it created (a `pulumi stack
 * export` taken before the destroy) is gone from the server. Judged from the state, not from a
 * label: the provider applies objects server-side and adds no label of its own.
 */
function goneFromState(file: string): number {
    const st = JSON.parse(fs.readFileSync(file, "utf8"));
    const objects = (st.deployment?.resources ?? [])
        .filter((r: Obj) => String(r.type).startsWith("kubernetes:") && !String(r.type).startsWith("pulumi:providers:"))
        .map((r: Obj) => r.outputs ?? r.inputs)
        .filter((o: Obj | undefined) => o?.kind && o?.metadata?.name);
    let bad = 0;
    for (const o of objects) {
        const id = objectId(o);
        if (getLive(o)) {
            bad++;
            console.log(`  FAIL ${id}: still exists`);
        } else console.log(`  ok   ${id}: gone`);
    }
    console.log(`compare gone: ${objects.length} objects in the state, ${bad} still on the server`);
    if (objects.length === 0) console.log("  FAIL the state names no Kubernetes object: nothing was checked");
    return objects.length === 0 ? 1 : bad;
}

function main() {
    const [mode, dir, ...rest] = process.argv.slice(2);
    if (mode === "gone" && dir) process.exit(goneFromState(dir) ? 1 : 0);
    if ((mode !== "present" && mode !== "absent") || !dir) {
        console.error("usage: tsx tests/e2e/compare.ts present|absent RENDER_DIR [--skip Kind/ns/name,...] | gone STATE_FILE");
        process.exit(2);
    }
    const skip = new Set<string>();
    const skipSent = new Set<string>(["ConfigMap/istio-system/istio"]); // seed: edited by a dynamic resource
    const si = rest.indexOf("--skip");
    if (si >= 0)
        (rest[si + 1] ?? "")
            .split(",")
            .filter(Boolean)
            .forEach((s) => skip.add(s));
    // --state FILE (pulumi stack export): also compare with the inputs Pulumi sent.
    const sti = rest.indexOf("--state");
    const sentById = new Map<string, Obj>();
    if (sti >= 0) {
        const st = JSON.parse(fs.readFileSync(rest[sti + 1], "utf8"));
        for (const res of st.deployment?.resources ?? []) {
            const i = res.inputs;
            if (String(res.type).startsWith("kubernetes:") && i?.kind && i?.metadata?.name) sentById.set(objectId(i), i);
        }
    }
    const mi = rest.indexOf("--manager");
    const manager = mi >= 0 ? rest[mi + 1] : "pulumi-kubernetes";
    // --except-in DIR2: leave out objects that DIR2's render also has (e.g. "what variant B lacks").
    const ei = rest.indexOf("--except-in");
    const keep = ei >= 0 ? new Set(loadRender(rest[ei + 1]).map(objectId)) : new Set<string>();
    const objects = loadRender(dir).filter((o) => !keep.has(objectId(o)));
    let bad = 0;
    for (const o of objects) {
        const id = objectId(o);
        if (skip.has(id)) {
            console.log(`  skip ${id}`);
            continue;
        }
        const live = getLive(o);
        if (mode === "absent") {
            if (live) {
                bad++;
                console.log(`  FAIL ${id}: still exists`);
            } else console.log(`  ok   ${id}: gone`);
            continue;
        }
        if (!live) {
            bad++;
            console.log(`  FAIL ${id}: not found on the server`);
            continue;
        }
        const { diffs, notes } = compareObject(o, live, manager, sentById.get(id));
        if (sti >= 0 && !sentById.has(id) && !skipSent.has(id)) diffs.push("not in the Pulumi state");
        if (diffs.length) {
            bad++;
            console.log(`  FAIL ${id}:`);
            for (const d of diffs) console.log(`         ${d}`);
        } else console.log(`  ok   ${id}${notes.length ? ` (${[...new Set(notes)].join("; ")})` : ""}`);
    }
    console.log(`compare ${mode}: ${objects.length} objects, ${bad} with differences`);
    process.exit(bad ? 1 : 0);
}

if (require.main === module) main();
