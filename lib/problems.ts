/**
 * One vocabulary for bad input, whether it came from stack config or from a component's arguments:
 * a `Problem` names where (`key`: a config key such as `localBucket`, or an argument's field path such
 * as `rules[2].path.prefix`), the value, what is wrong and the fix; an `InputError` carries every
 * problem of one input at once. How the lines are phrased belongs to the caller (stack config prints
 * `pulumi config` commands, a component its argument names).
 */
import * as pulumi from "@pulumi/pulumi";
import { FixStyle } from "./fix-style";

export interface Problem {
    /** Where: a stack config key, or a component argument's field path. */
    key: string;
    value?: unknown;
    problem: string;
    /** The fix, phrased for the input it came from (`pulumi config` commands for stack config). */
    fix: string;
    /** The same fix in another style (the render and explain CLIs phrase it as their flags). */
    fixWith?: (style: FixStyle) => string;
    /** The problem's text in another style, when it names other fields (each named as the style names it). */
    problemWith?: (style: FixStyle) => string;
}

/** What the input was: the stack's config, or the arguments of the named component. */
export type InputSubject = { kind: "stack-config" } | { kind: "component-args"; component: string };

/**
 * Invalid input, with every problem found, thrown before anything is registered. Pulumi's
 * `InputPropertiesError`: one entry per problem (`propertyPath`: the field path, or the config key
 * as `<project>:<key>`; `reason`: the value, what is wrong and the fix), which a provider serving the
 * package to Python, YAML or Go programs hands to the engine as one error per property. Also branded
 * as a `RunError` (the SDK tells both by a marker field), so the Pulumi CLI prints a program's
 * message without a stack trace, as it did when this was a `RunError`.
 */
export class InputError extends pulumi.InputPropertiesError {
    /** The SDK's `RunError.isInstance` marker: the CLI then prints only the message. */
    readonly __pulumiRunError = true;
    constructor(
        public readonly subject: InputSubject,
        public readonly problems: Problem[],
        message: string,
        /** How a problem's key is written as a property path (the program writes `<project>:<key>`). */
        pathOf: (key: string) => string = (k) => k,
    ) {
        super({ message, errors: problems.map((p) => ({ propertyPath: pathOf(p.key), reason: reasonOf(p) })) });
        this.name = "InputError";
    }
}

/** A problem as one property's reason: the value, what is wrong and the fix (the path is the entry's own). */
export function reasonOf(p: Problem): string {
    return `${shownValue(p.value)}: ${p.problem}; fix: ${p.fix}`;
}

/** Whether `e` is an InputError about stack config (what the CLIs re-phrase with their flags). */
export function isStackConfigError(e: unknown): e is InputError {
    return e instanceof InputError && e.subject.kind === "stack-config";
}

/** `"value"`, or `(not set)`; a number JSON cannot spell (`NaN`, `Infinity`) as itself, not as JSON's `null`. */
export function shownValue(v: unknown): string {
    if (v === undefined) return "(not set)";
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    return JSON.stringify(v, (_k, x) => (typeof x === "number" && !Number.isFinite(x) ? String(x) : x));
}

/** One readable message for a component's problems, each with its field path, value and fix. */
export function formatArgsProblems(component: string, problems: Problem[]): string {
    const lines = problems.map((p) => `  - ${p.key} = ${shownValue(p.value)}: ${p.problem}\n    fix: ${p.fix}`);
    return `${component}: invalid arguments (${problems.length} problem${problems.length === 1 ? "" : "s"}); nothing was created:\n${lines.join("\n")}`;
}
