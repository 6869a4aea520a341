/**
 * PlatformRateLimit's arguments: what a platform team sets for a gateway that many teams share,
 * each field documented with its default (the package schema and docs/package.md are generated
 * from these interfaces). The rules have GlobalRateLimit's shape.
 */
import { PerPathLimitsArgs, RateLimitRuleArgs } from "../builders/rule-args";
import { RateLimitServiceOptionsArgs } from "./global-ratelimit-args";
import { MonitoringArgs } from "./ratelimit-monitoring";
import { RedisOptionsArgs } from "./redis-options";

/** One set of platform limits: rules and per-path limits, as GlobalRateLimit takes them, on every host and route. */
export interface PlatformLimitsArgs {
    /**
     * Typed rules, as GlobalRateLimit's `rules` (a rule's name is unique across `defaults` and
     * `overrides`); they apply on every host and route of the gateway, so a rule takes no `route`.
     * Defaults to none.
     */
    rules?: RateLimitRuleArgs[];
    /** Every path its own counter, as GlobalRateLimit's `perPath` (the descriptor key is the platform's own; `descriptorKey` is not taken). Defaults to none. */
    perPath?: PerPathLimitsArgs;
}

/** The gateway a platform team runs. */
export interface PlatformGatewayArgs {
    /** Labels of the gateway's pods, e.g. `{ istio: "ingressgateway" }`. Give this or `gatewayApiName`. */
    selector?: Record<string, string>;
    /** Name of a Gateway API `Gateway` (class `istio`) in `namespace`. Give this or `selector`. Defaults to none. */
    gatewayApiName?: string;
    /** Namespace of the gateway's pods, where the EnvoyFilters are created. Defaults to `istio-system`. */
    namespace?: string;
    /**
     * The listener ports the defaults filter goes on (the pods' ports). The overrides filter goes on
     * every HTTP listener of the pods whatever this says, so a server another namespace's Gateway adds
     * on any port meets them. Defaults to every listener of the gateway.
     */
    listenerPorts?: number[];
}

/** How one platform filter calls the platform's service. */
export interface PlatformFilterCallArgs {
    /** `true`: refuse with HTTP 500 when the service cannot answer; `false`: let the request through. Defaults to the component's `failureModeDeny`. */
    failureModeDeny?: boolean;
    /** How long the gateway waits for the service (protobuf duration). Defaults to the component's `timeout`. */
    timeout?: string;
}

/** The two platform filters' calls, each on its own. */
export interface PlatformFiltersArgs {
    /** The overrides filter (a platform's ceiling is often worth failing closed for). Defaults to the component's `failureModeDeny` and `timeout`. */
    overrides?: PlatformFilterCallArgs;
    /** The defaults filter. Defaults to the component's `failureModeDeny` and `timeout`. */
    defaults?: PlatformFilterCallArgs;
}

export interface PlatformRateLimitArgs {
    /** The shared gateway: every host and route on its listeners gets the platform's limits. */
    gateway: PlatformGatewayArgs;
    /**
     * Limits for every host and route that no team's GlobalRateLimit covers: a GlobalRateLimit on a
     * host replaces them there (`platformDefaults: PlatformDefaults.Replace`, its default) or keeps
     * them beside its own rules (`PlatformDefaults.Merge`). Defaults to none.
     */
    defaults?: PlatformLimitsArgs;
    /**
     * Limits on every host and route, on top of every team's limits, that no GlobalRateLimit can turn
     * off or loosen. Defaults to none.
     */
    overrides?: PlatformLimitsArgs;
    /**
     * Hosts the platform assigns to teams: namespace → Gateway hosts (`b.example.com`), e.g.
     * `{ "team-b": ["b.example.com"] }`. Only a GlobalRateLimit deployed in the namespace a host is
     * assigned to may turn the defaults off on it (`platformDefaults: replace`); a host assigned to
     * no one belongs to the namespaces whose VirtualServices bind it to a gateway. Written on the
     * defaults EnvoyFilter, where each team's preview reads it. Defaults to none.
     */
    teamHosts?: Record<string, string[]>;
    /** Namespace of the platform's rate-limit service, its ConfigMap and Redis (must exist). Defaults to `default`. */
    namespace?: string;
    /**
     * When the platform's service cannot answer, for both filters unless `filters` says otherwise:
     * `true` refuses the request with HTTP 500, `false` lets it through (every team's traffic crosses
     * these filters, so an outage of the platform's service would otherwise stop the whole gateway).
     * A boolean. Defaults to `false`.
     */
    failureModeDeny?: boolean;
    /**
     * How long the gateway waits for the platform's service, for both filters unless `filters` says
     * otherwise (protobuf duration). Every request of every team waits for both filters, so a slow
     * platform is everyone's latency: the default is 5× the service's p99 with its store saturated
     * (docs/using-the-package.md). Defaults to `0.05s` (50 ms).
     */
    timeout?: string;
    /** Each filter's own failure mode and timeout, over `failureModeDeny` and `timeout`. Defaults to none (both filters as those say). */
    filters?: PlatformFiltersArgs;
    /**
     * A pre-limit before each platform filter: Envoy's local rate-limit filter with, per gateway pod
     * and listener, a bucket of twice each fixed limit (a rule without a per-client or per-value
     * counter, a named path), refilled at the limit's rate. A flood past such a limit is refused
     * (429, `x-mesh-ratelimit: pre-limit`) without calling the platform's service, while traffic the
     * service would allow never is; per-client and per-value counters have no bucket (the filter's
     * `timeout` and fail mode bound their calls). None in the service's shadow mode. A boolean.
     * Defaults to `true`.
     */
    preLimit?: boolean;
    /** The rate-limit service. `name` defaults to `ratelimit-platform`, `configName` to `ratelimit-platform-config`; the rest as GlobalRateLimit's. */
    service?: RateLimitServiceOptionsArgs;
    /** Redis. Defaults to one deployed by the component (`redis` in `namespace`: give `namespace` a namespace no GlobalRateLimit uses). */
    redis?: RedisOptionsArgs;
    /** The Grafana dashboard and alert rules, as GlobalRateLimit's. Defaults as documented on each field. */
    monitoring?: MonitoringArgs;
}
