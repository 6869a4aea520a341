/**
 * GlobalRateLimit's arguments: the gateway it targets, the rules, the service, Redis, the per-value
 * store, monitoring and access policies, each documented with its default (the package schema and
 * docs/package.md are generated from these interfaces).
 */
import * as pulumi from "@pulumi/pulumi";
import { CounterStore } from "../builders/counter-stores";
import { ErrorStatus, FilterLayout, RateLimitHeaders } from "../builders/envoy-filters";
import { GatewayTargetArgs } from "./gateway-target";
import { GatewayAccessLogArgs } from "./gateway-access-log";
import { PerValueStoreArgs } from "./per-value-store";

import { ClientPrefixArgs, PathKeyMode, PerPathLimitsArgs, RateLimitRuleArgs } from "../builders/rule-args";
import { MonitoringArgs } from "./ratelimit-monitoring";
import { PlatformDefaults } from "./platform-defaults";
import { RedisOptionsArgs } from "./redis-options";
import { ServiceLogLevel } from "./service-settings";

/** The envoyproxy/ratelimit service. */
export interface RateLimitServiceOptionsArgs {
    /** Name of its Service and Deployment (the gateway's cluster name is derived from it). Plain, not an output: it names the objects. Defaults to `ratelimit`. */
    name?: string;
    /** Name of its ConfigMap. Defaults to `ratelimit-config`. */
    configName?: string;
    /** gRPC port. Defaults to `8081`. */
    grpcPort?: number;
    /** Image; an output accepted (e.g. chosen by another stack). Defaults to `docker.io/envoyproxy/ratelimit:3fb70258`. */
    image?: pulumi.Input<string>;
    /** Replicas (they share Redis, so limits stay exact). Defaults to `2`. */
    replicas?: number;
    /** Log level. Defaults to `ServiceLogLevel.Warn`. */
    logLevel?: ServiceLogLevel;
    /** `REDIS_POOL_SIZE`: connections per service process. Defaults to `10`. */
    redisPoolSize?: number;
    /** `REDIS_PIPELINE_WINDOW` (Go duration; `0` flushes every write at once). Defaults to `0`. */
    redisPipelineWindow?: string;
    /** `REDIS_PIPELINE_LIMIT`. Defaults to `0`. */
    redisPipelineLimit?: number;
    /** `LOCAL_CACHE_SIZE_IN_BYTES`: cache of over-limit keys per process (0 disables). Defaults to `1048576`. */
    localCacheSizeInBytes?: number;
    /**
     * `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`: a request that one of its limits refuses is not counted
     * against the others it was asked about in the same call, so a client over its own limit (a
     * per-client rule) cannot use up a limit it shares with everyone (a path's limit). Costs the
     * service one more Redis read per call. Calls are per filter: with `counterStore` split the
     * per-value rules are asked in a call of their own. Defaults to `false` (the service's own).
     */
    stopCountingWhenOverLimit?: boolean;
    /** Serve Prometheus metrics on port 9090 (`USE_PROMETHEUS`); `false` turns stats off. Defaults to `false`. */
    prometheus?: boolean;
    /** Global shadow mode (`SHADOW_MODE`): every limit counted and reported, nothing refused. Defaults to `false`. */
    shadowMode?: boolean;
}

/**
 * The rate-limit service, its Redis and the gateway's filter: GlobalRateLimit's arguments, and
 * MeshRateLimit's `global` (which adds its domain preset, access switch and monitoring). Each field
 * documented here once. Plain values, except where a field says an output is accepted: the others
 * decide which objects exist, so `pulumi preview` must know them to list the objects.
 */
