/**
 * The gateway's pre-limit: Envoy's local rate-limit filter in front of the global rate-limit
 * filter, with one token bucket per limit of the compiled rules that a static descriptor can name.
 * A request that the bucket refuses never costs a call to the rate-limit service.
 *
 * Sizing (the proof is in docs/proof/architecture.md, "The pre-limit"): the service counts fixed,
 * clock-aligned windows of length T and allows L requests per window and counter. A pod's bucket
 * holds 2L tokens and refills L per T. Envoy's bucket (AtomicTokenBucketImpl since Envoy 1.31, the
 * only one since the timer-based bucket was removed) refills continuously at L/T tokens a second,
 * so over any span of length τ it gains L·τ/T tokens, while traffic the service allows puts at most
 * L·(⌊τ/T⌋ + 2) requests into that span (it touches at most ⌊τ/T⌋ + 2 windows). 2L + L·τ/T is never
 * less: while the traffic stays within the global limit the bucket never refuses, on any number of
 * gateway pods (each pod sees a part of that traffic). Under overload the bucket passes at most
 * 2L + L·τ/T requests per pod in τ, which bounds the service's calls for that counter.
 *
 * Pure: no Pulumi runtime, no I/O.
 */
import { DeepReadonly } from "../lib/frozen";
import { HCM_FILTER, LOCAL_RATELIMIT_TYPE } from "./envoy-filters";
import { PlannedDescriptor } from "./ratelimit-config";
import { RateLimitEntry } from "./rate-limit-entries";
import { EnvoyFilterPatch, LocalRateLimitConfig, RuntimePercent } from "./envoy-types";

/** The local filter's `stat_prefix` on the gateway: `<prefix>.http_local_rate_limit.rate_limited` counts its refusals. */
export const PRE_LIMIT_STAT_PREFIX = "mesh_ratelimit_pre_limit";
/** The header a pre-limit refusal carries (the service's refusals carry `x-envoy-ratelimited`). */
export const PRE_LIMIT_HEADER = "x-mesh-ratelimit";
export const PRE_LIMIT_HEADER_VALUE = "pre-limit";
/**
 * Envoy needs a default bucket in a per-virtual-host config. Requests that match no descriptor
 * would take their token from it, so it is as large as a `uint32` allows and refilled completely
 * every second: it refuses nothing a gateway can carry.
 */
export const UNBOUNDED_TOKENS = 4294967295;

/** Seconds of a limit's window (envoyproxy/ratelimit's units). */

/** One descriptor entry. */
export interface PreLimitEntry {
    key: string;
    value: string;
}

/** A pod's bucket for one limit of the service's config. */
export interface PreLimitBucket {
    /** The request descriptor it counts (exactly: Envoy matches every entry). */
    entries: PreLimitEntry[];
    /** The global limit: L requests per unit. */
    requests: number;
    unit: string;
    /** 2L. */
    maxTokens: number;
    /** L. */
    tokensPerFill: number;
    /** The window's length, e.g. `60s`. */
    fillInterval: string;
}

/** A limit the pre-limit leaves to the service, and why. */
export interface UnboundedLimit {
    /** The config entry, e.g. `PATH (each value)` or `rule=per-client / remote_address (each value)`. */
    descriptor: string;
    reason: string;
}

export interface PreLimitPlan {
    buckets: PreLimitBucket[];
    unbounded: UnboundedLimit[];
}

/** Why a per-value counter cannot have a static bucket, and what Envoy offers instead. */
export const PER_VALUE_REASON =
    "one counter per distinct value (per path, per header or query value, or per client address): a static local descriptor names one value only. " +
    "Envoy after 1.32 has wildcard descriptors (an entry without value, one bucket per value) but keeps at most " +
    "max_dynamic_descriptors buckets in an LRU cache (20 by default): a flood of distinct values evicts buckets, which come back full, so it bounds nothing";

function describe(chain: PreLimitEntry[], catchAllKey?: string): string {
    const parts = chain.map((e) => `${e.key}=${e.value}`);
    if (catchAllKey !== undefined) parts.push(`${catchAllKey} (each value)`);
    return parts.join(" / ");
}

/**
 * The buckets the planned limits imply (the descriptor tree of builders/rules.ts, each limit typed,
 * from which config.yaml is serialised): one for every limit whose descriptor is fully named by
 * values (a rule, a named path), none for per-value counters, shadow limits (never refuse) and
 * limits of 0 (the service refuses those at once). Same order as the config.
 */
export function preLimitPlan(descriptors: readonly PlannedDescriptor[]): PreLimitPlan {
    const buckets: PreLimitBucket[] = [];
    const unbounded: UnboundedLimit[] = [];
    const walk = (nodes: readonly PlannedDescriptor[], chain: PreLimitEntry[], perValue: string | undefined) => {
        for (const n of nodes) {
            const open = perValue ?? (n.value === undefined ? n.key : undefined);
            const here = n.value === undefined ? chain : [...chain, { key: n.key, value: n.value }];
            const name = open !== undefined ? describe(n.value === undefined ? chain : here, n.value === undefined ? n.key : open) : describe(here);
            const l = n.limit;
            if (l) {
                const L = l.requests;
                const seconds = l.seconds;
                if (open !== undefined) unbounded.push({ descriptor: name, reason: PER_VALUE_REASON });
                else if (l.shadow) unbounded.push({ descriptor: name, reason: "shadow mode: the service never refuses it, so neither may the pre-limit" });
                else if (L === 0) unbounded.push({ descriptor: name, reason: "a limit of 0: the service refuses every request at once" });
                else if (!(Number.isSafeInteger(seconds) && seconds > 0) || !Number.isSafeInteger(L) || 2 * L > UNBOUNDED_TOKENS)
                    unbounded.push({ descriptor: name, reason: `2 × ${L} tokens do not fit Envoy's uint32 max_tokens` });
                else buckets.push({ entries: here, requests: L, unit: l.unit, maxTokens: 2 * L, tokensPerFill: L, fillInterval: `${seconds}s` });
            }
            if (n.descriptors) walk(n.descriptors, here, open);
        }
    };
    walk(descriptors, [], undefined);
    return { buckets, unbounded };
}

