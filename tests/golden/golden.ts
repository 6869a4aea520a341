/**
 * Golden files of the rendered objects: each case's input in `tests/golden/in/<case>.yaml`, its
 * whole expected output in `tests/golden/out/<case>/`, one YAML file per Kubernetes object (named
 * as the offline render names them: `<kind>_<namespace>_<name>.yaml`), so a behaviour change reads
 * as a diff of the objects it changes.
 *
 * A case's input is one of:
 *   stack:            the stack config keys (without the project prefix); the whole config of the
 *                     case, Pulumi.dev.yaml is not read. Rendered as `npm run render` renders it.
 *   globalRateLimit:  { name, args }: a GlobalRateLimit on its own, as a user's program creates it
 *                     (typed rules, client CIDRs: what stack config has no keys for).
 *   localRateLimit:   { name, args }: a LocalRateLimit on its own.
 *   meshRateLimit:    { name, args }: the whole stack as the package's MeshRateLimit, as a user's
 *                     program creates it (its own typed arguments, no stack config).
 * A case named `refused-*` is input the package must refuse: its output is `error.txt`, the text of
 * the error it is refused with (every problem: the field, the value, the fix), and nothing is
 * rendered. A refused case that renders, or another case that is refused, fails.
 * and optionally `only: [kinds]`: the output keeps objects of these kinds alone (a behaviour case,
 * named after the one rule feature it shows, keeps the EnvoyFilters and ConfigMaps that feature
 * shapes, so its diff is that feature's and nothing else).
 *
 * `tests/unit/golden.test.ts` renders every case and compares; `npm run golden:update` (this file
 * run with `--update`) rewrites `tests/golden/out/`. Secrets are redacted by the render
 * (render/render.ts `toObjects`): the files hold the placeholder, never a value.
 */
import * as fs from "fs";
import * as path from "path";
import { parse, stringify } from "yaml";
import { K8sObject } from "../../lib/k8s-object";
import { objectFileName, registerComponents, renderStack } from "../../render/render";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LocalRateLimit } from "../../components/local-ratelimit/component";
import { MeshRateLimit } from "../../mesh/mesh-ratelimit";
import { InputError } from "../../lib/problems";
import { updateGoldenValues } from "./values";

export const GOLDEN_DIR = __dirname;
export const IN_DIR = path.join(GOLDEN_DIR, "in");
export const OUT_DIR = path.join(GOLDEN_DIR, "out");
export const UPDATE_COMMAND = "npm run golden:update";

export interface GoldenCase {
    /** File name of the input without `.yaml`; also the folder of its output. */
    name: string;
    input: {
        stack?: Record<string, unknown>;
        globalRateLimit?: { name: string; args: any };
        localRateLimit?: { name: string; args: any };
        meshRateLimit?: { name: string; args: any };
        only?: string[];
    };
}

const INPUT_KINDS = ["stack", "globalRateLimit", "localRateLimit", "meshRateLimit"];

/** The output file of a refused case: the error's text. */
export const ERROR_FILE = "error.txt";

/** Whether a case is input the package must refuse (named `refused-*`). */
export function isRefusedCase(c: GoldenCase): boolean {
    return c.name.startsWith("refused-");
}

/** Every case of `tests/golden/in/`, sorted by name. */
export function goldenCases(): GoldenCase[] {
    return fs
        .readdirSync(IN_DIR)
        .filter((f) => f.endsWith(".yaml"))
        .sort()
        .map((f) => {
            const input = parse(fs.readFileSync(path.join(IN_DIR, f), "utf8")) ?? {};
            const kinds = INPUT_KINDS.filter((k) => k in input);
            if (kinds.length !== 1)
                throw new Error(`tests/golden/in/${f}: needs exactly one of ${INPUT_KINDS.map((k) => `${k}:`).join(", ")}; has ${kinds.join(", ") || "none"}`);
            return { name: f.slice(0, -".yaml".length), input };
        });
}

/** The objects of a case (of the `only` kinds, when given). */
export async function renderCase(c: GoldenCase): Promise<K8sObject[]> {
    const all = await renderAll(c);
    const only = c.input.only;
    return only ? all.filter((o) => only.includes(o.kind)) : all;
}

