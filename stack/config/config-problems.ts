/**
 * The problems of stack config: one problem per bad key (key, value, what is wrong, the fix), the
 * `InputError` that lists them all (`configError`; the class is lib/problems.ts's), how fixes are
 * phrased, did-you-mean for keys and values, reading the CLI's config map, and hiding secret values.
 */
import { CONFIG_KEYS, CONFIG_KEY_NAMES, PROJECT } from "./config-schema";
import { editDistance } from "../../lib/edit-distance";
import { Fix, FixStyle } from "../../lib/fix-style";
import { InputError, Problem, isStackConfigError, shownValue } from "../../lib/problems";

export { InputError, isStackConfigError };

// ---------------------------------------------------------------------------------------------
// Errors

export type { Problem };

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
    let best: string | undefined;
    let bestD = Infinity;
    for (const k of CONFIG_KEY_NAMES) {
        const d = editDistance(key.toLowerCase(), k.toLowerCase());
        if (d < bestD) {
            bestD = d;
            best = k;
        }
    }
    return bestD <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
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
    let best = fallback;
    let bestD = Infinity;
    for (const a of allowed) {
        const d = editDistance(v, a.toLowerCase());
        if (d < bestD) {
            bestD = d;
            best = a;
        }
    }
    return bestD <= Math.max(2, Math.floor(v.length / 3)) ? best : fallback;
}

/**
 * Turns the CLI's whole config map (`project:key` → value) into RawConfig, reporting keys of this
 * project that the stack does not know (typos would otherwise be silently ignored).
 */
export function rawConfigFromAll(
    all: Record<string, string>,
    isSecret: (fullKey: string) => boolean = () => false,
): { raw: RawConfig; unknown: Problem[]; secretKeys: Set<string> } {
    const raw: RawConfig = {};
    const unknown: Problem[] = [];
    const secretKeys = new Set<string>();
    for (const [fullKey, value] of Object.entries(all)) {
        const prefix = `${PROJECT}:`;
        if (!fullKey.startsWith(prefix)) continue;
        const key = fullKey.slice(prefix.length);
        const secret = isSecret(fullKey);
        if (secret) secretKeys.add(key);
        if (CONFIG_KEY_NAMES.has(key)) {
            // Strings from the Pulumi CLI; a number or boolean (a typed default, a YAML scalar) is read the same way.
            raw[key] = typeof value === "string" ? value : JSON.stringify(value);
        } else {
            const near = closestKey(key);
            // A secret's value is never printed: the fix moves it without showing it, and keeps it secret.
            const move = secret ? `pulumi config set --secret ${near} "$(pulumi config get ${key})" && pulumi config rm ${key}` : undefined;
            unknown.push(
                problem(key, secret ? SECRET_SHOWN : String(value), "unknown configuration key", (s) =>
                    near ? `did you mean '${near}'? ${move ?? s.rename(key, near, String(value))}` : `${s.rm(key)} (docs/configuration.md lists every key)`,
                ),
            );
        }
    }
    return { raw, unknown, secretKeys };
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

/** How a secret config value appears in an error. */
export const SECRET_SHOWN = "[secret]";

/**
 * The problems with the values of secret config keys hidden: the value itself, and wherever the
 * problem text or the fix quotes it (Pulumi hands the program secrets decrypted).
 */
export function hideSecretValues(problems: Problem[], raw: RawConfig, secretKeys: ReadonlySet<string>): Problem[] {
    const secrets = [...secretKeys].map((k) => raw[k]?.trim()).filter((v): v is string => !!v);
    if (!secrets.length) return problems;
    const hide = (text: string) => secrets.reduce((t, v) => t.split(v).join(SECRET_SHOWN), text);
    // A suggested value for a secret key may be derived from the secret: none is shown, and the
    // command keeps the new value secret.
    const keepSecret = (style: FixStyle): FixStyle => ({
        ...style,
        set: (k, v) => (secretKeys.has(k) ? style.set(k, "<corrected value>").replace(/^pulumi config set /, "pulumi config set --secret ") : style.set(k, v)),
    });
    return problems.map((p) => {
        const fixWith = p.fixWith;
        return {
            ...p,
            value: p.value === undefined ? undefined : secretKeys.has(p.key) ? SECRET_SHOWN : hide(String(p.value)),
            problem: hide(p.problem),
            fix: hide(fixWith ? fixWith(keepSecret(PULUMI_FIX)) : p.fix),
            ...(fixWith ? { fixWith: (style: FixStyle) => hide(fixWith(keepSecret(style))) } : {}),
        };
    });
}
