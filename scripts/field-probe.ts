/**
 * `npx tsx scripts/field-probe.ts [FILE:TABLE ...]`: what a new field breaks. For each declaration
 * table named (a file and the `export const` table in it; a set of the package's tables without
 * arguments), in a throw-away worktree of the committed HEAD it declares one more field, a switch
 * with a default (`fieldProbe: false`, the case that reaches resolved objects), runs `npm run gen`,
 * the typecheck, `npm run golden:update` (the goldens must not change) and the unit tier, and reports which existing tests fail.
 *
 * A field the repository takes in its stride fails none: its interface, schema and docs are
 * generated, its resolved type is derived, and no test compares a whole object it would grow.
 * Nothing in the working tree is touched; each worktree is removed afterwards, and the next run
 * removes those of a run that was interrupted.
 *
 * Exit status: 0 every probe ran and broke nothing; 1 a probe broke something (named in the
 * report); 2 bad arguments or a step that could not run.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

/** The tables probed without arguments: the rules, and one table of each component that resolves defaults. */
export const DEFAULT_TABLES: readonly string[] = [
    "components/rules/rule-fields.ts:RULE_FIELDS",
    "components/global-ratelimit/fields.ts:GLOBAL_FIELDS",
    "components/local-ratelimit/fields.ts:LOCAL_BUCKET_FIELDS",
    "components/managed-api/fields.ts:MANAGED_API_OPTIONS_FIELDS",
    "components/bookinfo/fields.ts:BOOKINFO_OPTIONS_FIELDS",
    "components/service/fields.ts:SERVICE_FIELDS",
];

const PROBE_FIELD =
    '    fieldProbe: __probeField({ doc: "A switch added by scripts/field-probe.ts.", type: __probeT.boolean(), default: false, ' +
    'rule: __probeBoolean(), goesTo: { object: "nowhere (a probe)" } }),';

/** The table's file with the probe field declared first in it and the helpers it needs imported, or a reason it cannot be. */
export function withProbeField(source: string, table: string, fileDir: string): string | { error: string } {
    const lines = source.split("\n");
    const at = lines.findIndex((l) => new RegExp(`^export const ${table}\\b.*= \\{\\s*$`).test(l));
    if (at < 0) return { error: `no line \`export const ${table} = {\` in the file` };
    const rel = (p: string) => {
        const r = path.relative(fileDir, p).split(path.sep).join("/");
        return r.startsWith(".") ? r : `./${r}`;
    };
    const imports = [
        `import { field as __probeField, booleanRule as __probeBoolean } from "${rel("lib/field-decl")}";`,
        `import { t as __probeT } from "${rel("lib/field-types")}";`,
    ];
    const out = [...lines.slice(0, at + 1), PROBE_FIELD, ...lines.slice(at + 1)];
    return [...imports, ...out].join("\n");
}

interface StepResult {
    ok: boolean;
    out: string;
}

