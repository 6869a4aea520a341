/**
 * MeshRateLimit's typed arguments ↔ the stack config (strings, as the Pulumi CLI stores them).
 * Pure. The component validates its arguments with the same `resolveSettings` as the program, so
 * every config rule (and its message) holds for both; only the fix is phrased for arguments.
 */
import { CONFIG_KEYS, CONFIG_KEY_NAMES } from "./config/config-schema";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args";
import { Problem, FixStyle, RawConfig, StackSettings, formatProblems, resolveSettings, shellQuote, configError, isStackConfigError } from "./config/settings";

/** Keys whose config value is a comma-separated list and whose argument is a list of strings. */
const LIST_KEYS = new Set(["includeIpRanges", "gatewayHosts"]);

/** Fixes phrased as argument changes (what a user of the component edits). */
export const ARGS_FIX: FixStyle = {
    set: (k, v) =>
        `set ${k}: ${LIST_KEYS.has(k) ? JSON.stringify(v.split(",")) : /^(\d+|true|false)$/.test(v) || /^[[{]/.test(v) ? v : JSON.stringify(v)} in MeshRateLimit's args`,
    rm: (k) => `remove ${k} from MeshRateLimit's args`,
    rename: (from, to, v) => `rename ${from} to ${to} (value ${shellQuote(v)})`,
    header: (n) => `MeshRateLimit: invalid arguments (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** The stack config a set of arguments stands for (keys without the project prefix). */
export function argsToRaw(args: MeshRateLimitArgs): RawConfig {
    const raw: RawConfig = {};
    for (const k of CONFIG_KEYS) {
        const v = (args as Record<string, unknown>)[k.key];
        if (v === undefined || v === null) continue;
        if (LIST_KEYS.has(k.key) && Array.isArray(v)) raw[k.key] = v.join(",");
        else raw[k.key] = typeof v === "string" ? v : k.kind === "json" || typeof v === "object" ? JSON.stringify(v) : String(v);
    }
    return raw;
}

/** Typed arguments from stack config that `resolveSettings` accepted (empty value = unset). */
export function rawToArgs(raw: RawConfig): MeshRateLimitArgs {
    const args: Record<string, unknown> = {};
    for (const k of CONFIG_KEYS) {
        const v = raw[k.key]?.trim();
        if (v === undefined || v === "") continue;
        if (LIST_KEYS.has(k.key))
            args[k.key] = v
                .split(",")
                .map((s) => s.trim())
                .filter(Boolean);
        else if (k.kind === "json") args[k.key] = JSON.parse(v);
        else if (k.kind === "integer") args[k.key] = Number(v);
        else if (k.kind === "boolean") args[k.key] = v.toLowerCase() === "true";
        else args[k.key] = v;
    }
    return args as MeshRateLimitArgs;
}

/** Fields of the arguments that are not stack config keys. */
const EXTRA_FIELDS = new Set(["kubeContext", "createIngressClass", "createPeerAuthentication"]);

/**
 * Settings already resolved for an arguments object (by the program, from the same stack config the
 * arguments were mapped from), so MeshRateLimit does not read them a second time.
 */
const RESOLVED = new WeakMap<MeshRateLimitArgs, StackSettings>();

/** Records that `args` (built by the program from raw config) resolve to `settings`. */
export function rememberSettings(args: MeshRateLimitArgs, settings: StackSettings): MeshRateLimitArgs {
    RESOLVED.set(args, settings);
    return args;
}

/** Validated settings of MeshRateLimit's arguments; throws an `InputError` with argument-phrased fixes. */
export function settingsFromArgs(args: MeshRateLimitArgs): StackSettings {
    const known = args ? RESOLVED.get(args) : undefined;
    if (known) return known;
    const unknown: Problem[] = Object.keys(args ?? {})
        .filter((k) => !CONFIG_KEY_NAMES.has(k) && !EXTRA_FIELDS.has(k))
        .map((k) => ({ key: k, value: String((args as Record<string, unknown>)[k]), problem: "is not an argument of MeshRateLimit", fix: ARGS_FIX.rm(k) }));
    try {
        return resolveSettings(argsToRaw(args ?? {}), unknown);
    } catch (e) {
        if (!isStackConfigError(e)) throw e;
        const err = configError(e.problems);
        err.message = formatProblems(e.problems, ARGS_FIX).replace(/mesh-ratelimit:/g, "");
        throw err;
    }
}
