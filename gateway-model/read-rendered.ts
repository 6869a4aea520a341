/**
 * The gateway MODEL read from the objects this stack renders (Gateway, VirtualService, EnvoyFilters,
 * the rate-limit ConfigMaps): the routes, each rate-limit filter on the listener and the patches
 * that give the routes and virtual hosts their `rate_limits`. Pure.
 */
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { K8sObject } from "../lib/k8s-object";
import { GatewayModel, ModelRoute, RouteMatch, VhRateLimits, perFilterRateLimits, policyValues, reachesGatewayPods, vhRateLimitsOf } from "./model";
import { RenderedPatch, entriesOfStage, isServiceConfigMap, patchesOf, priorityOf, rateLimitFilterOf, serviceConfigOf } from "../builders/rendered-config";

/**
 * The config of the service a filter calls: the ConfigMap mounted by the Deployment named like the
 * cluster's service (`outbound|<port>||<service>.<namespace>.svc...`), else the only rate-limit ConfigMap.
 */
export function readConfig(objects: K8sObject[], cluster?: string): GatewayModel["config"] {
    const host = cluster?.split("|")[3];
    const [svc, ns] = host ? host.split(".") : [];
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === svc && (o.metadata.namespace ?? "default") === ns);
    const mounted: string[] = (deployment?.spec?.template?.spec?.volumes ?? []).map((v: any) => v.configMap?.name).filter(Boolean);
    const cm =
        objects.find((o) => isServiceConfigMap(o) && mounted.includes(o.metadata.name) && (o.metadata.namespace ?? "default") === ns) ??
        objects.find((o) => isServiceConfigMap(o));
    if (!cm) throw new Error("no rate-limit ConfigMap (data['config.yaml'] with a domain) in the rendered objects");
    return serviceConfigOf(cm);
}

export function readGateway(objects: K8sObject[]): GatewayModel["gateway"] {
    // Istio's Gateway (an ambient stack also renders a Gateway API Gateway, which holds no routes).
    const gateways = objects.filter((o) => o.kind === "Gateway" && String(o.apiVersion ?? "").startsWith("networking.istio.io/"));
    if (gateways.length !== 1) throw new Error(`expected one Gateway in the rendered objects, found ${gateways.length}`);
    const gw = gateways[0];
    const server = (gw.spec?.servers ?? []).find((s: any) => /^HTTP$/i.test(s.port?.protocol ?? ""));
    if (!server) throw new Error(`Gateway ${gw.metadata.name} has no HTTP server`);
    return { name: gw.metadata.name, port: Number(server.port.number), selector: gw.spec?.selector ?? {} };
}

/** The request's host is not one the stack's VirtualService serves (another team's, say). */
export class HostNotServed extends Error {}

/**
 * The VirtualService host Envoy picks for a request's `Host` (without its port): an exact name
 * first, then the longest `*.<suffix>` wildcard, then `*`; undefined when none serves it.
 */
export function pickHost(hosts: string[], requestHost: string): string | undefined {
    const h = requestHost.toLowerCase().replace(/:\d+$/, "");
    if (hosts.includes(h)) return h;
    const wild = hosts.filter((x) => x.startsWith("*.") && h.endsWith(x.slice(1))).sort((a, b) => b.length - a.length);
    if (wild.length) return wild[0];
    return hosts.includes("*") ? "*" : undefined;
}

/** The one VirtualService bound to the Gateway (by its name, or `<namespace>/<name>`). */
function boundVirtualService(objects: K8sObject[], gateway: GatewayModel["gateway"]): K8sObject {
    const vss = objects.filter(
        (o) => o.kind === "VirtualService" && (o.spec?.gateways ?? []).some((g: string) => g === gateway.name || g.endsWith(`/${gateway.name}`)),
    );
    if (vss.length !== 1) throw new Error(`expected one VirtualService bound to Gateway ${gateway.name}, found ${vss.length}`);
    return vss[0];
}

