/**
 * Pure builders of the EnvoyFilter specs (spec 2.2–2.4, 2.6, 2.7) with the real identifiers of
 * docs/proof/names.md. They return plain objects, shared by the components, the offline renderer, the
 * conformance model and the tests.
 */
import { protoDurationSeconds } from "../lib/formats";
import { PathKeyMode } from "./rule-args";
import { RateLimitEntry, RoutePatch } from "./rate-limit-entries";

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

export interface EnvoyFilterSpec {
    /** The pods the patches apply to (in the filter's namespace; in Istio's root namespace: in every namespace). */
    workloadSelector?: { labels: Record<string, string> };
    /** Or: the Gateway API `Gateway` whose pods they apply to (same namespace as the filter). */
    targetRefs?: { group: string; kind: string; name: string }[];
    /** Order among the EnvoyFilters of a proxy: lower first, default 0 (see `FILTER_PRIORITY`). */
    priority?: number;
    configPatches: Record<string, unknown>[];
}

/**
 * The `priority` of the stack's EnvoyFilters. Istio applies the patches of a proxy in order of
 * priority (lower first), then root namespace first, then creation time. Every `INSERT_BEFORE` of
 * the router puts its filter directly before the router, so a patch applied later sits closer to
 * it. At 10, after the default 0 of other teams' filters (an `ext_authz` inserted before the router,
 * for instance), the rate-limit filter runs after them, just before the router: a request refused by
 * authorization never spends rate-limit quota, and the order no longer depends on creation time.
 * (Istio's own CUSTOM AuthorizationPolicy filter is generated into the chain itself and always runs
 * before any filter inserted before the router.)
 */
export const FILTER_PRIORITY = 10;

/** Which gateway pods a filter reaches: pods with these labels, or the pods of a Gateway API `Gateway`. */
export type FilterTarget = { selector: Record<string, string> } | { gatewayApiName: string };

export const GATEWAY_API_GROUP = "gateway.networking.k8s.io";
/** The label Istio puts on the pods of a Gateway API `Gateway` it deploys (value: the Gateway's name). */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

/** A Gateway server: its port and hosts (`[<namespace>/]<host>`). */
export interface GatewayServerLike {
    port: { number: number };
    hosts: string[];
}

function hostMatches(pattern: string, host: string): boolean {
    if (pattern === "*") return true;
    if (pattern.startsWith("*.")) return host === pattern || (!host.startsWith("*") && host.endsWith(pattern.slice(1)));
    return pattern === host;
}

/**
 * Istio's names of the gateway virtual hosts a VirtualService gets through a Gateway:
 * `<host>:<port>` for each server port and each VirtualService host that a server host admits (the
 * more specific of the two names the virtual host: VirtualService `*` through a server host
 * `shop.example.com` gives `shop.example.com:<port>`). Pure; one source for the Gateway the stack
 * creates and the patches that must name its virtual hosts.
 */
export function gatewayVirtualHosts(servers: GatewayServerLike[], vsHosts: string[]): string[] {
    const out: string[] = [];
    for (const server of servers) {
        for (const raw of server.hosts) {
            const sh = raw.includes("/") ? raw.slice(raw.indexOf("/") + 1) : raw;
            for (const vh of vsHosts) {
                const name = hostMatches(sh, vh) ? vh : hostMatches(vh, sh) ? sh : undefined;
                const full = name === undefined ? undefined : `${name}:${server.port.number}`;
                if (full && !out.includes(full)) out.push(full);
            }
        }
    }
    return out;
}

/**
 * Whether a Gateway server host admits a VirtualService of `vsNamespace`, by its namespace part:
 * `<ns>/<host>` only that namespace's, `./<host>` the Gateway's own namespace's, a namespace part
 * `*` or none every namespace's (Istio, `pickMatchingGatewayHosts`).
 */
export function serverHostAdmits(serverHost: string, gatewayNamespace: string, vsNamespace: string): boolean {
    const i = serverHost.indexOf("/");
    if (i < 0) return true;
    const ns = serverHost.slice(0, i);
    return ns === "*" || (ns === "." ? gatewayNamespace : ns) === vsNamespace;
}

/**
 * Istio's names of the virtual hosts a VirtualService of `vsNamespace` gets through the servers of
 * a Gateway in `gatewayNamespace`: `gatewayVirtualHosts` of the server hosts that admit its namespace.
 */
