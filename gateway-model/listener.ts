/**
 * MODEL (there is no Envoy here) of one gateway listener that several rate-limit filters share:
 * several stacks' EnvoyFilters, or hand-written ones, on the same gateway pods and port. For a
 * request to a virtual host (and route), it says which rate-limit filter calls which service with
 * which descriptors, and what a client gets when some of those services are down. The istio tier
 * checks the same question on the listener and routes Istio's generator builds.
 *
 * Envoy behaviour modelled (docs/proof/upstream.md, "Several rate-limit filters on one listener"):
 * - Every rate-limit HTTP filter on the listener runs for every request, in chain order.
 * - A filter looks for per-route config under its own configured name only (the route's, else the
 *   virtual host's). `RateLimitPerRoute.rate_limits` there: it sends exactly those, under the
 *   config's `domain` when set. Otherwise: the route's own `rate_limits` of the filter's `stage`,
 *   plus the virtual host's when the route has none (`vh_rate_limits` OVERRIDE, the default) or
 *   with `vh_rate_limits: INCLUDE` in that per-route config. A filter with `rate_limits` of its own
 *   (Envoy 1.36+) sends those instead of any route or virtual-host `rate_limits` (a per-route
 *   `RateLimitPerRoute.rate_limits` still comes first).
 * - A `FilterConfig { disabled: true }` under a filter's name on the route (else the virtual host)
 *   leaves that filter out of the request: it sends nothing (the platform's defaults on a team's host).
 * - A filter calls its service only when those entries produce a descriptor; when the service
 *   cannot answer, `failure_mode_deny` refuses the request with `status_on_error` (500 by default),
 *   otherwise the request goes on.
 * - Istio applies the EnvoyFilters in order (priority, then as given here); a `VIRTUAL_HOST` or
 *   `HTTP_ROUTE` MERGE appends `rate_limits` and replaces `typed_per_filter_config` entries by key;
 *   a virtual-host name `""` (or none) matches every virtual host.
 *
 * Not modelled: limits themselves (the service's answers other than "down"), the order of filters
 * by `INSERT_BEFORE` anchors (every filter runs; their order changes nothing modelled here).
 * Pure functions, no I/O.
 */
import { Entry } from "./model";
import { descriptorFor } from "./evaluate";
import { EntryCost, entryCost } from "./request-cost-model";
import { K8sObject } from "../lib/k8s-object";
import { RenderedPatch, entriesOfStage, field, namespacedName, patchesOf, priorityOf, rateLimitFilterOf, workloadLabelsOf } from "../builders/rendered-config";

/** One rate-limit filter on the listener. */
export interface ListenerFilter {
    /** The EnvoyFilter (`<namespace>/<name>`) that inserts it. */
    envoyFilter: string;
    /** Its configured HTTP filter name. */
    name: string;
    domain: string;
    stage: number;
    /** The service it calls: the gRPC cluster name. */
    cluster: string;
    failureModeDeny: boolean;
    /** HTTP status when it refuses for want of an answer. */
    statusOnError: number;
    /** The filter's own `rate_limits` (empty: none). */
    rateLimits: any[];
    /** `enable_x_ratelimit_headers: DRAFT_VERSION_03`: its counted responses carry X-RateLimit-*. */
    rateLimitHeaders?: boolean;
    /** `response_headers_to_add`: the headers of the responses it refuses (lower-case names). */
    refusalHeaders?: Record<string, string>;
}

interface PerRouteScope {
    rateLimits: any[];
    typedPerFilterConfig: Record<string, any>;
}

export interface ListenerModel {
    port: number;
    filters: ListenerFilter[];
    /** Per virtual host: its own patches and its routes' (by route name). */
    virtualHosts: Record<string, PerRouteScope & { routes: Record<string, PerRouteScope> }>;
}

/** The listener's virtual hosts and their route names, as Istio names them. */
export interface ListenerLayout {
    port: number;
    /** Labels of the gateway's pods. */
    podLabels: Record<string, string>;
    /** Namespace of the gateway's pods; EnvoyFilters here and in `rootNamespace` reach them. */
    namespace: string;
    rootNamespace?: string;
    virtualHosts: { name: string; routes: string[] }[];
}

