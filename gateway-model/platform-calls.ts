/**
 * MODEL: the platform's rate-limit calls for one request on a gateway (PlatformRateLimit's two
 * filters, read through the shared-listener model of gateway-model/listener.ts), each descriptor with
 * the limit the platform's service config gives it. A team's own filters are left to the gateway
 * model; this only adds the platform's. Pure.
 */
import { isRateLimitFilter, patchesOf, workloadLabelsOf } from "../builders/rendered-config";
import { platformSourceOfFilter, PLATFORM_RULE_KEYS } from "../builders/platform-filters";
import { K8sObject } from "../lib/k8s-object";
import { lookupLimit } from "./evaluate";
import { listenerCalls, listenerModel } from "./listener";
import { DescriptorExplanation, Entry } from "./model";
import { LimitSource, sourceOfCall } from "./platform-sources";
import { readConfig } from "./read-rendered";

/** One platform filter on a request: what it sends (none when it is off on this host or matches nothing). */
export interface PlatformCall {
    source: Exclude<LimitSource, "team">;
    /** The filter is switched off here (`FilterConfig{disabled}`: a team's limits replace the defaults on its host). */
    disabled: boolean;
    descriptors: DescriptorExplanation[];
    /** Its counted responses carry X-RateLimit-* (the filter's `enable_x_ratelimit_headers`). */
    rateLimitHeaders: boolean;
    /** The headers its refusals carry (`RateLimit-Policy` of the source). */
    refusalHeaders: Record<string, string>;
}

/** Whether the objects put any platform filter on pods `labels`. */
export function hasPlatformFilter(objects: K8sObject[], labels: Record<string, string>): boolean {
    return objects.some(
        (o) =>
            o.kind === "EnvoyFilter" &&
            Object.entries(workloadLabelsOf(o)).every(([k, v]) => labels[k] === v) &&
            patchesOf(o).some((p) => isRateLimitFilter(p.value) && p.name !== undefined && platformSourceOfFilter(p.name) !== undefined),
    );
}

/** The rule a platform descriptor counts for (`platform override <name>`, `platform default <name>`), else undefined. */
export function platformRuleOf(entries: Entry[]): string | undefined {
    const first = entries[0];
    if (first?.key === PLATFORM_RULE_KEYS.overrides) return `platform override ${first.value}`;
    if (first?.key === PLATFORM_RULE_KEYS.defaults) return `platform default ${first.value}`;
    return undefined;
}

/**
 * The platform's calls, in chain order (overrides first, defaults last), for a request on
 * `virtualHost` (`<host>:<port>`) and `route` of the gateway's pods `labels`.
 */
export function platformCalls(
    objects: K8sObject[],
    gw: { port: number; labels: Record<string, string>; virtualHost: string; route: string },
    req: { path: string; headers?: Record<string, string>; clientAddress?: string },
): PlatformCall[] {
    const envoyFilters = objects.filter((o) => o.kind === "EnvoyFilter");
    const namespaces = [...new Set(envoyFilters.map((o) => String(o.metadata.namespace ?? "default")))];
    const out: PlatformCall[] = [];
    for (const namespace of namespaces) {
        const layout = { port: gw.port, podLabels: gw.labels, namespace, virtualHosts: [{ name: gw.virtualHost, routes: [gw.route] }] };
        const m = listenerModel(envoyFilters, layout);
        for (const c of listenerCalls(m, { virtualHost: gw.virtualHost, route: gw.route, ...req })) {
            const source = sourceOfCall(c);
            if (source === "team" || out.some((x) => x.source === source)) continue;
            const config = readConfig(objects, c.filter.cluster);
            // Each descriptor's cost read from the rendered platform filter, as for a team's (gateway-model/explain.ts).
            const descriptors = c.descriptors.map((d, i) => {
                const hitsAddend = c.hitsAddends[i];
                return { ...lookupLimit(config, c.domain, d), ...(hitsAddend !== undefined ? { hitsAddend } : {}) };
            });
            out.push({
                source,
                disabled: c.from === "disabled here",
                descriptors,
                rateLimitHeaders: c.filter.rateLimitHeaders === true,
                refusalHeaders: c.filter.refusalHeaders ?? {},
            });
        }
    }
    return out.sort((a, b) => (a.source === "platform override" ? 0 : 1) - (b.source === "platform override" ? 0 : 1));
}
