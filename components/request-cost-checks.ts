/**
 * The checks of a rule's `cost` (builders/request-cost-args.ts): exactly one kind, a whole number
 * in the range Envoy sends (0 to 10^9), a header name Envoy and the service accept. Pure; collects
 * problems, throws nothing.
 */
import { Problem } from "../lib/problems";
import { givenProblems } from "../lib/field-decl";
import { MAX_COST, RequestCostArgs, ResolvedRequestCost } from "../builders/request-cost-args";
import { REQUEST_COST_FIELDS, RESPONSE_MISSING_COST } from "./request-cost-fields";

const F = REQUEST_COST_FIELDS;
const KINDS = ["fixed", "requestHeader", "responseHeader"] as const;
const KNOWN = new Set<string>(Object.keys(F));

/** The problems of a rule's `cost` at `at` (e.g. `rules[2].cost`). */
export function checkRequestCost(at: string, c: any, problems: Problem[]): void {
    if (typeof c !== "object" || c === null || Array.isArray(c)) {
        problems.push({
            key: at,
            value: c,
            problem: "must be an object",
            fix: 'give one of { fixed: 5 }, { requestHeader: "x-cost" }, { responseHeader: "x-tokens-used" }',
        });
        return;
    }
    for (const k of Object.keys(c))
        if (!KNOWN.has(k)) problems.push({ key: `${at}.${k}`, value: c[k], problem: "is not a field of a cost", fix: `use one of ${[...KNOWN].join(", ")}` });
    const kinds = KINDS.filter((k) => c[k] !== undefined);
    if (kinds.length !== 1) {
        problems.push({
            key: at,
            value: c,
            problem: `needs exactly one of fixed, requestHeader, responseHeader (has ${kinds.length ? kinds.join(", ") : "none"})`,
            fix: "keep one of them",
        });
        return;
    }
    if (kinds[0] === "fixed") {
        problems.push(...givenProblems(F.fixed, `${at}.fixed`, c.fixed));
        if (c.missingCost !== undefined)
            problems.push({ key: `${at}.missingCost`, value: c.missingCost, problem: "applies only to a header cost", fix: "remove missingCost" });
        if (c.maxCost !== undefined) maxCostProblems(at, c, kinds[0], problems);
        return;
    }
    problems.push(...givenProblems(F[kinds[0]], `${at}.${kinds[0]}`, c[kinds[0]]));
    problems.push(...givenProblems(F.missingCost, `${at}.missingCost`, c.missingCost));
    if (c.maxCost !== undefined) maxCostProblems(at, c, kinds[0], problems);
}

/** `maxCost`: with a request header only, a whole number from 1 to the largest header cost, not under `missingCost`. */
function maxCostProblems(at: string, c: any, kind: string, problems: Problem[]): void {
    const key = `${at}.maxCost`;
    if (kind !== "requestHeader") {
        problems.push({
            key,
            value: c.maxCost,
            problem:
                kind === "fixed"
                    ? "applies only to requestHeader"
                    : "applies only to requestHeader: a response cost is known only when the response is done, after the gateway could bound it",
            fix:
                kind === "fixed"
                    ? "remove maxCost (a fixed cost is bounded already)"
                    : "remove maxCost, and count the response cost per client (perClientAddress, or header with perValue) so one client spends only its own budget",
        });
    } else if (!Number.isSafeInteger(c.maxCost) || c.maxCost < 1 || c.maxCost > MAX_COST - 1) {
        problems.push({
            key,
            value: c.maxCost,
            problem: `must be a whole number from 1 to ${MAX_COST - 1} (the largest header cost)`,
            fix: `set ${key} to e.g. 10`,
        });
    } else if (Number.isSafeInteger(c.missingCost) && c.missingCost > c.maxCost) {
        problems.push({
            key,
            value: c.maxCost,
            problem: `is below missingCost (${c.missingCost}): a request without the header would cost more than the most any request costs`,
            fix: `set ${key} to at least ${c.missingCost}, or lower missingCost`,
        });
    }
}

/**
 * A cost needs the per-instance layout: Envoy reads `hits_addend` only from a rate-limit filter's
 * own descriptors (`RateLimitPerRoute.rate_limits`), not from route or virtual-host `rate_limits`,
 * where every request would count 1.
 */
export function checkCostLayout(rules: unknown, perInstance: boolean, problems: Problem[]): void {
    if (perInstance || !Array.isArray(rules)) return;
    rules.forEach((r, i) => {
        if (r?.cost === undefined) return;
        problems.push({
            key: `rules[${i}].cost`,
            value: r.cost,
            problem: "needs filterLayout: FilterLayout.PerInstance: with the shared layout Envoy ignores a descriptor's cost and counts every request 1",
            fix: "remove filterLayout (FilterLayout.PerInstance is the default; Istio 1.25 or later), or remove the cost",
        });
    });
}

/** A checked `cost` with `missingCost` filled in (its declared default for the kind of header cost). */
export function resolveRequestCost(c: RequestCostArgs): ResolvedRequestCost {
    const fallback = c.responseHeader !== undefined ? RESPONSE_MISSING_COST : F.missingCost.default;
    return { ...c, missingCost: c.missingCost ?? fallback };
}