export function admittedVirtualHosts(servers: GatewayServerLike[], vsHosts: string[], gatewayNamespace: string, vsNamespace: string): string[] {
    const admitting = servers.map((sv) => ({ ...sv, hosts: sv.hosts.filter((h) => serverHostAdmits(h, gatewayNamespace, vsNamespace)) }));
    return gatewayVirtualHosts(admitting, vsHosts);
}

/** The spec fields that pick the filter's pods. */
function targetOf(t: FilterTarget): Pick<EnvoyFilterSpec, "workloadSelector" | "targetRefs"> {
    return "gatewayApiName" in t
        ? { targetRefs: [{ group: GATEWAY_API_GROUP, kind: "Gateway", name: t.gatewayApiName }] }
        : { workloadSelector: { labels: t.selector } };
}

/**
 * The rate-limit filter's own options, declared once: what its typed config says besides where it
 * goes and which service it calls. GlobalRateLimit's plan fills them for the fixed filter and the
 * per-value one (components/global-ratelimit-plan.ts); `ratelimitHttpFilter` writes them.
 */
export interface RateLimitFilterCall {
    domain: string;
    failureModeDeny: boolean;
    /** A protobuf duration. */
    timeout: string;
    /** `status_on_error`; absent: Envoy's 500. */
    statusOnError?: ErrorStatus;
    /** `enable_x_ratelimit_headers`; absent: none (Envoy's default). */
    rateLimitHeaders?: RateLimitHeaders;
}

/** Where the gateway's rate-limit HTTP filter goes and how it reaches the service. */
export interface RateLimitFilterOptions extends RateLimitFilterCall {
    target: FilterTarget;
    /** Listener ports the filter goes on (the Gateway servers' ports); empty: every listener of the gateway. */
    ports: number[];
    /** Istio's outbound cluster of the service's gRPC port. */
    clusterName: string;
    /** Host name of the service (the gRPC authority). */
    authority: string;
    /** The HTTP filter's name. Defaults to `envoy.filters.http.ratelimit` (the shared layout). */
    filterName?: string;
    /** The filter's `stage`; absent: Envoy's 0. */
    stage?: number;
}

/**
 * The global rate-limit HTTP filter, inserted before the router on the gateway (spec 2.3), on the
 * listeners of `ports` only (one patch each). The filter calls the service only for a request that
 * produced descriptors, so on a shared port another team's virtual host (which gets no
 * `rate_limits`) is never limited and never sees this service's failures.
 */
export function ratelimitHttpFilter(o: RateLimitFilterOptions): EnvoyFilterSpec {
    const listeners = o.ports.length ? o.ports.map((portNumber) => ({ portNumber })) : [{}];
    return {
        ...targetOf(o.target),
        priority: FILTER_PRIORITY,
        configPatches: listeners.map((port) => ({
            applyTo: "HTTP_FILTER",
            match: {
                context: "GATEWAY",
                listener: { ...port, filterChain: { filter: { name: HCM_FILTER, subFilter: { name: ROUTER_FILTER } } } },
            },
            patch: {
                operation: "INSERT_BEFORE",
                value: {
                    name: o.filterName ?? RATELIMIT_FILTER,
                    typed_config: {
                        "@type": RATELIMIT_TYPE,
                        domain: o.domain,
                        ...(o.stage !== undefined ? { stage: o.stage } : {}),
                        failure_mode_deny: o.failureModeDeny,
                        ...(o.statusOnError !== undefined ? { status_on_error: { code: o.statusOnError } } : {}),
                        ...(o.rateLimitHeaders === RateLimitHeaders.Draft03 ? { enable_x_ratelimit_headers: "DRAFT_VERSION_03" } : {}),
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
        })),
    };
}

/**
 * `rate_limits` on the named virtual hosts (`<host>:<port>`). The name `""` means every virtual host
 * of the gateway, other teams' hosts included (Istio: an empty name matches any): only for a gateway
 * the stack has to itself.
 */
export function vhostRateLimitsFilter(target: FilterTarget, virtualHosts: string[], rateLimits: RateLimitEntry[]): EnvoyFilterSpec {
    return vhostMergeFilter(target, virtualHosts, { rate_limits: rateLimits });
}

/** One MERGE patch of `value` into each named virtual host of the gateway. */
function vhostMergeFilter(target: FilterTarget, virtualHosts: string[], value: Record<string, unknown>): EnvoyFilterSpec {
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: virtualHosts.map((name) => ({
            applyTo: "VIRTUAL_HOST",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name, route: { action: "ANY" } } } },
            patch: { operation: "MERGE", value },
        })),
    };
}