/** How the local filter combines a route's own `rate_limits` with its virtual host's (as the global filter does). */
export type PreLimitVhMode = "INCLUDE" | "OVERRIDE";

/**
 * The LocalRateLimit of the stack's virtual hosts: the descriptors' buckets, a default bucket that
 * refuses nothing, enabled and enforced at 100 %, refusals marked with `x-mesh-ratelimit: pre-limit`.
 * The descriptors are built from the same route and virtual-host `rate_limits` the global filter
 * sends (stage 0), combined by `vhMode` like the global filter's `vh_rate_limits`. With
 * `rateLimits` (the per-instance layout) the config carries its own `rate_limits`, the same entries
 * its instance's rate-limit filter sends there, and reads no route or virtual-host `rate_limits`.
 */
export function preLimitConfig(
    buckets: readonly DeepReadonly<PreLimitBucket>[],
    vhMode: PreLimitVhMode,
    rateLimits?: readonly RateLimitEntry[],
): LocalRateLimitConfig {
    const percent = (runtimeKey: string): RuntimePercent => ({ runtime_key: runtimeKey, default_value: { numerator: 100, denominator: "HUNDRED" } });
    return {
        "@type": LOCAL_RATELIMIT_TYPE,
        stat_prefix: PRE_LIMIT_STAT_PREFIX,
        token_bucket: { max_tokens: UNBOUNDED_TOKENS, tokens_per_fill: UNBOUNDED_TOKENS, fill_interval: "1s" },
        filter_enabled: percent(`${PRE_LIMIT_STAT_PREFIX}_enabled`),
        filter_enforced: percent(`${PRE_LIMIT_STAT_PREFIX}_enforced`),
        always_consume_default_token_bucket: false,
        // Without the entries' x_ratelimit_option: a local filter would add its own X-RateLimit headers for them.
        ...(rateLimits ? { rate_limits: rateLimits.map(({ x_ratelimit_option: _x, ...e }) => e) } : { vh_rate_limits: vhMode }),
        response_headers_to_add: [{ append_action: "OVERWRITE_IF_EXISTS_OR_ADD", header: { key: PRE_LIMIT_HEADER, value: PRE_LIMIT_HEADER_VALUE } }],
        descriptors: buckets.map((b) => ({
            entries: b.entries.map((e) => ({ key: e.key, value: e.value })),
            token_bucket: { max_tokens: b.maxTokens, tokens_per_fill: b.tokensPerFill, fill_interval: b.fillInterval },
        })),
    };
}

/** Where the pre-limit goes: the global filter's listeners and virtual hosts. */
export interface PreLimitPlacement {
    /** Listener ports of the global filter; empty: every listener (allVirtualHosts). */
    ports: readonly number[];
    /** Virtual host names; `[""]`: every virtual host (allVirtualHosts). */
    virtualHosts: readonly string[];
    /** The local filter's name (`envoy.filters.http.local_ratelimit` in the shared layout). */
    localFilterName: string;
    /** The name of the rate-limit filter it goes before (`envoy.filters.http.ratelimit` in the shared layout). */
    globalFilterName: string;
    /** Per-route configs (the per-instance layout: a route with descriptors of its own). Defaults to none. */
    routes?: { virtualHost: string; route: string; config: LocalRateLimitConfig }[];
}

/**
 * The EnvoyFilter patches of the pre-limit, appended to the global filter's EnvoyFilter so that they
 * are applied right after its insertion: the local filter goes directly before
 * `envoy.filters.http.ratelimit` (which exists by then) on the same listeners, disabled there
 * (no `filter_enabled`, no bucket); each of the stack's virtual hosts enables it with its buckets.
 * Another team's virtual host on the same listener gets no config, so the filter does nothing there.
 */
export function preLimitPatches(p: PreLimitPlacement, config: LocalRateLimitConfig): EnvoyFilterPatch[] {
    const listeners = p.ports.length ? p.ports.map((portNumber) => ({ portNumber })) : [{}];
    const local = p.localFilterName;
    return [
        ...listeners.map((port): EnvoyFilterPatch => ({
            applyTo: "HTTP_FILTER",
            match: {
                context: "GATEWAY",
                listener: { ...port, filterChain: { filter: { name: HCM_FILTER, subFilter: { name: p.globalFilterName } } } },
            },
            patch: {
                operation: "INSERT_BEFORE",
                value: { name: local, typed_config: { "@type": LOCAL_RATELIMIT_TYPE, stat_prefix: PRE_LIMIT_STAT_PREFIX } },
            },
        })),
        ...p.virtualHosts.map((name): EnvoyFilterPatch => ({
            applyTo: "VIRTUAL_HOST",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name, route: { action: "ANY" } } } },
            patch: { operation: "MERGE", value: { typed_per_filter_config: { [local]: config } } },
        })),
        ...(p.routes ?? []).map((r): EnvoyFilterPatch => ({
            applyTo: "HTTP_ROUTE",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name: r.virtualHost, route: { name: r.route, action: "ANY" } } } },
            patch: { operation: "MERGE", value: { typed_per_filter_config: { [local]: r.config } } },
        })),
    ];
}