const STATUS_CODES: Record<string, number> = { InternalServerError: 500, ServiceUnavailable: 503, TooManyRequests: 429 };

function statusOf(v: any): number {
    const code = v?.code;
    if (code === undefined) return 500;
    if (typeof code === "number") return code;
    const n = STATUS_CODES[String(code)];
    if (n === undefined) throw new Error(`status_on_error ${JSON.stringify(code)} is not modelled`);
    return n;
}

/** Reads the listener from the EnvoyFilters of any number of stacks (and hand-written ones). */
export function listenerModel(envoyFilters: K8sObject[], layout: ListenerLayout): ListenerModel {
    const root = layout.rootNamespace ?? "istio-system";
    const reaches = (o: K8sObject) =>
        o.kind === "EnvoyFilter" &&
        [layout.namespace, root].includes(String(o.metadata.namespace)) &&
        Object.entries(workloadLabelsOf(o)).every(([k, v]) => layout.podLabels[k] === v);
    const ordered = envoyFilters.filter(reaches).sort((a, b) => priorityOf(a) - priorityOf(b));
    const filters: ListenerFilter[] = [];
    const virtualHosts: ListenerModel["virtualHosts"] = {};
    for (const vh of layout.virtualHosts) {
        virtualHosts[vh.name] = {
            rateLimits: [],
            typedPerFilterConfig: {},
            routes: Object.fromEntries(vh.routes.map((r) => [r, { rateLimits: [], typedPerFilterConfig: {} }])),
        };
    }
    for (const p of ordered.flatMap(patchesOf)) {
        if (!p.onGateway) continue;
        if (p.applyTo === "HTTP_FILTER") {
            const filter = p.port === undefined || p.port === layout.port ? listenerFilterOf(p) : undefined;
            if (filter) filters.push(filter);
            continue;
        }
        if (p.applyTo !== "VIRTUAL_HOST" && p.applyTo !== "HTTP_ROUTE") continue;
        for (const [, vh] of Object.entries(virtualHosts).filter(([name]) => !p.virtualHost || p.virtualHost === name)) {
            const rn = p.route;
            const scopes: PerRouteScope[] = p.applyTo === "VIRTUAL_HOST" ? [vh] : rn ? (vh.routes[rn] ? [vh.routes[rn]] : []) : Object.values(vh.routes);
            for (const s of scopes) {
                if (p.rateLimits) s.rateLimits.push(...p.rateLimits);
                Object.assign(s.typedPerFilterConfig, p.typedPerFilterConfig);
            }
        }
    }
    return { port: layout.port, filters, virtualHosts };
}

/** The rate-limit filter an HTTP_FILTER patch inserts, as the listener model holds it; undefined for another filter. */
function listenerFilterOf(p: RenderedPatch): ListenerFilter | undefined {
    const rl = rateLimitFilterOf(p);
    if (!rl) return undefined;
    return {
        envoyFilter: namespacedName(p.envoyFilter),
        name: rl.name!,
        domain: rl.domain!,
        stage: rl.stage,
        cluster: rl.cluster!,
        failureModeDeny: rl.failureModeDeny,
        statusOnError: statusOf(rl.statusOnError),
        rateLimits: rl.rateLimits,
        rateLimitHeaders: rl.rateLimitHeaders,
        refusalHeaders: refusalHeadersOf(rl.responseHeadersToAdd),
    };
}

/** A request on the listener. */
export interface ListenerRequest {
    virtualHost: string;
    /** The route it is routed to (a name of `ListenerLayout.virtualHosts[].routes`). */
    route: string;
    path: string;
    headers?: Record<string, string>;
    clientAddress?: string;
}

/** What one filter does for a request. */
export interface FilterCall {
    filter: ListenerFilter;
    /** The descriptors it sends (none: it does not call its service). */
    descriptors: Entry[][];
    /** Each descriptor's own `hits_addend` (its cost), undefined where the entry has none (the service counts 1). */
    hitsAddends: (number | undefined)[];
    /** The `rate_limits` entries it reads on this route (before any action is evaluated). */
    entries: any[];
    /** The domain of the call (the per-route config's, else the filter's). */
    domain: string;
    /** Where its entries came from. */
    from: "per-filter route" | "per-filter virtual host" | "filter's own rate_limits" | "route and virtual host rate_limits" | "disabled here" | "none";
}

