/**
 * The local token bucket on a workload's sidecar (spec 2.7), or on an ambient mesh on the waypoint
 * that serves the workload's Service: the LocalRateLimit message and the EnvoyFilter that places it
 * on the inbound chain, for the whole chain or per route.
 */
import { protoDurationSeconds } from "../lib/formats";
import {
    EnvoyFilterPatch,
    ListenerMatch,
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
import { FILTER_PRIORITY, GATEWAY_API_GROUP } from "./filter-target";

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

/**
 * On an ambient mesh, the waypoint a bucket goes on and the one chain of it: Istio's waypoint puts
 * each service port's HTTP traffic on its own filter chain of the `main_internal` listener, named
 * `inbound-vip|<port>|http|<host>`, whose route configuration has the same name and one virtual
 * host `inbound|http|<port>` (pilot/pkg/networking/core/listener_waypoint.go).
 */
export interface WaypointPlacement {
    /** The waypoint `Gateway` (class `istio-waypoint`) in the filter's namespace. */
    readonly name: string;
    /** The Service's host, `<service>.<namespace>.svc.<cluster domain>`. */
    readonly host: string;
}

/** The waypoint's listener that holds every service's chain (the HBONE-terminating listener is `connect_terminate`). */
export const WAYPOINT_LISTENER = "main_internal";

/** The Service label that makes a waypoint serve it (in-mesh traffic), and the one that sends the ingress's traffic to it too. */
export const USE_WAYPOINT_LABEL = "istio.io/use-waypoint";
export const INGRESS_USE_WAYPOINT_LABEL = "istio.io/ingress-use-waypoint";

/** A waypoint as Istio's waypoint documentation writes one: class `istio-waypoint`, one HBONE listener `mesh` on 15008. */
export function waypointGatewaySpec(): { gatewayClassName: string; listeners: { name: string; port: number; protocol: "HBONE" }[] } {
    return { gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] };
}

/** The name of a waypoint's HTTP filter chain (and route configuration) of one service port. */
export function waypointChainName(host: string, port: number): string {
    return `inbound-vip|${port}|http|${host}`;
}

/** A workload's local bucket, resolved: where it sits and how it behaves, every default filled in (components/local-ratelimit/component.ts resolves it). */
export interface ResolvedLocalBucket {
    /** Pod labels of the workload (on its sidecar); absent on ambient, where `waypoint` places it. */
    readonly selector?: Readonly<Record<string, string>>;
    /** Ambient: the waypoint and the Service's chain on it. */
    readonly waypoint?: WaypointPlacement;
    /**
     * The workload's port: its inbound filter chain, and the name of its inbound virtual host
     * `inbound|http|<port>` (on ambient: the Service's port, which names the waypoint's chain).
     */
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

/** Where the patches match: the sidecar's inbound chain of the port, or the waypoint's one chain of the Service's port. */
function bucketMatches(o: ResolvedLocalBucket): { listener: ListenerMatch; routeConfig: Pick<RouteConfigurationMatch, "name"> } {
    const filter = { name: HCM_FILTER };
    if (!o.waypoint) return { listener: { portNumber: o.port, filterChain: { filter } }, routeConfig: {} };
    const chain = waypointChainName(o.waypoint.host, o.port);
    return { listener: { name: WAYPOINT_LISTENER, filterChain: { name: chain, filter } }, routeConfig: { name: chain } };
}

/** The spec fields that pick the proxies: the workload's pods by label, or the waypoint by name (`targetRefs`). */
function bucketTarget(o: ResolvedLocalBucket): Pick<EnvoyFilterSpec, "workloadSelector" | "targetRefs"> {
    if (o.waypoint) return { targetRefs: [{ group: GATEWAY_API_GROUP, kind: "Gateway", name: o.waypoint.name }] };
    return { workloadSelector: { labels: { ...o.selector } } };
}

/**
 * A local token bucket on a workload's sidecar (spec 2.7), in either placement, on the inbound
 * chain of the workload's port only (`listener.portNumber`: for SIDECAR_INBOUND Istio matches it
 * against the inbound filter chain's port, the container port the Service targets). On ambient the
 * same patches, in the same SIDECAR_INBOUND context (the one Istio applies to a waypoint's inbound
 * chains), go to the waypoint by `targetRefs`, each scoped by name to the Service's own chain and
 * route configuration: never the HBONE-terminating listener, never another service's chain.
 */
export function localBucketFilter(o: ResolvedLocalBucket): EnvoyFilterSpec {
    const filterName = o.httpFilterName;
    const m = bucketMatches(o);
    const httpFilterPatch = (value: LocalRateLimitConfig): EnvoyFilterPatch => ({
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_INBOUND", listener: m.listener },
        patch: { operation: "INSERT_BEFORE", value: { name: filterName, typed_config: typedStruct(value) } },
    });
    const target = bucketTarget(o);
    const value = localBucketValue(o.bucket, o.fillInterval, o.behaviour);
    if (o.routes === undefined) {
        return { ...target, priority: FILTER_PRIORITY, configPatches: [httpFilterPatch(value)] };
    }
    const routeMatches: RouteConfigurationMatch["vhost"]["route"][] = o.routes.length ? o.routes.map((name) => ({ name, action: "ANY" })) : [{ action: "ANY" }];
    return {
        ...target,
        priority: FILTER_PRIORITY,
        configPatches: [
            httpFilterPatch({ stat_prefix: LOCAL_STAT_PREFIX }),
            ...routeMatches.map((route): EnvoyFilterPatch => ({
                applyTo: "HTTP_ROUTE",
                match: { context: "SIDECAR_INBOUND", routeConfiguration: { ...m.routeConfig, vhost: { name: `inbound|http|${o.port}`, route } } },
                patch: {
                    operation: "MERGE",
                    value: { typed_per_filter_config: { [filterName]: typedStruct(value) } },
                },
            })),
        ],
    };
}
