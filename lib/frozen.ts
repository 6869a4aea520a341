/**
 * Read-only values for good: a copy of plain data (objects and arrays), frozen at every level. A
 * resolved value is made with it once; whatever reads it afterwards cannot change it, and the copy
 * shares nothing with its input (whose objects may be another component's, and stay changeable).
 * Pure.
 */

/** A copy of `value` frozen at every level: plain objects and arrays are copied, anything else is kept as it is. */
export function frozenCopy<T>(value: T): T {
    if (Array.isArray(value)) return Object.freeze(value.map((v: unknown) => frozenCopy(v))) as T;
    if (!isPlainObject(value)) return value;
    const copy = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, frozenCopy(v)]));
    return Object.freeze(copy) as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
    if (typeof value !== "object" || value === null) return false;
    const proto: unknown = Object.getPrototypeOf(value);
    return proto === Object.prototype || proto === null;
}