/**
 * `rate_limits` on named routes. By default a route's own rate_limits replace the virtual host's;
 * with `url-path` each patched route also includes them (`vh_rate_limits: INCLUDE`), so every
 * request on it still counts against the virtual host's limits. Undefined when there is no patch.
 */
export function routeRateLimitsFilter(target: FilterTarget, patches: RoutePatch[], mode: PathKeyMode): EnvoyFilterSpec | undefined {
    return routeMergeFilter(target, patches, (p) => ({
        route: { rate_limits: p.rateLimits },
        ...(mode === PathKeyMode.Literal
            ? {}
            : { typed_per_filter_config: { [RATELIMIT_FILTER]: { "@type": RATELIMIT_PER_ROUTE_TYPE, vh_rate_limits: "INCLUDE" } } }),
    }));
}

/** One gateway `HTTP_ROUTE` MERGE patch per named route, each merging `valueOf(route)`; undefined without routes. */
export function routeMergeFilter(target: FilterTarget, patches: RoutePatch[], valueOf: (p: RoutePatch) => object): EnvoyFilterSpec | undefined {
    if (!patches.length) return undefined;
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: patches.map((p) => ({
            applyTo: "HTTP_ROUTE",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name: p.virtualHost, route: { name: p.route, action: "ANY" } } } },
            patch: { operation: "MERGE", value: valueOf(p) },
        })),
    };
}

/** `RateLimitPerRoute` for one instance's filter: its domain and the only descriptors it sends there. */
export function rateLimitPerRoute(domain: string, rateLimits: RateLimitEntry[]): Record<string, unknown> {
    return { "@type": RATELIMIT_PER_ROUTE_TYPE, domain, rate_limits: rateLimits };
}

/**
 * Per-instance layout: the virtual hosts' descriptors as `RateLimitPerRoute` under the instance's
 * filter name (never as virtual-host `rate_limits`, which every rate-limit filter reads).
 */
export function vhostPerFilterRateLimits(
    target: FilterTarget,
    filterName: string,
    domain: string,
    virtualHosts: string[],
    rateLimits: RateLimitEntry[],
): EnvoyFilterSpec {
    return vhostMergeFilter(target, virtualHosts, { typed_per_filter_config: { [filterName]: rateLimitPerRoute(domain, rateLimits) } });
}

/**
 * The descriptors a patched route sends in the per-instance layout. A route's `RateLimitPerRoute`
 * replaces the virtual host's (Envoy picks the most specific config, and with `rate_limits` set it
 * sends only those), so with `url-path` the virtual host's entries are repeated after the route's
 * (what `vh_rate_limits: INCLUDE` does in the shared layout); `literal`: the route's only (OVERRIDE).
 */
export function routeDescriptors(p: RoutePatch, vhostRateLimits: RateLimitEntry[], mode: PathKeyMode): RateLimitEntry[] {
    return mode === PathKeyMode.Literal ? p.rateLimits : [...p.rateLimits, ...vhostRateLimits];
}

/** Per-instance layout: each patched route's descriptors as `RateLimitPerRoute` under the instance's filter name. */
export function routePerFilterRateLimits(
    target: FilterTarget,
    filterName: string,
    domain: string,
    patches: RoutePatch[],
    vhostRateLimits: RateLimitEntry[],
    mode: PathKeyMode,
): EnvoyFilterSpec | undefined {
    return routeMergeFilter(target, patches, (p) => ({
        typed_per_filter_config: { [filterName]: rateLimitPerRoute(domain, routeDescriptors(p, vhostRateLimits, mode)) },
    }));
}

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
 * `RateLimit-Policy` on the responses of the named virtual hosts and routes (builders/policy-header.ts
 * gives the values): a VIRTUAL_HOST and an HTTP_ROUTE MERGE of `response_headers_to_add`, which Envoy
 * adds to every response of the host or route, refusals included. Undefined when nothing is published.
 */
