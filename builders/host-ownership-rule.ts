/**
 * The one rule of who owns a host of a shared gateway, for the one switch that loosens a platform's
 * limits: a team's `FilterConfig { disabled: true }` under the platform's defaults filter on a
 * virtual host (builders/platform-filters.ts `defaultsOffPatches`). Every reader runs this rule:
 * a team's preview (components/global-ratelimit/component.ts), the platform's preview
 * (components/platform-ratelimit/platform-switches.ts), `mesh-ratelimit explain` and `replay` on a program's own
 * objects (gateway-model/admission-check.ts), and the API server, whose admission policy is
 * generated from the same assignments (builders/admission-policy.ts).
 *
 * A host is a team's (a namespace's) when the platform assigns it (PlatformRateLimit `teamHosts`).
 * A host assigned to no one is no one's, unless the platform opts into route-bound ownership
 * (`routeBoundOwnership`): then it belongs to the namespaces whose route binds it to a gateway that
 * exists and serves that host (an Istio VirtualService bound to an Istio Gateway, a Gateway API
 * HTTPRoute to a Gateway API Gateway). Pure: the cluster's or the program's facts come in as an
 * `OwnershipView`.
 */
import { PLATFORM_FILTER_NAMES, PLATFORM_PRE_LIMIT_NAMES } from "./platform-filters";
import { RATELIMIT_FILTER } from "./envoy-types";
import { namespacedName, patchesOf } from "./rendered-config";

/** The annotation of the platform's defaults EnvoyFilter that holds its host assignments: JSON `{ "<namespace>": ["<host>", ...] }`. */
export const TEAM_HOSTS_ANNOTATION = "mesh-ratelimit.io/team-hosts";
/** The annotation of the platform's defaults EnvoyFilter that says the platform opts into route-bound ownership (`"true"`). */
export const ROUTE_BOUND_ANNOTATION = "mesh-ratelimit.io/route-bound-ownership";

/** A route (VirtualService or HTTPRoute) as the rule reads it. */
export interface RoutedHosts {
    namespace: string;
    name: string;
    hosts: string[];
    /** The gateways it binds to: `spec.gateways` of a VirtualService (`mesh`: sidecars only), `<ns>/<name>` of an HTTPRoute's parentRefs. */
    gateways: string[];
    /** Which kind of route (and so which kind of gateway it binds to); absent: a VirtualService. */
    kind?: "VirtualService" | "HTTPRoute";
}

/** A gateway that exists, with the hosts it serves (an Istio Gateway's servers' hosts, a Gateway API Gateway's listeners' hostnames). */
export interface ServingGateway {
    kind: "Gateway" | "GatewayApi";
    namespace: string;
    name: string;
    /** Istio's `[<namespace>/]<host>` forms, or a Gateway API hostname (`*` for a listener without one). */
    hosts: string[];
}

/** What the platform says (its defaults filter) and what the cluster or the program holds. */
export interface OwnershipView {
    /** The platform's defaults EnvoyFilter on the gateway (`<namespace>/<name>`), its assignments and its opt-in; absent: no platform defaults there. */
    platform?: { envoyFilter: string; teamHosts: Record<string, readonly string[]>; routeBound?: boolean };
    /** The routes of every namespace. */
    virtualServices: RoutedHosts[];
    /** The gateways that exist (read only with route-bound ownership); absent: none. */
    gateways?: ServingGateway[];
}

/** Who owns a host, and on what ground. */
export interface HostOwners {
    namespaces: string[];
    by: "assignment" | "route" | "none";
}

