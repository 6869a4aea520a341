/**
 * Side doors: other VirtualServices bound to the stack's own Gateway with a host the stack's
 * patches do not name. Istio gives each such host a virtual host of its own on the stack's port
 * (`side.example.com:8080`), and the stack's rate_limits and pre-limit name only its own virtual
 * hosts (`*:8080`): a client that sends that Host header reaches the VirtualService's destination
 * (productpage, when it routes there) around every gateway limit.
 *
 * Istio binds a VirtualService's host to a Gateway server only when a server host admits it, namespace
 * part included (builders/envoy-filters.ts `admittedVirtualHosts`). With the default
 * `gatewayHostScope` `own-namespace` the stack's server hosts are `<namespace>/<host>`: a
 * VirtualService of another namespace is not bound at all (reported as harmless), one of the stack's
 * own namespace still is. With `any-namespace` (the specification's `*`) every namespace's is.
 *
 * Pure: the cluster's VirtualServices come in as a list (cluster/cluster-lookup.ts); a VirtualService
 * that merges into one of the stack's virtual hosts is host-sharers.ts's case, not a door.
 */
import { admittedVirtualHosts } from "../builders/envoy-filters";
import { BookinfoMode, GatewayHostScope } from "../components/common/mesh-enums";
import { OWNER_ANNOTATION } from "../components/common/ownership";
import { Problem } from "../lib/problems";
import { StackSettings } from "../mesh/settings-types";
import { IstioRouting, StackHosts, gatewayRef, idOf, isStackVirtualService, ownListenerGateway } from "./host-sharers";

/** A VirtualService the stack's Gateway admits with virtual hosts of its own. */
export interface SideDoor {
    /** `<namespace>/<name>`. */
    virtualService: string;
    /** Its hosts that get a virtual host of their own, and those virtual hosts (Istio's names). */
    hosts: string[];
    virtualHosts: string[];
    /** Who manages it: another stack's owner annotation, its field managers. */
    holder: string;
    /** The services its routes lead to (`delegate <ns>/<name>` for a delegated route). */
    destinations: string[];
}

/** The side doors, and the VirtualServices that name the stack's Gateway but are not bound (`<namespace>/<name>` and their hosts). */
export interface GatewayDoors {
    doors: SideDoor[];
    unbound: { virtualService: string; hosts: string[] }[];
}

/** Who manages an object, from its owner annotation and `metadata.managedFields`. */
export function holderOf(o: IstioRouting): string {
    const theirs = o.metadata.annotations?.[OWNER_ANNOTATION];
    const managers = [...new Set((o.metadata.managedFields ?? []).map((f) => f.manager ?? "").filter((m) => m))].sort();
    return [
        theirs !== undefined ? `stack ${theirs} (${OWNER_ANNOTATION})` : `no ${OWNER_ANNOTATION} annotation`,
        managers.length ? `field managers: ${managers.join(", ")}` : "no field managers recorded",
    ].join("; ");
}

/** The services a VirtualService's HTTP, TLS and TCP routes lead to, each once. */
function destinationsOf(v: IstioRouting, ns: string): string[] {
    const routes: any[] = ["http", "tls", "tcp"].flatMap((k) => (Array.isArray(v.spec?.[k]) ? v.spec[k] : []));
    const out = routes.flatMap((r) => [
        ...(Array.isArray(r?.route) ? r.route.map((d: any) => String(d?.destination?.host ?? "")).filter((h: string) => h) : []),
        ...(r?.delegate?.name ? [`delegate ${r.delegate.namespace ?? ns}/${r.delegate.name}`] : []),
    ]);
    return [...new Set(out)];
}

/**
 * The VirtualServices bound to the stack's own Gateway (a namespace-qualified reference or the short
 * name from the Gateway's namespace) that are not the stack's, sorted into doors (a host admitted
 * with a virtual host the stack does not limit) and unbound ones (no host admitted).
 */
