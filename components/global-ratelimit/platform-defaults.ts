/**
 * A team's side of the platform's limits (components/platform-ratelimit/component.ts), in GlobalRateLimit:
 * whether its hosts replace the platform's defaults or keep them (`platformDefaults`), the patches
 * that turn the defaults off on its own virtual hosts, and the names a team may not take because
 * they are the platform's (its domain, its EnvoyFilter names). Nothing here reads the cluster or
 * another stack: the platform's names are constants of the package.
 */
import { EnvoyFilterPatch, FilterLayout } from "../../builders/envoy-filters";
import { PLATFORM_DOMAIN, PLATFORM_OBJECT_PREFIX, defaultsOffPatches } from "../../builders/platform-filters";
import { oneOfProblems } from "../../lib/field-checks";
import { Problem } from "../../lib/problems";

/** What a GlobalRateLimit's hosts do with the platform's defaults. */
export const PlatformDefaults = {
    /** The team's rules replace the platform's defaults on its virtual hosts (the defaults filter is off there). */
    Replace: "replace",
    /** The platform's defaults stay on beside the team's rules: a request is counted by both, the tighter refuses. */
    Merge: "merge",
} as const;
export type PlatformDefaults = (typeof PlatformDefaults)[keyof typeof PlatformDefaults];

/** What the checks and the patches read of GlobalRateLimit's arguments. */
export interface PlatformDefaultsInput {
    domain?: unknown;
    platformDefaults?: unknown;
    filterNamePrefix?: unknown;
}

/**
 * The platform's names a team's GlobalRateLimit would take: the platform's domain, and an
 * EnvoyFilter name prefix that would write (or be read as) the platform's EnvoyFilters.
 * `prefix` is the prefix in use (given or derived from the namespace and service name).
 * Exported for testing.
 */
export function platformNameProblems(a: PlatformDefaultsInput, prefix: string): Problem[] {
    const out: Problem[] = [
        ...oneOfProblems("platformDefaults", a.platformDefaults ?? PlatformDefaults.Replace, Object.values(PlatformDefaults), PlatformDefaults.Replace),
    ];
    if (a.domain === PLATFORM_DOMAIN)
        out.push({
            key: "domain",
            value: a.domain,
            problem:
                "is the platform's rate-limit domain: the platform's overrides and defaults are counted under it, and a team may not count or answer for them",
            fix: "use a domain of your own, e.g. your team's or host's name",
        });
    if (prefix === PLATFORM_OBJECT_PREFIX || prefix.startsWith(`${PLATFORM_OBJECT_PREFIX}-`))
        out.push({
            key: a.filterNamePrefix !== undefined ? "filterNamePrefix" : "namespace",
            value: a.filterNamePrefix ?? prefix,
            problem: `EnvoyFilter names starting '${PLATFORM_OBJECT_PREFIX}' are the platform's (its overrides and defaults filters): this instance would overwrite or shadow them`,
            fix:
                a.filterNamePrefix !== undefined
                    ? `use another filterNamePrefix, e.g. "team-${prefix}"`
                    : "use another namespace or service.name (the prefix is <namespace>-<service.name>), or give filterNamePrefix",
        });
    return out;
}

/**
 * The virtual hosts on which a GlobalRateLimit turns the platform's defaults filter off: with
 * `Replace` (the default) the hosts its `gateway.virtualHosts` lists, never every host of the
 * gateway (with `allVirtualHosts` and no list, none), and only those its namespace owns
 * (components/global-ratelimit/host-ownership.ts, checked against the cluster by the component). Only in the
 * per-instance layout: the shared layout is for Istio 1.24, whose Envoy cannot run the platform's
 * filters (their own `rate_limits`).
 */
export function platformDefaultsOffHosts(a: PlatformDefaultsInput, layout: FilterLayout, virtualHosts: readonly string[]): string[] {
    if (layout !== FilterLayout.PerInstance || a.platformDefaults === PlatformDefaults.Merge) return [];
    return virtualHosts.filter((v) => v !== "");
}

/** The patches a GlobalRateLimit adds to its HTTP filter's EnvoyFilter to turn the platform's defaults off on those hosts. */
export function platformDefaultsPatches(a: PlatformDefaultsInput, layout: FilterLayout, virtualHosts: readonly string[]): EnvoyFilterPatch[] {
    return defaultsOffPatches(platformDefaultsOffHosts(a, layout, virtualHosts));
}
