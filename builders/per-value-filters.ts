/**
 * The gateway's EnvoyFilters of the per-value side (builders/counter-stores.ts): a second
 * rate-limit HTTP filter that calls the per-value service, and the descriptors only it reads.
 *
 * - Shared layout: the filter runs at `PER_VALUE_STAGE`; its entries are route and virtual-host
 *   `rate_limits` of that stage, which the fixed filter (stage 0) never reads. A route that has
 *   `rate_limits` of any stage ignores the virtual host's for a filter without per-route config
 *   (Envoy's `vh_rate_limits` OVERRIDE checks the route's whole policy), so every route the rules
 *   patch carries its own per-value entries.
 * - Per-instance layout: the filter runs at `PER_INSTANCE_STAGE` like the fixed one, and its entries
 *   are `RateLimitPerRoute` under its own name (on a route: complete, so they replace the virtual
 *   host's; an empty list makes the filter send nothing there).
 *
 * Pure: no Pulumi runtime, no I/O.
 */
import { DeepReadonly } from "../lib/frozen";
import {
    EnvoyFilterSpec,
    FILTER_PRIORITY,
    RateLimitFilterOptions,
    PER_INSTANCE_STAGE,
    ratelimitHttpFilter,
    routeMergeFilter,
    routePerFilterRateLimits,
    vhostPerFilterRateLimits,
    vhostRateLimitsFilter,
} from "./envoy-filters";
import { PathKeyMode } from "./rule-args";
import { RateLimitEntry, RoutePatch } from "./rate-limit-entries";
import { SideLimits } from "./counter-stores";

/** The per-value filter's `stage` in the shared layout (the fixed filter keeps Envoy's 0). */
export const PER_VALUE_STAGE = 1;

/**
 * The `priority` of the per-value side's EnvoyFilters: after the fixed side's (`FILTER_PRIORITY`),
 * so Istio inserts the per-value filter after the fixed one, nearer the router. A request the
 * fixed limits refuse is answered before the per-value filter runs: its answer never waits for the
 * per-value service, however busy a flood makes it.
 */
export const PER_VALUE_PRIORITY = FILTER_PRIORITY + 1;

/** Where and how the per-value filter goes: the rate-limit filter's options (its call planned by GlobalRateLimit), and where its EnvoyFilters go. */
export interface PerValueFilterOptions extends Omit<RateLimitFilterOptions, "filterName" | "stage"> {
    /** Virtual-host names (`""`: every virtual host of the gateway). */
    virtualHosts: readonly string[];
    perInstance: boolean;
    /** The HTTP filter's name (distinct from the fixed filter's in both layouts). */
    filterName: string;
    /** Prefix of the EnvoyFilter names: `<prefix>` (HTTP filter), `<prefix>-svc`, `<prefix>-svc-api`. */
    prefix: string;
    namespace: string;
}

function withStage(entries: readonly RateLimitEntry[], stage: number): RateLimitEntry[] {
    return entries.map((e) => ({ stage, ...e }));
}

/** The per-value side's EnvoyFilters: the HTTP filter, the virtual-host entries, the route entries. */
export function perValueFilters(side: DeepReadonly<SideLimits>, o: PerValueFilterOptions): { name: string; namespace: string; spec: EnvoyFilterSpec }[] {
    const out: { name: string; namespace: string; spec: EnvoyFilterSpec }[] = [
        {
            name: o.prefix,
            namespace: o.namespace,
            spec: ratelimitHttpFilter({ ...o, stage: o.perInstance ? PER_INSTANCE_STAGE : PER_VALUE_STAGE }),
        },
    ];
    if (side.vhostRateLimits.length) {
        out.push({
            name: `${o.prefix}-svc`,
            namespace: o.namespace,
            spec: o.perInstance
                ? vhostPerFilterRateLimits(o.target, o.filterName, o.domain, o.virtualHosts, side.vhostRateLimits)
                : vhostRateLimitsFilter(o.target, o.virtualHosts, withStage(side.vhostRateLimits, PER_VALUE_STAGE)),
        });
    }
    const routes = perValueRouteFilter(side.routePatches, o);
    if (routes) out.push({ name: `${o.prefix}-svc-api`, namespace: o.namespace, spec: routes });
    return out.map((f) => ({ ...f, spec: { ...f.spec, priority: PER_VALUE_PRIORITY } }));
}

/** The route entries: complete per route (the virtual host's are already in them). */
function perValueRouteFilter(patches: readonly DeepReadonly<RoutePatch>[], o: PerValueFilterOptions): EnvoyFilterSpec | undefined {
    // Per-instance: each list goes as it is (nothing of the virtual host's appended); an empty one
    // still shadows the virtual host's config for this filter, so the route sends nothing here.
    if (o.perInstance) return routePerFilterRateLimits(o.target, o.filterName, o.domain, patches, [], PathKeyMode.UrlPath);
    const withEntries = patches.filter((p) => p.rateLimits.length);
    return routeMergeFilter(o.target, withEntries, (p) => ({ route: { rate_limits: withStage(p.rateLimits, PER_VALUE_STAGE) } }));
}
