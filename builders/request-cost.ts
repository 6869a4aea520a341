/**
 * A rule's cost → the Envoy fragments that make the service count it (pure; no checks: the rule's
 * `cost` was checked by components/rules/request-cost-checks.ts).
 *
 * Envoy's mechanism (Istio 1.30 → Envoy 1.38): a `rate_limits` entry may carry `hits_addend`
 * (`number`, or `format` with exactly one substitution) and `apply_on_stream_done`. Envoy honours
 * `hits_addend` only for entries in the rate-limit filter's own `rate_limits` or in
 * `RateLimitPerRoute.rate_limits` (the per-instance layout); it puts the value on the descriptor
 * (`RateLimitDescriptor.hits_addend`), and envoyproxy/ratelimit takes a descriptor's own addend
 * before the request-level one (0 included: "check, do not count"). A format that yields no number
 * from 0 to 10^9 drops the entry's descriptor. Entries with `apply_on_stream_done` are sent in a
 * second call when the stream is done, whose answer is not enforced.
 *
 * - `fixed: n`: each entry of the rule carries `hits_addend: {number: n}`.
 * - `requestHeader: h`: each entry is sent in two exclusive forms: when `h` is a whole number of at
 *   most 9 digits, with `hits_addend: {format: "%REQ(h)%"}`; otherwise (missing, repeated, any
 *   other text) with `hits_addend: {number: missingCost}`. So leaving the header out, or sending
 *   something Envoy would read as no number, never drops the rule's descriptor. With `maxCost: m`
 *   the number form is split in two: at most `m`, as sent; larger, with `hits_addend: {number: m}`.
 * - `responseHeader: h`: each entry is sent on the request path with `hits_addend: {number: 0}`
 *   (refused only when the budget is already over), and again when the stream is done with
 *   `hits_addend: {format: "%DYNAMIC_METADATA(<ns>:<key>)%"}` and `apply_on_stream_done: true`.
 *   Envoy's formatter for `hits_addend` is given the request headers only (no `%RESP(h)%`), so
 *   the gateway's header-to-metadata filter copies the response header into dynamic metadata
 *   (`responseCostPatches`), which the stream-done call reads.
 */
import { HCM_FILTER, ROUTER_FILTER, TYPE_URL_PREFIX } from "./envoy-filters";
import { HEADER_COST_REGEX, RESPONSE_COST_NAMESPACE, ResolvedRequestCost, upToPattern } from "./request-cost-args";
import type { RateLimitEntry } from "./rate-limit-entries";
import { EnvoyFilterPatch, HeaderMatcher, HeaderToMetadataRule } from "./envoy-types";

