/**
 * Pure builders of the global rate-limit EnvoyFilter specs (spec 2.2–2.4, 2.6): the HTTP filter, the
 * virtual-host and route patches in either layout, the `RateLimit-Policy` header, with the real
 * identifiers of docs/proof/names.md. They return plain objects, shared by the components, the
 * offline renderer, the conformance model and the tests. The entry of every filter builder: the
 * identifiers (envoy-types.ts), the choices (filter-choices.ts), the target (filter-target.ts), the
 * gateway's virtual hosts (gateway-hosts.ts) and the local bucket (local-bucket-filter.ts) are
 * re-exported from here.
 */
import { DeepReadonly } from "../lib/frozen";
import { PathKeyMode } from "./rule-args";
import { RateLimitEntry, RoutePatch } from "./rate-limit-entries";
import {
    EnvoyFilterPatch,
    EnvoyFilterSpec,
    HeaderValueOption,
    HCM_FILTER,
    RateLimitPerRouteConfig,
    RouteLevelValue,
    RATELIMIT_FILTER,
    RATELIMIT_PER_ROUTE_TYPE,
    RATELIMIT_TYPE,
    ROUTER_FILTER,
} from "./envoy-types";
import { ErrorStatus, RateLimitHeaders } from "./filter-choices";
import { FILTER_PRIORITY, FilterTarget, targetOf } from "./filter-target";

// The roles split into files of their own, re-exported so this stays the one entry of the filters.
export * from "./envoy-types";
export * from "./filter-choices";
export * from "./filter-target";
export * from "./gateway-hosts";
export * from "./local-bucket-filter";

