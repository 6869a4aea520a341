/**
 * Golden values: a unit test's whole computed value (an explanation, a resolved service, a rendered
 * spec) compared with its committed JSON in `tests/golden/values/<name>.json`, so that a new field
 * reads as a diff of those files and edits no test. `expectGolden(name, value)` fails on any
 * difference and names the command that rewrites the file; `npm run golden:update` runs the unit
 * files that hold golden values with MESH_RL_GOLDEN_UPDATE=1 (each call then writes its file) and
 * lists the files that changed. Keys are written sorted, so only a changed value is a diff.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const VALUES_DIR = path.join(__dirname, "values");
const UNIT_DIR = path.join(__dirname, "..", "unit");
const UPDATE_ENV = "MESH_RL_GOLDEN_UPDATE";

/** The JSON text of a value with every object's keys sorted (undefined fields left out, as JSON does). */
export function goldenText(value: unknown): string {
    const sorted = (v: any): any =>
        Array.isArray(v)
            ? v.map(sorted)
            : v && typeof v === "object"
              ? Object.fromEntries(
                    Object.keys(v)
                        .sort()
                        .map((k) => [k, sorted(v[k])]),
                )
              : v;
    return `${JSON.stringify(sorted(value), null, 2)}\n`;
}

/** The file of a golden value: `tests/golden/values/<name>.json` (`name`: letters, digits, `-`, `/`). */
export function goldenFile(name: string): string {
    if (!/^[a-z0-9][a-z0-9-]*(\/[a-z0-9][a-z0-9-]*)*$/.test(name))
        throw new Error(`golden value name ${JSON.stringify(name)}: use lower-case words joined by - (and / for a folder)`);
    return path.join(VALUES_DIR, `${name}.json`);
}

/** `value` equals its committed golden file (with MESH_RL_GOLDEN_UPDATE=1: writes that file instead). */
export function expectGolden(name: string, value: unknown): void {
    const file = goldenFile(name);
    const text = goldenText(value);
    if (process.env[UPDATE_ENV] === "1") {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, text);
        return;
    }
    expect(fs.existsSync(file), `no golden file ${path.relative(process.cwd(), file)}: npm run golden:update writes it`).to.equal(true);
    const committed = fs.readFileSync(file, "utf8");
    if (text === committed) return;
    const [now, was] = [text.split("\n"), committed.split("\n")];
    const at = now.findIndex((l, i) => l !== was[i]);
    expect.fail(
        `${path.relative(process.cwd(), file)} differs (npm run golden:update rewrites it; review the diff): line ${at + 1} is ${JSON.stringify(now[at]?.trim())}, the file has ${JSON.stringify(was[at]?.trim())}`,
    );
}

/** The unit test files that call `expectGolden`. */
export function goldenValueTests(): string[] {
    return fs
        .readdirSync(UNIT_DIR)
        .filter((f) => f.endsWith(".test.ts") && /\bexpectGolden\(/.test(fs.readFileSync(path.join(UNIT_DIR, f), "utf8")))
        .map((f) => path.join(UNIT_DIR, f));
}

function snapshot(): Map<string, string> {
    const out = new Map<string, string>();
    const walk = (dir: string) => {
        if (!fs.existsSync(dir)) return;
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            const f = path.join(dir, e.name);
            if (e.isDirectory()) walk(f);
            else out.set(path.relative(VALUES_DIR, f), fs.readFileSync(f, "utf8"));
        }
    };
    walk(VALUES_DIR);
    return out;
}

/** Rewrites every golden value by running the files that hold them; returns what changed. Throws when a test fails. */
export function updateGoldenValues(): string[] {
    const before = snapshot();
    const files = goldenValueTests();
    if (!files.length) return [];
    const run = spawnSync("npx", ["mocha", "--no-config", "-r", "tsx/cjs", "--timeout", "900000", "--reporter", "dot", ...files], {
        env: { ...process.env, [UPDATE_ENV]: "1" },
        encoding: "utf8",
    });
    if (run.status !== 0)
        throw new Error(`writing the golden values failed (a test of ${files.map((f) => path.basename(f)).join(", ")}):\n${run.stdout}${run.stderr}`);
    const after = snapshot();
    const changed = [...after].filter(([f, t]) => before.get(f) !== t).map(([f]) => `tests/golden/values/${f}`);
    return changed;
}
