/**
 * The arguments a component takes as a `pulumi.Input` (an output of another resource, a promise): the
 * values its checks do not need before its objects are registered, because they do not decide which
 * objects exist (an existing Redis's addresses, the Secrets holding its passwords and CA, the images).
 * While the component checks and plans, each such value is a placeholder that passes the checks; a
 * transformation of the component's children puts the value where the placeholder landed once it is
 * known, after the component's checks have run again on the real values (a refusal is then the same
 * `InputPropertiesError`, raised when the value is known: at `pulumi up`, or at preview when the value
 * is known then). Every other argument must be a plain value: an output there is refused at once, with
 * the reason.
 */
import * as pulumi from "@pulumi/pulumi";
import { Problem } from "../../lib/problems";
import { isDeferred } from "./arg-checks";

/** The field paths (their tails) that take an Input, and the placeholder each gets while the component plans. */
const DEFERRABLE: readonly { field: RegExp; placeholder: (token: string) => string }[] = [
    { field: /(^|\.)redis\.addresses\[\d+\]$/, placeholder: (t) => `${t}:6379` },
    { field: /(^|\.)redis\.(passwordSecret|sentinelPasswordSecret)\.name$/, placeholder: (t) => t },
    { field: /(^|\.)redis\.tlsCaSecret$/, placeholder: (t) => t },
    { field: /(^|\.)(redis|service)\.image$/, placeholder: (t) => t },
];

const WHEN_KNOWN = " (outputs, checked once known); none of the objects that use them was created:";

/** The text every placeholder starts with (a DNS label, so that the name checks accept it). */
export const PLACEHOLDER_PREFIX = "mesh-ratelimit-deferred-";

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) && !isDeferred(v);

/** `value` with every deferred value in it replaced by `f(value, path)`, in one fixed order. */
function mapDeferred(value: unknown, path: string, f: (v: unknown, path: string) => unknown): unknown {
    if (isDeferred(value)) return f(value, path);
    if (Array.isArray(value)) return value.map((v, i) => mapDeferred(v, `${path}[${i}]`, f));
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapDeferred(v, path ? `${path}.${k}` : k, f)]));
    return value;
}

/** A component's arguments with their Inputs taken out. */
export interface DeferredArgs<A> {
    /** The arguments with a placeholder for each Input: what the component checks and plans. */
    args: A;
    /** Each Input, by the placeholder standing in for it. */
    inputs: { path: string; placeholder: string; value: unknown }[];
    /** Outputs given where a plain value is needed. */
    problems: Problem[];
}

/** Takes the Inputs out of `args` (see the file's comment); arguments without any come back as they are. */
export function deferInputs<A>(args: A): DeferredArgs<A> {
    const inputs: DeferredArgs<A>["inputs"] = [];
    const problems: Problem[] = [];
    const planned = mapDeferred(args, "", (value, path) => {
        const rule = DEFERRABLE.find((d) => d.field.test(path));
        if (!rule) {
            problems.push({
                key: path,
                value: "an output (not known before the objects are registered)",
                problem: "must be a plain value: it decides which objects the component creates, and pulumi preview must show them",
                fix: "pass a plain value; the fields that take an output are the Redis addresses, the Redis password and CA Secrets' names and the images",
            });
            return undefined;
        }
        const placeholder = rule.placeholder(`${PLACEHOLDER_PREFIX}${inputs.length}-x`);
        inputs.push({ path, placeholder, value });
        return placeholder;
    });
    return { args: inputs.length || problems.length ? (planned as A) : args, inputs, problems };
}

/** Every placeholder in `text` replaced by its value. */
function filledIn(text: string, values: Record<string, string>): string {
    return Object.entries(values).reduce((t, [placeholder, v]) => t.split(placeholder).join(v), text);
}

/** `value` with each string that holds a placeholder made an Output of the string with the values put in. */
function substituted(value: unknown, values: pulumi.Output<Record<string, string>>): unknown {
    if (typeof value === "string") return value.includes(PLACEHOLDER_PREFIX) ? values.apply((v) => filledIn(value, v)) : value;
    if (Array.isArray(value)) return value.map((v) => substituted(v, values));
    if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituted(v, values)]));
    return value;
}

/**
 * The Inputs' values by placeholder, once known, after `check` accepted the arguments with the real
 * values in (`check` throws the component's `InputPropertiesError`, which then fails the Output and
 * every child that uses it); undefined when there is no Input.
 */
export function checkedValues<A>(d: DeferredArgs<A>, original: A, check: (a: A) => void): pulumi.Output<Record<string, string>> | undefined {
    if (!d.inputs.length) return undefined;
    return pulumi.all(d.inputs.map((i) => pulumi.output(i.value as pulumi.Input<string>))).apply((known) => {
        let n = 0;
        try {
            check(mapDeferred(original, "", () => known[n++]) as A);
        } catch (e) {
            // Refused once the values are known: the objects that use them are not created; others may be.
            if (pulumi.InputPropertiesError.isInstance(e)) e.message = e.message.replace("; nothing was created:", WHEN_KNOWN);
            throw e;
        }
        return Object.fromEntries(d.inputs.map((i, k) => [i.placeholder, String(known[k])]));
    });
}

/** The transformation that puts the checked values into every child's properties in place of their placeholders. */
export function fillInTransformation(values: pulumi.Output<Record<string, string>>): pulumi.ResourceTransformation {
    return (a) => ({ props: substituted(a.props, values) as pulumi.Inputs, opts: a.opts });
}

/** A text of the component's (an output of it) with the values in, an Output when it holds a placeholder. */
export function filledText(text: string, values: pulumi.Output<Record<string, string>> | undefined): pulumi.Output<string> {
    return values && text.includes(PLACEHOLDER_PREFIX) ? values.apply((v) => filledIn(text, v)) : pulumi.output(text);
}

/** A component's options with the fill-in transformation added when there are Inputs. */
export function withFillIn(opts: pulumi.ComponentResourceOptions, values: pulumi.Output<Record<string, string>> | undefined): pulumi.ComponentResourceOptions {
    return values ? { ...opts, transformations: [...(opts.transformations ?? []), fillInTransformation(values)] } : opts;
}