/** The VirtualService's hosts and the one serving `requestHost` (default: the first); throws HostNotServed when none does. */
function servedHost(vs: K8sObject, requestHost: string | undefined): { host: string; hosts: string[] } {
    const hosts: string[] = vs.spec?.hosts ?? [];
    if (!hosts.length) throw new Error(`VirtualService ${vs.metadata.name} has no host`);
    const host = requestHost === undefined ? hosts[0] : pickHost(hosts, requestHost);
    if (host === undefined)
        throw new HostNotServed(
            `no host of VirtualService ${vs.metadata.name} (${hosts.join(", ")}) serves host ${requestHost}: this stack routes none of its requests, sends no descriptor and never calls the rate-limit service for it`,
        );
    return { host, hosts };
}

/** One VirtualService `http[].match[]` entry in Envoy's terms (only `uri` is modelled). */
function routeMatchOf(mt: any, where: string): RouteMatch {
    const others = Object.keys(mt).filter((k) => !["uri", "name"].includes(k));
    if (others.length) {
        throw new Error(
            `${where} matches on ${others.join(", ")}: the model reads only a route's uri (exact, prefix or regex), so it cannot say which requests this route takes. Remove those fields from the VirtualService the program declares, or leave the VirtualService out of the program (a catch-all route is then modelled)`,
        );
    }
    const uri = mt.uri;
    if (uri === undefined) return { kind: "prefix", value: "/" };
    if (uri.exact !== undefined) return { kind: "exact", value: uri.exact };
    if (uri.prefix !== undefined) return { kind: "prefix", value: uri.prefix };
    if (uri.regex !== undefined) return { kind: "regex", value: uri.regex };
    throw new Error(`VirtualService uri match ${JSON.stringify(uri)} is not modelled`);
}

/** The VirtualService's routes, before any patch gives them rate_limits. */
function virtualServiceRoutes(vs: K8sObject): ModelRoute[] {
    return (vs.spec?.http ?? []).map((h: any, index: number) => {
        // Istio: a route whose match list is empty (or absent) matches everything.
        const matches: RouteMatch[] = (h.match?.length ? h.match : [{}]).map((mt: any, k: number) =>
            routeMatchOf(mt, `VirtualService ${vs.metadata?.namespace ? `${vs.metadata.namespace}/` : ""}${vs.metadata?.name} http[${index}].match[${k}]`),
        );
        return { name: h.name, index, matches, rateLimits: [], vhRateLimits: "OVERRIDE" as VhRateLimits };
    });
}

/** The rate-limit HTTP filters on the gateway's listener, in the order inserted: configured name, stage and the service's cluster. */
function listenerRateLimitFilters(filters: K8sObject[], gatewayPort: number): { name: string; stage: number; cluster?: string }[] {
    const out: { name: string; stage: number; cluster?: string }[] = [];
    for (const p of filters.flatMap(patchesOf)) {
        const rl = rateLimitFilterOf(p);
        if (!rl || !p.onGateway || (p.port !== undefined && p.port !== gatewayPort)) continue;
        const name = rl.name ?? RATELIMIT_FILTER;
        if (out.some((x) => x.name === name)) continue;
        out.push({ name, stage: rl.stage, ...(rl.cluster ? { cluster: rl.cluster } : {}) });
    }
    return out;
}

/** Where the patches are read for: the Gateway server's port, the request's virtual host, the rate-limit filter's name and stage. */
interface PatchTarget {
    port: number;
    virtualHost: string;
    rlName: string;
    stage: number;
}

/** What the EnvoyFilters' patches say, collected patch by patch. */
interface PatchFindings {
    domain?: string;
    failureModeDeny: boolean;
    rateLimitHeaders?: boolean;
    vhostPerFilter?: GatewayModel["vhostPerFilter"];
    /** `vh_rate_limits` of the virtual host's RateLimitPerRoute. */
    vhostMode?: VhRateLimits;
    vhostRateLimits: GatewayModel["vhostRateLimits"];
    filterNames: string[];
    /** The routes whose own RateLimitPerRoute sets `vh_rate_limits`. */
    ownMode: Set<ModelRoute>;
    vhostPolicy: string[];
}

/** An HTTP_FILTER patch inserting the listener's rate-limit filter: its domain and failure mode. */
function readFilterPatch(p: RenderedPatch, t: PatchTarget, found: PatchFindings): void {
    const rl = rateLimitFilterOf(p);
    if (!rl || rl.name !== t.rlName) return;
    if (found.domain !== undefined && found.domain !== rl.domain)
        throw new Error(`two ratelimit filters with different domains (${found.domain}, ${rl.domain})`);
    found.domain = rl.domain;
    found.failureModeDeny = rl.failureModeDeny;
    found.rateLimitHeaders = rl.rateLimitHeaders;
    found.filterNames.push(p.envoyFilter.metadata.name);
}

