/**
 * A field declared once: its documentation, its default (or a note saying how it is derived), the
 * rule a given value must meet, where the value goes (an Envoy field, an environment variable, an
 * object) and the stack's config key that sets it. The checks run the rule, the defaults are read
 * from it, and the argument interfaces' JSDoc and the stack's key table are generated from it.
 * The rules are the field checks of field-checks.ts, each with a short text for the docs. Pure.
 */
import { booleanProblems, dnsNameProblems, goDurationProblems, oneOfProblems, protoDurationProblems, wholeNumberProblems } from "./field-checks";
import { Problem } from "./problems";
import { FieldType } from "./field-types";

/** A named check of sibling fields (lib/cross-checks.ts): what it asks, and the fields of its table it reads. */
export interface CrossCheck {
    readonly name: string;
    readonly text: string;
    readonly fields: readonly string[];
}

/** What a value must be: its problems at `path` (the fix falling back to `fallback`, the field's default), and a short text for docs. */
export interface Rule<T> {
    problems(path: string, value: unknown, fallback: T | undefined): Problem[];
    /** What the rule asks, in a few words ("a protobuf duration of at least 0.001s"). */
    text: string;
    /** How docs show a value (an enum's member, `FilterLayout.PerInstance`); the value itself otherwise. */
    show?(value: T): string;
    /** A choice's values by the name docs show them by (`FilterLayout.PerInstance` → `per-instance`). */
    values?: Readonly<Record<string, string>>;
    /** The named check that judges the value with its siblings' (lib/cross-checks.ts), when it needs them. */
    crossCheck?: CrossCheck;
}

/** The sections of the stack's configuration page (docs/configuration.md), in its order. */
export const STACK_KEY_GROUPS = ["variant", "paths", "limits", "local", "names", "sharing", "service", "managed-api", "operations"] as const;
export type StackKeyGroup = (typeof STACK_KEY_GROUPS)[number];

/** Where a field's value ends up. */
export type GoesTo = { envoy: string } | { env: string } | { object: string };

/** One field's declaration. */
export interface FieldDecl<T> {
    /** The field's documentation, without its default (that sentence is generated from `default` and `defaultNote`). */
    doc: string;
    /**
     * The field's type (`t.string()`, `t.enum(FilterLayout, "FilterLayout")`, `t.input(t.string())`): the argument interface
     * states its text, and the default and the rule must be of its value type (they do not widen it).
     */
    type: FieldType<T>;
    /** Whether the field must be given (no default then). */
    required?: boolean;
    default?: NoInfer<T>;
    /**
     * With a default: words appended to "Defaults to `X`" (", and to `Off` with ..."). Without: what
     * the default is ("none (Envoy's 500)"), as "Defaults to <note>." says it.
     */
    defaultNote?: string;
    rule: Rule<NoInfer<T>>;
    goesTo: GoesTo;
    /** The stack's config key that sets the field, if any. */
    stackKey?: string;
    /** The section of the stack's configuration page that lists `stackKey`. */
    stackGroup?: StackKeyGroup;
}

/** A field declaration, its value type `T` taken from its default and rule (a declared default is then never undefined). */
export function field<T>(d: FieldDecl<T> & { default: NoInfer<T> }): FieldDecl<T> & { default: T };
export function field<T>(d: FieldDecl<T> & { required: true }): FieldDecl<T> & { required: true };
export function field<T>(d: FieldDecl<T>): FieldDecl<T>;
export function field<T>(d: FieldDecl<T>): FieldDecl<T> {
    return d;
}

/** A nested field: its documentation and type only (its own fields are declared where its type is). */
export interface NestedDecl {
    doc: string;
    /** Its type: a nested argument type (`t.ref("PathMatchArgs")`) or a list or map of one. */
    type: FieldType<unknown>;
    required?: boolean;
}

/** A nested field's declaration. */
export function nested(d: NestedDecl): NestedDecl {
    return d;
}

/** An argument interface made of a table of declarations: its name, documentation, the interface it extends. */
export interface ArgInterface {
    name: string;
    /** Its JSDoc ("" for none). */
    doc: string;
    extends?: string;
    fields: Readonly<Record<string, FieldDecl<unknown> | NestedDecl>>;
}

/** The defaults of a table of declarations, by field (the fields without one left out). */
export type DefaultsOf<F> = { [K in keyof F as F[K] extends { default: unknown } ? K : never]: F[K] extends { default: infer D } ? D : never };

