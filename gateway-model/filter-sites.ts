/**
 * Where the rendered rate-limit filters sit on gateways the program does not declare: the ports of
 * the gateway pods each EnvoyFilter inserts a global rate-limit filter on, and the virtual hosts
 * (`<host>:<port>`) the EnvoyFilters on those pods patch. Read from the rendered objects. Pure.
 */
import { K8sObject } from "../lib/k8s-object";
import { isSubset } from "./model";
import { patchesOf, rateLimitFilterOf, workloadLabelsOf } from "../builders/rendered-config";

/** The listener ports an EnvoyFilter inserts a global rate-limit filter on (GATEWAY or ANY context). */
export function rateLimitFilterPorts(f: K8sObject): number[] {
    const ports: number[] = [];
    for (const p of patchesOf(f)) if (p.onGateway && rateLimitFilterOf(p) && p.port !== undefined) ports.push(p.port);
    return ports;
}

/** Whether an EnvoyFilter inserts a global rate-limit filter on every listener of its pods (a patch naming no port). */
export function rateLimitFilterOnEveryPort(f: K8sObject): boolean {
    return patchesOf(f).some((p) => p.onGateway && rateLimitFilterOf(p) !== undefined && p.port === undefined);
}

/** The virtual host names (`<host>:<port>`) the EnvoyFilters on pods `labels` patch. */
export function patchedVirtualHosts(filters: K8sObject[], labels: Record<string, string>): string[] {
    const names = new Set<string>();
    for (const p of filters.filter((x) => isSubset(workloadLabelsOf(x), labels)).flatMap(patchesOf))
        if (typeof p.virtualHost === "string" && p.virtualHost) names.add(p.virtualHost);
    return [...names];
}