export interface GlobalRateLimitOptions {
    /**
     * What a path is counted by. `PathKeyMode.UrlPath`: the path without its query string (Envoy's
     * CEL descriptor `request.url_path`), so no query string gets a counter of its own; in
     * MeshRateLimit the `api` route's paths also count against the per-path catch-all, so no
     * unmatched API path escapes either. `PathKeyMode.Literal`: `:path` as written, query included
     * (the specification's tables): a query such as `?n=1` gets its own counter and escapes every
     * limit; for comparison and for proxies older than Istio 1.24, which lack the CEL extension.
     * Defaults to `PathKeyMode.UrlPath`.
     */
    pathKey?: PathKeyMode;
    /**
     * What makes one client for every per-client counter (`perClientAddress`, `clientCidr.perAddress`,
     * and the fallback counters of long paths, untrusted per-value values and missing per-value
     * fields): the leading bits of its trusted address (Envoy's `masked_remote_address`). Defaults
     * to `{ v4: 32, v6: 64 }`: each IPv4 address, each IPv6 /64 (whoever holds a /64 can use any of
     * its addresses).
     */
    clientPrefix?: ClientPrefixArgs;
    /** Namespace of the service, its ConfigMap and Redis (must exist). Plain, not an output: it places the objects. Defaults to `default`. */
    namespace?: string;
    /**
     * When the service cannot answer (down, unreachable, Redis failing, or slower than `timeout`):
     * `true` refuses the request with HTTP 500 (fail closed, the specification's choice); `false`
     * lets it through unlimited (fail open: on a gateway other teams share, a rate-limit outage then
     * never takes their traffic down with it). A boolean; anything else is refused. Defaults to `true`.
     */
    failureModeDeny?: boolean;
    /**
     * The status of a request refused because the service could not answer (`failureModeDeny`;
     * Envoy's `status_on_error`, Envoy 1.29+): `ErrorStatus.ServiceUnavailable` (503) lets clients
     * and load balancers tell an outage from a bug, `ErrorStatus.TooManyRequests` (429) makes it look
     * like a limit. The specification says only "deny". Only with `failureModeDeny: true`. Defaults
     * to none (Envoy's 500).
     */
    statusOnError?: ErrorStatus;
    /**
     * What the gateway tells clients of their limits. `RateLimitHeaders.Draft03`: every response
     * the service counted, a refusal included, carries `X-RateLimit-Limit`, `X-RateLimit-Remaining`
     * and `X-RateLimit-Reset` of the tightest limit that applied (Envoy's
     * `enable_x_ratelimit_headers`, from the service's answer); a rule with `rateLimitHeaders:
     * false` stays out of them. With `CounterStore.Split` a request counted by both services gets
     * one set from each. `RateLimitHeaders.Off`: none, except for rules with `rateLimitHeaders:
     * true`. Defaults to `RateLimitHeaders.Draft03`, and to `Off` with `service.shadowMode` (which
     * refuses nothing, and then publishes no RateLimit-Policy either).
     */
    rateLimitHeaders?: RateLimitHeaders;
    /**
     * How the filters share the gateway listener. `FilterLayout.PerInstance`: HTTP filters named
     * after this instance's service (`envoy.filters.http.ratelimit/<namespace>/<service.name>`, the
     * pre-limit `envoy.filters.http.local_ratelimit/<namespace>/<service.name>`), descriptors only as
     * `RateLimitPerRoute` under that name, stage 10: any number of instances and programs share one
     * listener, and a request calls only the service of the instance owning its virtual host. Needs
     * Istio 1.25 or later (Envoy 1.33). `FilterLayout.Shared`: the specification's layout (canonical
     * filter names, route and virtual-host `rate_limits`, read by every rate-limit filter on the
     * listener): one instance per listener, for Istio 1.24. Defaults to `FilterLayout.PerInstance`;
     * MeshRateLimit's to `FilterLayout.Shared`, the specification's layout.
     */
    filterLayout?: FilterLayout;
    /** Timeout of the gateway's call to the service (protobuf duration). Defaults to `10s`. */
    timeout?: string;
    /**
     * A pre-limit on the gateway: Envoy's local rate-limit filter before the rate-limit filter, on
     * the same listeners and virtual hosts, with one token bucket per pod for every limit a fixed
     * descriptor names (a rule, a named path): 2 × the limit, refilled by the limit per window. It
     * refuses (429, `x-mesh-ratelimit: pre-limit`) only what the service would refuse too while
     * traffic stays within the limits, so a flood no longer reaches the service. Per-value counters
     * (each path, header value or client address) stay with the service alone, and so does
     * everything in the service's shadow mode (`service.shadowMode`: no pre-limit). A boolean;
     * `false` sends every request to the service. Defaults to `true`.
     */
    preLimit?: boolean;
    /**
     * Where the counters live. `CounterStore.Split`: when the rules make both fixed counters (a named
     * path, a rule without a per-value split) and per-value ones (`perPath.eachPath`,
     * `header.perValue`, `query.perValue`, `perClientAddress`, `clientCidr.perAddress`), the per-value ones go to a
     * service and a Redis of their own (`<service.name>-per-value`, `redis-per-value`), so no flood
     * of new keys can evict, reset or slow a fixed limit (builders/counter-stores.ts).
     * `CounterStore.Single`: the specification's layout, one service and one Redis for all (a flood
     * of new paths can then evict a live fixed counter). Defaults to `CounterStore.Split`.
     */
    counterStore?: CounterStore;
    /** The rate-limit service. Defaults as documented on each field. */
    service?: RateLimitServiceOptionsArgs;
    /** The per-value side of `CounterStore.Split`. Defaults as documented on each field. */
    perValueStore?: PerValueStoreArgs;
    /** Redis. Defaults to one deployed by the component. */
    redis?: RedisOptionsArgs;
}