/** The plain (not nested) fields of a table. */
type PlainKeys<F> = { [K in keyof F]: F[K] extends FieldDecl<unknown> ? K : never }[keyof F];
/** Those that always have a value once resolved: a declared default, or required. */
type SetKeys<F> = { [K in PlainKeys<F>]: F[K] extends { default: unknown } | { required: true } ? K : never }[PlainKeys<F>];
/** The value type of a declaration's field type. */
type DeclaredValue<D> = D extends { type: FieldType<infer T> } ? T : never;

/**
 * A table's plain fields resolved (a type mapped over the declarations): read-only, a field with a
 * declared default or a required one its value type, any other optional. Nested fields are left out
 * (their own tables resolve them).
 */
export type Resolved<F> = { readonly [K in SetKeys<F>]: F[K] extends { default: infer D } ? D : DeclaredValue<F[K]> } & {
    readonly [K in Exclude<PlainKeys<F>, SetKeys<F>>]?: DeclaredValue<F[K]>;
};

/** The declared defaults of a table, by field. */
export function defaultsOf<F extends Record<string, FieldDecl<unknown> | NestedDecl>>(fields: F): DefaultsOf<F> {
    return Object.fromEntries(Object.entries(fields).flatMap(([k, d]) => ("default" in d && d.default !== undefined ? [[k, d.default]] : []))) as DefaultsOf<F>;
}

/** The default as docs show it, in backticks (undefined without one). */
export function shownDefault<T>(d: FieldDecl<T>): string | undefined {
    if (d.default === undefined) return undefined;
    return `\`${d.rule.show ? d.rule.show(d.default) : String(d.default)}\``;
}

/** The default's sentence ("Defaults to `10s`."), or "" for a required field without one. */
export function defaultSentence<T>(d: FieldDecl<T>): string {
    const shown = shownDefault(d);
    if (shown !== undefined) return `Defaults to ${shown}${d.defaultNote ?? ""}.`;
    return d.defaultNote !== undefined ? `Defaults to ${d.defaultNote}.` : "";
}

/** The field's whole documentation: its text and its default's sentence. */
export function fieldDoc<T>(d: FieldDecl<T>): string {
    return [d.doc, defaultSentence(d)].filter((s) => s !== "").join(" ");
}

/** A table of declarations that each have a default. */
type DefaultedTable = Readonly<Record<string, FieldDecl<unknown> & { default: unknown }>>;

/** The values of such a table's fields: each as given, else (not given, or refused) its default. */
export type FieldValues<F extends DefaultedTable> = { [K in keyof F]: F[K]["default"] };

/**
 * The fields of `table` read from `given`, each checked by its rule (its problems, under `prefix` +
 * its name, added to `problems`) and defaulted: a value not given or refused is the field's default,
 * so whatever is built from a refused value still has a well-formed one.
 */
export function resolvedFields<F extends DefaultedTable>(table: F, given: Partial<Record<keyof F, unknown>>, problems: Problem[], prefix = ""): FieldValues<F> {
    const entries = Object.entries(table).map(([k, d]) => {
        const value = given[k as keyof F];
        const bad = givenProblems(d, `${prefix}${k}`, value);
        problems.push(...bad);
        return [k, value === undefined || bad.length ? d.default : value];
    });
    return Object.fromEntries(entries) as FieldValues<F>;
}

/**
 * `given` resolved by the declarations of its fields (a type mapped over `table`): every field that
 * has a declared default is never undefined, its type the given one without `undefined`.
 */
export type WithDefaults<F, A> = Readonly<Omit<A, keyof DefaultsOf<F>>> & { readonly [K in keyof DefaultsOf<F> & keyof A]-?: Exclude<A[K], undefined> };

/**
 * Checked values read with their declared defaults: each field of `table` that has a default is
 * `given`'s value, or the default where that is not given (`undefined` or `null`). Reads only; the
 * result is for reading fields, never passed on whole (it holds the defaults of fields `given` left out).
 */
export function withDefaults<F extends Readonly<Record<string, FieldDecl<unknown> | NestedDecl>>, A extends object>(
    table: F,
    given: A | undefined,
): WithDefaults<F, A> {
    const read = (k: string): unknown => (given as Record<string, unknown> | undefined)?.[k];
    const filled = Object.entries(table).flatMap(([k, d]) => ("default" in d && d.default !== undefined ? [[k, read(k) ?? d.default]] : []));
    return { ...given, ...Object.fromEntries(filled) } as WithDefaults<F, A>;
}

