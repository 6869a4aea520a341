/**
 * Other teams' Gateway servers and VirtualServices that share a host and port with the stack's
 * limited virtual hosts on its gateway. Istio builds one route configuration per gateway port
 * (`http.<port>`) and one virtual host per host name in it, merging the routes of every
 * VirtualService bound to a Gateway on that port for that host: a tenant VirtualService with host `*`
 * (or the stack's own host) on the stack's gateway port lands inside the stack's virtual host
 * `*:8080` and inherits its per-path limits, its pre-limit and its fail-closed 500s. Nothing in the
 * EnvoyFilters can tell its routes apart, so preview names each such object and the fix.
 *
 * Pure: the cluster's Gateways and VirtualServices come in as lists (cluster/cluster-lookup.ts).
 */
import { GatewayServerLike, admittedVirtualHosts } from "../builders/envoy-filters";
import { LiveObjectMeta, OWNER_ANNOTATION } from "../components/common/ownership";

/** A Gateway or VirtualService as `kubectl get -o json` returns it (the fields read here). */
export interface IstioRouting extends LiveObjectMeta {
    spec?: any;
}

/** What the decision needs of the stack. */
export interface StackHosts {
    /** The stack's limited virtual hosts, Istio's names `<host>:<port>`. */
    virtualHosts: string[];
    /** The gateway port those virtual hosts are on. */
    port: number;
    /** The labels of the stack's gateway pods (a Gateway whose selector they satisfy shares them). */
    gatewayPodLabels: Record<string, string>[];
    /** `<namespace>/<name>` of the stack's own Gateway and VirtualService (not reported). */
    ownGateway: string;
    ownVirtualService: string;
    /** The server hosts of the stack's own Gateway on `port` (`default/*`; `*` with gatewayHostScope any-namespace). */
    ownGatewayHosts: string[];
    /** The stack's owner annotation value: a VirtualService that carries it is the stack's own. */
    owner?: string;
}

/** One object sharing a limited virtual host. */
export interface HostSharer {
    /** `Gateway ns/name` or `VirtualService ns/name`. */
    object: string;
    /** The stack's virtual host it shares (`*:8080`). */
    virtualHost: string;
    message: string;
}

/** A Gateway server's host without its namespace part (`shop/*` → `*`). */
function hostOf(serverHost: string): string {
    const i = serverHost.indexOf("/");
    return i < 0 ? serverHost : serverHost.slice(i + 1);
}

/** Whether a Gateway's selector picks pods with one of these label sets. */
function selectsPods(selector: Record<string, string> | undefined, pods: Record<string, string>[]): boolean {
    const sel = Object.entries(selector ?? {});
    return pods.some((labels) => sel.every(([k, v]) => labels[k] === v));
}

/** `<namespace>/<name>` of a VirtualService's gateway reference (`name` is in the VirtualService's namespace). */
export function gatewayRef(ref: string, vsNamespace: string): string {
    return ref.includes("/") ? ref : `${vsNamespace}/${ref}`;
}

export const idOf = (o: LiveObjectMeta) => `${o.metadata.namespace ?? "default"}/${o.metadata.name}`;

/** Whether a VirtualService is the stack's own: its name, or its owner annotation. */
export function isStackVirtualService(v: LiveObjectMeta, stack: Pick<StackHosts, "ownVirtualService" | "owner">): boolean {
    return idOf(v) === stack.ownVirtualService || (stack.owner !== undefined && v.metadata.annotations?.[OWNER_ANNOTATION] === stack.owner);
}

/** A Gateway on the stack's listener: its namespace and its servers on the stack's port. */
interface ListenerGateway {
    namespace: string;
    servers: GatewayServerLike[];
}

/** The stack's own Gateway, as the stack creates it (or, for an existing bookinfo, as it runs). */
export function ownListenerGateway(stack: StackHosts): ListenerGateway {
    return { namespace: stack.ownGateway.split("/")[0]!, servers: [{ port: { number: stack.port }, hosts: stack.ownGatewayHosts }] };
}

/**
 * Every other Gateway with a server on the stack's port whose hosts take one of the stack's
 * virtual-host hosts (or `*`), and every other VirtualService bound to such a Gateway (or to the
 * stack's own) on one of the stack's virtual-host hosts: what they inherit, and the fix.
 */
export function hostSharers(stack: StackHosts, gateways: IstioRouting[], virtualServices: IstioRouting[]): HostSharer[] {
    const limited = new Set(stack.virtualHosts);
    const hostsOnPort = new Set(stack.virtualHosts.filter((v) => v.endsWith(`:${stack.port}`)).map((v) => v.slice(0, v.lastIndexOf(":"))));
    const out: HostSharer[] = [];
    // Gateways whose pods and port are the stack's: the ones a VirtualService can merge through.
    const onListener = new Map<string, ListenerGateway>([[stack.ownGateway, ownListenerGateway(stack)]]);
    for (const g of gateways) {
        const id = idOf(g);
        if (id === stack.ownGateway || !selectsPods(g.spec?.selector, stack.gatewayPodLabels)) continue;
        const servers: any[] = (g.spec?.servers ?? []).filter((sv: any) => Number(sv?.port?.number) === stack.port);
        if (!servers.length) continue;
        onListener.set(id, {
            namespace: g.metadata.namespace ?? "default",
            servers: servers.map((sv) => ({ port: { number: stack.port }, hosts: sv.hosts ?? [] })),
        });
        for (const h of new Set(servers.flatMap((sv) => (sv.hosts ?? []).map(hostOf)))) {
            const shared = h === "*" ? [...hostsOnPort] : hostsOnPort.has(h) ? [h] : [];
            for (const host of shared)
                out.push({
                    object: `Gateway ${id}`,
                    virtualHost: `${host}:${stack.port}`,
                    message: `Gateway ${id} has a server on the stack's gateway port ${stack.port} for host ${h}: any VirtualService bound to it with host ${host} is merged by Istio into the stack's virtual host ${host}:${stack.port} and gets its limits. Fix (its owner's): list only hosts of its own on that server; or give the stack a host of its own: pulumi config set gatewayHosts <host>`,
                });
        }
    }
    for (const v of virtualServices) {
        if (isStackVirtualService(v, stack)) continue;
        const id = idOf(v);
        const ns = v.metadata.namespace ?? "default";
        const refs = [...new Set(((v.spec?.gateways ?? []) as string[]).map((r) => gatewayRef(r, ns)))].filter((r) => onListener.has(r));
        for (const h of (v.spec?.hosts ?? []) as string[]) {
            // Each limited virtual host this host lands in, through the Gateways whose server hosts admit it.
            const via = new Map<string, string[]>();
            for (const r of refs) {
                const g = onListener.get(r)!;
                for (const vh of admittedVirtualHosts(g.servers, [h], g.namespace, ns)) if (limited.has(vh)) via.set(vh, [...(via.get(vh) ?? []), r]);
            }
            for (const [vh, gws] of via)
                out.push({
                    object: `VirtualService ${id}`,
                    virtualHost: vh,
                    message: `VirtualService ${id} (host ${h}, Gateway ${gws.join(", ")}) is merged by Istio into the stack's virtual host ${vh}: its requests get the stack's per-path limits and pre-limit, and with failureModeDeny a 500 whenever the rate-limit service cannot answer. Fix (its owner's): a host of its own instead of ${h}; or give the stack a host of its own: pulumi config set gatewayHosts <host>`,
                });
        }
    }
    return out;
}
