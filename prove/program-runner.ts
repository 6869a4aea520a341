/**
 * Runs a user's own Pulumi program (TypeScript or JavaScript) in this process under Pulumi's mocks,
 * with no cluster and no Pulumi CLI, and returns every Kubernetes object it would create.
 *
 * The program and this runner share one copy of `@pulumi/pulumi`: it is resolved from the program's
 * folder (where the program's own `require("@pulumi/pulumi")` finds it), so the mocks set here are the
 * ones the program's resources register with. A `.ts` entry is loaded through tsx's CommonJS hook
 * (Node 20 has no type stripping of its own).
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { K8sObject } from "../lib/k8s-object";
import { FailureWatch, withAutoName } from "./program-mocks";
import { withDeferredModules } from "./deferred-modules";

/** What the program registered under the mocks. */
export interface RenderedProgram {
    /** The program's folder (absolute). */
    dir: string;
    /** The entry file that was loaded. */
    main: string;
    /** The project name of its Pulumi.yaml (`program` when it has none). */
    project: string;
    /** Every Kubernetes object the program would create, as plain JSON. */
    objects: K8sObject[];
    /** Every resource it registered (components included): type and name. */
    resources: { type: string; name: string }[];
}

export interface RenderProgramOptions {
    /** Reads the config of `Pulumi.<stack>.yaml` in the program's folder, when that file exists. Defaults to `dev`. */
    stack?: string;
    /** Config values (`<project>:<key>` or `<key>`, the project prefix then added), laid over the stack file's. */
    config?: Record<string, string>;
}

/** A problem with the program itself (not found, not loadable, or it threw): the message says what and how to fix it. */
export class ProgramError extends Error {}

/** Marker key of a serialized secret value in resource inputs. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
/** What a secret config value reads as under the mocks (its real value is never needed to model limits). */
export const MOCK_SECRET = "mock-secret-value";

/** The program's entry: Pulumi.yaml's `main` (a file, or a folder with index.ts/index.js), else index.ts, else index.js. */
export function programEntry(dir: string): { main: string; project: string } {
    const yamlFile = ["Pulumi.yaml", "Pulumi.yml"].map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
    const doc = yamlFile ? (parse(fs.readFileSync(yamlFile, "utf8")) ?? {}) : {};
    const project = typeof doc.name === "string" ? doc.name : "program";
    const base = typeof doc.main === "string" ? path.resolve(dir, doc.main) : dir;
    const candidates = fs.existsSync(base) && fs.statSync(base).isFile() ? [base] : ["index.ts", "index.js"].map((f) => path.join(base, f));
    const main = candidates.find((f) => fs.existsSync(f));
    if (!main)
        throw new ProgramError(
            `no Pulumi program in ${dir}: looked for ${candidates.join(", ")}${yamlFile ? ` (from Pulumi.yaml main: ${doc.main ?? "unset"})` : ""}. Give --program the folder holding your Pulumi.yaml and index.ts or index.js.`,
        );
    return { main, project };
}

/** The stack file's config (keys as written, `project:key`), values as strings; secure values read as MOCK_SECRET. */
function stackConfig(dir: string, stack: string, project: string, extra: Record<string, string>): { config: Record<string, string>; secrets: string[] } {
    const file = path.join(dir, `Pulumi.${stack}.yaml`);
    const doc = fs.existsSync(file) ? (parse(fs.readFileSync(file, "utf8")) ?? {}) : {};
    const config: Record<string, string> = {};
    const secrets: string[] = [];
    const fullKey = (k: string) => (k.includes(":") ? k : `${project}:${k}`);
    for (const [k, v] of Object.entries<unknown>(doc.config ?? {})) {
        const key = fullKey(k);
        if (v !== null && typeof v === "object" && "secure" in (v as object)) {
            config[key] = MOCK_SECRET;
            secrets.push(key);
        } else config[key] = typeof v === "string" ? v : JSON.stringify(v);
    }
    for (const [k, v] of Object.entries(extra)) config[fullKey(k)] = v;
    return { config, secrets };
}

/** The program's own `@pulumi/pulumi` (the copy its `require` finds), else this package's. */
function pulumiOf(dir: string): { pulumi: typeof import("@pulumi/pulumi"); settings: { waitForRPCs(): Promise<void> } } {
    let entry: string;
    try {
        entry = require.resolve("@pulumi/pulumi", { paths: [dir] });
    } catch {
        entry = require.resolve("@pulumi/pulumi");
    }
    const root = path.dirname(entry);
    // Pulumi's closure serialization (TypeScript's compiler among it) is loaded only if the program uses it.
    const pulumi = withDeferredModules(() => require(entry));
    return { pulumi, settings: require(path.join(root, "runtime", "settings")) };
}

