/**
 * The rules of MeshRateLimit's own fields (mesh-fields.ts declares which field takes which): each a
 * check of one value, its fix falling back to the field's default, and a short text for docs. A field
 * whose check needs other fields names its cross-field check instead (lib/cross-checks.ts). Pure.
 */
import { bucketPortProblems, bucketProblems } from "../components/local-ratelimit/component";
import { MAX_REQUESTS_PER_UNIT, overUint32Problem } from "../components/rules/rule-checks";
import { LABEL_KEY, LABEL_VALUE } from "../lib/dns-names";
import { Rule, customRule } from "../lib/field-decl";
import { fieldProblem, oneOfProblems, wholeNumberProblems } from "../lib/field-checks";
import { UNSENDABLE_PATH, pathAsSent } from "../lib/formats";
import { Problem } from "../lib/problems";
import { underField } from "./arg-problems";

/** "`a`, `b` or `c`": an enum's values as a text lists them. */
export function listed(values: readonly string[]): string {
    const ticked = values.map((v) => `\`${v}\``);
    return ticked.length > 1 ? `${ticked.slice(0, -1).join(", ")} or ${ticked[ticked.length - 1]}` : ticked.join("");
}

/** One of a choice's values (`oneOfProblems`, the fix the nearest value, else the default); docs show the value itself. */
export function choiceRule<E extends Readonly<Record<string, string>>>(values: E): Rule<E[keyof E]> {
    const all = Object.values(values);
    return customRule(`one of ${listed(all)}`, (p, v, fb) => oneOfProblems(p, v, all, fb ?? all[0]));
}

/** An exact URL path or prefix: starting with '/', without spaces, and as a client sends it. */
export const urlPathRule = customRule<string>("a URL path starting with '/', as a client sends it", (p, value) => {
    const v = String(value);
    if (!v.startsWith("/") || /\s/.test(v)) {
        return [
            fieldProblem(p, v, "must be a URL path starting with '/' and without spaces", (s) => s.set(p, `/${v.replace(/^\/*/, "").replace(/\s+/g, "")}`)),
        ];
    }
    return pathAsSent(v) !== v ? [fieldProblem(p, v, UNSENDABLE_PATH, (s) => s.set(p, pathAsSent(v)))] : [];
});

/** A limit's requests per unit: a whole number of at least 1, at most what the rate-limit service counts (components/rules/rule-checks.ts). */
export const requestsPerUnitRule = customRule<number>(`a whole number from 1 to ${MAX_REQUESTS_PER_UNIT}`, (p, v, fb) =>
    // The bound bounds the fix of a value that is no whole number too (5e9 proposes 4294967295).
    wholeNumberProblems(p, v, { min: 1, max: MAX_REQUESTS_PER_UNIT, overMax: (n) => overUint32Problem(p, n), fallback: fb ?? 1 }),
);

/** A Kubernetes label value (non-empty, at most 63 characters). */
export const labelValueRule = customRule<string>("a label value", (p, v, fb) => {
    const text = String(v);
    if (LABEL_VALUE.test(text) && text !== "" && text.length <= 63) return [];
    return [fieldProblem(p, v, "must be a valid label value", (s) => s.set(p, fb ?? ""))];
});

/** One label written `key=value`. */
export const labelRule = customRule<string>("one label `key=value`", (p, v, fb) => {
    const [key, value, ...rest] = String(v).split("=");
    if (!rest.length && key && value !== undefined && LABEL_KEY.test(key) && LABEL_VALUE.test(value)) return [];
    return [fieldProblem(p, v, "must be one label written key=value", (s) => s.set(p, fb ?? ""))];
});

/** A component's rule of its field `name` (its problems under `name`), its problems moved under the field holding it (the rule's path ends in `name`). */
export function componentRule<T>(text: string, name: string, problems: (value: unknown, fallback: T | undefined) => Problem[]): Rule<T> {
    return customRule(text, (p, v, fb) => problems(v, fb).map((q) => underField(p.slice(0, p.length - name.length), q)));
}

/** LocalRateLimit's bucket size, under the field holding it. */
export const bucketRule = componentRule("LocalRateLimit's bucket (a whole number from 1 to 1000000000)", "bucket", (v, fb: number | undefined) =>
    bucketProblems(v, fb),
);

/** LocalRateLimit's port, under the field holding it. */
export const bucketPortRule = componentRule("LocalRateLimit's port (a whole number from 1 to 65535)", "port", (v, fb: number | undefined) =>
    bucketPortProblems(v, fb),
);

/** Where a field of the stack goes, when it only shapes what MeshRateLimit builds. */
export const built = (what: string) => ({ object: what });
