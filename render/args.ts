/**
 * The command line shared by `npm run render` and `npm run explain`: the same flags mean the same
 * config keys in both, bad input is a `UsageError` (exit 2, like a bad config), and config
 * problems are phrased as the flags the user typed (`cliFix`), not as `pulumi config` commands.
 */
import * as fs from "fs";
import * as path from "path";
import { parse as parseYaml } from "yaml";
import { CONFIG_KEY_NAMES, PROJECT } from "../program/config-keys";
import { nearestName } from "../lib/edit-distance";
import { closestKey, formatConfigProblems } from "../program/config-problems";
import { LIST_KEYS } from "../program/config-args";
import { shellQuote } from "../mesh/arg-problems";
import { FixStyle } from "../lib/fix-style";
import { isStackConfigError } from "../lib/problems";

/** Flags that set one config key each (both CLIs). */
export const KEY_FLAGS: Readonly<Record<string, string>> = {
    "--variant": "variant",
    "--profile": "apiProfile",
    "--local-placement": "localPlacement",
    "--port-mode": "espPortMode",
};
const FLAG_OF_KEY: Record<string, string> = Object.fromEntries(Object.entries(KEY_FLAGS).map(([f, k]) => [k, f]));

/** Bad command line: the message ends with the usage. Exit code 2. */
export class UsageError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "UsageError";
    }
}

export interface CliArgs {
    /** Config keys the flags and `--set` gave, in the order typed (later wins). */
    overrides: Record<string, string>;
    out?: string;
    /** `--stack`: the stack name the render runs as (its objects' owner annotation), whose `Pulumi.<stack>.yaml` is the base config. */
    stack?: string;
    /** The config of `--stack`'s file (keys without the project prefix); absent: the dev stack's. */
    base?: Record<string, string>;
    /** Where the config came from, in the order applied after Pulumi.yaml's defaults and the stack's file: `--config` files, `--set` keys, flags. */
    sources: string[];
    json: boolean;
    positional: string[];
    help: boolean;
}

export interface CliSpec {
    usage: string;
    /** Extra flags of this command: `--out` takes a value, `--json` does not. */
    valueFlags?: string[];
    switches?: string[];
    positional?: boolean;
    /** Where `--stack NAME` finds `Pulumi.NAME.yaml`: the program's folder (tests give another). */
    programDir?: string;
}

/** The known flag nearest to a mistyped one, when it is close. */
export function closestFlag(flag: string, known: string[]): string | undefined {
    return nearestName(flag.split("=")[0], known, { divisor: 4 });
}

export function parseCli(argv: string[], spec: CliSpec): CliArgs {
    const { usage } = spec;
    const valueFlags = ["--set", "--config", "--stack", ...Object.keys(KEY_FLAGS), ...(spec.valueFlags ?? [])];
    const switches = spec.switches ?? [];
    const known = [...valueFlags, ...switches, "--help"];
    const args: CliArgs = { overrides: {}, json: false, positional: [], help: false, sources: [] };
    let stackSecrets: string[] = [];
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i];
        if (flag === "-h" || flag === "--help") {
            args.help = true;
            continue;
        }
        if (flag.startsWith("-") && flag.length > 1) {
            if (switches.includes(flag)) {
                if (flag === "--json") args.json = true;
                continue;
            }
            if (!valueFlags.includes(flag)) {
                const near = closestFlag(flag, known);
                throw new UsageError(`unknown argument '${flag}'${near ? `: did you mean ${near}?` : ""}\n${usage}`);
            }
            const value = argv[i + 1];
            if (value === undefined || value.startsWith("--")) throw new UsageError(`${flag} needs a value\n${usage}`);
            i++;
            if (KEY_FLAGS[flag]) args.sources.push(flag);
            stackSecrets = applyValueFlag(args, flag, value, spec) ?? stackSecrets;
            continue;
        }
        if (!spec.positional) throw new UsageError(`unexpected argument '${flag}'\n${usage}`);
        args.positional.push(flag);
    }
    const unread = stackSecrets.filter((k) => args.overrides[k] === undefined);
    if (unread.length)
        throw new UsageError(
            `--stack ${args.stack}: ${unread.map((k) => `${PROJECT}:${k}`).join(", ")} ${unread.length === 1 ? "is a secret" : "are secrets"}, which the offline render cannot decrypt: give a stand-in with ${unread.map((k) => `--set ${k}=...`).join(" ")}\n${usage}`,
        );
    return args;
}