export const HEADER_TO_METADATA_FILTER = "envoy.filters.http.header_to_metadata";
export const HEADER_TO_METADATA_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.header_to_metadata.v3.Config`;

/** Envoy's `hits_addend` of an entry. */
export type HitsAddend = { number: number } | { format: string };

/** A `rate_limits` entry with a cost. */
export interface CostEntry extends RateLimitEntry {
    hits_addend?: HitsAddend;
    apply_on_stream_done?: boolean;
}

/** The dynamic-metadata key a response cost is copied to: one per header and missing cost (two rules may differ in `missingCost`). */
export function responseCostKey(c: ResolvedRequestCost): string {
    const missing = c.missingCost;
    return missing === 0 ? c.responseHeader! : `${c.responseHeader!}.or-${missing}`;
}

/** The `hits_addend` format of a response cost: the value the header-to-metadata filter wrote. */
export function responseCostFormat(c: ResolvedRequestCost): string {
    return `%DYNAMIC_METADATA(${RESPONSE_COST_NAMESPACE}:${responseCostKey(c)})%`;
}

/** The condition on the cost header: its value is (or, inverted, is not; a missing header included) a whole number of at most 9 digits. */
function costHeaderCondition(name: string, valid: boolean): HeaderMatcher {
    return {
        name,
        safe_regex_match: { google_re2: {}, regex: HEADER_COST_REGEX },
        ...(valid ? {} : { invert_match: true, treat_missing_header_as_empty: true }),
    };
}

/** The entry's first action (the rule's name) with one more condition: a `generic_key` becomes a `header_value_match`. */
function withCondition(e: RateLimitEntry, condition: HeaderMatcher): RateLimitEntry {
    const [first, ...rest] = e.actions;
    const hvm = first?.header_value_match;
    const gk = first?.generic_key;
    const named = hvm
        ? { header_value_match: { ...hvm, headers: [...hvm.headers, condition] } }
        : { header_value_match: { descriptor_key: gk!.descriptor_key, descriptor_value: gk!.descriptor_value, headers: [condition] } };
    return { ...e, actions: [named, ...rest] };
}

/**
 * A request-header cost's entries in exclusive forms: a whole number (at most `maxCost`) as sent; a
 * larger whole number as `maxCost`; anything else as `missingCost`.
 */
function requestHeaderEntries(cost: ResolvedRequestCost, name: string, entries: RateLimitEntry[]): CostEntry[] {
    const max = cost.maxCost;
    const bounded = (valid: boolean) => ({ name, safe_regex_match: { google_re2: {}, regex: upToPattern(max!) }, ...(valid ? {} : { invert_match: true }) });
    return entries.flatMap((e) => {
        const number = withCondition(e, costHeaderCondition(name, true));
        const other = { ...withCondition(e, costHeaderCondition(name, false)), hits_addend: { number: cost.missingCost } };
        if (max === undefined) return [{ ...number, hits_addend: { format: `%REQ(${name})%` } }, other];
        return [
            { ...withCondition(number, bounded(true)), hits_addend: { format: `%REQ(${name})%` } },
            { ...withCondition(number, bounded(false)), hits_addend: { number: max } },
            other,
        ];
    });
}

/** A rule's `rate_limits` entries with its cost (the entries unchanged without one). */
export function costEntries(cost: ResolvedRequestCost | undefined, entries: RateLimitEntry[]): CostEntry[] {
    if (!cost) return entries;
    if (cost.fixed !== undefined) return entries.map((e) => ({ ...e, hits_addend: { number: cost.fixed! } }));
    if (cost.requestHeader !== undefined) return requestHeaderEntries(cost, cost.requestHeader, entries);
    return entries.flatMap((e) => [
        { ...e, hits_addend: { number: 0 } },
        { ...e, hits_addend: { format: responseCostFormat(cost) }, apply_on_stream_done: true },
    ]);
}

/** The response costs of a set of rules, one per metadata key (header and missing cost). */
export function responseCosts(costs: (ResolvedRequestCost | undefined)[]): ResolvedRequestCost[] {
    const byKey = new Map<string, ResolvedRequestCost>();
    for (const c of costs) if (c?.responseHeader !== undefined) byKey.set(responseCostKey(c), c);
    return [...byKey.values()];
}

/** The header-to-metadata filter's rules: each response cost header copied (as a number) to its key. */
export function responseCostRules(costs: readonly ResolvedRequestCost[]): HeaderToMetadataRule[] {
    return costs.map((c): HeaderToMetadataRule => {
        const target = { metadata_namespace: RESPONSE_COST_NAMESPACE, key: responseCostKey(c), type: "NUMBER" as const };
        const missing = c.missingCost;
        return {
            header: c.responseHeader!,
            on_header_present: target,
            ...(missing > 0 ? { on_header_missing: { ...target, value: String(missing) } } : {}),
            remove: false,
        };
    });
}

/**
 * The gateway's header-to-metadata filter for the response costs, one `HTTP_FILTER` patch per
 * listener port (as the rate-limit filter's), inserted before the router under `filterName`.
 * Empty without a response cost.
 */
export function responseCostPatches(costs: readonly ResolvedRequestCost[], ports: readonly number[], filterName: string): EnvoyFilterPatch[] {
    if (!costs.length) return [];
    const listeners = ports.length ? ports.map((portNumber) => ({ portNumber })) : [{}];
    return listeners.map((port): EnvoyFilterPatch => ({
        applyTo: "HTTP_FILTER",
        match: { context: "GATEWAY", listener: { ...port, filterChain: { filter: { name: HCM_FILTER, subFilter: { name: ROUTER_FILTER } } } } },
        patch: {
            operation: "INSERT_BEFORE",
            value: { name: filterName, typed_config: { "@type": HEADER_TO_METADATA_TYPE, response_rules: responseCostRules(costs) } },
        },
    }));
}