export interface GlobalRateLimitArgs extends GlobalRateLimitOptions {
    /** Rate-limit domain, written once for both the gateway filter and the service config. Plain, not an output: the config is checked before anything is registered. */
    domain: string;
    /** The gateway whose requests are limited. */
    gateway: GatewayTargetArgs;
    /** Typed rules: what to count (path, header, client address, route) and how much. Plain, not outputs: they decide the objects and are checked before anything is registered. Defaults to none. */
    rules?: RateLimitRuleArgs[];
    /** Per-path counters (every distinct path its own counter). Defaults to none. */
    perPath?: PerPathLimitsArgs;
    /** Descriptor key of each rule's first entry (its value is the rule's name). Defaults to `rule`. */
    ruleKey?: string;
    /**
     * Prefix of the EnvoyFilter names: `<prefix>` (HTTP filter), `<prefix>-svc` (virtual-host
     * actions), `<prefix>-svc-api` (route actions). Defaults to `<namespace>-<service.name>` (unique in
     * the cluster, as the service is) with `FilterLayout.PerInstance`, `filter-ratelimit` (the
     * specification's names) with `FilterLayout.Shared`.
     */
    filterNamePrefix?: string;
    /** Wait for the Deployments to become ready. Defaults to `true`. */
    awaitRollout?: boolean;
    /**
     * Least privilege: when given, an Istio AuthorizationPolicy and a Kubernetes NetworkPolicy let
     * only the gateway call the service's gRPC port, and only the service reach the Redis the
     * component deploys. Defaults to none (any pod may call the service), because the gateway's
     * identity cannot be derived from its selector.
     */
    accessPolicy?: AccessPolicyArgs;
    /**
     * What a platform team looks at: a Grafana dashboard ConfigMap (on by default) and alert rules
     * as a `PrometheusRule` (off by default), generated from the same rules. Defaults as documented
     * on each field.
     */
    monitoring?: MonitoringArgs;
    /**
     * What this instance's virtual hosts do with a platform team's defaults on the same gateway
     * (PlatformRateLimit, deployed by another stack or not at all): `PlatformDefaults.Replace`
     * turns them off on these hosts (this instance's rules replace them), `PlatformDefaults.Merge`
     * keeps them beside this instance's rules. The platform's overrides apply either way. Only with
     * `FilterLayout.PerInstance`. Defaults to `PlatformDefaults.Replace`.
     */
    platformDefaults?: PlatformDefaults;
    /**
     * An access log on the gateway's own pods and ports (an EnvoyFilter appending a file access log
     * to their HTTP connection managers, nothing mesh-wide) in the JSON format `mesh-ratelimit
     * replay` reads and takes from the program: each request's time, method, path, host, client and
     * upstream, and the request headers the rules read (secret ones left out). Defaults to none (the
     * gateway's logs are the mesh's own).
     */
    accessLog?: GatewayAccessLogArgs;
}

/** Who may call the rate-limit service. */
export interface AccessPolicyArgs {
    /**
     * The gateway's mesh identity, `<trust domain>/ns/<namespace>/sa/<service account>` (no
     * `spiffe://` prefix), e.g. `cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account`.
     * The NetworkPolicy admits the gateway's pods (`gateway.selector`) from that namespace.
     */
    gatewayPrincipal: string;
}
