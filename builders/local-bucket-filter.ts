/**
 * The local token bucket on a workload's sidecar (spec 2.7): the LocalRateLimit message and the
 * EnvoyFilter that places it on the inbound chain, for the whole chain or per route.
 */
import { protoDurationSeconds } from "../lib/formats";
import {
    EnvoyFilterPatch,
    LocalRateLimitConfig,
    RouteConfigurationMatch,
    RuntimePercent,
    TypedStruct,
    EnvoyFilterSpec,
    HCM_FILTER,
    LOCAL_RATELIMIT_TYPE,
    LOCAL_RATE_LIMIT_HEADER,
    LOCAL_STAT_PREFIX,
    TYPED_STRUCT_TYPE,
} from "./envoy-types";
import { RateLimitHeaders } from "./filter-choices";
import { FILTER_PRIORITY } from "./filter-target";

/** What a local bucket tells clients, and whether it refuses. */
export interface LocalBucketBehaviour {
    /** `enable_x_ratelimit_headers`; absent: none. */
    rateLimitHeaders?: RateLimitHeaders;
    /** Counted, never enforced (`filter_enforced` 0 %): the `rate_limited` statistic grows, nothing is refused. */
    shadow?: boolean;
}

/** The header that tells a refused client after how many seconds to retry (RFC 9110). */
export const RETRY_AFTER_HEADER = "retry-after";

/**
 * The LocalRateLimit message body (spec 2.7 table): a bucket of `bucket` tokens refilled every
 * `fillInterval`. A refusal carries `Retry-After`: the fill interval rounded up to whole seconds,
 * by when the bucket has been refilled (the proven Envoy computes no exact value).
 */
export function localBucketValue(bucket: number, fillInterval: string, b: LocalBucketBehaviour = {}): LocalRateLimitConfig {
    const percent = (runtimeKey: string, numerator: number): RuntimePercent => ({
        runtime_key: runtimeKey,
        default_value: { numerator, denominator: "HUNDRED" },
    });
    const retryAfter = Math.max(1, Math.ceil(protoDurationSeconds(fillInterval) ?? 1));
    return {
        stat_prefix: LOCAL_STAT_PREFIX,
        token_bucket: { max_tokens: bucket, tokens_per_fill: bucket, fill_interval: fillInterval },
        // Both default to 0 % when absent, which would enforce nothing (istio/istio#42664).
        filter_enabled: percent("local_rate_limit_enabled", 100),
        filter_enforced: percent("local_rate_limit_enforced", b.shadow ? 0 : 100),
        response_headers_to_add: [
            { append: false, header: { key: LOCAL_RATE_LIMIT_HEADER, value: "true" } },
            { append: false, header: { key: RETRY_AFTER_HEADER, value: String(retryAfter) } },
        ],
        ...(b.rateLimitHeaders === RateLimitHeaders.Draft03 ? { enable_x_ratelimit_headers: "DRAFT_VERSION_03" } : {}),
    };
}

function typedStruct(value: LocalRateLimitConfig): TypedStruct {
    return { "@type": TYPED_STRUCT_TYPE, type_url: LOCAL_RATELIMIT_TYPE, value };
}

/** A workload's local bucket, resolved: where it sits and how it behaves, every default filled in (components/local-ratelimit.ts resolves it). */
export interface ResolvedLocalBucket {
    /** Pod labels of the workload. */
    readonly selector: Readonly<Record<string, string>>;
    /** The workload's port: its inbound filter chain, and the name of its inbound virtual host `inbound|http|<port>`. */
    readonly port: number;
    readonly bucket: number;
    readonly fillInterval: string;
    /**
     * Absent: the whole filter on the inbound HTTP chain (every route). Present: the filter holds
     * only `stat_prefix` and the bucket is set per route; `[]` means every route of the virtual
     * host, otherwise the named routes.
     */
    readonly routes?: readonly string[];
    /** The HTTP filter's name (per-route config is found by it). */
    readonly httpFilterName: string;
    /** Headers and shadow mode. */
    readonly behaviour: Readonly<Required<LocalBucketBehaviour>>;
}

/**
 * A local token bucket on a workload's sidecar (spec 2.7), in either placement, on the inbound
 * chain of the workload's port only (`listener.portNumber`: for SIDECAR_INBOUND Istio matches it
 * against the inbound filter chain's port, the container port the Service targets).
 */
export function localBucketFilter(o: ResolvedLocalBucket): EnvoyFilterSpec {
    const filterName = o.httpFilterName;
    const httpFilterPatch = (value: LocalRateLimitConfig): EnvoyFilterPatch => ({
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: { portNumber: o.port, filterChain: { filter: { name: HCM_FILTER } } } },
        patch: { operation: "INSERT_BEFORE", value: { name: filterName, typed_config: typedStruct(value) } },
    });
    const selector = { labels: { ...o.selector } };
    const value = localBucketValue(o.bucket, o.fillInterval, o.behaviour);
    if (o.routes === undefined) {
        return { workloadSelector: selector, priority: FILTER_PRIORITY, configPatches: [httpFilterPatch(value)] };
    }
    const routeMatches: RouteConfigurationMatch["vhost"]["route"][] = o.routes.length ? o.routes.map((name) => ({ name, action: "ANY" })) : [{ action: "ANY" }];
    return {
        workloadSelector: selector,
        priority: FILTER_PRIORITY,
        configPatches: [
            httpFilterPatch({ stat_prefix: LOCAL_STAT_PREFIX }),
            ...routeMatches.map((route): EnvoyFilterPatch => ({
                applyTo: "HTTP_ROUTE",
                match: { context: "SIDECAR_INBOUND", routeConfiguration: { vhost: { name: `inbound|http|${o.port}`, route } } },
                patch: {
                    operation: "MERGE",
                    value: { typed_per_filter_config: { [filterName]: typedStruct(value) } },
                },
            })),
        ],
    };
}