/** Drops undefined fields and unwraps serialized secrets to their values. */
function plain<T>(v: T): T {
    return JSON.parse(JSON.stringify(v ?? {}), (_k, val) => (val && typeof val === "object" && SECRET_SIG in val ? val.value : val));
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs the program in `dir` under Pulumi's mocks and returns what it would create. Calls are
 * serialized (the Pulumi runtime is process-global). Throws ProgramError when the program cannot be
 * found or loaded, or throws (its own message kept: a component's InputError lists every bad field).
 */
export function renderProgram(dir: string, opts: RenderProgramOptions = {}): Promise<RenderedProgram> {
    const run = () => renderOnce(path.resolve(dir), opts);
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
}

async function renderOnce(dir: string, opts: RenderProgramOptions): Promise<RenderedProgram> {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ProgramError(`--program ${dir}: no such folder`);
    const { main, project } = programEntry(dir);
    const { pulumi, settings } = pulumiOf(dir);
    const registered: { type: string; name: string; custom: boolean; inputs: Record<string, any> }[] = [];
    await pulumi.runtime.setMocks(
        {
            newResource(a: { type: string; name: string; inputs: any; custom?: boolean }) {
                // An object without a name is named as the engine names it (the program may pass the name on).
                const inputs = a.custom !== false ? withAutoName(a.type, a.name, a.inputs) : a.inputs;
                registered.push({ type: a.type, name: a.name, custom: a.custom !== false, inputs });
                const state = { ...inputs, ...(a.type === "random:index/randomPassword:RandomPassword" ? { result: MOCK_SECRET } : {}) };
                return { id: `${a.name}-id`, state };
            },
            call: (a: { inputs: any }) => a.inputs,
        },
        project,
        opts.stack ?? "dev",
        false,
    );
    const { config, secrets } = stackConfig(dir, opts.stack ?? "dev", project, opts.config ?? {});
    pulumi.runtime.setAllConfig(config, secrets);
    // What the program (and Pulumi's log under mocks) prints goes to stderr: stdout is the command's answer (--json).
    // An error raised in an output (a component's check of a value known late) is collected, never lost.
    const watch = new FailureWatch().start();
    const ran = await toStderr(watch, () => watch.race(loadEntry(main).then(() => settings.waitForRPCs()))).then(
        () => undefined,
        (e: unknown) => e,
    );
    const errors = await watch.stop();
    if (ran !== undefined) throw ran;
    if (errors.length) throw new ProgramError(outputFailure(main, errors));
    const objects = registered
        .filter((r) => r.custom && r.type.startsWith("kubernetes:"))
        .map((r) => {
            const { apiVersion, kind, metadata, ...rest } = r.inputs;
            return { apiVersion, kind, metadata: plain(metadata), ...plain(rest) } as K8sObject;
        });
    return { dir, main, project, objects, resources: registered.map((r) => ({ type: r.type, name: r.name })) };
}

/** What a program whose outputs failed says: each error, the component's own words first. */
export function outputFailure(main: string, errors: string[]): string {
    const listed = errors.length === 1 ? errors[0]! : errors.map((e, i) => `(${i + 1}) ${e}`).join("\n");
    return `the program ${main} failed under Pulumi's mocks: ${errors.length === 1 ? "an error" : `${errors.length} errors`} raised inside an output (pulumi up would fail the same way): ${listed}`;
}

/** Runs `fn` with console.log and console.info writing to stderr, restored after; Pulumi's logged errors (`error: [runtime] ...`) go to `watch` too. */
async function toStderr(watch: FailureWatch, fn: () => Promise<void>): Promise<void> {
    const { log, info, error } = console;
    console.log = console.info = (...args: unknown[]) => console.error(...args);
    console.error = (...args: unknown[]) => {
        if (typeof args[0] === "string" && args[0].startsWith("error: [runtime] ")) watch.logged(args[0].slice("error: [runtime] ".length));
        error(...args);
    };
    try {
        await fn();
    } finally {
        console.log = log;
        console.info = info;
        console.error = error;
    }
}

/** What a program's failure to load says: a module it cannot find is named with what to install, without Node's require stack. */
export function loadFailure(main: string, e: unknown): string {
    const err = e as NodeJS.ErrnoException;
    const missing = err?.code === "MODULE_NOT_FOUND" ? /Cannot find module '([^']+)'/.exec(err.message)?.[1] : undefined;
    if (missing !== undefined && !missing.startsWith(".") && !path.isAbsolute(missing))
        return `the program ${main} imports '${missing}', which is not installed where the program can find it: run npm install in ${path.dirname(main)} (the program needs mesh-ratelimit and @pulumi/pulumi in its own node_modules)`;
    if (missing !== undefined) return `the program ${main} imports ${missing}, which does not exist: check the import's path`;
    return `the program ${main} failed under Pulumi's mocks: ${e instanceof Error ? e.message : String(e)}`;
}

/** Loads the entry (through tsx for TypeScript); an entry exporting a function (Pulumi's async main) is called. */
async function loadEntry(main: string): Promise<void> {
    // A second run of the same program (replay --compare of one folder) loads its files afresh.
    const dir = path.dirname(main) + path.sep;
    for (const k of Object.keys(require.cache)) if (k.startsWith(dir) && !k.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[k];
    let unregister: (() => void) | undefined;
    if (/\.(ts|mts|cts)$/.test(main)) unregister = (require("tsx/cjs/api") as { register(): () => void }).register();
    try {
        const exported = require(main);
        const fn = typeof exported === "function" ? exported : typeof exported?.default === "function" ? exported.default : undefined;
        if (fn) await fn();
    } catch (e) {
        throw new ProgramError(loadFailure(main, e));
    } finally {
        unregister?.();
    }
}
