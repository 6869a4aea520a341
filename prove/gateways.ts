/**
 * Where a program's limits act: the gateways its objects configure (each with the objects the
 * gateway model reads) and the local token buckets it puts on workloads' sidecars. Pure.
 *
 * A program that declares its own Istio Gateway and VirtualService is read as it is. A program that
 * only adds limits to a gateway it does not declare (GlobalRateLimit on an existing ingress gateway,
 * the usual case) has no routes to read: for each gateway its rate-limit filters select, the model
 * stands in a Gateway with those pods' labels and a VirtualService with the virtual hosts its patches
 * name and one catch-all route, so every request to those hosts meets the virtual host's limits.
 */
import { isRateLimitFilter, LOCAL_RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { field, isSubset } from "../gateway-model/model";
import { pickHost } from "../gateway-model/read-rendered";
import { hasPlatformFilter } from "../gateway-model/platform-calls";

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

/** A LocalRateLimit's bucket on a workload's sidecar (the whole filter on the inbound port). */
export interface LocalBucket {
    envoyFilter: string;
    namespace: string;
    selector: Record<string, string>;
    port: number;
    maxTokens: number;
    tokensPerFill: number;
    fillSeconds: number;
    /** The headers a refusal carries (`x-local-rate-limit`, `retry-after`). */
    refusalHeaders: Record<string, string>;
    /** filter_enforced is 100 %: it refuses (else it only counts). */
    enforced: boolean;
}

const labelText = (l: Record<string, string>) =>
    Object.entries(l)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");

/** A patch's HTTP_FILTER value inserting a global rate-limit filter on the gateway, with its port. */
function rateLimitFilterPorts(f: K8sObject): number[] {
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

/** The virtual host names (`<host>:<port>`) the EnvoyFilters on pods `labels` patch. */
function patchedVirtualHosts(filters: K8sObject[], labels: Record<string, string>): string[] {
    const names = new Set<string>();
    for (const f of filters.filter((x) => isSubset(x.spec?.workloadSelector?.labels, labels)))
        for (const p of f.spec?.configPatches ?? []) {
            const name = field(p.match ?? {}, "route_configuration")?.vhost?.name;
            if (typeof name === "string" && name) names.add(name);
        }
    return [...names];
}

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
    for (const f of filters) {
        const labels: Record<string, string> = f.spec?.workloadSelector?.labels ?? {};
        if (declared.some((g) => isSubset(labels, g.spec?.selector ?? {}))) continue;
        for (const port of rateLimitFilterPorts(f)) {
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

function seconds(d: unknown): number {
    const m = /^(\d+(?:\.\d+)?)s$/.exec(String(d));
    return m ? Number(m[1]) : NaN;
}

/** The whole-filter local buckets on sidecars' inbound ports (LocalRateLimit without `routes`). */
export function localBuckets(objects: K8sObject[]): LocalBucket[] {
    const out: LocalBucket[] = [];
    for (const f of objects.filter((o) => o.kind === "EnvoyFilter"))
        for (const p of f.spec?.configPatches ?? []) {
            const value = p.patch?.value ?? {};
            if (field(p, "apply_to") !== "HTTP_FILTER" || p.match?.context !== "SIDECAR_INBOUND") continue;
            if (typeof value.name !== "string" || !value.name.startsWith(LOCAL_RATELIMIT_FILTER)) continue;
            const tc = field(value, "typed_config") ?? {};
            const cfg = tc.value ?? tc;
            const tb = field(cfg, "token_bucket");
            if (!tb) continue;
            const enforced = field(cfg, "filter_enforced")?.default_value?.numerator === 100;
            const headers = Object.fromEntries(
                (field(cfg, "response_headers_to_add") ?? []).map((h: any) => [String(h.header?.key).toLowerCase(), String(h.header?.value)]),
            );
            out.push({
                envoyFilter: `${f.metadata.namespace ?? "default"}/${f.metadata.name}`,
                namespace: f.metadata.namespace ?? "default",
                selector: f.spec?.workloadSelector?.labels ?? {},
                port: Number(field(p.match?.listener, "port_number")),
                maxTokens: Number(field(tb, "max_tokens")),
                tokensPerFill: Number(field(tb, "tokens_per_fill") ?? 1),
                fillSeconds: seconds(field(tb, "fill_interval")),
                refusalHeaders: headers,
                enforced,
            });
        }
    return out;
}

/**
 * The buckets a request meets on its way to `upstream` (`<service>.<namespace>:<port>`, or Istio's
 * cluster name `outbound|<port>||<service>.<namespace>.svc.cluster.local`): the bucket's namespace
 * and port, and the program's Service of that name selecting the bucket's pods (a program without
 * that Service: the bucket's `app` label is the service's name).
 */
export function bucketsOn(objects: K8sObject[], buckets: LocalBucket[], upstream: string | undefined): LocalBucket[] {
    const u = parseUpstream(upstream);
    if (!u) return [];
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === u.service && (o.metadata.namespace ?? "default") === u.namespace);
    return buckets.filter(
        (b) => b.namespace === u.namespace && b.port === u.port && (svc ? isSubset(b.selector, svc.spec?.selector ?? {}) : b.selector.app === u.service),
    );
}

/** `<service>.<namespace>:<port>` or `outbound|<port>||<service>.<namespace>.svc...`. */
export function parseUpstream(s: string | undefined): { service: string; namespace: string; port: number } | undefined {
    if (!s) return undefined;
    const istio = /^outbound\|(\d+)\|[^|]*\|([^.]+)\.([^.]+)(\..*)?$/.exec(s);
    if (istio) return { service: istio[2]!, namespace: istio[3]!, port: Number(istio[1]) };
    const plainForm = /^([^.:]+)\.([^.:]+)(?:\.[^:]*)?:(\d+)$/.exec(s);
    return plainForm ? { service: plainForm[1]!, namespace: plainForm[2]!, port: Number(plainForm[3]) } : undefined;
}
