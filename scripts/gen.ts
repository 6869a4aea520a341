/**
 * `npm run gen`: every generator of the repository, in the order each reads what the one before it
 * writes:
 *   1. argument interfaces from the field declarations (gen-arg-types.ts);
 *   2. the package schema and docs/package.md from those interfaces, through Pulumi's analyzer
 *      (gen-package-docs.ts);
 *   3. docs/configuration.md and 4. Pulumi.yaml, from the config-key table (gen-config-docs.ts,
 *      gen-pulumi-yaml.ts).
 * (The fields each component knows, for its unknown-field check, are read from the declarations at
 * run time: components/all/arg-types.ts, nothing generated.)
 * `npm run gen -- --check` writes nothing: it runs every generator's own `--check`, names each file
 * that is out of date and exits 1 when any is (the lint tier runs it). Without `--check` it stops at
 * the first generator that fails, with that generator's status.
 */
import { spawnSync } from "child_process";
import * as path from "path";

/** The generators, in order; each is `scripts/<name>.ts` and takes `--check`. */
export const GENERATORS: readonly string[] = ["gen-arg-types", "gen-package-docs", "gen-config-docs", "gen-pulumi-yaml"];

function runOne(name: string, check: boolean): number {
    const tsx = path.join(__dirname, "..", "node_modules", ".bin", "tsx");
    const args = [path.join(__dirname, `${name}.ts`), ...(check ? ["--check"] : [])];
    const r = spawnSync(tsx, args, { stdio: "inherit" });
    if (r.error) {
        process.stderr.write(`gen: ${name} did not start: ${r.error.message}\n`);
        return 2;
    }
    return r.status ?? 1;
}

function main(argv: readonly string[]): number {
    const unknown = argv.filter((a) => a !== "--check");
    if (unknown.length > 0) {
        process.stderr.write(`gen: unknown argument(s) ${unknown.join(" ")}; usage: npm run gen [-- --check]\n`);
        return 2;
    }
    const check = argv.includes("--check");
    const stale: string[] = [];
    for (const g of GENERATORS) {
        const status = runOne(g, check);
        if (status === 0) continue;
        if (!check) {
            process.stderr.write(`gen: ${g} failed (exit ${status}); the generators after it did not run\n`);
            return status;
        }
        stale.push(g);
    }
    if (stale.length > 0) {
        process.stderr.write(`gen --check: out of date per ${stale.join(", ")}; run \`npm run gen\` and commit the files\n`);
        return 1;
    }
    process.stdout.write(check ? `gen --check: all ${GENERATORS.length} generators' files are current\n` : `gen: ${GENERATORS.length} generators ran\n`);
    return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
