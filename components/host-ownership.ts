/**
 * Who owns a host of a shared gateway, for the one team setting that loosens a platform's limits: a
 * GlobalRateLimit with `platformDefaults: replace` (the default) turns the platform's defaults
 * filter off on its virtual hosts. A team may do that only on its own hosts.
 *
 * A host belongs to the namespaces the platform assigns it to (PlatformRateLimit `teamHosts`, which
 * the platform writes as an annotation on its defaults EnvoyFilter); a host the platform assigns to
 * no one belongs to the namespaces whose VirtualServices bind it to a gateway. A team is the
 * namespace its GlobalRateLimit deploys its service into (`namespace`): a stack that can create
 * Deployments there is that namespace's team.
 *
 * Pure: the cluster's answer comes in as an `OwnershipView` (components/host-ownership-lookup.ts
 * reads it with kubectl at preview and at update).
 */
import { Problem } from "../lib/problems";

/** The annotation of the platform's defaults EnvoyFilter that holds its host assignments: JSON `{ "<namespace>": ["<host>", ...] }`. */
export const TEAM_HOSTS_ANNOTATION = "mesh-ratelimit.io/team-hosts";

/** A VirtualService as the check reads it. */
export interface RoutedHosts {
    namespace: string;
    name: string;
    hosts: string[];
    /** Its `spec.gateways` (`mesh` or none: sidecars only, no gateway). */
    gateways: string[];
}

/** What the cluster says about the gateway's hosts. */
export interface OwnershipView {
    /** The platform's defaults EnvoyFilter on the gateway (`<namespace>/<name>`) and its host assignments; absent when there is none. */
    platform?: { envoyFilter: string; teamHosts: Record<string, string[]> };
    /** The VirtualServices of every namespace. */
    virtualServices: RoutedHosts[];
}

/** The host part of Istio's virtual host name `<host>:<port>`. */
export function hostOfVirtualHost(virtualHost: string): string {
    return virtualHost.slice(0, virtualHost.lastIndexOf(":"));
}

/** The host assignments written on the platform's filter, read back; anything unreadable is no assignment. */
export function teamHostsOf(annotation: string | undefined): Record<string, string[]> {
    if (!annotation) return {};
    try {
        const v = JSON.parse(annotation);
        if (typeof v !== "object" || v === null || Array.isArray(v)) return {};
        const out: Record<string, string[]> = {};
        for (const [ns, hosts] of Object.entries(v)) if (Array.isArray(hosts)) out[ns] = hosts.filter((h): h is string => typeof h === "string");
        return out;
    } catch {
        return {};
    }
}

/** The namespaces that own `host`, and on what ground. Exported for testing. */
export function hostOwners(host: string, view: OwnershipView): { namespaces: string[]; by: "platform" | "virtualService" | "none" } {
    const assigned = Object.entries(view.platform?.teamHosts ?? {})
        .filter(([, hosts]) => hosts.includes(host))
        .map(([ns]) => ns);
    if (assigned.length) return { namespaces: [...new Set(assigned)].sort(), by: "platform" };
    const bound = view.virtualServices.filter((v) => v.hosts.includes(host) && v.gateways.some((g) => g !== "mesh")).map((v) => v.namespace);
    return bound.length ? { namespaces: [...new Set(bound)].sort(), by: "virtualService" } : { namespaces: [], by: "none" };
}

/**
 * The virtual hosts on which `team` may not switch the platform's defaults off, as problems under
 * `gateway.virtualHosts[i]`: none when the gateway has no platform defaults to switch off.
 */
export function hostOwnershipProblems(team: string, virtualHosts: readonly string[], view: OwnershipView): Problem[] {
    const platform = view.platform;
    if (!platform) return [];
    const problems: Problem[] = [];
    virtualHosts.forEach((vh, i) => {
        const host = hostOfVirtualHost(vh);
        const owners = hostOwners(host, view);
        if (owners.namespaces.includes(team)) return;
        const owner =
            owners.by === "platform"
                ? `the platform assigns it to namespace ${owners.namespaces.join(", ")} (PlatformRateLimit teamHosts on EnvoyFilter ${platform.envoyFilter})`
                : owners.by === "virtualService"
                  ? `it belongs to namespace ${owners.namespaces.join(", ")} (VirtualServices binding it to a gateway), not to ${team}`
                  : `no VirtualService of namespace ${team} binds it to a gateway and the platform assigns it to no team`;
        problems.push({
            key: `gateway.virtualHosts[${i}]`,
            value: vh,
            problem: `host ${host} is not this team's: ${owner}, so this instance may not turn the platform's defaults (EnvoyFilter ${platform.envoyFilter}) off on it`,
            fix:
                owners.by === "none"
                    ? `bind ${host} to the gateway with a VirtualService in namespace ${team}, or ask the platform team to assign it to ${team} (PlatformRateLimit teamHosts), or set platformDefaults: "merge" to keep the platform's defaults there`
                    : `remove ${vh} from gateway.virtualHosts (the owner limits its own host), or set platformDefaults: "merge" to keep the platform's defaults there`,
        });
    });
    return problems;
}