export function sideDoors(stack: StackHosts, virtualServices: IstioRouting[]): GatewayDoors {
    const limited = new Set(stack.virtualHosts);
    const own = ownListenerGateway(stack);
    const doors: SideDoor[] = [];
    const unbound: GatewayDoors["unbound"] = [];
    for (const v of virtualServices) {
        if (isStackVirtualService(v, stack)) continue;
        const ns = v.metadata.namespace ?? "default";
        if (!((v.spec?.gateways ?? []) as string[]).some((r) => gatewayRef(r, ns) === stack.ownGateway)) continue;
        const hosts = ((v.spec?.hosts ?? []) as string[]).map(String);
        const byHost = hosts.map((h) => ({ h, vhs: admittedVirtualHosts(own.servers, [h], own.namespace, ns) }));
        if (byHost.every((b) => !b.vhs.length)) {
            unbound.push({ virtualService: idOf(v), hosts });
            continue;
        }
        const open = byHost.map((b) => ({ h: b.h, vhs: b.vhs.filter((vh) => !limited.has(vh)) })).filter((b) => b.vhs.length);
        if (!open.length) continue;
        doors.push({
            virtualService: idOf(v),
            hosts: open.map((b) => b.h),
            virtualHosts: [...new Set(open.flatMap((b) => b.vhs))],
            holder: holderOf(v),
            destinations: destinationsOf(v, ns),
        });
    }
    return { doors, unbound };
}

/** The settings the side-door decision reads. */
type DoorSettings = {
    bookinfo: Pick<StackSettings["bookinfo"], "namespace" | "hosts" | "gatewayName" | "gatewayHostScope">;
    bookinfoMode: StackSettings["bookinfoMode"];
};

/** What closes a door: the setting that narrows the Gateway the stack creates, or the edit of an existing bookinfo's Gateway (not the stack's to change). */
function doorFix(s: DoorSettings, d: SideDoor): Pick<Problem, "key" | "value" | "fix"> {
    const ns = s.bookinfo.namespace;
    const theirs = `or have its owner bind it to a Gateway of its own`;
    if (s.bookinfoMode === BookinfoMode.Existing)
        return {
            key: "gatewayName",
            value: s.bookinfo.gatewayName,
            fix: `narrow that Gateway's server hosts to ${ns}/<host> (kubectl edit gateways.networking.istio.io ${s.bookinfo.gatewayName} -n ${ns}; the stack did not create it), ${theirs}`,
        };
    if (s.bookinfo.gatewayHostScope === GatewayHostScope.AnyNamespace && !d.virtualService.startsWith(`${ns}/`))
        return {
            key: "gatewayHostScope",
            value: s.bookinfo.gatewayHostScope,
            fix: `pulumi config set gatewayHostScope ${GatewayHostScope.OwnNamespace}   (the Gateway then admits only namespace ${ns}'s VirtualServices; the stack's virtual hosts keep their names), ${theirs}`,
        };
    return {
        key: "gatewayHosts",
        value: s.bookinfo.hosts.join(","),
        fix: `pulumi config set gatewayHosts <host>   (the Gateway then admits only that host, with gatewayHostScope ${GatewayHostScope.OwnNamespace}), ${theirs} outside namespace ${ns}`,
    };
}

/**
 * The preview's words for `sideDoors`: each door a problem (refused before anything is registered),
 * with the VirtualService, its hosts, the virtual hosts it gets, where it routes, who manages it and
 * the fix; each unbound VirtualService a message (Istio ignores it: harmless).
 */
export function sideDoorReport(s: DoorSettings, stack: StackHosts, found: GatewayDoors): { problems: Problem[]; messages: string[] } {
    const gw = `${stack.ownGateway} (server hosts ${stack.ownGatewayHosts.join(", ")})`;
    const problems = found.doors.map((d) => ({
        ...doorFix(s, d),
        problem: `the stack's Gateway ${gw} admits VirtualService ${d.virtualService} (hosts ${d.hosts.join(", ")}; ${d.holder}): Istio gives it the virtual host(s) ${d.virtualHosts.join(", ")} of its own on port ${stack.port}, without the stack's rate_limits and pre-limit (they name only ${stack.virtualHosts.join(", ")}), so a client sending that Host header reaches ${d.destinations.length ? d.destinations.join(", ") : "its routes"} around every gateway limit`,
    }));
    const messages = found.unbound.map(
        (u) =>
            `VirtualService ${u.virtualService} (hosts ${u.hosts.join(", ")}) names the stack's Gateway ${gw}, whose server hosts do not admit it: Istio binds none of its hosts, so it opens no way around the limits (harmless)`,
    );
    return { problems, messages };
}