/** A VIRTUAL_HOST patch: the virtual host's own rate_limits of the stage, and its RateLimitPerRoute. */
function readVirtualHostPatch(p: RenderedPatch, t: PatchTarget, found: PatchFindings): void {
    const name = p.envoyFilter.metadata.name;
    found.vhostPolicy.push(...policyValues(p.responseHeadersToAdd));
    const own = entriesOfStage(p.rateLimits, t.stage);
    if (own.length) {
        found.vhostRateLimits.push({ rateLimits: own, envoyFilter: name });
        found.filterNames.push(name);
    }
    const per = perFilterRateLimits(p.typedPerFilterConfig, t.rlName);
    if (per) {
        found.vhostPerFilter = { rateLimits: per, envoyFilter: name };
        found.filterNames.push(name);
    }
    found.vhostMode = vhRateLimitsOf(p.typedPerFilterConfig, t.rlName) ?? found.vhostMode;
}

/** An HTTP_ROUTE patch: the named routes' own rate_limits of the stage and their RateLimitPerRoute. */
function readRoutePatch(p: RenderedPatch, t: PatchTarget, routes: ModelRoute[], found: PatchFindings): void {
    const f = p.envoyFilter;
    const routeName = p.route;
    const own = entriesOfStage(p.rateLimits, t.stage);
    const mode = vhRateLimitsOf(p.typedPerFilterConfig, t.rlName);
    const per = perFilterRateLimits(p.typedPerFilterConfig, t.rlName);
    const any = (p.rateLimits ?? []).length > 0;
    const policy = policyValues(p.responseHeadersToAdd);
    if (policy.length) for (const r of routes.filter((r) => r.name === routeName)) r.policy = [...(r.policy ?? []), ...policy];
    if (!any && !mode && !per) return;
    if (!routeName) throw new Error(`EnvoyFilter ${f.metadata.name}: a route patch without route name is not modelled`);
    for (const r of routes.filter((r) => r.name === routeName)) {
        if (any) r.anyRateLimits = true;
        if (!own.length && !mode && !per) continue;
        if (per) r.perFilter = { rateLimits: per, envoyFilter: f.metadata.name };
        if (own.length) r.rateLimits.push(...own);
        if (mode) {
            r.vhRateLimits = mode;
            found.ownMode.add(r);
        }
        r.envoyFilter = [r.envoyFilter, f.metadata.name].filter(Boolean).join(", ");
    }
    // Only another stage's entries: a patch of another filter, not one this filter reads.
    if (own.length || mode || per) found.filterNames.push(f.metadata.name);
}

/** One patch of an EnvoyFilter on the gateway's pods, read into `found` (and the routes). */
function readPatch(p: RenderedPatch, t: PatchTarget, routes: ModelRoute[], found: PatchFindings): void {
    if (!p.onGateway) return;
    if (p.applyTo === "HTTP_FILTER") {
        // A listener port other than the Gateway server's: the filter is not on this listener.
        if (p.port === undefined || p.port === t.port) readFilterPatch(p, t, found);
        return;
    }
    if (!(p.virtualHost === undefined || p.virtualHost === "" || p.virtualHost === t.virtualHost)) return;
    if (p.applyTo === "VIRTUAL_HOST") readVirtualHostPatch(p, t, found);
    if (p.applyTo === "HTTP_ROUTE") readRoutePatch(p, t, routes, found);
}

/** A patch gives the virtual host `name` rate_limits of the stage (its own or per filter). */
function patchLimits(p: RenderedPatch, name: string, rlName: string, stage: number): boolean {
    const vhName = p.virtualHost;
    const per = !!perFilterRateLimits(p.typedPerFilterConfig, rlName);
    const has = (p.applyTo === "VIRTUAL_HOST" || p.applyTo === "HTTP_ROUTE") && (per || entriesOfStage(p.rateLimits, stage).length > 0);
    return has && p.onGateway && (vhName === undefined || vhName === "" || vhName === name);
}

