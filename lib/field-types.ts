/**
 * A field's type as a value: the generator writes its TypeScript text into the argument interface
 * (`text`), the compiler reads its value type (`FieldType<T>`, so a default or a rule of another
 * type does not compile), and the unknown-field check walks its shape at run time (`shape`: the
 * argument type a nested field names). Pure.
 */
import type * as pulumi from "@pulumi/pulumi";

/** A field's shape: `null` a plain value (string, number, boolean, enum), an argument type's name, a list or a map of a shape. */
export type FieldShape = null | string | { list: FieldShape } | { map: FieldShape };

/** A field's type: its interface text and its shape; `T` is the value type it stands for (never read at run time). */
export interface FieldType<T> {
    readonly text: string;
    readonly shape: FieldShape;
    /** The value type, for the compiler only. */
    readonly value?: T;
}

/** The value type a field type stands for. */
export type ValueOf<F> = F extends FieldType<infer T> ? T : never;

const plain = <T>(text: string): FieldType<T> => ({ text, shape: null });

/** The field types: `t.string()`, `t.list(t.string())`, `t.enum(LimitUnit, "LimitUnit")`, `t.ref<RouteRefArgs>("RouteRefArgs")`. */
export const t = {
    string: (): FieldType<string> => plain("string"),
    number: (): FieldType<number> => plain("number"),
    boolean: (): FieldType<boolean> => plain("boolean"),
    /** A list of `item`. */
    list: <T>(item: FieldType<T>): FieldType<T[]> => ({ text: `${item.text}[]`, shape: { list: item.shape } }),
    /** A map from strings to `item`. */
    map: <T>(item: FieldType<T>): FieldType<Record<string, T>> => ({ text: `Record<string, ${item.text}>`, shape: { map: item.shape } }),
    /** One of an `as const` object's values, the interface naming its type `name` (the object and its type share that name). */
    enum: <E extends Readonly<Record<string, string>>>(values: E, name: string): FieldType<E[keyof E]> => {
        void values;
        return plain(name);
    },
    /** A `pulumi.Input` of `inner` (an Output or a promise is also taken). */
    input: <T>(inner: FieldType<T>): FieldType<pulumi.Input<T>> => ({ text: `pulumi.Input<${inner.text}>`, shape: inner.shape }),
    /** A nested argument type, declared by a table of its own under `name` (its unknown fields are checked by that table). */
    ref: <T = unknown>(name: string): FieldType<T> => ({ text: name, shape: name }),
};
