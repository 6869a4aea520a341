/**
 * The consumer tier's shared steps: build and pack the package once per mocha run, install the
 * tarball into a user's program on a chosen set of Pulumi SDK versions (each set once per run), ask
 * npm which copies of an SDK the program's tree holds, and run a program there under Pulumi's mocks
 * (app/mock-run.js). The SDK versions come from package.json's `mesh-ratelimit.supported.sdks`, the
 * one place that states them.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const ROOT = path.join(__dirname, "..", "..");
const APP_SRC = path.join(__dirname, "app");
export const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
export const rootPkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

/** The Pulumi SDKs the package declares as peers, each with the oldest and newest version the tier proves. */
export const SUPPORTED_SDKS: Record<string, { oldest: string; newest: string }> = rootPkg["mesh-ratelimit"].supported.sdks;
export type SdkEnd = "oldest" | "newest";
/** Every supported SDK at one end of its proven range. */
export const sdksAt = (end: SdkEnd): Record<string, string> => Object.fromEntries(Object.entries(SUPPORTED_SDKS).map(([n, v]) => [n, v[end]]));

export function run(cmd: string, args: string[], cwd: string) {
    const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20 });
    return { code: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}`, stdout: r.stdout ?? "" };
}
export function mustRun(cmd: string, args: string[], cwd: string): string {
    const r = run(cmd, args, cwd);
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.code}:\n${r.out.slice(-4000)}`);
    return r.stdout;
}

let work: string | undefined;
/** The tier's temporary folder, removed when the process exits (kept with MESH_RL_KEEP_CONSUMER=1). */
export function workDir(): string {
    if (!work) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-consumer-"));
        process.on("exit", () => {
            if (!process.env.MESH_RL_KEEP_CONSUMER) fs.rmSync(dir, { recursive: true, force: true });
        });
        work = dir;
    }
    return work;
}

let tarball: string | undefined;
/** The package built (npm run build) and packed (npm pack) once per run: the tarball's path. */
export function packedTarball(): string {
    if (!tarball) {
        mustRun("npm", ["run", "-s", "build"], ROOT);
        const packed = JSON.parse(mustRun("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", workDir()], ROOT));
        tarball = path.join(workDir(), packed[0].filename);
    }
    return tarball;
}

/**
 * A user's program in `<work>/<name>`: the files of tests/consumer/app, a package.json that depends on
 * `tgz` and on each SDK at the version given, and `npm install` run there as a user runs it
 * (--ignore-scripts: @pulumi/kubernetes's install script would fetch its provider plugin; the mocks
 * need none).
 */
export function installProgram(name: string, tgz: string, sdks: Record<string, string>): string {
    const app = path.join(workDir(), name);
    fs.mkdirSync(app);
    for (const f of fs.readdirSync(APP_SRC)) fs.copyFileSync(path.join(APP_SRC, f), path.join(app, f));
    const pkg = { name: "shop-infra", private: true, dependencies: { "mesh-ratelimit": `file:${tgz}`, ...sdks } };
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify(pkg, null, 2));
    mustRun("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], app);
    return app;
}

const programs = new Map<SdkEnd, string>();
/** The user's program on the SDKs at one end of the range, installed once per run. */
export function programOn(end: SdkEnd): string {
    if (!programs.has(end)) programs.set(end, installProgram(`app-${end}`, packedTarball(), sdksAt(end)));
    return programs.get(end)!;
}

/** Each copy of package `name` in the program's tree as npm lists it: its folder and version. */
export function copiesOf(app: string, name: string): { dir: string; version: string }[] {
    const dirs = [...new Set(mustRun("npm", ["ls", name, "--all", "--parseable"], app).split("\n").filter(Boolean))];
    return dirs.map((dir) => ({ dir: path.relative(app, dir), version: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version }));
}

export interface Registration {
    type: string;
    name: string;
    custom: boolean;
    provider: string | null;
    inputs: any;
}
export interface MockRun {
    error: string | null;
    /** The property paths of the refusal when it is Pulumi's InputPropertiesError (else null). */
    inputProperties: string[] | null;
    spawned: string[];
    registrations: Registration[];
    samePulumi: boolean;
    entry: string;
}

/** Runs `target` (a program's .js, or --import-only) under mocks in the program folder `app`. */
export function mockRun(app: string, target: string, env: Record<string, string> = {}): MockRun {
    const r = spawnSync(process.execPath, ["mock-run.js", target], { cwd: app, encoding: "utf8", env: { ...process.env, ...env } });
    let report: MockRun | undefined;
    try {
        report = JSON.parse(r.stdout.trim().split("\n").pop()!);
    } catch {
        report = undefined;
    }
    // A refusal raised once an output is known leaves Pulumi's promises pending, and the SDK then
    // sets exit status 1 as the process ends (after the report): only a refusal may end so.
    if (!report || (r.status !== 0 && report.error === null)) throw new Error(`mock-run.js ${target} exited ${r.status}:\n${r.stderr}`);
    return report;
}
