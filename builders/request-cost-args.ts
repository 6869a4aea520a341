/**
 * What one request costs a rule: a fixed number, a number from a request header, or a number the
 * backend puts in a response header (known only when the response is done). Types and constants
 * only; the checks are in components/request-cost-checks.ts, the Envoy fragments in
 * builders/request-cost.ts.
 */

/**
 * How much one request takes from a rule's budget (its limit then counts cost units, not
 * requests). Exactly one of `fixed`, `requestHeader`, `responseHeader`.
 */
export interface RequestCostArgs {
    /** Every request the rule covers costs this much, e.g. `5` (0 to 1,000,000,000; 0 checks the budget without taking from it). */
    fixed?: number;
    /**
     * The cost is the value of this request header (lower case), e.g. `x-cost`: a whole number of
     * at most 9 digits. A request without it, or with any other value, costs `missingCost`.
     * Whoever sets the header chooses the cost: use it only for a header that the gateway or an
     * earlier proxy sets, or strips from clients.
     */
    requestHeader?: string;
    /**
     * The cost is the value of this response header (lower case) that the backend sets, e.g.
     * `x-tokens-used`, counted when the response is done. The request itself is let through while
     * the budget is not yet over (checked without taking from it), so the request that goes over
     * the budget is served and the next ones are refused. A response without the header costs
     * `missingCost`; a value that is not a number from 0 to 1,000,000,000 is not counted.
     */
    responseHeader?: string;
    /**
     * With `requestHeader` or `responseHeader`: the cost of a request (or response) without the
     * header (and, for `requestHeader`, with a value that is not a whole number of at most 9
     * digits). Defaults to `1` for `requestHeader` (leaving the header out never makes a request
     * free) and `0` for `responseHeader` (a response without it, a refusal included, costs nothing).
     */
    missingCost?: number;
    /**
     * With `requestHeader`: the most one request costs, e.g. `10`; a larger number in the header
     * costs `maxCost` (Envoy sends it in a form of its own, so the value never reaches the shared
     * counter). Without it one request can spend a whole budget, everyone's when the rule's counter
     * is shared: the cost is added even when the request is refused. Not with `responseHeader`
     * (count that cost per client instead: `perClientAddress` or a per-value header). Whole number
     * from 1 to 999,999,999. Defaults to none (up to 999,999,999).
     */
    maxCost?: number;
}

/** A rule's `cost` as the builders read it (components/request-cost-checks.ts `resolveRequestCost`): `missingCost` filled in. */
export type ResolvedRequestCost = Readonly<RequestCostArgs> & { readonly missingCost: number };

/** The largest cost Envoy sends for one descriptor (its `hits_addend` is at most 10^9). */
export const MAX_COST = 1_000_000_000;

/** The largest header cost: whole numbers of at most 9 digits (`999999999`), so every accepted value is within `MAX_COST`. */
export const HEADER_COST_REGEX = "[0-9]{1,9}";

/**
 * An RE2 pattern (full match) of the whole numbers from 0 to `n` written with at most 9 digits,
 * leading zeros allowed: shorter numbers, and for each digit of `n` the numbers that agree with `n`
 * before it and are smaller at it.
 */
export function upToPattern(n: number): string {
    const d = String(n);
    const alts: string[] = d.length > 1 ? [`[0-9]{1,${d.length - 1}}`] : [];
    for (let i = 0; i < d.length; i++) {
        const digit = Number(d[i]);
        if (digit === 0) continue;
        const rest = d.length - i - 1;
        alts.push(`${d.slice(0, i)}[0-${digit - 1}]${rest ? `[0-9]{${rest}}` : ""}`);
    }
    alts.push(d);
    return `0*(?:${alts.join("|")})`;
}

/** The dynamic-metadata namespace a response cost is written to (by Envoy's header-to-metadata filter) and read from. */
export const RESPONSE_COST_NAMESPACE = "mesh-ratelimit.response-cost";

/** The defaults of `missingCost`. */
export const DEFAULT_MISSING_COST = { requestHeader: 1, responseHeader: 0 } as const;