async function renderAll(c: GoldenCase): Promise<K8sObject[]> {
    if (c.input.localRateLimit) {
        const { name, args } = c.input.localRateLimit;
        return (await registerComponents(() => new LocalRateLimit(name, args), "golden", "golden")).objects;
    }
    if (c.input.meshRateLimit) {
        const { name, args } = c.input.meshRateLimit;
        return (await registerComponents(() => new MeshRateLimit(name, args), "golden", "golden")).objects;
    }
    if (c.input.stack) {
        // Stack config values are strings, as `pulumi config` keeps them.
        const base = Object.fromEntries(Object.entries(c.input.stack).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
        return renderStack({ base });
    }
    const { name, args } = c.input.globalRateLimit!;
    const { objects } = await registerComponents(() => new GlobalRateLimit(name, args), "golden", "golden");
    return objects;
}

/** The files of a case's output: file name → text (YAML 1.1, as the offline render writes it). */
export async function caseFiles(c: GoldenCase): Promise<Map<string, string>> {
    if (isRefusedCase(c)) return new Map([[ERROR_FILE, await refusalText(c)]]);
    const files = new Map<string, string>();
    for (const o of await renderCase(c)) {
        const file = objectFileName(o);
        if (files.has(file)) throw new Error(`${c.name}: two objects would be written to ${file}`);
        files.set(file, stringify(o, { lineWidth: 0, version: "1.1" }));
    }
    return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

/** The text of the error a refused case is refused with; throws when it renders or fails otherwise. */
async function refusalText(c: GoldenCase): Promise<string> {
    let objects: K8sObject[];
    try {
        objects = await renderCase(c);
    } catch (e) {
        if (e instanceof InputError) return `${e.message}\n`;
        throw e;
    }
    throw new Error(`tests/golden/in/${c.name}.yaml is a refused case, but it renders ${objects.length} object(s) and no error`);
}

/** The committed files of a case's output (empty when it has none yet). */
export function committedFiles(c: GoldenCase): Map<string, string> {
    const dir = path.join(OUT_DIR, c.name);
    if (!fs.existsSync(dir)) return new Map();
    return new Map(
        fs
            .readdirSync(dir)
            .filter((f) => f.endsWith(".yaml") || f === ERROR_FILE)
            .sort()
            .map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]),
    );
}

/** Where the committed output and the render disagree: one line per file, empty when they agree. */
export function differences(c: GoldenCase, rendered: Map<string, string>, committed: Map<string, string>): string[] {
    const rel = (f: string) => `tests/golden/out/${c.name}/${f}`;
    const out: string[] = [];
    for (const [f, text] of rendered) {
        const want = committed.get(f);
        if (want === undefined) out.push(`${rel(f)}: missing (the render of tests/golden/in/${c.name}.yaml has this object)`);
        else if (want !== text) out.push(`${rel(f)}: differs from the render, ${firstDifference(want, text)}`);
    }
    for (const f of committed.keys()) if (!rendered.has(f)) out.push(`${rel(f)}: the render no longer has this object`);
    return out;
}

function firstDifference(want: string, got: string): string {
    const a = want.split("\n");
    const b = got.split("\n");
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return `first at line ${i + 1}: committed ${JSON.stringify(a[i] ?? "<end of file>")}, rendered ${JSON.stringify(b[i] ?? "<end of file>")}`;
}

/** Rewrites `tests/golden/out/` from the render of every case; returns what changed. */
export async function updateGolden(): Promise<string[]> {
    const cases = goldenCases();
    const changed: string[] = [];
    fs.mkdirSync(OUT_DIR, { recursive: true });
    // Outputs of cases whose input is gone.
    for (const d of fs.readdirSync(OUT_DIR)) {
        if (!cases.some((c) => c.name === d)) {
            fs.rmSync(path.join(OUT_DIR, d), { recursive: true });
            changed.push(`removed tests/golden/out/${d}/ (no tests/golden/in/${d}.yaml)`);
        }
    }
    for (const c of cases) {
        const dir = path.join(OUT_DIR, c.name);
        fs.mkdirSync(dir, { recursive: true });
        const rendered = await caseFiles(c);
        const diff = differences(c, rendered, committedFiles(c));
        for (const f of committedFiles(c).keys()) if (!rendered.has(f)) fs.rmSync(path.join(dir, f));
        for (const [f, text] of rendered) fs.writeFileSync(path.join(dir, f), text);
        changed.push(...diff);
    }
    return changed;
}

if (require.main === module) {
    if (!process.argv.includes("--update")) {
        console.error(`usage: ${UPDATE_COMMAND}   (tsx tests/golden/golden.ts --update): rewrites tests/golden/out/ from tests/golden/in/`);
        process.exit(2);
    }
    updateGolden().then(
        (objects) => {
            const changed = [...objects, ...updateGoldenValues()];
            for (const line of changed) console.log(line);
            console.log(
                changed.length
                    ? `${changed.length} golden file(s) rewritten or removed: review them with git diff tests/golden`
                    : "golden files already match the render",
            );
        },
        (e) => {
            console.error(e instanceof Error ? e.message : e);
            process.exit(1);
        },
    );
}
