/**
 * The virtual-host names (`<host>:<port>`) a gateway's servers give a VirtualService's hosts, as
 * Istio names them, and which hosts a server admits from another namespace.
 */
/** A Gateway server: its port and hosts (`[<namespace>/]<host>`). */
export interface GatewayServerLike {
    port: { number: number };
    hosts: string[];
}

function hostMatches(pattern: string, host: string): boolean {
    if (pattern === "*") return true;
    if (pattern.startsWith("*.")) return host === pattern || (!host.startsWith("*") && host.endsWith(pattern.slice(1)));
    return pattern === host;
}

/**
 * Istio's names of the gateway virtual hosts a VirtualService gets through a Gateway:
 * `<host>:<port>` for each server port and each VirtualService host that a server host admits (the
 * more specific of the two names the virtual host: VirtualService `*` through a server host
 * `shop.example.com` gives `shop.example.com:<port>`). Pure; one source for the Gateway the stack
 * creates and the patches that must name its virtual hosts.
 */
export function gatewayVirtualHosts(servers: GatewayServerLike[], vsHosts: string[]): string[] {
    const out: string[] = [];
    for (const server of servers) {
        for (const raw of server.hosts) {
            const sh = raw.includes("/") ? raw.slice(raw.indexOf("/") + 1) : raw;
            for (const vh of vsHosts) {
                const name = hostMatches(sh, vh) ? vh : hostMatches(vh, sh) ? sh : undefined;
                const full = name === undefined ? undefined : `${name}:${server.port.number}`;
                if (full && !out.includes(full)) out.push(full);
            }
        }
    }
    return out;
}

/**
 * Whether a Gateway server host admits a VirtualService of `vsNamespace`, by its namespace part:
 * `<ns>/<host>` only that namespace's, `./<host>` the Gateway's own namespace's, a namespace part
 * `*` or none every namespace's (Istio, `pickMatchingGatewayHosts`).
 */
export function serverHostAdmits(serverHost: string, gatewayNamespace: string, vsNamespace: string): boolean {
    const i = serverHost.indexOf("/");
    if (i < 0) return true;
    const ns = serverHost.slice(0, i);
    return ns === "*" || (ns === "." ? gatewayNamespace : ns) === vsNamespace;
}

/**
 * Istio's names of the virtual hosts a VirtualService of `vsNamespace` gets through the servers of
 * a Gateway in `gatewayNamespace`: `gatewayVirtualHosts` of the server hosts that admit its namespace.
 */
export function admittedVirtualHosts(servers: GatewayServerLike[], vsHosts: string[], gatewayNamespace: string, vsNamespace: string): string[] {
    const admitting = servers.map((sv) => ({ ...sv, hosts: sv.hosts.filter((h) => serverHostAdmits(h, gatewayNamespace, vsNamespace)) }));
    return gatewayVirtualHosts(admitting, vsHosts);
}
