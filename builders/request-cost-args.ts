/**
 * What one request costs a rule: a fixed number, a number from a request header, or a number the
 * backend puts in a response header (known only when the response is done). Types and constants
 * only; the checks are in components/rules/request-cost-checks.ts, the Envoy fragments in
 * builders/request-cost.ts; the argument type is generated (request-cost-arg-types.generated.ts) from
 * components/rules/request-cost-fields.ts.
 */
import { RequestCostArgs } from "./request-cost-arg-types.generated";

export { RequestCostArgs };

/** A rule's `cost` as the builders read it (components/rules/request-cost-checks.ts `resolveRequestCost`): `missingCost` filled in. */
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
