/**
 * Where the rendered rate-limit filters sit on gateways the program does not declare: the ports of
 * the gateway pods each EnvoyFilter inserts a global rate-limit filter on, and the virtual hosts
 * (`<host>:<port>`) the EnvoyFilters on those pods patch. Read from the rendered objects. Pure.
 */
import { isRateLimitFilter } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { field, isSubset } from "./model";

/** The listener ports an EnvoyFilter inserts a global rate-limit filter on (GATEWAY or ANY context). */
export function rateLimitFilterPorts(f: K8sObject): number[] {
    const ports: number[] = [];
    for (const p of f.spec?.configPatches ?? []) {
        const ctx = p.match?.context ?? "ANY";
        if (field(p, "apply_to") !== "HTTP_FILTER" || !(ctx === "GATEWAY" || ctx === "ANY")) continue;
        if (!isRateLimitFilter(p.patch?.value ?? {})) continue;
        const port = field(p.match?.listener, "port_number");
        if (port !== undefined) ports.push(Number(port));
    }
    return ports;
}

/** Whether an EnvoyFilter inserts a global rate-limit filter on every listener of its pods (a patch naming no port). */
export function rateLimitFilterOnEveryPort(f: K8sObject): boolean {
    return (f.spec?.configPatches ?? []).some((p: any) => {
        const ctx = p.match?.context ?? "ANY";
        if (field(p, "apply_to") !== "HTTP_FILTER" || !(ctx === "GATEWAY" || ctx === "ANY")) return false;
        return isRateLimitFilter(p.patch?.value ?? {}) && field(p.match?.listener, "port_number") === undefined;
    });
}

/** The virtual host names (`<host>:<port>`) the EnvoyFilters on pods `labels` patch. */
export function patchedVirtualHosts(filters: K8sObject[], labels: Record<string, string>): string[] {
    const names = new Set<string>();
    for (const f of filters.filter((x) => isSubset(x.spec?.workloadSelector?.labels, labels)))
        for (const p of f.spec?.configPatches ?? []) {
            const name = field(p.match ?? {}, "route_configuration")?.vhost?.name;
            if (typeof name === "string" && name) names.add(name);
        }
    return [...names];
}