export function policyHeaderFilter(
    target: FilterTarget,
    vhosts: { name: string; header: Record<string, unknown> }[],
    routes: { virtualHost: string; route: string; header: Record<string, unknown> }[],
): EnvoyFilterSpec | undefined {
    if (!vhosts.length && !routes.length) return undefined;
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: [
            ...vhosts.map((v) => ({
                applyTo: "VIRTUAL_HOST",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: v.name, route: { action: "ANY" } } } },
                patch: { operation: "MERGE", value: { response_headers_to_add: [v.header] } },
            })),
            ...routes.map((r) => ({
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: r.virtualHost, route: { name: r.route, action: "ANY" } } } },
                patch: { operation: "MERGE", value: { response_headers_to_add: [r.header] } },
            })),
        ],
    };
}

/**
 * The LocalRateLimit message body (spec 2.7 table): a bucket of `bucket` tokens refilled every
 * `fillInterval`. A refusal carries `Retry-After`: the fill interval rounded up to whole seconds,
 * by when the bucket has been refilled (the proven Envoy computes no exact value).
 */
export function localBucketValue(bucket: number, fillInterval: string, b: LocalBucketBehaviour = {}): Record<string, unknown> {
    const percent = (runtimeKey: string, numerator: number) => ({ runtime_key: runtimeKey, default_value: { numerator, denominator: "HUNDRED" } });
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

function typedStruct(value: Record<string, unknown>): Record<string, unknown> {
    return { "@type": TYPED_STRUCT_TYPE, type_url: LOCAL_RATELIMIT_TYPE, value };
}

/** Where a workload's local bucket sits. */
export interface LocalBucketOptions {
    /** Pod labels of the workload. */
    selector: Record<string, string>;
    /** The workload's port: its inbound filter chain, and the name of its inbound virtual host `inbound|http|<port>`. */
    port: number;
    bucket: number;
    fillInterval: string;
    /**
     * Absent: the whole filter on the inbound HTTP chain (every route). Present: the filter holds
     * only `stat_prefix` and the bucket is set per route; `[]` means every route of the virtual
     * host, otherwise the named routes.
     */
    routes?: string[];
    /** The HTTP filter's name (per-route config is found by it). Defaults to `envoy.filters.http.local_ratelimit`. */
    filterName?: string;
    /** Headers and shadow mode. Defaults to none and enforced. */
    behaviour?: LocalBucketBehaviour;
}

/**
 * A local token bucket on a workload's sidecar (spec 2.7), in either placement, on the inbound
 * chain of the workload's port only (`listener.portNumber`: for SIDECAR_INBOUND Istio matches it
 * against the inbound filter chain's port, the container port the Service targets).
 */
export function localBucketFilter(o: LocalBucketOptions): EnvoyFilterSpec {
    const filterName = o.filterName ?? LOCAL_RATELIMIT_FILTER;
    const httpFilterPatch = (value: Record<string, unknown>) => ({
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: { portNumber: o.port, filterChain: { filter: { name: HCM_FILTER } } } },
        patch: { operation: "INSERT_BEFORE", value: { name: filterName, typed_config: typedStruct(value) } },
    });
    const selector = { labels: o.selector };
    const value = localBucketValue(o.bucket, o.fillInterval, o.behaviour);
    if (o.routes === undefined) {
        return { workloadSelector: selector, priority: FILTER_PRIORITY, configPatches: [httpFilterPatch(value)] };
    }
    const routeMatches = o.routes.length ? o.routes.map((name) => ({ name, action: "ANY" })) : [{ action: "ANY" }];
    return {
        workloadSelector: selector,
        priority: FILTER_PRIORITY,
        configPatches: [
            httpFilterPatch({ stat_prefix: LOCAL_STAT_PREFIX }),
            ...routeMatches.map((route) => ({
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

/** Whether an EnvoyFilter's HTTP filter value is Envoy's rate-limit filter (by its type or canonical name, whatever its configured name). */
export function isRateLimitFilter(value: any): boolean {
    const tc = value?.typed_config ?? value?.typedConfig;
    const t = tc?.["@type"];
    return (
        value?.name === RATELIMIT_FILTER ||
        t === RATELIMIT_TYPE ||
        (typeof t === "string" && t.endsWith("/envoy.extensions.filters.http.ratelimit.v3.RateLimit"))
    );
}

/** The route or virtual-host `rate_limits` entries a rate-limit filter of `stage` reads (an entry's `stage` defaults to 0). */
export function entriesOfStage(rateLimits: any[] | undefined, stage: number): any[] {
    return (Array.isArray(rateLimits) ? rateLimits : []).filter((e) => Number(e?.stage ?? 0) === stage);
}
