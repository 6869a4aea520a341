/**
 * Compiled by `tsc --noEmit` (the typecheck tier), never run: a field's declared type decides the
 * type of its default and its rule. Each `@ts-expect-error` line is a declaration that must not
 * compile (tsc fails on a directive with no error under it); beside each, its control, the same
 * declaration with the right type, compiles.
 */
import { LimitUnit } from "../../builders/rule-args";
import { booleanRule, field, oneOfRule, protoDurationRule, wholeNumberRule } from "../../lib/field-decl";
import { FieldType, t } from "../../lib/field-types";

const goesTo = { object: "nowhere" } as const;

/** The controls: a default and a rule of the declared type. */
export const RIGHT = {
    timeout: field({ doc: "", type: t.string(), default: "10s", rule: protoDurationRule(0.001), goesTo }),
    replicas: field({ doc: "", type: t.number(), default: 2, rule: wholeNumberRule({ min: 1 }), goesTo }),
    shadow: field({ doc: "", type: t.boolean(), default: false, rule: booleanRule(), goesTo }),
    unit: field({ doc: "", type: t.enum(LimitUnit, "LimitUnit"), default: LimitUnit.Minute, rule: oneOfRule(LimitUnit, "LimitUnit"), goesTo }),
    hosts: field({ doc: "", type: t.list(t.string()), default: ["a"], rule: { text: "", problems: () => [] }, goesTo }),
    labels: field({ doc: "", type: t.map(t.string()), default: { a: "b" }, rule: { text: "", problems: () => [] }, goesTo }),
    secret: field({ doc: "", type: t.input(t.string()), default: "s", rule: { text: "", problems: () => [] }, goesTo }),
};

/** The value types the declarations give their defaults (a wrong one is a compile error here, too). */
export const DEFAULT_TYPES: [string, number, boolean, LimitUnit, string[], Record<string, string>] = [
    RIGHT.timeout.default,
    RIGHT.replicas.default,
    RIGHT.shadow.default,
    RIGHT.unit.default,
    RIGHT.hosts.default,
    RIGHT.labels.default,
];

/** The refused: the case (`timeout` declared a number, its default still `"10s"`), and its kin. */
export const WRONG = {
    // @ts-expect-error a string default on a number field
    timeout: field({ doc: "", type: t.number(), default: "10s", rule: wholeNumberRule({ min: 1 }), goesTo }),
    // @ts-expect-error a string field with a number's rule
    replicas: field({ doc: "", type: t.string(), default: "2", rule: wholeNumberRule({ min: 1 }), goesTo }),
    // @ts-expect-error a boolean field with a string default
    shadow: field({ doc: "", type: t.boolean(), default: "false", rule: booleanRule(), goesTo }),
    // @ts-expect-error an enum field with a word that is not one of its values
    unit: field({ doc: "", type: t.enum(LimitUnit, "LimitUnit"), default: "fortnight", rule: oneOfRule(LimitUnit, "LimitUnit"), goesTo }),
    // @ts-expect-error a list field with a single value as its default
    hosts: field({ doc: "", type: t.list(t.string()), default: "a", rule: { text: "", problems: () => [] }, goesTo }),
    // @ts-expect-error a map of strings with a number in it
    labels: field({ doc: "", type: t.map(t.string()), default: { a: 1 }, rule: { text: "", problems: () => [] }, goesTo }),
};

/** The interface text each type writes (read by tests/unit/field-types.test.ts). */
export const TEXTS: [FieldType<unknown>, string][] = [
    [t.list(t.input(t.string())), "pulumi.Input<string>[]"],
    [t.map(t.list(t.string())), "Record<string, string[]>"],
    [t.enum(LimitUnit, "LimitUnit"), "LimitUnit"],
    [t.list(t.ref("RateLimitRuleArgs")), "RateLimitRuleArgs[]"],
];
