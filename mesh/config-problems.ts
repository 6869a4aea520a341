/**
 * The problems of stack config: one problem per bad key (key, value, what is wrong, the fix), the
 * `InputError` that lists them all (`configError`; the class is lib/problems.ts's), how fixes are
 * phrased, did-you-mean for keys and values, reading the CLI's config map, and hiding secret values.
 */
import { nearestName } from "../lib/edit-distance";
import { Fix, FixStyle } from "../lib/fix-style";
import { InputError, Problem, shownValue } from "../lib/problems";
import { CONFIG_KEYS, CONFIG_KEY_NAMES, PROJECT } from "./config-schema";

// ---------------------------------------------------------------------------------------------
// Errors

/** Quotes a value for a POSIX shell when it needs it. */
export function shellQuote(v: string): string {
    return /^[A-Za-z0-9_./:,=@+%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

export const PULUMI_FIX: FixStyle = {
    set: (k, v) => `pulumi config set ${k} ${shellQuote(v)}`,
    rm: (k) => `pulumi config rm ${k}`,
    rename: (from, to, v) => `pulumi config rm ${from} && pulumi config set ${to} '${v.replace(/'/g, `'\\''`)}'`,
    header: (n) => `invalid stack configuration (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** A problem whose fix is phrased in every style. */
export function problem(key: string, value: string | undefined, text: string, fix: Fix): Problem {
    return typeof fix === "string" ? { key, value, problem: text, fix } : { key, value, problem: text, fix: fix(PULUMI_FIX), fixWith: fix };
}

/** Invalid stack config: every problem, phrased as `pulumi config` commands (lib/problems.ts). */
export function configError(problems: Problem[]): InputError {
    return new InputError({ kind: "stack-config" }, problems, formatProblems(problems));
}

export function formatProblems(problems: Problem[], style: FixStyle = PULUMI_FIX): string {
    const lines = problems.map((p) => {
        const shown = shownValue(p.value);
        return `  - ${PROJECT}:${p.key} = ${shown}: ${p.problem}\n    fix: ${p.fixWith ? p.fixWith(style) : p.fix}`;
    });
    return `${style.header(problems.length)}\n${lines.join("\n")}`;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Raw config as the CLI hands it over: key (without project prefix) → string. */
export type RawConfig = Record<string, string | undefined>;

/** Closest known key by edit distance, to suggest a fix for a typo. */
export function closestKey(key: string): string | undefined {
    return nearestName(key, CONFIG_KEY_NAMES, { divisor: 4 });
}

/**
 * The allowed value a mistyped one most likely meant: same letters in another case, then one that
 * starts the other (`minutes` → `minute`, `sec` → `second`, `https` → `http`), then the nearest by
 * edit distance when it is close; otherwise `fallback` (the key's default), never simply the first.
 */
export function closestValue(value: string, allowed: readonly string[], fallback: string): string {
    const v = value.trim().toLowerCase();
    const ci = allowed.find((a) => a.toLowerCase() === v);
    if (ci) return ci;
    const prefixed = allowed.filter((a) => v.length >= 2 && (v.startsWith(a.toLowerCase()) || a.toLowerCase().startsWith(v)));
    if (prefixed.length) return prefixed.sort((a, b) => Math.abs(a.length - v.length) - Math.abs(b.length - v.length))[0];
    return nearestName(v, allowed, { divisor: 3 }) ?? fallback;
}

/** Keys whose config value is a comma-separated list and whose argument is a list of strings. */
export const LIST_KEYS: ReadonlySet<string> = new Set(["includeIpRanges", "gatewayHosts"]);

/**
 * Stack config → MeshRateLimit's arguments, key by key (trimmed; empty value = unset). Lenient: a
 * value is converted to its argument's type where it parses (a list split on commas, a whole number,
 * `true`/`false` in any case, JSON); any other text is passed through as it is, so the arguments'
 * checks (settings.ts `validateMeshArgs`) report it once, with the value as the user wrote it.
 * Checks nothing.
 */
export function argsOfConfig(raw: RawConfig): Record<string, unknown> {
    const args: Record<string, unknown> = {};
    for (const k of CONFIG_KEYS) {
        const v = raw[k.key]?.trim();
        if (v !== undefined && v !== "") args[k.key] = argOfText(k.key, k.kind, v);
    }
    return args;
}

function argOfText(key: string, kind: string, v: string): unknown {
    if (LIST_KEYS.has(key)) {
        const items = v
            .split(",")
            .map((i) => i.trim())
            .filter(Boolean);
        return items.length ? items : v;
    }
    if (kind === "integer") return /^-?\d+$/.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : v;
    if (kind === "boolean") return v.toLowerCase() === "true" ? true : v.toLowerCase() === "false" ? false : v;
    if (kind === "json") {
        try {
            return JSON.parse(v);
        } catch {
            return v;
        }
    }
    return v;
}
