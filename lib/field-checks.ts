/**
 * The checks of one field's value, each rule with one message and a fix in every style (a
 * component's "set <field> to ...", MeshRateLimit's argument edits, the program's config commands): a
 * choice of words, a whole number in a range, a protobuf duration, a DNS name, a boolean. The
 * components run them on their arguments, MeshRateLimit's reader on its own fields. Pure.
 */
import { isDnsName, dnsNameProblem, suggestedDnsName } from "./dns-names";
import { closestValue } from "./edit-distance";
import { Fix, FixStyle, problemText } from "./fix-style";
import { GO_DURATION, protoDurationSeconds } from "./formats";
import { Problem } from "./problems";

/** A component's own phrasing of a fix: the field and the value to give it (a word or number as it is, other text quoted). */
export const COMPONENT_FIX: FixStyle = {
    set: (k, v) => `set ${k} to ${/^(-?\d+(\.\d+)?|true|false)$/.test(v) || /^[[{]/.test(v) ? v : JSON.stringify(v)}`,
    rm: (k) => `remove ${k}`,
    rename: (from, to) => `rename ${from} to ${to}`,
    header: (n) => `invalid arguments (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** A problem whose fix is phrased in every style, `style` the one its `fix` is written in. */
export function styledProblem(style: FixStyle, key: string, value: unknown, text: string, fix: Fix): Problem {
    const says = problemText(text);
    return typeof fix === "string" ? { key, value, ...says, fix } : { key, value, ...says, fix: fix(style), fixWith: fix };
}

/** A problem of one field, its fix phrased in every style (a component's own: "set <field> to ..."). */
export function fieldProblem(key: string, value: unknown, text: string, fix: Fix): Problem {
    return styledProblem(COMPONENT_FIX, key, value, text, fix);
}

/**
 * One of `allowed`; the fix is what `meant` says a word means (lower case: `on` for a switch), else
 * the allowed value it most likely meant, else `fallback`.
 */
export function oneOfProblems(
    field: string,
    value: unknown,
    allowed: readonly string[],
    fallback: string,
    meant: Readonly<Record<string, string>> = {},
): Problem[] {
    const v = String(value);
    if (typeof value === "string" && allowed.includes(value)) return [];
    const near = Object.hasOwn(meant, v.toLowerCase()) ? meant[v.toLowerCase()]! : closestValue(v, allowed, allowed.includes(fallback) ? fallback : allowed[0]);
    return [fieldProblem(field, value, `must be one of ${allowed.map((a) => `'${a}'`).join(", ")}`, (s) => s.set(field, near))];
}

/**
 * A whole number from `min` (to `max`), given as a number (text that spells one is converted by whoever
 * reads text, never here). The fix: the nearest whole number in range, or `fallback` for what is no number at all.
 */
export function wholeNumberProblems(
    field: string,
    value: unknown,
    opts: { min: number; max?: number; fallback: number; overMax?: (n: number) => Problem },
): Problem[] {
    const text = typeof value === "string" ? value : String(value);
    const n = typeof value === "number" ? value : Number(text);
    const max = opts.max ?? Number.MAX_SAFE_INTEGER;
    if (typeof value !== "number" || !Number.isSafeInteger(n)) {
        // A number with a fraction: the nearest whole one. Not a number at all: the fallback.
        const near = Number.isFinite(n) && text.trim() !== "" ? Math.min(Math.max(Math.round(n), opts.min), max) : opts.fallback;
        return [fieldProblem(field, value, "must be a whole number", (s) => s.set(field, String(near)))];
    }
    if (n >= opts.min && n <= max) return [];
    if (n > max && opts.overMax) return [opts.overMax(n)];
    // A bound with its own statement (overMax) is not restated in the lower one's.
    const range = opts.max === undefined || opts.overMax ? `at least ${opts.min}` : `between ${opts.min} and ${max}`;
    return [fieldProblem(field, value, `must be ${range}`, (s) => s.set(field, String(Math.min(Math.max(n, opts.min), max))))];
}

const DURATION_UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * Seconds of a duration written loosely (a bare number of seconds, or with `ms`, `s`, `m`, `h`; white
 * space ignored), to the 9 decimals a protobuf duration holds; undefined when it is not one.
 */
function secondsOfLoose(v: string): number | undefined {
    const m = /^(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)?$/.exec(v.replace(/\s+/g, ""));
    return m ? Number((Number(m[1]) * DURATION_UNIT_SECONDS[m[2] ?? "s"]).toFixed(9)) : undefined;
}

/** A protobuf duration (what Envoy reads) of at least `minSeconds`; the fix is the same length written as one, else `fallback`. */
export function protoDurationProblems(field: string, value: unknown, minSeconds: number, fallback: string): Problem[] {
    const v = typeof value === "string" ? value : String(value);
    const secs = typeof value === "string" ? protoDurationSeconds(value) : undefined;
    if (secs === undefined) {
        const meant = secondsOfLoose(v);
        const text = meant === undefined ? undefined : `${Math.max(meant, minSeconds)}s`;
        const fix = text !== undefined && protoDurationSeconds(text) !== undefined ? text : fallback;
        return [
            fieldProblem(field, value, "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')", (s) =>
                s.set(field, fix),
            ),
        ];
    }
    return secs < minSeconds ? [fieldProblem(field, value, `must be at least ${minSeconds}s`, (s) => s.set(field, `${minSeconds}s`))] : [];
}

/** A DNS label or subdomain (a Kubernetes name); the fix is the nearest valid name. */
export function dnsNameProblems(field: string, value: unknown, kind: "label" | "subdomain"): Problem[] {
    return isDnsName(value, kind) ? [] : [fieldProblem(field, value, dnsNameProblem(kind), (s) => s.set(field, suggestedDnsName(value, kind)))];
}

/** A boolean, given as one (text that spells one is converted by whoever reads text); the fix reads yes/no/on/off/1/0, else `fallback`. */
export function booleanProblems(field: string, value: unknown, fallback: boolean): Problem[] {
    if (typeof value === "boolean") return [];
    const v = String(value).toLowerCase();
    const meant = ["yes", "y", "on", "1"].includes(v) ? "true" : ["no", "n", "off", "0"].includes(v) ? "false" : String(fallback);
    return [fieldProblem(field, value, "must be true or false", (s) => s.set(field, meant))];
}

/** An option declared once: its default, and the rule a given value must meet (the fix falls back to the default). */
export interface DeclaredOption<T> {
    default: T;
    check: (field: string, value: unknown) => Problem[];
}

/** A whole-number option (`wholeNumberProblems`) with its default. */
export function wholeNumberOption(fallback: number, range: { min: number; max?: number }): DeclaredOption<number> {
    return { default: fallback, check: (field, value) => wholeNumberProblems(field, value, { ...range, fallback }) };
}

/** A boolean option (`booleanProblems`) with its default. */
export function booleanOption(fallback: boolean): DeclaredOption<boolean> {
    return { default: fallback, check: (field, value) => booleanProblems(field, value, fallback) };
}

/** A Go duration (what the rate-limit service's environment reads); the fix is the same without white space ("150 us"), else `fallback`. */
export function goDurationProblems(field: string, value: unknown, fallback: string): Problem[] {
    if (GO_DURATION.test(String(value))) return [];
    const squeezed = String(value).replace(/\s+/g, "");
    const fix = squeezed !== value && GO_DURATION.test(squeezed) ? squeezed : fallback;
    return [fieldProblem(field, value, "must be a Go duration such as '0', '150us' or '2ms'", (s) => s.set(field, fix))];
}

/** A Go-duration option (`goDurationProblems`) with its default. */
export function goDurationOption(fallback: string): DeclaredOption<string> {
    return { default: fallback, check: (field, value) => goDurationProblems(field, value, fallback) };
}