/**
 * Reads the gateway-side rate-limit model from the rendered objects for requests to `requestHost`
 * (default: the VirtualService's first host). Throws when a piece is missing or no host of the
 * VirtualService serves `requestHost`.
 */
export function gatewayModel(objects: K8sObject[], requestHost?: string, filterName?: string): GatewayModel {
    const gateway = readGateway(objects);
    const vs = boundVirtualService(objects, gateway);
    // Only filters that select the gateway's pods and patch the GATEWAY context (or ANY, Istio's
    // default when `context` is absent) act on it.
    // In Istio's order: lower priority first (a later patch inserts its filter nearer the router, so it runs later).
    const filters = objects
        .filter((o) => o.kind === "EnvoyFilter" && reachesGatewayPods(o.spec, gateway.selector))
        .sort((a, b) => priorityOf(a) - priorityOf(b));
    // First the rate-limit filters on this listener: each one's name and stage decide which patches it reads.
    const listed = listenerRateLimitFilters(filters, gateway.port);
    // Lower stages first (the shared layout's fixed filter at 0, its per-value filter at 1), else as inserted.
    const chosen = (filterName === undefined ? listed : listed.filter((f) => f.name === filterName)).sort((a, b) => a.stage - b.stage);
    if (filterName !== undefined && !chosen.length)
        throw new Error(`no rate-limit filter named ${filterName} on Gateway ${gateway.name}'s port ${gateway.port}`);
    const models = (chosen.length ? chosen : [{ name: RATELIMIT_FILTER, stage: 0 }]).map((f) => filterModel(objects, gateway, vs, filters, f, requestHost));
    const [first, ...others] = models;
    return others.length ? { ...first!, others } : first!;
}

/** The model of one rate-limit filter on the listener (its patches, domain and service config). */
function filterModel(
    objects: K8sObject[],
    gateway: GatewayModel["gateway"],
    vs: K8sObject,
    filters: K8sObject[],
    listenerFilter: { name: string; stage: number; cluster?: string },
    requestHost: string | undefined,
): GatewayModel {
    const { host, hosts } = servedHost(vs, requestHost);
    const virtualHost = `${host}:${gateway.port}`;
    const routes = virtualServiceRoutes(vs);
    const rlName = listenerFilter.name;
    const stage = listenerFilter.stage;
    const target: PatchTarget = { port: gateway.port, virtualHost, rlName, stage };
    const found: PatchFindings = { failureModeDeny: false, vhostRateLimits: [], filterNames: [], ownMode: new Set(), vhostPolicy: [] };
    for (const p of filters.flatMap(patchesOf)) readPatch(p, target, routes, found);
    const { domain, vhostPerFilter, vhostMode } = found;
    if (domain === undefined) throw new Error(`no EnvoyFilter inserts ${RATELIMIT_FILTER} into Gateway ${gateway.name}'s pods on port ${gateway.port}`);
    // Which of the VirtualService's virtual hosts any rate_limits reach (a patch names it, or names none / "").
    const virtualHosts = hosts
        .map((h) => `${h}:${gateway.port}`)
        .map((name) => ({
            name,
            limited: filters.flatMap(patchesOf).some((p) => patchLimits(p, name, rlName, stage)),
        }));
    // Envoy resolves RateLimitPerRoute most specific first: the route's own, else the virtual host's.
    if (vhostMode) for (const r of routes) if (!found.ownMode.has(r)) r.vhRateLimits = vhostMode;

    return {
        source: `VirtualService ${vs.metadata.name}`,
        gateway,
        virtualHost,
        virtualHosts,
        routes,
        domain,
        failureModeDeny: found.failureModeDeny,
        rateLimitHeaders: found.rateLimitHeaders === true,
        filterNames: [...new Set(found.filterNames)],
        vhostRateLimits: found.vhostRateLimits,
        ...(vhostPerFilter ? { vhostPerFilter } : {}),
        ...(found.vhostPolicy.length ? { vhostPolicy: found.vhostPolicy } : {}),
        httpFilterName: rlName,
        stage,
        ...(listenerFilter.cluster ? { service: listenerFilter.cluster } : {}),
        config: readConfig(objects, listenerFilter.cluster),
    };
}
