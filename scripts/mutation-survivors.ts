/**
 * Summarises a Stryker JSON report (default reports/mutation/mutation.json): per file, killed,
 * timed out, survived, no coverage, compile errors (not counted), ignored (static), and the score
 * (killed + timed out) / (killed + timed out + survived + no coverage); then every surviving or
 * uncovered mutant as `file:line mutator: code -> replacement`, the list docs/proof/mutation.md judges.
 *
 *   npx tsx scripts/mutation-survivors.ts [report.json] [--only <path substring>] [--markdown]
 */
import * as fs from "fs";

interface Mutant {
    id: string;
    mutatorName: string;
    replacement?: string;
    status: string;
    location: { start: { line: number; column: number }; end: { line: number; column: number } };
}
interface Report {
    files: Record<string, { source: string; mutants: Mutant[] }>;
}

const args = process.argv.slice(2);
const markdown = args.includes("--markdown");
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const file = args.find((a, i) => !a.startsWith("--") && !(onlyAt >= 0 && i === onlyAt + 1)) ?? "reports/mutation/mutation.json";
if (!fs.existsSync(file)) {
    console.error(`no report at ${file}: run npm run test:mutation (or test:mutation:core) first`);
    process.exit(2);
}
const report = JSON.parse(fs.readFileSync(file, "utf8")) as Report;
const STATUSES = ["Killed", "Timeout", "Survived", "NoCoverage", "CompileError", "Ignored"] as const;
const score = (c: Record<string, number>) => {
    const den = c.Killed + c.Timeout + c.Survived + c.NoCoverage;
    return den ? (100 * (c.Killed + c.Timeout)) / den : NaN;
};

const files = Object.entries(report.files)
    .filter(([f]) => !only || f.includes(only))
    .sort(([a], [b]) => a.localeCompare(b));
const total: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
const rows: string[][] = [];
for (const [f, v] of files) {
    const c: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
    for (const m of v.mutants) c[m.status] = (c[m.status] ?? 0) + 1;
    for (const s of STATUSES) total[s] += c[s];
    rows.push([f, ...STATUSES.map((s) => String(c[s])), `${score(c).toFixed(1)} %`]);
}
rows.push(["total", ...STATUSES.map((s) => String(total[s])), `${score(total).toFixed(1)} %`]);
const header = ["file", "killed", "timeout", "survived", "no coverage", "compile errors", "ignored", "score"];
if (markdown) {
    console.log(
        `| ${header.join(" | ")} |\n|---|${header
            .slice(1)
            .map(() => "---:")
            .join("|")}|`,
    );
    for (const r of rows) console.log(`| ${r[0] === "total" ? "**total**" : `\`${r[0]}\``} | ${r.slice(1).join(" | ")} |`);
} else {
    const w = Math.max(...rows.map((r) => r[0].length), 4);
    console.log([header[0].padEnd(w), ...header.slice(1)].join("  "));
    for (const r of rows) console.log([r[0].padEnd(w), ...r.slice(1).map((x, i) => x.padStart(header[i + 1].length))].join("  "));
}

console.log("");
for (const [f, v] of files) {
    const lines = v.source.split("\n");
    for (const m of v.mutants
        .filter((x) => x.status === "Survived" || x.status === "NoCoverage")
        .sort((a, b) => a.location.start.line - b.location.start.line)) {
        const l = m.location.start.line;
        const code = lines[l - 1].trim().slice(0, 100);
        const repl = (m.replacement ?? "").replace(/\s+/g, " ").slice(0, 80);
        console.log(`${f}:${l} ${m.status === "NoCoverage" ? "(no coverage) " : ""}${m.mutatorName}: ${code} -> ${repl}`);
    }
}