/** One flag that takes a value, applied to `args`; `--stack` returns the keys its file holds as secrets. */
function applyValueFlag(args: CliArgs, flag: string, value: string, spec: CliSpec): string[] | undefined {
    const { usage } = spec;
    if (flag === "--out") {
        args.out = value;
    } else if (flag === "--stack") {
        args.stack = value;
        const read = readConfigFile(stackFile(value, usage, spec.programDir ?? PROGRAM_DIR), usage, "--stack");
        args.base = read.values;
        return read.secrets;
    } else if (flag === "--set") {
        applySet(args, value, usage);
    } else if (flag === "--config") {
        Object.assign(args.overrides, configFileOverrides(value, usage));
        args.sources.push(value);
    } else if (flag === "--variant") {
        const v = value.toUpperCase();
        if (v !== "A" && v !== "B") throw new UsageError(`--variant takes A or B, got '${value}'\n${usage}`);
        args.overrides.variant = v;
    } else if (flag === "--profile") {
        const v = value.toLowerCase();
        if (v !== "seed" && v !== "current") throw new UsageError(`--profile takes seed or current, got '${value}'\n${usage}`);
        args.overrides.apiProfile = v;
    } else if (KEY_FLAGS[flag]) {
        args.overrides[KEY_FLAGS[flag]] = value;
    } else {
        throw new Error(`internal: flag ${flag} has no handler`);
    }
    return undefined;
}

/** `--set key=value`: refused without a key or with an empty value (naming the key's nearest when it is not one). */
function applySet(args: CliArgs, value: string, usage: string): void {
    const eq = value.indexOf("=");
    if (eq < 1) throw new UsageError(`--set takes key=value, got '${value}'\n${usage}`);
    const key = value.slice(0, eq);
    if (value.slice(eq + 1).trim() === "") {
        const note = CONFIG_KEY_NAMES.has(key)
            ? "to use the key's default, leave it out"
            : `'${key}' is not a config key either${closestKey(key) ? ` (did you mean '${closestKey(key)}'?)` : ""}`;
        throw new UsageError(`--set ${value} has an empty value: ${note} (remove '--set ${value}')\n${usage}`);
    }
    args.overrides[key] = value.slice(eq + 1);
    args.sources.push(`--set ${key}`);
}

/** The folder of the program's Pulumi.yaml and stack files. */
const PROGRAM_DIR = path.resolve(__dirname, "..");

/** `Pulumi.<name>.yaml` of the program, which must exist (the Pulumi CLI reads the same file for stack `name`). */
function stackFile(name: string, usage: string, dir: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name))
        throw new UsageError(`--stack needs a stack name (letters, digits, '-', '_', '.'), got '${name}'\n${usage}`);
    const file = path.join(dir, `Pulumi.${name}.yaml`);
    if (!fs.existsSync(file)) {
        const have = fs
            .readdirSync(dir)
            .filter((f) => /^Pulumi\..+\.yaml$/.test(f))
            .join(", ");
        throw new UsageError(
            `--stack ${name}: there is no stack config file Pulumi.${name}.yaml in ${dir} (stack files here: ${have || "none"}); create it with \`pulumi stack init ${name}\` and \`pulumi config set <key> <value>\`, or give a file with --config FILE\n${usage}`,
        );
    }
    return file;
}

/** Where the config came from, in order: what the CLIs print to stderr (`config: Pulumi.yaml defaults, then Pulumi.dev.yaml, then team.yaml`). */
export function configSources(a: Pick<CliArgs, "stack" | "sources">): string {
    return `config: ${["Pulumi.yaml defaults", `Pulumi.${a.stack ?? "dev"}.yaml`, ...a.sources].join(", then ")}`;
}