/** A rate-limit filter's `response_headers_to_add` (the headers of its refusals), by lower-case name. */
function refusalHeadersOf(list: unknown): Record<string, string> {
    const items: any[] = Array.isArray(list) ? list : [];
    return Object.fromEntries(
        items.filter((h) => typeof h?.header?.key === "string").map((h) => [String(h.header.key).toLowerCase(), String(h.header.value ?? "")]),
    );
}

/** Which filters call which service, with which descriptors, for one request. */
export function listenerCalls(m: ListenerModel, req: ListenerRequest): FilterCall[] {
    const vh = m.virtualHosts[req.virtualHost];
    if (!vh) throw new Error(`virtual host ${req.virtualHost} is not on the modelled listener`);
    const route = vh.routes[req.route];
    if (!route) throw new Error(`route ${req.route} is not on virtual host ${req.virtualHost}`);
    const headers = { ...(req.headers ?? {}), ":path": req.path, ":method": "GET" };
    return m.filters.map((filter) => {
        const cfg = route.typedPerFilterConfig[filter.name] ?? vh.typedPerFilterConfig[filter.name];
        if (isDisabledConfig(cfg)) return { filter, descriptors: [], hitsAddends: [], entries: [], domain: filter.domain, from: "disabled here" };
        let entries: any[];
        let from: FilterCall["from"];
        const perFilter = field(cfg, "rate_limits");
        if (Array.isArray(perFilter) && perFilter.length) {
            entries = perFilter;
            from = route.typedPerFilterConfig[filter.name] ? "per-filter route" : "per-filter virtual host";
        } else if (filter.rateLimits.length) {
            entries = filter.rateLimits;
            from = "filter's own rate_limits";
        } else {
            const own = entriesOfStage(route.rateLimits, filter.stage);
            const vhMode = field(cfg, "vh_rate_limits") ?? "OVERRIDE";
            const useVh = vhMode === "INCLUDE" || (vhMode === "OVERRIDE" && own.length === 0);
            entries = [...own, ...(useVh ? entriesOfStage(vh.rateLimits, filter.stage) : [])];
            from = entries.length ? "route and virtual host rate_limits" : "none";
        }
        // The request path's descriptors, each with its cost as Envoy computes it (request-cost-model.ts): an
        // entry whose cost format yields no number sends nothing, one counted when the stream is done is not sent here.
        const sent = entries
            .map((rl) => ({ d: descriptorFor(rl, headers, req.clientAddress ?? "192.0.2.1"), cost: entryCost(rl, headers) }))
            .filter((x): x is { d: Entry[]; cost: EntryCost } => x.d !== undefined && x.cost.kind !== "dropped" && x.cost.kind !== "after-response");
        const descriptors = sent.map((x) => x.d);
        const hitsAddends = sent.map((x) => (x.cost.kind === "known" ? x.cost.hitsAddend : undefined));
        return { filter, descriptors, hitsAddends, entries, domain: cfg?.domain ?? filter.domain, from: descriptors.length ? from : "none" };
    });
}

/** Whether a per-filter config is Envoy's `FilterConfig` wrapper with `disabled: true`. */
export function isDisabledConfig(cfg: any): boolean {
    const t = cfg?.["@type"];
    return typeof t === "string" && t.endsWith("/envoy.config.route.v3.FilterConfig") && cfg.disabled === true;
}

/**
 * The answer when the services of `down` (cluster names) cannot answer and every other service
 * allows the request: the status of the first fail-closed filter that called a service that is
 * down, else 200.
 */
export function answerWith(calls: FilterCall[], down: ReadonlySet<string>): number {
    for (const c of calls) if (c.descriptors.length && down.has(c.filter.cluster) && c.filter.failureModeDeny) return c.filter.statusOnError;
    return 200;
}

/** Calls to each service (cluster name → number of calls) for one request. */
export function callsPerService(calls: FilterCall[]): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of calls) if (c.descriptors.length) out[c.filter.cluster] = (out[c.filter.cluster] ?? 0) + 1;
    return out;
}
