/**
 * The choices of a rate-limit filter: how filters share a listener (the layout, the per-instance
 * stage and names), the status on the service's failure, the rate-limit headers, and the
 * specification's EnvoyFilter names.
 */
/**
 * How a GlobalRateLimit's filters share a gateway listener with other rate-limit filters.
 *
 * - `per-instance`: the HTTP filters carry names of their own (`instanceFilterName`) and the
 *   descriptors go only into `typed_per_filter_config` under those names (`RateLimitPerRoute`
 *   `{domain, rate_limits}` on the instance's virtual hosts and routes); the rate-limit filter runs
 *   at `PER_INSTANCE_STAGE`, so it never reads another filter's route or virtual-host `rate_limits`
 *   (stage 0). Any number of instances, from any number of programs, share one listener; each
 *   request calls only the service of the instance that owns its virtual host. Needs Envoy 1.33
 *   (`RateLimitPerRoute.rate_limits`), i.e. Istio 1.25 or later.
 * - `shared`: the specification's layout (spec 2.3–2.6): the canonical filter names and route and
 *   virtual-host `rate_limits`, which every rate-limit filter of stage 0 on the listener reads. One
 *   instance per listener; works on Istio 1.24.
 */
export const FilterLayout = {
    PerInstance: "per-instance",
    Shared: "shared",
} as const;
export type FilterLayout = (typeof FilterLayout)[keyof typeof FilterLayout];

/**
 * The rate-limit filter's `stage` in the per-instance layout (Envoy allows 0..10). Route and
 * virtual-host `rate_limits` of other stages are never read by it; everything hand-written (and the
 * shared layout) uses stage 0, the default. Its own descriptors come from `RateLimitPerRoute`
 * under its name, where Envoy ignores the stage.
 */
export const PER_INSTANCE_STAGE = 10;

/** The earliest Istio release whose Envoy (1.33) reads `RateLimitPerRoute.rate_limits`. */
export const PER_INSTANCE_MIN_ISTIO = "1.25";

/**
 * The HTTP filter name of one instance: `<canonical name>/<namespace>/<name>`, e.g.
 * `envoy.filters.http.ratelimit/team-a/ratelimit`. Envoy finds per-route config by the filter's
 * configured name (no fallback to the canonical name since 1.32), so two filters named apart never
 * read each other's `typed_per_filter_config`. Namespace and name are DNS names (no `/`), so two
 * different pairs never give the same name.
 */
export function instanceFilterName(canonical: string, namespace: string, name: string): string {
    return `${canonical}/${namespace}/${name}`;
}

/**
 * The status Envoy answers with when the rate-limit service cannot answer and `failure_mode_deny`
 * is on (`status_on_error`, Envoy 1.29+). The specification says only that the request is denied;
 * Envoy's default is 500. Names of Envoy's `type.v3.StatusCode`.
 */
export const ErrorStatus = {
    /** 500, Envoy's default. */
    InternalServerError: "InternalServerError",
    /** 503: a client or load balancer may retry elsewhere. */
    ServiceUnavailable: "ServiceUnavailable",
    /** 429, as if the limit had been reached. */
    TooManyRequests: "TooManyRequests",
} as const;
export type ErrorStatus = (typeof ErrorStatus)[keyof typeof ErrorStatus];

/** The rate-limit headers a filter adds to the responses it counts (Envoy's `enable_x_ratelimit_headers`). */
export const RateLimitHeaders = {
    /**
     * `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (draft-polli-ratelimit-headers-03)
     * of the tightest limit that applied to the request, on every response it counted, refusals included.
     */
    Draft03: "draft-03",
    /** None. */
    Off: "off",
} as const;
export type RateLimitHeaders = (typeof RateLimitHeaders)[keyof typeof RateLimitHeaders];

/** Envoy's enum value of a `RateLimitHeaders` choice. */
export function xRateLimitHeadersOf(h: RateLimitHeaders): "DRAFT_VERSION_03" | "OFF" {
    return h === RateLimitHeaders.Draft03 ? "DRAFT_VERSION_03" : "OFF";
}

/** metadata.name of each filter (spec 2.2). */
export const FILTER_NAMES = {
    global: "filter-ratelimit",
    vhostActions: "filter-ratelimit-svc",
    routeAction: "filter-ratelimit-svc-api",
    local: "filter-local-ratelimit-svc",
} as const;
