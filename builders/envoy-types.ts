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

/** Envoy's RE2 matcher (`type.matcher.v3.RegexMatcher`). */
export interface RegexMatcher {
    google_re2: Record<string, never>;
    regex: string;
}

/** Envoy's header matcher (`config.route.v3.HeaderMatcher`): the fields this package writes. */
export interface HeaderMatcher {
    name: string;
    safe_regex_match?: RegexMatcher;
    string_match?: { exact: string };
    present_match?: boolean;
    invert_match?: boolean;
    treat_missing_header_as_empty?: boolean;
}

/** A descriptor entry an action appends: its key and value. */
export interface DescriptorEntry {
    descriptor_key: string;
    descriptor_value: string;
}

/** Envoy's CEL descriptor extension (`rate_limit_descriptors.expr.v3.Descriptor`) in an action. */
export interface ExprDescriptorExtension {
    name: string;
    typed_config: { "@type": string; descriptor_key: string; text: string };
}

/** Envoy's rate-limit action (`config.route.v3.RateLimit.Action`, one field set): the kinds this package writes. */
export interface RateLimitAction {
    generic_key?: DescriptorEntry;
    header_value_match?: DescriptorEntry & { expect_match?: boolean; headers: HeaderMatcher[] };
    request_headers?: { header_name: string; descriptor_key: string };
    query_parameters?: { query_parameter_name: string; descriptor_key: string };
    masked_remote_address?: { v4_prefix_mask_len: number; v6_prefix_mask_len: number };
    extension?: ExprDescriptorExtension;
}
