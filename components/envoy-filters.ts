/**
 * Pure builders of the EnvoyFilter specs (spec 2.2–2.4, 2.6, 2.7) with the real identifiers of
 * docs/names.md. They return plain objects, shared by the components, the offline renderer, the
 * conformance model and the tests.
 */
import { EXPR_DESCRIPTOR_EXTENSION, EXPR_DESCRIPTOR_TYPE, PathKeyMode, RateLimitEntry, RoutePatch, URL_PATH_EXPRESSION } from "./rules";

export { EXPR_DESCRIPTOR_EXTENSION, EXPR_DESCRIPTOR_TYPE, URL_PATH_EXPRESSION };

export const TYPE_URL_PREFIX = "type.googleapis.com";
export const HCM_FILTER = "envoy.filters.network.http_connection_manager";
export const ROUTER_FILTER = "envoy.filters.http.router";
export const RATELIMIT_FILTER = "envoy.filters.http.ratelimit";
export const LOCAL_RATELIMIT_FILTER = "envoy.filters.http.local_ratelimit";
export const RATELIMIT_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.ratelimit.v3.RateLimit`;
export const LOCAL_RATELIMIT_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`;
export const TYPED_STRUCT_TYPE = `${TYPE_URL_PREFIX}/udpa.type.v1.TypedStruct`;
export const RATELIMIT_PER_ROUTE_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute`;
export const LOCAL_STAT_PREFIX = "http_local_rate_limiter";
export const LOCAL_RATE_LIMIT_HEADER = "x-local-rate-limit";

/** metadata.name of each filter (spec 2.2). */
export const FILTER_NAMES = {
    global: "filter-ratelimit",
    vhostActions: "filter-ratelimit-svc",
    routeAction: "filter-ratelimit-svc-api",
    local: "filter-local-ratelimit-svc",
} as const;

export interface EnvoyFilterSpec {
    workloadSelector: { labels: Record<string, string> };
    configPatches: Record<string, unknown>[];
}

/** What the gateway's rate-limit HTTP filter needs to reach the service. */
export interface RateLimitFilterOptions {
    selector: Record<string, string>;
    domain: string;
    failureModeDeny: boolean;
    timeout: string;
    /** Istio's outbound cluster of the service's gRPC port. */
    clusterName: string;
    /** Host name of the service (the gRPC authority). */
    authority: string;
}

/** The global rate-limit HTTP filter, inserted before the router on the gateway (spec 2.3). */
export function ratelimitHttpFilter(o: RateLimitFilterOptions): EnvoyFilterSpec {
    return {
        workloadSelector: { labels: o.selector },
        configPatches: [
            {
                applyTo: "HTTP_FILTER",
                match: {
                    context: "GATEWAY",
                    listener: { filterChain: { filter: { name: HCM_FILTER, subFilter: { name: ROUTER_FILTER } } } },
                },
                patch: {
                    operation: "INSERT_BEFORE",
                    value: {
                        name: RATELIMIT_FILTER,
                        typed_config: {
                            "@type": RATELIMIT_TYPE,
                            domain: o.domain,
                            failure_mode_deny: o.failureModeDeny,
                            timeout: o.timeout,
                            rate_limit_service: {
                                grpc_service: {
                                    envoy_grpc: { cluster_name: o.clusterName, authority: o.authority },
                                },
                                transport_api_version: "V3",
                            },
                        },
                    },
                },
            },
        ],
    };
}

/** `rate_limits` on the gateway's virtual hosts (`""`: every virtual host). */
export function vhostRateLimitsFilter(selector: Record<string, string>, virtualHosts: string[], rateLimits: RateLimitEntry[]): EnvoyFilterSpec {
    return {
        workloadSelector: { labels: selector },
        configPatches: virtualHosts.map((name) => ({
            applyTo: "VIRTUAL_HOST",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name, route: { action: "ANY" } } } },
            patch: { operation: "MERGE", value: { rate_limits: rateLimits } },
        })),
    };
}

/**
 * `rate_limits` on named routes. By default a route's own rate_limits replace the virtual host's;
 * with `url-path` each patched route also includes them (`vh_rate_limits: INCLUDE`), so every
 * request on it still counts against the virtual host's limits. Undefined when there is no patch.
 */
export function routeRateLimitsFilter(selector: Record<string, string>, patches: RoutePatch[], mode: PathKeyMode): EnvoyFilterSpec | undefined {
    if (!patches.length) return undefined;
    return {
        workloadSelector: { labels: selector },
        configPatches: patches.map((p) => ({
            applyTo: "HTTP_ROUTE",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name: p.virtualHost, route: { name: p.route, action: "ANY" } } } },
            patch: {
                operation: "MERGE",
                value: {
                    route: { rate_limits: p.rateLimits },
                    ...(mode === PathKeyMode.Literal ? {} : { typed_per_filter_config: { [RATELIMIT_FILTER]: { "@type": RATELIMIT_PER_ROUTE_TYPE, vh_rate_limits: "INCLUDE" } } }),
                },
            },
        })),
    };
}

/** The LocalRateLimit message body (spec 2.7 table): a bucket of `bucket` tokens refilled every `fillInterval`. */
export function localBucketValue(bucket: number, fillInterval: string): Record<string, unknown> {
    const percent = (runtimeKey: string) => ({ runtime_key: runtimeKey, default_value: { numerator: 100, denominator: "HUNDRED" } });
    return {
        stat_prefix: LOCAL_STAT_PREFIX,
        token_bucket: { max_tokens: bucket, tokens_per_fill: bucket, fill_interval: fillInterval },
        // Both default to 0 % when absent, which would enforce nothing (istio/istio#42664).
        filter_enabled: percent("local_rate_limit_enabled"),
        filter_enforced: percent("local_rate_limit_enforced"),
        response_headers_to_add: [{ append: false, header: { key: LOCAL_RATE_LIMIT_HEADER, value: "true" } }],
    };
}

function typedStruct(value: Record<string, unknown>): Record<string, unknown> {
    return { "@type": TYPED_STRUCT_TYPE, type_url: LOCAL_RATELIMIT_TYPE, value };
}

/** Where a workload's local bucket sits. */
export interface LocalBucketOptions {
    /** Pod labels of the workload. */
    selector: Record<string, string>;
    /** Service port: names the sidecar's inbound virtual host `inbound|http|<port>`. */
    port: number;
    bucket: number;
    fillInterval: string;
    /**
     * Absent: the whole filter on the inbound HTTP chain (every route). Present: the filter holds
     * only `stat_prefix` and the bucket is set per route; `[]` means every route of the virtual
     * host, otherwise the named routes.
     */
    routes?: string[];
}

/** A local token bucket on a workload's sidecar (spec 2.7), in either placement. */
export function localBucketFilter(o: LocalBucketOptions): EnvoyFilterSpec {
    const httpFilterPatch = (value: Record<string, unknown>) => ({
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: { filterChain: { filter: { name: HCM_FILTER } } } },
        patch: { operation: "INSERT_BEFORE", value: { name: LOCAL_RATELIMIT_FILTER, typed_config: typedStruct(value) } },
    });
    const selector = { labels: o.selector };
    const value = localBucketValue(o.bucket, o.fillInterval);
    if (o.routes === undefined) {
        return { workloadSelector: selector, configPatches: [httpFilterPatch(value)] };
    }
    const routeMatches = o.routes.length ? o.routes.map((name) => ({ name, action: "ANY" })) : [{ action: "ANY" }];
    return {
        workloadSelector: selector,
        configPatches: [
            httpFilterPatch({ stat_prefix: LOCAL_STAT_PREFIX }),
            ...routeMatches.map((route) => ({
                applyTo: "HTTP_ROUTE",
                match: { context: "SIDECAR_INBOUND", routeConfiguration: { vhost: { name: `inbound|http|${o.port}`, route } } },
                patch: {
                    operation: "MERGE",
                    value: { typed_per_filter_config: { [LOCAL_RATELIMIT_FILTER]: typedStruct(value) } },
                },
            })),
        ],
    };
}
