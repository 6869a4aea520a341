/**
 * The checks of a rule's `cost` (builders/request-cost-args.ts): exactly one kind, a whole number
 * in the range Envoy sends (0 to 10^9), a header name Envoy and the service accept. Pure; collects
 * problems, throws nothing.
 */
import { bindCrossCheck } from "../../lib/cross-checks";
import { Problem } from "../../lib/problems";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { MAX_COST, RequestCostArgs, ResolvedRequestCost } from "../../builders/request-cost-args";
import { REQUEST_COST_CHECKS, REQUEST_COST_FIELDS, RESPONSE_MISSING_COST } from "./request-cost-fields";
import { isPerValueRule } from "../../builders/counter-stores";
import { booleanProblems, fieldProblem } from "../../lib/field-checks";

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
        if (c.acceptSharedBudgetRisk !== undefined) acceptRiskProblems(at, c, kinds[0], problems);
        if (c.missingCost !== undefined)
            problems.push({ key: `${at}.missingCost`, value: c.missingCost, problem: "applies only to a header cost", fix: "remove missingCost" });
        if (c.maxCost !== undefined) maxCostProblems(at, c, kinds[0], problems);
        return;
    }
    problems.push(...givenProblems(F[kinds[0]], `${at}.${kinds[0]}`, c[kinds[0]]));
    problems.push(...givenProblems(F.missingCost, `${at}.missingCost`, c.missingCost));
    if (c.maxCost !== undefined) maxCostProblems(at, c, kinds[0], problems);
    if (c.acceptSharedBudgetRisk !== undefined) acceptRiskProblems(at, c, kinds[0], problems);
}

/** `acceptSharedBudgetRisk`: a boolean, with `responseHeader` only (a request-header cost is bounded by `maxCost`). */
function acceptRiskProblems(at: string, c: any, kind: string, problems: Problem[]): void {
    const key = `${at}.acceptSharedBudgetRisk`;
    const bad = booleanProblems(key, c.acceptSharedBudgetRisk, true);
    if (bad.length) problems.push(...bad);
    else if (kind !== "responseHeader")
        problems.push({
            key,
            value: c.acceptSharedBudgetRisk,
            problem: "applies only to responseHeader",
            fix: `remove ${key} (a request-header cost on a shared counter is bounded by maxCost)`,
        });
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

/** What a rule is counted by: a client's own counter (an address, a value it sends, an identity), or one counter every client shares. */
function sharedBy(r: any): boolean {
    return !isPerValueRule(r);
}

/**
 * A header cost on a counter every client shares (no per-client part): the service adds the cost
 * before it compares and whether or not it refuses, so one request could take the whole budget of
 * everyone. A request-header cost needs `maxCost`, at most the rule's budget; a response-header cost
 * (the backend's number, known only when the response is done) needs the risk accepted by name.
 * Runs on a rule whose `cost` and limit were checked without problems.
 */
export function checkSharedCost(at: string, r: any, problems: Problem[]): void {
    const c = r.cost;
    if (!sharedBy(r) || typeof c !== "object" || c === null) return;
    const key = `${at}.cost`;
    const budget = `the ${Number(r.requestsPerUnit).toLocaleString("en-US")} a ${r.unit} every client shares`;
    const perClient = `or count it per client (${at}.perClientAddress: true, or a header with perValue)`;
    if (c.requestHeader !== undefined && c.maxCost === undefined) {
        const suggested = Math.max(withDefaults(F, c).missingCost, Math.ceil(Number(r.requestsPerUnit) / 10), 1);
        problems.push(
            fieldProblem(
                `${key}.maxCost`,
                c.maxCost,
                `is needed: ${at} reads its cost from request header ${c.requestHeader} on one counter ${budget}; the service adds the cost ` +
                    `before it compares, refused or not, so one request with ${c.requestHeader}: 999999999 adds 999,999,999 and every client is refused for the rest of the ${r.unit}`,
                (x) => `${x.set(`${key}.maxCost`, String(suggested))} (the most one request takes of ${budget}), ${perClient}`,
            ),
        );
    } else if (c.requestHeader !== undefined && Number.isSafeInteger(c.maxCost) && c.maxCost > r.requestsPerUnit) {
        problems.push(
            fieldProblem(
                `${key}.maxCost`,
                c.maxCost,
                `is more than ${budget}: one request could still take all of it (refused, and counted)`,
                (x) => `${x.set(`${key}.maxCost`, String(Math.max(1, Math.ceil(r.requestsPerUnit / 10))))} (at most ${r.requestsPerUnit}), ${perClient}`,
            ),
        );
    } else if (c.responseHeader !== undefined && c.acceptSharedBudgetRisk !== true) {
        problems.push(
            fieldProblem(
                key,
                c,
                `reads its cost from response header ${c.responseHeader} on one counter ${budget}: the gateway counts the backend's number when ` +
                    `the response is done, up to 1,000,000,000, so one response with a large ${c.responseHeader} spends the budget of every client for the rest of the ${r.unit}`,
                (x) =>
                    `count it per client (${at}.perClientAddress: true, or a header with perValue), or accept the risk: ${x.set(`${key}.acceptSharedBudgetRisk`, "true")}`,
            ),
        );
    }
}

/** The cost's cross-field checks (request-cost-fields.ts REQUEST_COST_CHECKS). */
bindCrossCheck(REQUEST_COST_CHECKS.maxCost, "request-cost-checks.ts checkRequestCost", checkRequestCost);
bindCrossCheck(REQUEST_COST_CHECKS.sharedBudget, "request-cost-checks.ts checkSharedCost", checkSharedCost);