/**
 * The config keys of a stack config file (`--config <file>`): a Pulumi stack file
 * (`config: { mesh-ratelimit:<key>: <value> }`, e.g. Pulumi.dev.yaml), for a config too large for
 * the command line. A list or object value (Pulumi's structured config) is read as the JSON text
 * the program would read; a list of a comma-separated key is joined with commas. Secret values
 * (`secure:`) cannot be decrypted offline: refused, with the `--set` that replaces them.
 */
export function configFileOverrides(file: string, usage: string): Record<string, string> {
    const { values, secrets } = readConfigFile(file, usage, "--config");
    if (secrets.length)
        throw new UsageError(
            `--config ${file}: ${PROJECT}:${secrets[0]} is a secret, which the offline render cannot decrypt: give a stand-in with --set ${secrets[0]}=...\n${usage}`,
        );
    return values;
}

/** A stack config file's keys (`configFileOverrides`), and the secret ones apart (their values are encrypted). */
function readConfigFile(file: string, usage: string, flag: "--config" | "--stack"): { values: Record<string, string>; secrets: string[] } {
    let doc: unknown;
    try {
        doc = parseYaml(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new UsageError(`${flag} ${file}: ${(e as Error).message.split("\n")[0]}\n${usage}`);
    }
    const config = (doc as { config?: unknown } | null)?.config;
    if (typeof config !== "object" || config === null || Array.isArray(config))
        throw new UsageError(`${flag} ${file}: not a stack config file: it needs a 'config:' map of ${PROJECT}:<key>: <value>\n${usage}`);
    const out: Record<string, string> = {};
    const secrets: string[] = [];
    for (const [name, v] of Object.entries(config as Record<string, unknown>)) {
        const [project, key] = name.includes(":") ? name.split(/:(.*)/s) : [PROJECT, name];
        // A stack file may hold the Pulumi CLI's own keys (kubernetes:context, ...): not the program's.
        if (project !== PROJECT) {
            if (flag === "--stack") continue;
            throw new UsageError(`${flag} ${file}: ${name} is another project's key (this one's are ${PROJECT}:<key>)\n${usage}`);
        }
        if (typeof v === "object" && v !== null && "secure" in v) {
            secrets.push(key);
            continue;
        }
        out[key] =
            typeof v === "string"
                ? v
                : Array.isArray(v) && LIST_KEYS.has(key)
                  ? v.join(",")
                  : typeof v === "object" && v !== null
                    ? JSON.stringify(v)
                    : String(v);
    }
    return { values: out, secrets };
}

/** Config fixes phrased as the CLI's own flags: `--variant B`, `--set unit=minute`. */
export function cliFix(command: string): FixStyle {
    return {
        set: (k, v) => (FLAG_OF_KEY[k] ? `${FLAG_OF_KEY[k]} ${shellQuote(v)}` : `--set ${shellQuote(`${k}=${v}`)}`),
        rm: (k) => (FLAG_OF_KEY[k] ? `leave out ${FLAG_OF_KEY[k]}` : `leave out --set ${k}=...`),
        rename: (from, to, v) => `--set ${shellQuote(`${to}=${v}`)} instead of --set ${from}=...`,
        header: (n) => `invalid configuration (${n} problem${n === 1 ? "" : "s"}); ${command}:`,
    };
}

/** What both CLIs print for an error, and the exit code: 2 for usage and config errors, 1 otherwise. */
export function cliError(e: unknown, command: string): { message: string; code: number } {
    if (isStackConfigError(e)) return { message: `error: ${formatConfigProblems(e.problems, cliFix(command))}`, code: 2 };
    if (e instanceof UsageError) return { message: `error: ${e.message}`, code: 2 };
    if (e instanceof Error && e.name === "OutDirError") return { message: `error: ${e.message}`, code: 2 };
    return { message: `error: ${e instanceof Error ? e.message : String(e)}`, code: 1 };
}
