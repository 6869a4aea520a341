/**
 * Checks of several fields together, each named and declared beside the declarations of the fields
 * it reads (in their table's file), and referenced from them: a field whose value can only be
 * judged with its siblings' (exactly one of `exact`, `prefix`, `regex`; a Redis address by the mode)
 * has `checkedWith(CHECK, ...)` as its rule, which runs what the field alone must be (if anything)
 * and names the check. The check's code is bound to it once (`bindCrossCheck`) where it runs, so a
 * test can hold every named check to code and every field it names to its table. Pure.
 */
import { CrossCheck, Rule } from "./field-decl";

export type { CrossCheck };

/** A cross-field check's declaration. */
export function crossCheck(name: string, fields: readonly string[], text: string): CrossCheck {
    return Object.freeze({ name, text, fields: Object.freeze([...fields]) });
}

const BOUND = new Map<CrossCheck, string>();

/** Binds `check` to its code (`code`, returned as it is), once; `where` names the function for the docs and the tests. */
export function bindCrossCheck<F>(check: CrossCheck, where: string, code: F): F {
    const before = BOUND.get(check);
    if (before !== undefined && before !== where) throw new Error(`internal: cross-field check ${check.name} is bound twice (${before}, ${where})`);
    BOUND.set(check, where);
    return code;
}

/** Where each bound check's code is, by check. */
export function boundCrossChecks(): ReadonlyMap<CrossCheck, string> {
    return BOUND;
}

/** The rule of a field checked with its siblings by `check`: `own` (what the field alone must be) or, as text, a field with no check of its own. */
export function checkedWith<T>(check: CrossCheck, own: Rule<T> | string): Rule<T> {
    const alone: Rule<T> = typeof own === "string" ? { text: own, problems: () => [] } : own;
    return { ...alone, text: `${alone.text}; with its siblings: ${check.text}`, crossCheck: check };
}