function run(cwd: string, cmd: string, args: readonly string[]): StepResult {
    const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}` };
}

interface ProbeReport {
    table: string;
    steps: Record<string, boolean>;
    failedTests: string[];
    notes: string[];
}

/** The failed tests of a mocha JSON report, as `file: title`. */
export function failedTestsOf(json: string): string[] {
    const report = JSON.parse(json) as { failures?: { file?: string; fullTitle?: string }[] };
    return (report.failures ?? []).map((f) => `${f.file ?? "?"}: ${f.fullTitle ?? "?"}`);
}

function probeOne(repo: string, spec: string): ProbeReport {
    const [file, table] = spec.split(":");
    const report: ProbeReport = { table: spec, steps: {}, failedTests: [], notes: [] };
    const wt = fs.mkdtempSync(path.join(os.tmpdir(), "field-probe-"));
    fs.rmdirSync(wt);
    const add = run(repo, "git", ["worktree", "add", "--detach", wt, "HEAD"]);
    if (!add.ok) throw new Error(`git worktree add failed: ${add.out}`);
    try {
        fs.symlinkSync(path.join(repo, "node_modules"), path.join(wt, "node_modules"));
        const src = path.join(wt, file);
        const edited = withProbeField(fs.readFileSync(src, "utf8"), table, path.dirname(file));
        if (typeof edited !== "string") throw new Error(`${spec}: ${edited.error}`);
        fs.writeFileSync(src, edited);
        const tsx = path.join(wt, "node_modules", ".bin", "tsx");
        report.steps.gen = run(wt, tsx, ["scripts/gen.ts"]).ok;
        // The control: the field reached the generated interface and the package schema, else the probe proves nothing.
        const changed = run(wt, "git", ["diff", "--name-only"]).out.split("\n");
        report.steps.generated = changed.some((f) => f.endsWith(".generated.ts")) && changed.includes("plugin/schema.json");
        const tsc = run(wt, path.join(wt, "node_modules", ".bin", "tsc"), ["--noEmit"]);
        report.steps.typecheck = tsc.ok;
        if (!tsc.ok) report.notes.push(...tsc.out.split("\n").filter((l) => l.includes("error TS")));
        const update = run(wt, tsx, ["tests/golden/golden.ts", "--update"]);
        report.steps.goldens = update.ok && run(wt, "git", ["status", "--porcelain", "tests/golden"]).out.trim() === "";
        const json = path.join(wt, ".field-probe-mocha.json");
        const mocha = run(wt, path.join(wt, "node_modules", ".bin", "mocha"), [
            "--reporter",
            "json",
            "--reporter-option",
            `output=${json}`,
            "tests/unit/**/*.test.ts",
        ]);
        report.failedTests = fs.existsSync(json) ? failedTestsOf(fs.readFileSync(json, "utf8")) : ["(no mocha report written)"];
        report.steps.unit = mocha.ok;
    } finally {
        run(repo, "git", ["worktree", "remove", "--force", wt]);
    }
    return report;
}

/** Removes the worktrees an earlier, interrupted probe left (its own `field-probe-*` ones only); returns their paths. */
function removeLeftWorktrees(repo: string): string[] {
    const listed = run(repo, "git", ["worktree", "list", "--porcelain"]).out.split("\n");
    const mine = listed
        .filter((l) => l.startsWith("worktree "))
        .map((l) => l.slice("worktree ".length))
        .filter((p) => path.dirname(p) === os.tmpdir() && path.basename(p).startsWith("field-probe-"));
    for (const wt of mine) run(repo, "git", ["worktree", "remove", "--force", wt]);
    return mine;
}

function main(argv: readonly string[]): number {
    if (argv.some((a) => a === "--help" || a === "-h")) {
        process.stdout.write(
            "usage: npx tsx scripts/field-probe.ts [FILE:TABLE ...]\nexit 0: nothing broke; 1: a probe broke something; 2: bad arguments or a step that could not run\n",
        );
        return 0;
    }
    const specs = argv.length > 0 ? argv : DEFAULT_TABLES;
    const bad = specs.filter((s) => !/^[\w./-]+\.ts:[A-Z_]+$/.test(s));
    if (bad.length > 0) {
        process.stderr.write(`field-probe: not FILE.ts:TABLE: ${bad.join(", ")}\n`);
        return 2;
    }
    const repo = path.join(__dirname, "..");
    for (const left of removeLeftWorktrees(repo)) process.stdout.write(`removed ${left}, left by an interrupted probe\n`);
    let broke = false;
    for (const spec of specs) {
        const r = probeOne(repo, spec);
        const stepText = Object.entries(r.steps)
            .map(([k, ok]) => `${k} ${ok ? "ok" : "FAILED"}`)
            .join(", ");
        const failed = Object.values(r.steps).some((ok) => !ok) || r.failedTests.length > 0;
        broke ||= failed;
        process.stdout.write(`${failed ? "BROKE" : "ok   "} ${spec}: ${stepText}; ${r.failedTests.length} existing test(s) failed\n`);
        for (const line of [...r.notes, ...r.failedTests]) process.stdout.write(`        ${line}\n`);
    }
    return broke ? 1 : 0;
}

if (require.main === module) {
    try {
        process.exitCode = main(process.argv.slice(2));
    } catch (e) {
        process.stderr.write(`field-probe: ${(e as Error).message}\n`);
        process.exitCode = 2;
    }
}
