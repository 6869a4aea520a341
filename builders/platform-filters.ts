/**
 * The gateway filters of a platform team's limits (components/platform-ratelimit/component.ts) and the one
 * patch by which a team's GlobalRateLimit turns the platform's defaults off on its own hosts. Pure.
 *
 * Two rate-limit HTTP filters, each with a name no GlobalRateLimit can produce (an instance's
 * filter name always has the form `<canonical>/<namespace>/<name>`):
 * - the overrides filter, early in the chain (`PLATFORM_OVERRIDES_PRIORITY`), with the overrides'
 *   `rate_limits` in the filter's own config: Envoy uses them on every route of the listener unless
 *   a per-route config under this filter's name says otherwise, and nothing the package lets a team
 *   declare writes one there;
 * - the defaults filter, last (`PLATFORM_DEFAULTS_PRIORITY`), the same way with the defaults; a
 *   team's GlobalRateLimit puts `FilterConfig { disabled: true }` under this filter's name on its
 *   own virtual hosts (`defaultsOffPatches`), so Envoy leaves the defaults filter out there.
 *
 * Neither side reads the other's objects: the names are constants of the package, so the stacks
 * deploy and destroy in any order. A `FilterConfig` with `disabled: true` is accepted by Envoy
 * under any name, even with no such filter on the listener (router/per_filter_config.cc: a disabled
 * entry is stored without looking its filter up).
 */
import { DeepReadonly } from "../lib/frozen";
import {
    EnvoyFilterSpec,
    FILTER_PRIORITY,
    FilterTarget,
    HCM_FILTER,
    LOCAL_RATELIMIT_FILTER,
    PER_INSTANCE_STAGE,
    RATELIMIT_FILTER,
    TYPE_URL_PREFIX,
    ratelimitHttpFilter,
} from "./envoy-filters";
import { PER_VALUE_PRIORITY } from "./per-value-filters";
import { PreLimitBucket, preLimitConfig } from "./pre-limit";
import { RateLimitEntry } from "./rate-limit-entries";
import { DisabledFilterConfig, EnvoyFilterPatch } from "./envoy-types";
import { RateLimitHeaders } from "./filter-choices";
import { RETRY_AFTER_HEADER } from "./local-bucket-filter";
import { policyHeaderOption } from "./policy-header";
import { protoDurationSeconds } from "../lib/formats";

/** Where a platform limit comes from. */
export const PlatformSource = {
    /** Applies on every host and route no team's GlobalRateLimit covers. */
    Defaults: "defaults",
    /** Applies everywhere, on top of every team's limits. */
    Overrides: "overrides",
} as const;
export type PlatformSource = (typeof PlatformSource)[keyof typeof PlatformSource];

/** The rate-limit domain of the platform's service (both sources; their descriptor keys keep them apart). */
export const PLATFORM_DOMAIN = "mesh-ratelimit-platform";

/** The HTTP filter names (no `/`, so no GlobalRateLimit instance name equals them). */
export const PLATFORM_FILTER_NAMES: Readonly<Record<PlatformSource, string>> = {
    defaults: `${RATELIMIT_FILTER}.platform-defaults`,
    overrides: `${RATELIMIT_FILTER}.platform-overrides`,
};

/**
 * The pre-limits' HTTP filter names: Envoy's local rate-limit filter, one directly before each
 * platform filter (no `/`, so no GlobalRateLimit's pre-limit name equals them).
 */
export const PLATFORM_PRE_LIMIT_NAMES: Readonly<Record<PlatformSource, string>> = {
    defaults: `${LOCAL_RATELIMIT_FILTER}.platform-defaults`,
    overrides: `${LOCAL_RATELIMIT_FILTER}.platform-overrides`,
};

/** The descriptor key of a platform rule's name (a GlobalRateLimit's rules use `rule`). */
export const PLATFORM_RULE_KEYS: Readonly<Record<PlatformSource, string>> = {
    defaults: "platform_default",
    overrides: "platform_override",
};

/** The descriptor key the per-path limits of each source send the path under. */
export const PLATFORM_PATH_KEYS: Readonly<Record<PlatformSource, string>> = {
    defaults: "platform_default_path",
    overrides: "platform_override_path",
};

/** The EnvoyFilter names (in the gateway's namespace): `platform-ratelimit-defaults`, `platform-ratelimit-overrides`. */
export const PLATFORM_OBJECT_PREFIX = "platform-ratelimit";

/** The overrides filter's EnvoyFilter `priority`: before every GlobalRateLimit's (applied first, so farthest from the router: it runs first). */
export const PLATFORM_OVERRIDES_PRIORITY = FILTER_PRIORITY - 5;

/** The defaults filter's EnvoyFilter `priority`: after every GlobalRateLimit's, so it sits next to the router and runs last. */
export const PLATFORM_DEFAULTS_PRIORITY = PER_VALUE_PRIORITY + 1;

/** Envoy's wrapper of a per-route filter config, with its `disabled` flag. */
export const FILTER_CONFIG_TYPE = `${TYPE_URL_PREFIX}/envoy.config.route.v3.FilterConfig`;