/**
 * The rate-limit filter's own options, declared once: what its typed config says besides where it
 * goes and which service it calls. GlobalRateLimit's plan fills them for the fixed filter and the
 * per-value one (components/global-ratelimit/plan.ts); `ratelimitHttpFilter` writes them.
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
    ports: readonly number[];
    /** Istio's outbound cluster of the service's gRPC port. */
    clusterName: string;
    /** Host name of the service (the gRPC authority). */
    authority: string;
    /** The HTTP filter's name: `envoy.filters.http.ratelimit` (`RATELIMIT_FILTER`) in the shared layout, an instance's own name otherwise. */
    filterName: string;
    /** The filter's `stage`; absent: Envoy's 0. */
    stage?: number;
    /** The filter's own `rate_limits` (read instead of any route's or virtual host's); absent: none. */
    rateLimits?: readonly RateLimitEntry[];
    /** Headers added to the responses the filter refuses (`response_headers_to_add`); absent: none. */
    refusalHeaders?: readonly HeaderValueOption[];
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
        configPatches: listeners.map((port): EnvoyFilterPatch => ({
            applyTo: "HTTP_FILTER",
            match: {
                context: "GATEWAY",
                listener: { ...port, filterChain: { filter: { name: HCM_FILTER, subFilter: { name: ROUTER_FILTER } } } },
            },
            patch: {
                operation: "INSERT_BEFORE",
                value: {
                    name: o.filterName,
                    typed_config: {
                        "@type": RATELIMIT_TYPE,
                        domain: o.domain,
                        ...(o.stage !== undefined ? { stage: o.stage } : {}),
                        failure_mode_deny: o.failureModeDeny,
                        ...(o.statusOnError !== undefined ? { status_on_error: { code: o.statusOnError } } : {}),
                        ...(o.rateLimitHeaders === RateLimitHeaders.Draft03 ? { enable_x_ratelimit_headers: "DRAFT_VERSION_03" } : {}),
                        ...(o.refusalHeaders?.length ? { response_headers_to_add: [...o.refusalHeaders] } : {}),
                        timeout: o.timeout,
                        rate_limit_service: {
                            grpc_service: {
                                envoy_grpc: { cluster_name: o.clusterName, authority: o.authority },
                            },
                            transport_api_version: "V3",
                        },
                        ...(o.rateLimits !== undefined ? { rate_limits: o.rateLimits } : {}),
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
export function vhostRateLimitsFilter(target: FilterTarget, virtualHosts: readonly string[], rateLimits: readonly RateLimitEntry[]): EnvoyFilterSpec {
    return vhostMergeFilter(target, virtualHosts, { rate_limits: rateLimits });
}

/** One MERGE patch of `value` into each named virtual host of the gateway. */
function vhostMergeFilter(target: FilterTarget, virtualHosts: readonly string[], value: RouteLevelValue): EnvoyFilterSpec {
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: virtualHosts.map((name): EnvoyFilterPatch => ({
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
export function routeRateLimitsFilter(target: FilterTarget, patches: readonly DeepReadonly<RoutePatch>[], mode: PathKeyMode): EnvoyFilterSpec | undefined {
    return routeMergeFilter(target, patches, (p) => ({
        route: { rate_limits: p.rateLimits },
        ...(mode === PathKeyMode.Literal
            ? {}
            : { typed_per_filter_config: { [RATELIMIT_FILTER]: { "@type": RATELIMIT_PER_ROUTE_TYPE, vh_rate_limits: "INCLUDE" } } }),
    }));
}

/** One gateway `HTTP_ROUTE` MERGE patch per named route, each merging `valueOf(route)`; undefined without routes. */
export function routeMergeFilter(
    target: FilterTarget,
    patches: readonly DeepReadonly<RoutePatch>[],
    valueOf: (p: DeepReadonly<RoutePatch>) => RouteLevelValue,
): EnvoyFilterSpec | undefined {
    if (!patches.length) return undefined;
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: patches.map((p): EnvoyFilterPatch => ({
            applyTo: "HTTP_ROUTE",
            match: { context: "GATEWAY", routeConfiguration: { vhost: { name: p.virtualHost, route: { name: p.route, action: "ANY" } } } },
            patch: { operation: "MERGE", value: valueOf(p) },
        })),
    };
}

/** `RateLimitPerRoute` for one instance's filter: its domain and the only descriptors it sends there. */
export function rateLimitPerRoute(domain: string, rateLimits: readonly RateLimitEntry[]): RateLimitPerRouteConfig {
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
    virtualHosts: readonly string[],
    rateLimits: readonly RateLimitEntry[],
): EnvoyFilterSpec {
    return vhostMergeFilter(target, virtualHosts, { typed_per_filter_config: { [filterName]: rateLimitPerRoute(domain, rateLimits) } });
}

/**
 * The descriptors a patched route sends in the per-instance layout. A route's `RateLimitPerRoute`
 * replaces the virtual host's (Envoy picks the most specific config, and with `rate_limits` set it
 * sends only those), so with `url-path` the virtual host's entries are repeated after the route's
 * (what `vh_rate_limits: INCLUDE` does in the shared layout); `literal`: the route's only (OVERRIDE).
 */
export function routeDescriptors(p: DeepReadonly<RoutePatch>, vhostRateLimits: readonly RateLimitEntry[], mode: PathKeyMode): readonly RateLimitEntry[] {
    return mode === PathKeyMode.Literal ? p.rateLimits : [...p.rateLimits, ...vhostRateLimits];
}

/** Per-instance layout: each patched route's descriptors as `RateLimitPerRoute` under the instance's filter name. */
export function routePerFilterRateLimits(
    target: FilterTarget,
    filterName: string,
    domain: string,
    patches: readonly DeepReadonly<RoutePatch>[],
    vhostRateLimits: readonly RateLimitEntry[],
    mode: PathKeyMode,
): EnvoyFilterSpec | undefined {
    return routeMergeFilter(target, patches, (p) => ({
        typed_per_filter_config: { [filterName]: rateLimitPerRoute(domain, routeDescriptors(p, vhostRateLimits, mode)) },
    }));
}

/**
 * `RateLimit-Policy` on the responses of the named virtual hosts and routes (builders/policy-header.ts
 * gives the values): a VIRTUAL_HOST and an HTTP_ROUTE MERGE of `response_headers_to_add`, which Envoy
 * adds to every response of the host or route, refusals included. Undefined when nothing is published.
 */
export function policyHeaderFilter(
    target: FilterTarget,
    vhosts: { name: string; header: HeaderValueOption }[],
    routes: { virtualHost: string; route: string; header: HeaderValueOption }[],
): EnvoyFilterSpec | undefined {
    if (!vhosts.length && !routes.length) return undefined;
    return {
        ...targetOf(target),
        priority: FILTER_PRIORITY,
        configPatches: [
            ...vhosts.map((v): EnvoyFilterPatch => ({
                applyTo: "VIRTUAL_HOST",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: v.name, route: { action: "ANY" } } } },
                patch: { operation: "MERGE", value: { response_headers_to_add: [v.header] } },
            })),
            ...routes.map((r): EnvoyFilterPatch => ({
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: r.virtualHost, route: { name: r.route, action: "ANY" } } } },
                patch: { operation: "MERGE", value: { response_headers_to_add: [r.header] } },
            })),
        ],
    };
}
