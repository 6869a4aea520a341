/**
 * Pure builders of the EnvoyFilter specs (spec 2.2–2.4, 2.6, 2.7) with the real identifiers of
 * docs/names.md. They return plain objects, shared by the components, the offline renderer, the
 * conformance model and the tests.
 */
import {
    DESCRIPTOR_KEY,
    StackSettings,
    gatewayVhostName,
    inboundVhostName,
    ratelimitClusterName,
    ratelimitHost,
} from "./settings";

export const TYPE_URL_PREFIX = "type.googleapis.com";
export const HCM_FILTER = "envoy.filters.network.http_connection_manager";
export const ROUTER_FILTER = "envoy.filters.http.router";
export const RATELIMIT_FILTER = "envoy.filters.http.ratelimit";
export const LOCAL_RATELIMIT_FILTER = "envoy.filters.http.local_ratelimit";
export const RATELIMIT_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.ratelimit.v3.RateLimit`;
export const LOCAL_RATELIMIT_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`;
export const TYPED_STRUCT_TYPE = `${TYPE_URL_PREFIX}/udpa.type.v1.TypedStruct`;
export const RATELIMIT_PER_ROUTE_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute`;
/** Envoy's CEL rate-limit descriptor extension (compiled into Istio's proxy since 1.24). */
export const EXPR_DESCRIPTOR_EXTENSION = "envoy.rate_limit_descriptors.expr";
export const EXPR_DESCRIPTOR_TYPE = `${TYPE_URL_PREFIX}/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor`;
/** CEL attribute: the request path without its query string (`request.path` keeps the query). */
export const URL_PATH_EXPRESSION = "request.url_path";
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

function gatewaySelector(s: StackSettings): EnvoyFilterSpec["workloadSelector"] {
    return { labels: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value } };
}

/** Spec 2.3: the global rate-limit HTTP filter, inserted before the router on the gateway. */
export function globalRateLimitFilter(s: StackSettings): EnvoyFilterSpec {
    return {
        workloadSelector: gatewaySelector(s),
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
                            domain: s.global.domain,
                            failure_mode_deny: s.global.failureModeDeny,
                            timeout: s.global.timeout,
                            rate_limit_service: {
                                grpc_service: {
                                    envoy_grpc: { cluster_name: ratelimitClusterName(s), authority: ratelimitHost(s) },
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

/**
 * The action that sends the request's path as descriptor PATH.
 * `url-path`: the path without its query (CEL `request.url_path`), so `/productpage?x=1` counts
 * against `/productpage`. `literal`: spec 2.4's `request_headers` on `:path`, query included.
 */
export function pathDescriptorAction(s: StackSettings): Record<string, unknown> {
    if (s.global.pathKey === "literal") {
        return { request_headers: { header_name: ":path", descriptor_key: DESCRIPTOR_KEY } };
    }
    return {
        extension: {
            name: EXPR_DESCRIPTOR_EXTENSION,
            typed_config: { "@type": EXPR_DESCRIPTOR_TYPE, descriptor_key: DESCRIPTOR_KEY, text: URL_PATH_EXPRESSION },
        },
    };
}

/**
 * The regex the route's `header_value_match` applies to `:path` (which carries the query). With
 * `url-path` the configured regex (on the path alone) may be followed by an optional `?query`, so
 * `/api/v1/products/7?a=b` still counts against the shared `api` limit.
 */
export function apiPathRegex(s: StackSettings, regex: string): string {
    return s.global.pathKey === "literal" ? regex : `(?:${regex})(?:\\?.*)?`;
}

/** Spec 2.4: every route of every gateway virtual host sends its path as descriptor PATH. */
export function virtualHostActions(s: StackSettings): EnvoyFilterSpec {
    return {
        workloadSelector: gatewaySelector(s),
        configPatches: [
            {
                applyTo: "VIRTUAL_HOST",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "", route: { action: "ANY" } } } },
                patch: {
                    operation: "MERGE",
                    value: {
                        rate_limits: [{ actions: [pathDescriptorAction(s)] }],
                    },
                },
            },
        ],
    };
}

/**
 * Spec 2.6 (variant A): on the named route, a path fully matching the regex sends PATH=<value>.
 * By default a route's own rate_limits replace the virtual host's, so a path on that route that
 * does not match the regex (`/api/v1/products/100`) would send nothing. With `url-path` the route
 * also includes the virtual host's (`vh_rate_limits: INCLUDE`): every request on it also counts
 * against its per-path limit.
 */
export function routeAction(s: StackSettings): EnvoyFilterSpec | undefined {
    const api = s.global.apiRoute;
    if (!api) return undefined;
    return {
        workloadSelector: gatewaySelector(s),
        configPatches: [
            {
                applyTo: "HTTP_ROUTE",
                match: {
                    context: "GATEWAY",
                    routeConfiguration: { vhost: { name: gatewayVhostName(s), route: { name: api.route, action: "ANY" } } },
                },
                patch: {
                    operation: "MERGE",
                    value: {
                        route: {
                            rate_limits: [
                                {
                                    actions: [
                                        {
                                            header_value_match: {
                                                descriptor_key: DESCRIPTOR_KEY,
                                                descriptor_value: api.descriptorValue,
                                                headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: apiPathRegex(s, api.regex) } }],
                                            },
                                        },
                                    ],
                                },
                            ],
                        },
                        ...(s.global.pathKey === "literal"
                            ? {}
                            : { typed_per_filter_config: { [RATELIMIT_FILTER]: { "@type": RATELIMIT_PER_ROUTE_TYPE, vh_rate_limits: "INCLUDE" } } }),
                    },
                },
            },
        ],
    };
}

/** The LocalRateLimit message body (spec 2.7 table). */
export function localRateLimitValue(s: StackSettings): Record<string, unknown> {
    const percent = (runtimeKey: string) => ({ runtime_key: runtimeKey, default_value: { numerator: 100, denominator: "HUNDRED" } });
    return {
        stat_prefix: LOCAL_STAT_PREFIX,
        token_bucket: { max_tokens: s.local.bucket, tokens_per_fill: s.local.bucket, fill_interval: s.local.fillInterval },
        // Both default to 0 % when absent, which would enforce nothing (istio/istio#42664).
        filter_enabled: percent("local_rate_limit_enabled"),
        filter_enforced: percent("local_rate_limit_enforced"),
        response_headers_to_add: [{ append: false, header: { key: LOCAL_RATE_LIMIT_HEADER, value: "true" } }],
    };
}

function typedStruct(value: Record<string, unknown>): Record<string, unknown> {
    return { "@type": TYPED_STRUCT_TYPE, type_url: LOCAL_RATELIMIT_TYPE, value };
}

/** Spec 2.7: local token bucket on the selected workload's sidecar, in either placement. */
export function localRateLimitFilter(s: StackSettings): EnvoyFilterSpec {
    const httpFilterPatch = (value: Record<string, unknown>) => ({
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: { filterChain: { filter: { name: HCM_FILTER } } } },
        patch: { operation: "INSERT_BEFORE", value: { name: LOCAL_RATELIMIT_FILTER, typed_config: typedStruct(value) } },
    });
    const selector = { labels: { app: s.local.serviceLabel } };
    if (s.local.placement === "all-routes") {
        return { workloadSelector: selector, configPatches: [httpFilterPatch(localRateLimitValue(s))] };
    }
    return {
        workloadSelector: selector,
        configPatches: [
            httpFilterPatch({ stat_prefix: LOCAL_STAT_PREFIX }),
            {
                applyTo: "HTTP_ROUTE",
                match: { context: "SIDECAR_INBOUND", routeConfiguration: { vhost: { name: inboundVhostName(s), route: { action: "ANY" } } } },
                patch: {
                    operation: "MERGE",
                    value: { typed_per_filter_config: { [LOCAL_RATELIMIT_FILTER]: typedStruct(localRateLimitValue(s)) } },
                },
            },
        ],
    };
}