/** What a platform filter needs: where it goes, the service it calls, its descriptors. */
export interface PlatformFilterOptions {
    target: FilterTarget;
    /** Listener ports (empty: every listener of the gateway). */
    ports: readonly number[];
    failureModeDeny: boolean;
    timeout: string;
    clusterName: string;
    authority: string;
    /** The source's `rate_limits`, in the filter's own config. */
    rateLimits: readonly RateLimitEntry[];
    /** Whether clients are told their limits: `X-RateLimit-*` on counted responses, and `policy` on the source's refusals. */
    headersOn?: boolean;
    /** The source's `RateLimit-Policy` value (builders/policy-header.ts); absent: none published. */
    policy?: string;
}

/** One source's HTTP filter: the rate-limit filter under the source's name, its descriptors in its own config. */
export function platformFilter(source: PlatformSource, o: PlatformFilterOptions): EnvoyFilterSpec {
    const spec = ratelimitHttpFilter({
        target: o.target,
        ports: o.ports,
        domain: PLATFORM_DOMAIN,
        failureModeDeny: o.failureModeDeny,
        timeout: o.timeout,
        clusterName: o.clusterName,
        authority: o.authority,
        filterName: PLATFORM_FILTER_NAMES[source],
        // Never read: the filter's own rate_limits take precedence over route and virtual-host ones.
        stage: PER_INSTANCE_STAGE,
        rateLimits: o.rateLimits,
        ...(o.headersOn ? { rateLimitHeaders: RateLimitHeaders.Draft03 } : {}),
        ...(o.headersOn && o.policy !== undefined ? { refusalHeaders: [policyHeaderOption(o.policy)] } : {}),
    });
    return { ...spec, priority: source === PlatformSource.Overrides ? PLATFORM_OVERRIDES_PRIORITY : PLATFORM_DEFAULTS_PRIORITY };
}

/**
 * A source's pre-limit: the local rate-limit filter inserted directly before the source's filter on
 * the same listeners, with the buckets in its own config (a bucket set per listener and gateway
 * pod) and the source's own `rate_limits`, so it builds exactly the descriptors the source's filter
 * sends. Appended to the source's EnvoyFilter, after the filter's insertion.
 */
export function platformPreLimitPatches(
    source: PlatformSource,
    ports: readonly number[],
    buckets: readonly DeepReadonly<PreLimitBucket>[],
    rateLimits: readonly RateLimitEntry[],
    headersOn = false,
): EnvoyFilterPatch[] {
    const listeners = ports.length ? ports.map((portNumber) => ({ portNumber })) : [{}];
    const base = preLimitConfig(buckets, "INCLUDE", rateLimits);
    const retry = { append_action: "OVERWRITE_IF_EXISTS_OR_ADD" as const, header: { key: RETRY_AFTER_HEADER, value: String(preLimitRetryAfter(buckets)) } };
    const config = headersOn ? { ...base, response_headers_to_add: [...(base.response_headers_to_add ?? []), retry] } : base;
    return listeners.map((port): EnvoyFilterPatch => ({
        applyTo: "HTTP_FILTER",
        match: { context: "GATEWAY", listener: { ...port, filterChain: { filter: { name: HCM_FILTER, subFilter: { name: PLATFORM_FILTER_NAMES[source] } } } } },
        patch: { operation: "INSERT_BEFORE", value: { name: PLATFORM_PRE_LIMIT_NAMES[source], typed_config: config } },
    }));
}

/**
 * A pre-limit refusal's `Retry-After`: the seconds after which the slowest of its buckets has a token
 * again (a bucket of L per T refills one token every T / L seconds), at least 1. One value for the
 * filter: Envoy's `response_headers_to_add` is the filter's, not a bucket's.
 */
export function preLimitRetryAfter(buckets: readonly DeepReadonly<PreLimitBucket>[]): number {
    const perToken = buckets.map((b) => (protoDurationSeconds(b.fillInterval) ?? 1) / Math.max(1, b.tokensPerFill));
    return Math.max(1, Math.ceil(Math.max(0, ...perToken)));
}

/**
 * The per-filter config that leaves the platform's defaults filter, and its pre-limit, out of a
 * virtual host's requests (a pre-limit left on would refuse what the defaults no longer limit).
 */
export function defaultsOffConfig(): Record<string, DisabledFilterConfig> {
    return {
        [PLATFORM_FILTER_NAMES.defaults]: { "@type": FILTER_CONFIG_TYPE, disabled: true },
        [PLATFORM_PRE_LIMIT_NAMES.defaults]: { "@type": FILTER_CONFIG_TYPE, disabled: true },
    };
}

/**
 * A team's `VIRTUAL_HOST` MERGE patches that turn the platform's defaults off on its own virtual
 * hosts (`""`: every virtual host of the gateway). Placed in the team's own EnvoyFilter.
 */
export function defaultsOffPatches(virtualHosts: string[]): EnvoyFilterPatch[] {
    return virtualHosts.map((name): EnvoyFilterPatch => ({
        applyTo: "VIRTUAL_HOST",
        match: { context: "GATEWAY", routeConfiguration: { vhost: { name, route: { action: "ANY" } } } },
        patch: { operation: "MERGE", value: { typed_per_filter_config: defaultsOffConfig() } },
    }));
}

/** Whether an HTTP filter name is one of the platform's (by which a model or a check tells the sources apart). */
export function platformSourceOfFilter(name: string): PlatformSource | undefined {
    if (name === PLATFORM_FILTER_NAMES.defaults) return PlatformSource.Defaults;
    if (name === PLATFORM_FILTER_NAMES.overrides) return PlatformSource.Overrides;
    return undefined;
}
