/**
 * MODEL: what the API server would refuse of a program's own objects under the ownership rule
 * (builders/host-ownership-rule.ts, the rule PlatformRateLimit's admission policy enforces): each
 * team switch of the platform's defaults on a host that the platform in the same program does not
 * assign to the switching GlobalRateLimit's namespace. `mesh-ratelimit explain` and `replay` refuse
 * such a program (prove/simulate.ts), as a team's preview against the cluster and the API server
 * would; a program without the platform's defaults filter has nothing to check. Pure.
 */
import { OwnershipView, RoutedHosts, ServingGateway, platformOfFilter, switchRefusal, teamSwitches } from "../builders/host-ownership-rule";
import { PLATFORM_OBJECT_PREFIX, PlatformSource } from "../builders/platform-filters";
import { K8sObject } from "../lib/k8s-object";

/** The routes and gateways among the objects, as the rule reads them (route-bound ownership). */
function routesAndGateways(objects: K8sObject[]): { routes: RoutedHosts[]; gateways: ServingGateway[] } {
    const ns = (o: K8sObject) => String(o.metadata.namespace ?? "default");
    const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
    const routes = objects
        .filter((o) => o.kind === "VirtualService")
        .map((o): RoutedHosts => ({ namespace: ns(o), name: o.metadata.name, hosts: list(o.spec?.hosts), gateways: list(o.spec?.gateways) }));
    const gateways = objects
        .filter((o) => o.kind === "Gateway" && String(o.apiVersion).startsWith("networking.istio.io/"))
        .map((o): ServingGateway => ({
            kind: "Gateway",
            namespace: ns(o),
            name: o.metadata.name,
            hosts: (Array.isArray(o.spec?.servers) ? o.spec.servers : []).flatMap((s: any) => list(s?.hosts)),
        }));
    return { routes, gateways };
}

/** One refused switch: where, and why (the rule's words). */
export interface RefusedSwitch {
    envoyFilter: string;
    team: string;
    virtualHost: string;
    reason: string;
    fix: string;
}

/** The switches of the program's GlobalRateLimits that the ownership rule refuses, against the program's own platform. */
export function refusedSwitches(objects: K8sObject[]): RefusedSwitch[] {
    const filters = objects.filter((o) => o.kind === "EnvoyFilter");
    const platforms = filters.filter((o) => o.metadata.name === `${PLATFORM_OBJECT_PREFIX}-${PlatformSource.Defaults}`);
    if (!platforms.length) return [];
    const { routes, gateways } = routesAndGateways(objects);
    const out: RefusedSwitch[] = [];
    for (const p of platforms) {
        const namespace = p.metadata.namespace ?? "default";
        const view: OwnershipView = { platform: platformOfFilter(p), virtualServices: routes, gateways };
        for (const s of teamSwitches(filters.filter((f) => (f.metadata.namespace ?? "default") === namespace && f !== p))) {
            if (s.team === undefined) continue;
            const refusal = switchRefusal(s.team, s.virtualHost, view);
            if (refusal) out.push({ envoyFilter: s.envoyFilter, team: s.team, virtualHost: s.virtualHost, ...refusal });
        }
    }
    return out;
}

/** The refusal's text, as `explain` says it. */
export function refusedSwitchText(r: RefusedSwitch): string {
    return `EnvoyFilter ${r.envoyFilter} (namespace ${r.team}'s GlobalRateLimit) turns the platform's defaults off on ${r.virtualHost || "every virtual host"}, which the cluster refuses (the team's preview, and the platform's admission policy at the API server, rule defaults-switch-host): ${r.reason}; fix: ${r.fix}`;
}

/** What `explain` says of a program the cluster would refuse; undefined when it would not. */
export function programRefusal(objects: K8sObject[]): string | undefined {
    const refused = refusedSwitches(objects);
    return refused.length ? `the cluster would refuse this program:\n${refused.map((r) => `  - ${refusedSwitchText(r)}`).join("\n")}` : undefined;
}
