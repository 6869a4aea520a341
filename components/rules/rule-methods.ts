/**
 * A rule's `methods` (its declaration's rule, rule-fields.ts): a non-empty list of HTTP method
 * tokens, each once whatever its case. Pure.
 */
import { fieldProblem } from "../../lib/field-checks";
import { Problem } from "../../lib/problems";
import { METHOD_TOKEN, normalizedMethods } from "../../builders/request-match";

/** `methods`: a non-empty list of HTTP method tokens, each once whatever its case. */
export function methodsProblems(key: string, methods: unknown): Problem[] {
    const problems: Problem[] = [];
    if (!Array.isArray(methods) || methods.length === 0) {
        problems.push(fieldProblem(key, methods, "must be a non-empty list of HTTP methods", (s) => `${s.set(key, '["POST"]')}, or remove it (every method)`));
        return problems;
    }
    methods.forEach((m, j) => {
        if (typeof m !== "string" || !METHOD_TOKEN.test(m)) {
            const fixed = typeof m === "string" ? m.trim().toUpperCase() : "";
            problems.push(
                fieldProblem(`${key}[${j}]`, m, "must be an HTTP method, e.g. GET or POST (letters, digits and the token characters of RFC 9110)", (s) =>
                    METHOD_TOKEN.test(fixed) ? s.set(`${key}[${j}]`, fixed) : `remove it, or ${s.set(`${key}[${j}]`, "GET")}`,
                ),
            );
        }
    });
    const strings = methods.filter((m): m is string => typeof m === "string");
    if (normalizedMethods(strings).length !== strings.length) {
        problems.push(
            fieldProblem(key, methods, "lists a method twice (methods are matched without regard to case)", (s) =>
                s.set(key, JSON.stringify(normalizedMethods(strings))),
            ),
        );
    }
    return problems;
}