/** A given value's problems, none for a value not given. */
export function givenProblems(d: FieldDecl<unknown>, path: string, value: unknown): Problem[] {
    return value === undefined ? [] : d.rule.problems(path, value, d.default);
}

/** A boolean (`booleanProblems`). */
export function booleanRule(): Rule<boolean> {
    return { problems: (p, v, fb) => booleanProblems(p, v, fb ?? false), text: "true or false" };
}

/** A protobuf duration of at least `minSeconds` (`protoDurationProblems`). */
export function protoDurationRule(minSeconds: number): Rule<string> {
    return { problems: (p, v, fb) => protoDurationProblems(p, v, minSeconds, fb ?? `${minSeconds}s`), text: `a protobuf duration of at least ${minSeconds}s` };
}

/** A Go duration (`goDurationProblems`). */
export function goDurationRule(): Rule<string> {
    return { problems: (p, v, fb) => goDurationProblems(p, v, fb ?? "0"), text: "a Go duration" };
}

/** A whole number in a range (`wholeNumberProblems`). */
export function wholeNumberRule(range: { min: number; max?: number }): Rule<number> {
    const text = range.max === undefined ? `a whole number from ${range.min}` : `a whole number from ${range.min} to ${range.max}`;
    return { problems: (p, v, fb) => wholeNumberProblems(p, v, { ...range, fallback: fb ?? range.min }), text };
}

/** A DNS label or subdomain (`dnsNameProblems`). */
export function dnsNameRule(kind: "label" | "subdomain"): Rule<string> {
    return { problems: (p, v) => dnsNameProblems(p, v, kind), text: `a DNS ${kind}` };
}

/**
 * One of an enum's values (`oneOfProblems`), listed in the enum's order, or with the default first
 * (`defaultFirst`); the fix is what `meant` says a word means, else the nearest value, else the
 * default, else `suggest`. Docs show a value as the enum's member (`<enumName>.<Member>`).
 */
export function oneOfRule<E extends Readonly<Record<string, string>>>(
    values: E,
    enumName: string,
    opts: { defaultFirst?: boolean; suggest?: E[keyof E]; meant?: Readonly<Record<string, E[keyof E]>> } = {},
): Rule<E[keyof E]> {
    const all = Object.values(values) as E[keyof E][];
    const member = (v: string) => Object.keys(values).find((k) => values[k] === v);
    return {
        problems: (p, v, fb) => {
            const allowed = opts.defaultFirst && fb !== undefined ? [fb, ...all.filter((a) => a !== fb)] : all;
            return oneOfProblems(p, v, allowed, fb ?? opts.suggest ?? all[0], opts.meant);
        },
        text: `one of ${all.map((a) => `\`${a}\``).join(", ")}`,
        show: (v) => (member(v) === undefined ? v : `${enumName}.${member(v)}`),
        values: Object.fromEntries(Object.entries(values).map(([k, v]) => [`${enumName}.${k}`, v])),
    };
}

/** A rule of its own: a check of the value, and its text. */
export function customRule<T>(text: string, problems: (path: string, value: unknown, fallback: T | undefined) => Problem[]): Rule<T> {
    return { problems, text };
}

/*
 * Rules of the components' declarations: a required field's rule, with an example for its fix; a field
 * whose value is taken as given; a required field's problems even when it is not given.
 */

/** `rule`, its fix falling back to `fallback` where the field has no default (a required field's example value). */
export function withFallback<T>(rule: Rule<T>, fallback: T): Rule<T> {
    return { ...rule, problems: (p, v, fb) => rule.problems(p, v, fb ?? fallback) };
}

/**
 * A rule that refuses nothing, by design: the value is used as it is given, as `text` says (a switch
 * that only `false` turns off, an image reference). A field whose check needs its siblings names its
 * cross-field check instead (lib/cross-checks.ts `checkedWith`).
 */
export function takenAsGiven<T>(text: string): Rule<T> {
    return { problems: () => [], text };
}

/** A field's problems: a required field's also when it is not given (its rule says how it is missing), another's only when given. */
export function fieldProblems(d: FieldDecl<unknown>, path: string, value: unknown): Problem[] {
    return d.required ? d.rule.problems(path, value, d.default) : givenProblems(d, path, value);
}
