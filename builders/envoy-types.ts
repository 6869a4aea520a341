/**
 * The Envoy and Istio identifiers and the subset of their types this package writes, declared once
 * and in snake_case as Envoy reads them, so a misspelt field does not compile: the filters'
 * canonical names and type URLs, the EnvoyFilter spec and its patches, the filters' typed configs,
 * the rate-limit actions and header matchers (docs/proof/names.md).
 */
export const TYPE_URL_PREFIX = "type.googleapis.com";
export const HCM_FILTER = "envoy.filters.network.http_connection_manager";
export const HCM_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
export const FILE_ACCESS_LOGGER = "envoy.access_loggers.file";
export const FILE_ACCESS_LOG_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.access_loggers.file.v3.FileAccessLog`;
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
    configPatches: EnvoyFilterPatch[];
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
    header_value_match?: DescriptorEntry & { expect_match?: boolean; headers: readonly HeaderMatcher[] };
    request_headers?: { header_name: string; descriptor_key: string };
    query_parameters?: { query_parameter_name: string; descriptor_key: string };
    masked_remote_address?: { v4_prefix_mask_len: number; v6_prefix_mask_len: number };
    extension?: ExprDescriptorExtension;
    metadata?: MetadataDescriptor;
}

/** Envoy's `metadata` action (`config.route.v3.RateLimit.Action.MetaData`): a descriptor from a filter's dynamic metadata. */
export interface MetadataDescriptor {
    descriptor_key: string;
    metadata_key: { key: string; path: readonly { key: string }[] };
    default_value?: string;
    source?: "DYNAMIC" | "ROUTE_ENTRY";
}

/** One `rate_limits` entry (`config.route.v3.RateLimit`) of a virtual host, a route or a filter's own list. */
export interface RateLimitEntry {
    actions: readonly RateLimitAction[];
    /** Envoy's per-descriptor `x_ratelimit_option`: this entry's statuses in the X-RateLimit headers or not. */
    x_ratelimit_option?: "OFF" | "DRAFT_VERSION_03";
}

/** Envoy's runtime percentage (`config.core.v3.RuntimeFractionalPercent`). */
export interface RuntimePercent {
    runtime_key: string;
    default_value: { numerator: number; denominator: "HUNDRED" };
}

/** Envoy's token bucket (`type.v3.TokenBucket`). */
export interface TokenBucket {
    max_tokens: number;
    tokens_per_fill: number;
    fill_interval: string;
}

/** A header to add (`config.core.v3.HeaderValueOption`). */
export interface HeaderValueOption {
    header: { key: string; value: string };
    append?: boolean;
    append_action?: "APPEND_IF_EXISTS_OR_ADD" | "OVERWRITE_IF_EXISTS_OR_ADD";
}

/** The global rate-limit filter's config (`filters.http.ratelimit.v3.RateLimit`). */
export interface HttpRateLimitConfig {
    "@type": string;
    domain: string;
    stage?: number;
    failure_mode_deny: boolean;
    /** A name of Envoy's `type.v3.StatusCode`. */
    status_on_error?: { code: string };
    enable_x_ratelimit_headers?: "DRAFT_VERSION_03";
    /** Headers Envoy adds to the responses this filter refuses (429). */
    response_headers_to_add?: HeaderValueOption[];
    timeout: string;
    rate_limit_service: {
        grpc_service: { envoy_grpc: { cluster_name: string; authority: string } };
        transport_api_version: "V3";
    };
    /** The filter's own descriptors (read before any route's or virtual host's). */
    rate_limits?: readonly RateLimitEntry[];
}

/** The local rate-limit filter's config (`filters.http.local_ratelimit.v3.LocalRateLimit`): the fields written. */
export interface LocalRateLimitConfig {
    "@type"?: string;
    stat_prefix: string;
    token_bucket?: TokenBucket;
    filter_enabled?: RuntimePercent;
    filter_enforced?: RuntimePercent;
    always_consume_default_token_bucket?: boolean;
    rate_limits?: readonly RateLimitEntry[];
    vh_rate_limits?: string;
    response_headers_to_add?: HeaderValueOption[];
    enable_x_ratelimit_headers?: "DRAFT_VERSION_03";
    descriptors?: { entries: { key: string; value?: string }[]; token_bucket: TokenBucket }[];
}

/** Istio's wrapper of an untyped config (`udpa.type.v1.TypedStruct`). */
export interface TypedStruct {
    "@type": string;
    type_url: string;
    value: LocalRateLimitConfig;
}

/** One rule of the header-to-metadata filter (`filters.http.header_to_metadata.v3.Config.Rule`). */
export interface HeaderToMetadataRule {
    header: string;
    on_header_present: { metadata_namespace: string; key: string; type: "NUMBER" };
    on_header_missing?: { metadata_namespace: string; key: string; type: "NUMBER"; value: string };
    remove: boolean;
}

/** The header-to-metadata filter's config. */
export interface HeaderToMetadataConfig {
    "@type": string;
    response_rules: HeaderToMetadataRule[];
}

/** Per-route config of the rate-limit filter (`RateLimitPerRoute`). */
export interface RateLimitPerRouteConfig {
    "@type": string;
    domain?: string;
    rate_limits?: readonly RateLimitEntry[];
    vh_rate_limits?: "INCLUDE";
}

/** A filter turned off for a virtual host or route (`config.route.v3.FilterConfig`). */
export interface DisabledFilterConfig {
    "@type": string;
    disabled: true;
}

/** What `typed_per_filter_config` maps a filter's name to. */
export type PerFilterConfig = RateLimitPerRouteConfig | LocalRateLimitConfig | TypedStruct | DisabledFilterConfig;

/** An HTTP filter inserted into a chain. */
export interface HttpFilter {
    name: string;
    typed_config: HttpRateLimitConfig | LocalRateLimitConfig | TypedStruct | HeaderToMetadataConfig;
}

/** What a `VIRTUAL_HOST` or `HTTP_ROUTE` MERGE writes. */
export interface RouteLevelValue {
    rate_limits?: readonly RateLimitEntry[];
    route?: { rate_limits: readonly RateLimitEntry[] };
    typed_per_filter_config?: Record<string, PerFilterConfig>;
    response_headers_to_add?: HeaderValueOption[];
}

/** Which listener a patch applies to (`listener.filterChain.filter[.subFilter]`). */
export interface ListenerMatch {
    portNumber?: number;
    /** The listener's name (a waypoint's `main_internal`). */
    name?: string;
    /** `name`: the one filter chain of that name (a waypoint's chain of one service and port). */
    filterChain: { name?: string; filter: { name: string; subFilter?: { name: string } } };
}

/** Which virtual host (and route) a patch applies to. */
export interface RouteConfigurationMatch {
    /** The route configuration's name (a waypoint's per-service route configuration is named as its chain). */
    name?: string;
    vhost: { name: string; route: { name?: string; action: "ANY" } };
}

/** One of an EnvoyFilter's `configPatches`, as Istio reads it. */
export type EnvoyFilterPatch =
    | {
          applyTo: "HTTP_FILTER";
          match: { context: PatchContext; listener: ListenerMatch };
          patch: { operation: "INSERT_BEFORE"; value: HttpFilter };
      }
    | {
          applyTo: "VIRTUAL_HOST" | "HTTP_ROUTE";
          match: { context: PatchContext; routeConfiguration: RouteConfigurationMatch };
          patch: { operation: "MERGE"; value: RouteLevelValue };
      }
    | {
          applyTo: "NETWORK_FILTER";
          match: { context: PatchContext; listener: ListenerMatch };
          patch: { operation: "MERGE"; value: { name: string; typed_config: { "@type": string; access_log: AccessLog[] } } };
      };

/** One of the connection manager's access logs (`config.accesslog.v3.AccessLog`), written to a file in a JSON format. */
export interface AccessLog {
    name: string;
    typed_config: {
        "@type": string;
        path: string;
        log_format: { json_format: Record<string, string> };
    };
}

/** Where a patch applies: the gateway's listeners or a sidecar's inbound ones. */
export type PatchContext = "GATEWAY" | "SIDECAR_INBOUND";
