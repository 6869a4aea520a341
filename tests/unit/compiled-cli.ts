/**
 * The compiled `mesh-ratelimit` command, as the package ships it (`tsc -p tsconfig.build.json`), run
 * as a subprocess. It is compiled into `.cache/prove-build/` of the checkout (ignored by git; inside
 * the checkout so that the compiled files find the package's node_modules), again whenever a source
 * file is newer than the compiled command.
 */
import { spawnSync, SpawnSyncOptions } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const ROOT = path.join(__dirname, "..", "..");
const OUT = path.join(ROOT, ".cache", "prove-build");
export const COMPILED_CLI = path.join(OUT, "prove", "cli.js");

/** The newest modification time of the package's sources (what the build compiles). */
function newestSource(): number {
    let newest = 0;
    const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            const f = path.join(dir, e.name);
            if (e.isDirectory()) walk(f);
            else if (f.endsWith(".ts")) newest = Math.max(newest, fs.statSync(f).mtimeMs);
        }
    };
    for (const d of ["lib", "builders", "components", "mesh", "gateway-model", "prove"]) walk(path.join(ROOT, d));
    return Math.max(newest, fs.statSync(path.join(ROOT, "index.ts")).mtimeMs);
}

/** Compiles the command when it is missing or older than a source. */
export function buildCompiledCli(): void {
    if (fs.existsSync(COMPILED_CLI) && fs.statSync(COMPILED_CLI).mtimeMs >= newestSource()) return;
    const tsc = require.resolve("typescript/bin/tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json"), "--outDir", OUT], { cwd: ROOT, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`the package does not compile:\n${r.stdout}${r.stderr}`);
}

export interface CliRun {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** Runs the compiled command with `args` (and `input` on its standard input). */
export function compiledCli(args: string[], opts: { input?: string | Buffer } = {}): CliRun {
    const o: SpawnSyncOptions = { cwd: ROOT, encoding: "utf8", maxBuffer: 256 << 20, ...(opts.input !== undefined ? { input: opts.input } : {}) };
    const r = spawnSync(process.execPath, [COMPILED_CLI, ...args], o);
    return { code: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}
