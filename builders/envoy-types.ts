/**
 * The Envoy and Istio identifiers and the EnvoyFilter shape this package writes, declared once:
 * the filters' canonical names and type URLs, and the EnvoyFilter spec (docs/proof/names.md).
 */
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

export interface EnvoyFilterSpec {
    /** The pods the patches apply to (in the filter's namespace; in Istio's root namespace: in every namespace). */
    workloadSelector?: { labels: Record<string, string> };
    /** Or: the Gateway API `Gateway` whose pods they apply to (same namespace as the filter). */
    targetRefs?: { group: string; kind: string; name: string }[];
    /** Order among the EnvoyFilters of a proxy: lower first, default 0 (see `FILTER_PRIORITY`). */
    priority?: number;
    configPatches: Record<string, unknown>[];
}