/** The host part of Istio's virtual host name `<host>:<port>`. */
export function hostOfVirtualHost(virtualHost: string): string {
    const i = virtualHost.lastIndexOf(":");
    return i < 0 ? virtualHost : virtualHost.slice(0, i);
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

/** The platform's side of the view, from its defaults EnvoyFilter's metadata (as kubectl or the render returns it). */
export function platformOfFilter(filter: {
    metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
}): NonNullable<OwnershipView["platform"]> {
    const a = filter.metadata?.annotations ?? {};
    return {
        envoyFilter: `${filter.metadata?.namespace ?? "default"}/${filter.metadata?.name ?? ""}`,
        teamHosts: teamHostsOf(a[TEAM_HOSTS_ANNOTATION]),
        ...(a[ROUTE_BOUND_ANNOTATION] === "true" ? { routeBound: true } : {}),
    };
}

/** Whether a DNS pattern (`*`, `*.example.com`, `a.example.com`) covers `host`. */
function dnsCovers(pattern: string, host: string): boolean {
    if (pattern === "*") return true;
    if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
    return pattern === host;
}

/** Whether gateway `g` serves `host` to a route of namespace `routeNs` (Istio's `<ns>/<host>`: `*` any, `.` the Gateway's own). */
export function gatewayServes(g: ServingGateway, host: string, routeNs: string): boolean {
    return g.hosts.some((entry) => {
        if (g.kind === "GatewayApi") return dnsCovers(entry, host);
        const slash = entry.indexOf("/");
        const ns = slash < 0 ? "*" : entry.slice(0, slash);
        const dns = slash < 0 ? entry : entry.slice(slash + 1);
        const nsOk = ns === "*" || (ns === "." ? routeNs === g.namespace : ns === routeNs);
        return nsOk && dnsCovers(dns, host);
    });
}

/** Whether route `r` binds `host` to a gateway of `view` that exists and serves it. */
function boundToServingGateway(r: RoutedHosts, host: string, view: OwnershipView): boolean {
    if (!r.hosts.includes(host)) return false;
    const kind = r.kind === "HTTPRoute" ? "GatewayApi" : "Gateway";
    return r.gateways
        .filter((g) => g !== "mesh")
        .some((ref) => {
            const [ns, name] = ref.includes("/") ? ref.split("/", 2) : [r.namespace, ref];
            const g = (view.gateways ?? []).find((x) => x.kind === kind && x.namespace === ns && x.name === name);
            return g !== undefined && gatewayServes(g, host, r.namespace);
        });
}

/** The namespaces that own `host`, and on what ground (the rule). */
export function hostOwners(host: string, view: OwnershipView): HostOwners {
    const assigned = Object.entries(view.platform?.teamHosts ?? {})
        .filter(([, hosts]) => hosts.includes(host))
        .map(([ns]) => ns);
    if (assigned.length) return { namespaces: [...new Set(assigned)].sort(), by: "assignment" };
    if (view.platform?.routeBound !== true) return { namespaces: [], by: "none" };
    const bound = view.virtualServices.filter((r) => boundToServingGateway(r, host, view)).map((r) => r.namespace);
    return bound.length ? { namespaces: [...new Set(bound)].sort(), by: "route" } : { namespaces: [], by: "none" };
}

/** Why `team` may not switch the defaults off on `virtualHost` (`""`: every host), and the fix; undefined when it may. */
export function switchRefusal(team: string, virtualHost: string, view: OwnershipView): { reason: string; fix: string } | undefined {
    if (virtualHost === "")
        return {
            reason:
                "it names no virtual host, or is a ROUTE_CONFIGURATION patch (which Istio merges into every virtual host, whatever its match names), " +
                "so it would switch the platform's defaults off on every host of the gateway",
            fix: "use a VIRTUAL_HOST or HTTP_ROUTE patch naming the team's own virtual hosts (<host>:<port>), each assigned to the team by the platform",
        };
    const host = hostOfVirtualHost(virtualHost);
    const owners = hostOwners(host, view);
    if (owners.namespaces.includes(team)) return undefined;
    const routeBound = view.platform?.routeBound === true;
    const reason =
        owners.by === "assignment"
            ? `the platform assigns ${host} to namespace ${owners.namespaces.join(", ")}, not to ${team}`
            : owners.by === "route"
              ? `${host} is bound to an existing gateway by routes of namespace ${owners.namespaces.join(", ")}, not ${team}, and the platform assigns it to no one`
              : routeBound
                ? `the platform assigns ${host} to no one and no route of namespace ${team} binds it to a Gateway that exists and serves it`
                : `the platform assigns ${host} to no one (hosts are a team's by the platform's assignment only)`;
    const fix =
        owners.by === "none"
            ? `ask the platform team to assign ${host} to ${team} (PlatformRateLimit teamHosts)${routeBound ? ", or bind it with a route of the team's to a Gateway that serves it" : ""}, or set platformDefaults: "merge" to keep the platform's defaults there`
            : `remove ${virtualHost} (its owner limits its own host), or set platformDefaults: "merge" to keep the platform's defaults there`;
    return { reason, fix };
}

/** One switch of the platform's defaults in an EnvoyFilter, with the namespace its GlobalRateLimit names. */
export interface TeamSwitch {
    envoyFilter: string;
    /** The namespace of the GlobalRateLimit that wrote it (from its filter's name `envoy.filters.http.ratelimit/<ns>/<svc>`); undefined when unknown. */
    team?: string;
    /** The virtual host (`<host>:<port>`; `""`: every virtual host). */
    virtualHost: string;
}

/** The platform defaults' names a switch writes under. */
const DEFAULTS_NAMES: readonly string[] = [PLATFORM_FILTER_NAMES.defaults, PLATFORM_PRE_LIMIT_NAMES.defaults];

/**
 * The switches of the platform's defaults in `envoyFilters` (any patch writing a per-route config
 * under the defaults' names), with the writer each names. The patches are read through the one
 * reader, and a patch's per-filter config under either spelling (`typed_per_filter_config`,
 * `typedPerFilterConfig`: Istio takes both), at the top of its value or nested in the value's
 * `virtual_hosts[]`, their `routes[]` or its `routes[]`, makes it a switch on the patch's virtual host.
 */
export function teamSwitches(envoyFilters: any[]): TeamSwitch[] {
    const out: TeamSwitch[] = [];
    for (const f of envoyFilters) {
        const patches = patchesOf({ ...f, metadata: { ...f?.metadata, name: f?.metadata?.name } });
        const own = patches.map((p) => p.name).find((n) => typeof n === "string" && n.startsWith(`${RATELIMIT_FILTER}/`));
        const team = own?.split("/")[1];
        for (const p of patches) {
            if (!p.perFilterConfigs.some((perFilter) => DEFAULTS_NAMES.some((n) => perFilter[n] !== undefined))) continue;
            // A ROUTE_CONFIGURATION patch merges into the whole route configuration: Istio ignores its vhost match, so it is on every host.
            const virtualHost = p.applyTo === "ROUTE_CONFIGURATION" ? "" : String(p.virtualHost ?? "");
            out.push({ envoyFilter: namespacedName(p.envoyFilter), ...(team ? { team } : {}), virtualHost });
        }
    }
    return out;
}
