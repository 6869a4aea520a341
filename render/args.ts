/**
 * The command line shared by `npm run render` and `npm run explain`: the same flags mean the same
 * config keys in both, bad input is a `UsageError` (exit 2, like a bad config), and config
 * problems are phrased as the flags the user typed (`cliFix`), not as `pulumi config` commands.
 */
import * as fs from "fs";
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
    /** `--stack`: the stack name the render runs as (its objects' owner annotation). */
    stack?: string;
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
}

/** The known flag nearest to a mistyped one, when it is close. */
export function closestFlag(flag: string, known: string[]): string | undefined {
    return nearestName(flag.split("=")[0], known, { divisor: 4 });
}

export function parseCli(argv: string[], spec: CliSpec): CliArgs {
    const { usage } = spec;
    const valueFlags = ["--set", "--config", ...Object.keys(KEY_FLAGS), ...(spec.valueFlags ?? [])];
    const switches = spec.switches ?? [];
    const known = [...valueFlags, ...switches, "--help"];
    const args: CliArgs = { overrides: {}, json: false, positional: [], help: false };
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
            if (flag === "--out") {
                args.out = value;
            } else if (flag === "--stack") {
                args.stack = value;
            } else if (flag === "--set") {
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
            } else if (flag === "--config") {
                Object.assign(args.overrides, configFileOverrides(value, usage));
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
            continue;
        }
        if (!spec.positional) throw new UsageError(`unexpected argument '${flag}'\n${usage}`);
        args.positional.push(flag);
    }
    return args;
}

/**
 * The config keys of a stack config file (`--config <file>`): a Pulumi stack file
 * (`config: { mesh-ratelimit:<key>: <value> }`, e.g. Pulumi.dev.yaml), for a config too large for
 * the command line. A list or object value (Pulumi's structured config) is read as the JSON text
 * the program would read; a list of a comma-separated key is joined with commas. Secret values
 * (`secure:`) cannot be decrypted offline: refused, with the `--set` that replaces them.
 */
export function configFileOverrides(file: string, usage: string): Record<string, string> {
    let doc: unknown;
    try {
        doc = parseYaml(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new UsageError(`--config ${file}: ${(e as Error).message.split("\n")[0]}\n${usage}`);
    }
    const config = (doc as { config?: unknown } | null)?.config;
    if (typeof config !== "object" || config === null || Array.isArray(config))
        throw new UsageError(`--config ${file}: not a stack config file: it needs a 'config:' map of ${PROJECT}:<key>: <value>\n${usage}`);
    const out: Record<string, string> = {};
    for (const [name, v] of Object.entries(config as Record<string, unknown>)) {
        const [project, key] = name.includes(":") ? name.split(/:(.*)/s) : [PROJECT, name];
        if (project !== PROJECT) throw new UsageError(`--config ${file}: ${name} is another project's key (this one's are ${PROJECT}:<key>)\n${usage}`);
        if (typeof v === "object" && v !== null && "secure" in v)
            throw new UsageError(
                `--config ${file}: ${name} is a secret, which the offline render cannot decrypt: give a stand-in with --set ${key}=...\n${usage}`,
            );
        out[key] =
            typeof v === "string"
                ? v
                : Array.isArray(v) && LIST_KEYS.has(key)
                  ? v.join(",")
                  : typeof v === "object" && v !== null
                    ? JSON.stringify(v)
                    : String(v);
    }
    return out;
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
