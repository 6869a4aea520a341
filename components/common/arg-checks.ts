/**
 * Checks every component shares for its arguments (label selectors, DNS names, ports) and the error
 * a component throws, before registering anything, when one fails.
 */
import * as pulumi from "@pulumi/pulumi";
import { InputError, formatArgsProblems, Problem } from "../../lib/problems";
import { LABEL_KEY, LABEL_VALUE, dnsNameProblem, isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { ArgTypes, closestName, unknownFields } from "../../lib/unknown-fields";

/** Label-selector problems, shared by the components. Exported for testing. */
export function selectorProblems(field: string, selector: unknown): Problem[] {
    if (typeof selector !== "object" || selector === null || Array.isArray(selector) || Object.keys(selector).length === 0) {
        return [{ key: field, value: selector, problem: "must name at least one pod label", fix: 'give e.g. { istio: "ingressgateway" }' }];
    }
    return Object.entries(selector as Record<string, unknown>)
        .filter(([k, v]) => !LABEL_KEY.test(k) || typeof v !== "string" || !LABEL_VALUE.test(v) || v.length > 63)
        .map(([k, v]) => ({
            key: `${field}.${k}`,
            value: v,
            problem: "is not a valid label key and value",
            fix: "use Kubernetes label syntax (letters, digits, '-', '_', '.')",
        }));
}

/** A DNS name problem, or nothing. Exported for testing. */
export function dnsProblem(field: string, value: unknown, kind: "label" | "subdomain"): Problem[] {
    return isDnsName(value, kind) ? [] : [{ key: field, value, problem: dnsNameProblem(kind), fix: `use "${suggestedDnsName(value, kind)}"` }];
}

export function portProblem(field: string, value: unknown): Problem[] {
    return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= 65535
        ? []
        : [{ key: field, value, problem: "must be a port number from 1 to 65535", fix: "use e.g. 8081" }];
}

/** Invalid component arguments: every problem, each with its field path (lib/problems.ts). */
export function argsError(component: string, problems: Problem[]): InputError {
    return new InputError({ kind: "component-args", component }, problems, formatArgsProblems(component, problems));
}

/**
 * A component's options, with the plan its caller already computed from the very same arguments
 * (the component then uses it instead of computing it again: one plan per run).
 */
export interface PlannedOptions<P> extends pulumi.ComponentResourceOptions {
    plan?: P;
}

/**
 * The component's plan: the one in `opts` (made of these same arguments; anything else is a
 * programming error), or one computed now. The options without the plan, for `super`.
 */
export function planOrCompute<A, P extends { args: A }>(
    component: string,
    args: A,
    opts: PlannedOptions<P> | undefined,
    plan: (a: A) => P,
): { plan: P; opts: pulumi.ComponentResourceOptions } {
    const { plan: given, ...rest } = opts ?? {};
    if (given !== undefined && given.args !== args) throw new Error(`internal: ${component} was given a plan of other arguments`);
    return { plan: given ?? plan(args), opts: rest };
}

export { closestName };

/** Whether `v` is not known yet: an Output or a promise (a `pulumi.Input` other than a plain value). */
export const isDeferred = (v: unknown): boolean =>
    pulumi.Output.isInstance(v) || (typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function");

/**
 * An Input argument's value while the component plans: a string, since `deferInputs` has put a
 * placeholder in place of every Input before the checks run (anything else would be a component
 * that skipped it).
 */
export function planned(value: pulumi.Input<string>): string {
    if (isDeferred(value)) throw new Error("internal: an Input argument reached the plan; the component must call deferInputs first");
    return value as string;
}

/**
 * Every argument and nested field of `args` that `component` does not know (its types: its own table
 * and the tables its fields nest, declared in its folder), each with the closest known name: a
 * program without a type checker (Python, YAML, JavaScript) would otherwise have a misspelt field
 * ignored, or a misspelt rule field widen the rule to every request.
 */
export function componentFieldProblems(types: ArgTypes, component: string, args: unknown): Problem[] {
    return unknownFields(types, `${component}Args`, `an argument of ${component}`, args);
}
