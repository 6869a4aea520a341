/**
 * Read-only values for good. A resolved value is made once from a copy of its input's plain data
 * (arrays and plain objects; anything else, such as a Pulumi output, is kept as it is) and frozen at
 * every level: whatever reads it afterwards cannot change it, and the caller's objects (which may be
 * another component's) stay changeable. Pure, no imports.
 */

/** Whether `v` is an array or an object made by `{}` (or with no prototype): the data a copy descends into. */
function isPlain(v: unknown): v is Record<string, unknown> | unknown[] {
    if (Array.isArray(v)) return true;
    if (typeof v !== "object" || v === null) return false;
    const proto: unknown = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
}

/** A deep copy of the arrays and plain objects in `v` (other objects shared): freezing it leaves the caller's objects alone. */
export function plainCopy<T>(v: T): T {
    if (Array.isArray(v)) return v.map(plainCopy) as T;
    if (!isPlain(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainCopy(x)])) as T;
}

/**
 * `T` as `deepFreeze` leaves it: every array `readonly`, every object's fields `readonly`, at every
 * level. Functions and Pulumi outputs (objects with `apply`) are kept as they are, as the copy keeps
 * them (a promise's or a date's methods are functions: mapped, they keep their types).
 */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
    ? T
    : T extends { apply: unknown }
      ? T
      : T extends readonly (infer E)[]
        ? readonly DeepReadonly<E>[]
        : T extends object
          ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
          : T;

/**
 * `v` frozen in place, with every array and plain object it reaches (other objects left as they are).
 * Its signature says what the freeze makes of `v`; the body walks values of any type.
 */
export function deepFreeze<T>(v: T): DeepReadonly<T>;
export function deepFreeze(v: unknown): unknown {
    if (!isPlain(v) || Object.isFrozen(v)) return v;
    for (const x of Object.values(v)) deepFreeze(x);
    return Object.freeze(v);
}

/** A copy of `value` frozen at every level (`plainCopy`, then `deepFreeze`). */
export function frozenCopy<T>(value: T): DeepReadonly<T> {
    return deepFreeze(plainCopy(value));
}
