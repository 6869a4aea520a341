/**
 * Where a program's limits act: the gateways its objects configure (each with the objects the
 * gateway model reads); the local token buckets on workloads' sidecars are workload-buckets.ts. Pure.
 *
 * A program that declares its own Istio Gateway and VirtualService is read as it is. A program that
 * only adds limits to a gateway it does not declare (GlobalRateLimit on an existing ingress gateway,
 * the usual case) has no routes to read: for each gateway its rate-limit filters select, the model
 * stands in a Gateway with those pods' labels and a VirtualService with the virtual hosts its patches
 * name and one catch-all route, so every request to those hosts meets the virtual host's limits.
 */
import { K8sObject } from "../lib/k8s-object";
import { isSubset } from "./model";
import { patchedVirtualHosts, rateLimitFilterOnEveryPort, rateLimitFilterPorts } from "./filter-sites";
import { pickHost } from "./read-rendered";
import { hasPlatformFilter } from "./platform-calls";

/** One gateway of the program: what the gateway model reads for it, and the hosts it serves. */
export interface ProgramGateway {
    /** `Gateway <namespace>/<name>`, or `pods <labels> (not declared by the program)`. */
    name: string;
    /** The objects the gateway model reads for it: one Gateway, one VirtualService bound to it, every other object. */
    objects: K8sObject[];
    hosts: string[];
    /** True when the Gateway and VirtualService are stand-ins (the program declares neither). */
    standIn: boolean;
}

/**
 * The port a filter on every listener is modelled on when no filter of its pods names one (Istio's
 * ingress gateway's HTTP port): every filter of those pods then acts on every port alike, so the
 * answer is the one of any port.
 */
export const EVERY_PORT_STAND_IN = 8080;

const labelText = (l: Record<string, string>) =>
    Object.entries(l)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");

/** A stand-in Gateway and VirtualService for pods `labels` on `port`, serving `hosts` with one catch-all route. */
function standIn(labels: Record<string, string>, port: number, hosts: string[]): K8sObject[] {
    const name = `stand-in-${labelText(labels).replace(/[^a-z0-9-]/gi, "-")}-${port}`.toLowerCase();
    return [
        {
            apiVersion: "networking.istio.io/v1beta1",
            kind: "Gateway",
            metadata: { name, namespace: "stand-in" },
            spec: { selector: labels, servers: [{ port: { number: port, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
        },
        {
            apiVersion: "networking.istio.io/v1beta1",
            kind: "VirtualService",
            metadata: { name, namespace: "stand-in" },
            spec: { hosts, gateways: [name], http: [{ name: "catch-all", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "upstream" } }] }] },
        },
    ];
}

/** Every gateway the program's objects configure, its own Gateways first. */
export function programGateways(objects: K8sObject[]): ProgramGateway[] {
    const rest = objects.filter((o) => o.kind !== "Gateway" && o.kind !== "VirtualService");
    const filters = objects.filter((o) => o.kind === "EnvoyFilter");
    const out: ProgramGateway[] = [];
    const declared = objects.filter((o) => o.kind === "Gateway" && String(o.apiVersion).startsWith("networking.istio.io/"));
    for (const g of declared) {
        const bound = objects.filter(
            (o) => o.kind === "VirtualService" && (o.spec?.gateways ?? []).some((x: string) => x === g.metadata.name || x.endsWith(`/${g.metadata.name}`)),
        );
        if (!bound.length) continue;
        out.push({
            name: `Gateway ${g.metadata.namespace ?? "default"}/${g.metadata.name}`,
            objects: [g, ...bound, ...rest],
            hosts: bound[0]!.spec?.hosts ?? [],
            standIn: false,
        });
    }
    const seen = new Set<string>();
    const portsOf = (f: K8sObject, labels: Record<string, string>): number[] => {
        const named = rateLimitFilterPorts(f);
        if (named.length || !rateLimitFilterOnEveryPort(f)) return named;
        // A filter on every listener (PlatformRateLimit without listenerPorts): on the ports its pods' other filters name, else one stand-in.
        const others = filters.filter((o) => isSubset(o.spec?.workloadSelector?.labels ?? {}, labels)).flatMap(rateLimitFilterPorts);
        return others.length ? [...new Set(others)] : [EVERY_PORT_STAND_IN];
    };
    for (const f of filters) {
        const labels: Record<string, string> = f.spec?.workloadSelector?.labels ?? {};
        if (declared.some((g) => isSubset(labels, g.spec?.selector ?? {}))) continue;
        for (const port of portsOf(f, labels)) {
            const key = `${labelText(labels)}:${port}`;
            if (seen.has(key)) continue;
            seen.add(key);
            const vhosts = patchedVirtualHosts(filters, labels).filter((v) => v.endsWith(`:${port}`));
            // The platform's filters act on every host of the gateway: the other hosts are read as `*`.
            const named = vhosts.map((v) => v.slice(0, v.lastIndexOf(":")));
            const hosts = named.length ? [...named, ...(hasPlatformFilter(filters, labels) && !named.includes("*") ? ["*"] : [])] : ["*"];
            out.push({
                name: `pods ${labelText(labels)} port ${port} (a gateway the program does not declare)`,
                objects: [...standIn(labels, port, hosts), ...rest],
                hosts,
                standIn: true,
            });
        }
    }
    return out;
}

/** The gateway serving `host` (the first gateway when no host is given); undefined when none does. */
export function gatewayFor(gateways: ProgramGateway[], host: string | undefined): { gateway: ProgramGateway; host: string } | undefined {
    if (host === undefined) return gateways.length ? { gateway: gateways[0]!, host: gateways[0]!.hosts[0] ?? "*" } : undefined;
    for (const g of gateways) if (pickHost(g.hosts, host) !== undefined) return { gateway: g, host };
    return undefined;
}
