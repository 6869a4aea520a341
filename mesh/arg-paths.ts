/**
 * Where a field sits in MeshRateLimit's arguments, as a list of names the compiler checks against
 * the argument types (`["limits", "unit"]`): a misspelt or moved field does not compile. Problems and
 * fixes name a field by its key, the names joined by dots (`limits.unit`). Types and two pure
 * functions.
 */
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";

/** A leaf the path stops at: text, a number, a switch or a list. */
type Leaf = string | number | boolean | readonly unknown[];

/** Every path of `T`'s fields: each field's name, and for an object field its own fields' paths after it. */
export type ArgPath<T = MeshRateLimitArgs> = {
    [K in keyof T & string]-?: NonNullable<T[K]> extends Leaf ? readonly [K] : readonly [K] | readonly [K, ...ArgPath<NonNullable<T[K]>>];
}[keyof T & string];

/** A field's key, as problems and fixes name it: its names joined by dots. */
export function keyOf(path: ArgPath): string {
    return path.join(".");
}

/** The value under `path` in `values`, or undefined when any part of it is absent (or not an object). */
export function valueAtPath(values: unknown, path: readonly string[]): unknown {
    let v: unknown = values;
    for (const part of path) {
        if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
        v = (v as Record<string, unknown>)[part];
    }
    return v;
}
