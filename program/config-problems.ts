/**
 * The problems of stack config: one problem per bad key (key, value, what is wrong, the fix as
 * `pulumi config` commands), the `InputError` that lists them all, and the one rephrasing of
 * MeshRateLimit's problems (each under an argument field) for the config key that sets the field.
 */
import { nearestName } from "../lib/edit-distance";
import { styledProblem } from "../lib/field-checks";
import { Fix, FixStyle } from "../lib/fix-style";
import { InputError, Problem } from "../lib/problems";
import { formatProblems, shellQuote } from "../mesh/arg-problems";
import { CONFIG_KEY_NAMES, PROJECT, configKeyOfField } from "./config-keys";

/** Raw config as the CLI hands it over: key (without project prefix) → string. */
export type RawConfig = Record<string, string | undefined>;

export const PULUMI_FIX: FixStyle = {
    set: (k, v) => `pulumi config set ${k} ${shellQuote(v)}`,
    rm: (k) => `pulumi config rm ${k}`,
    rename: (from, to, v) => `pulumi config rm ${from} && pulumi config set ${to} '${v.replace(/'/g, `'\\''`)}'`,
    header: (n) => `invalid stack configuration (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** The config key that sets an argument field; a name that is no field (a key already) stays as it is. */
export function keyOfField(field: string): string {
    return configKeyOfField(field) ?? field;
}

/** A style of config keys (`PULUMI_FIX`, the render CLI's flags) that takes argument fields: each named by the key that sets it. */
export function byConfigKey(style: FixStyle): FixStyle {
    return {
        ...style,
        set: (f, v) => style.set(keyOfField(f), v),
        rm: (f) => style.rm(keyOfField(f)),
        rename: (from, to, v) => style.rename(keyOfField(from), keyOfField(to), v),
        name: (f) => keyOfField(f),
    };
}

/** A problem of stack config itself (an unknown key, a value no argument can hold), its fix phrased in every style of config keys. */
export function configProblem(key: string, value: string | undefined, text: string, fix: Fix): Problem {
    return styledProblem(PULUMI_FIX, key, value, text, fix);
}

/** Invalid stack config: every problem, phrased as `pulumi config` commands. */
export function configError(problems: Problem[]): InputError {
    return new InputError({ kind: "stack-config" }, problems, formatConfigProblems(problems), (k) => `${PROJECT}:${k}`);
}

/** The problems of stack config, each under `<project>:<key>`, the fixes in `style` (a style of config keys). */
export function formatConfigProblems(problems: Problem[], style: FixStyle = PULUMI_FIX): string {
    return formatProblems(problems, style, (k) => `${PROJECT}:${k}`);
}

/** A value as the config holds it: text (a list comma-separated, a map or object as JSON). */
function asConfigText(v: unknown): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    if (Array.isArray(v) && v.every((i) => typeof i === "string")) return v.join(",");
    return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/**
 * MeshRateLimit's problems (each under an argument field, from its own checks or a component's) as
 * stack config problems: under the key that sets the field, with the value as the config has it,
 * the fields the text names written as keys and the fix as `pulumi config` commands. Two problems
 * that become one (two fields one key sets) are reported once.
 */
export function asConfigProblems(problems: readonly Problem[], raw: RawConfig): Problem[] {
    const seen = new Set<string>();
    const out: Problem[] = [];
    for (const p of problems) {
        const key = keyOfField(p.key);
        const problemWith = p.problemWith;
        const problemText = problemWith ? problemWith(byConfigKey(PULUMI_FIX)) : p.problem;
        if (seen.has(`${key}\n${problemText}`)) continue;
        seen.add(`${key}\n${problemText}`);
        const given = raw[key]?.trim();
        const fixWith = p.fixWith;
        out.push({
            key,
            value: given ? given : asConfigText(p.value),
            problem: problemText,
            ...(problemWith ? { problemWith: (style: FixStyle) => problemWith(byConfigKey(style)) } : {}),
            fix: fixWith ? fixWith(byConfigKey(PULUMI_FIX)) : p.fix,
            ...(fixWith ? { fixWith: (style: FixStyle) => fixWith(byConfigKey(style)) } : {}),
        });
    }
    return out;
}

/** Closest known key by edit distance, to suggest a fix for a typo. */
export function closestKey(key: string): string | undefined {
    return nearestName(key, CONFIG_KEY_NAMES, { divisor: 4 });
}
