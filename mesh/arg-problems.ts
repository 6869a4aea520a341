/**
 * The problems of MeshRateLimit's arguments: one per bad field (its path, the value, what is wrong,
 * the fix in every style), the `InputError` that lists them all, and did-you-mean for values. Fixes
 * and texts name fields by their paths (`global.timeout`); whoever reads the arguments from another
 * input (the program, from stack config) phrases them for it with a style of its own. Pure.
 */
import { styledProblem } from "../lib/field-checks";
import { Fix, FixStyle } from "../lib/fix-style";
import { InputError, Problem, shownValue } from "../lib/problems";
import { ArgPath, keyOf } from "./arg-paths";

/** The component whose arguments these are. */
export const MESH_COMPONENT = "MeshRateLimit";

/** Fields whose value is a list of strings (a fix's value is written comma-separated). */
export const LIST_FIELDS: ReadonlySet<string> = new Set(
    (
        [
            ["bookinfo", "hosts"],
            ["managedApi", "includeIpRanges"],
            ["global", "redis", "addresses"],
        ] as const satisfies readonly ArgPath[]
    ).map(keyOf),
);

/** Quotes a value for a POSIX shell when it needs it. */
export function shellQuote(v: string): string {
    return /^[A-Za-z0-9_./:,=@+%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Fixes phrased as argument changes (what a user of the component edits). */
export const ARGS_FIX: FixStyle = {
    set: (k, v) =>
        `set ${k}: ${LIST_FIELDS.has(k) ? JSON.stringify(v.split(",")) : /^(\d+|true|false)$/.test(v) || /^[[{]/.test(v) ? v : JSON.stringify(v)} in ${MESH_COMPONENT}'s args`,
    rm: (k) => `remove ${k} from ${MESH_COMPONENT}'s args`,
    rename: (from, to, v) => `rename ${from} to ${to} (value ${shellQuote(v)})`,
    header: (n) => `${MESH_COMPONENT}: invalid arguments (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** A problem whose fix is phrased in every style (the arguments' by default). */
export function problem(key: string, value: unknown, text: string, fix: Fix): Problem {
    return styledProblem(ARGS_FIX, key, value, text, fix);
}

/** Every problem, one block each: where (the style's name of the field), the value, what is wrong and the fix. */
export function formatProblems(problems: Problem[], style: FixStyle = ARGS_FIX, where: (key: string) => string = (k) => k): string {
    const lines = problems.map(
        (p) =>
            `  - ${where(p.key)} = ${shownValue(p.value)}: ${p.problemWith ? p.problemWith(style) : p.problem}\n    fix: ${p.fixWith ? p.fixWith(style) : p.fix}`,
    );
    return `${style.header(problems.length)}\n${lines.join("\n")}`;
}

/** Invalid MeshRateLimit arguments: every problem, phrased for the arguments. */
export function meshArgsError(problems: Problem[]): InputError {
    return new InputError({ kind: "component-args", component: MESH_COMPONENT }, problems, formatProblems(problems));
}

/** Whether `e` lists the problems of MeshRateLimit's arguments (what the program re-phrases for stack config). */
export function isMeshArgsError(e: unknown): e is InputError {
    return e instanceof InputError && e.subject.kind === "component-args" && e.subject.component === MESH_COMPONENT;
}

/** A component field's problem, moved under the field of MeshRateLimit's arguments that holds it (its fix and the fields its text names likewise). */
export function underField(prefix: string, p: Problem): Problem {
    const fixWith = p.fixWith;
    const moved = (style: FixStyle): FixStyle => ({
        ...style,
        set: (f, v) => style.set(`${prefix}${f}`, v),
        rm: (f) => style.rm(`${prefix}${f}`),
        rename: (from, to, v) => style.rename(`${prefix}${from}`, `${prefix}${to}`, v),
        name: (f) => (style.name ? style.name(`${prefix}${f}`) : `${prefix}${f}`),
    });
    const problemWith = p.problemWith;
    return {
        ...p,
        key: `${prefix}${p.key}`,
        ...(problemWith ? { problem: problemWith(moved(ARGS_FIX)), problemWith: (style: FixStyle) => problemWith(moved(style)) } : {}),
        ...(fixWith ? { fix: fixWith(moved(ARGS_FIX)), fixWith: (style: FixStyle) => fixWith(moved(style)) } : {}),
    };
}
