/**
 * MODEL of the ingress gateway (there is no Envoy binary here): what rate-limit request Envoy
 * builds for a request from the gateway's route configuration, and which limit of the rate-limit
 * service's `config.yaml` answers it.
 *
 * Two front ends build the same model, and the istio tier checks that they agree:
 * - `gatewayModel(objects)` reads the objects this stack renders (Gateway, VirtualService,
 *   EnvoyFilters, the rate-limit ConfigMap); nothing is a constant of the specification.
 * - `gatewayModelFromEnvoy(...)` reads the route configuration Istio's own generator produced.
 * Pure functions, no I/O.
 *
 * Envoy behaviour modelled (docs/upstream.md has the sources):
 * - Path normalization before routing (Istio's default `pathNormalization: BASE`, RFC 3986): `\`
 *   becomes `/`, `.`/`..` segments (also written `%2E`) are resolved; repeated slashes are kept;
 *   other percent-encodings are left as they are. The query string is never touched; a fragment
 *   is never part of the path (Envoy strips or refuses it).
 * - Route selection: the routes of the virtual host in order, the first whose match applies wins:
 *   `exact`/`path` compares the path without its query, `prefix` the start of the whole `:path`,
 *   `regex` the path without its query (RE2 full match); none → 404 and no rate-limit call.
 * - A route's own `rate_limits` and the virtual host's combine by the rate-limit filter's per-route
 *   `vh_rate_limits`: OVERRIDE (default: the virtual host's only when the route has none),
 *   INCLUDE (both), IGNORE (the route's only).
 * - Several rate-limit filters may share a listener. A filter finds its per-route config by its own
 *   configured name (`envoy.filters.http.ratelimit` or a name of its own such as
 *   `envoy.filters.http.ratelimit/<namespace>/<service>`): the route's, else the virtual host's. A
 *   `RateLimitPerRoute` with `rate_limits` makes the filter send exactly those (its `domain`, when
 *   set, replaces the filter's); otherwise the filter reads the route's and virtual host's own
 *   `rate_limits` of its `stage` (0 by default), which every filter of that stage reads.
 * - One `rate_limits` element yields one descriptor, and only if every action yields an entry:
 *   `request_headers` (`:path` → the full path, query included; another header → its value, the
 *   first one when repeated, and nothing when it is absent), `header_value_match` (RE2 full match,
 *   exact, presence; a repeated header's values joined with `,`: getAllOfHeaderAsString),
 *   `generic_key`, `remote_address` (the trusted client address, gateway-model/client-address.ts),
 *   `masked_remote_address` (that address with its host bits cleared, `<network>/<length>`), and the
 *   CEL extension with `request.url_path` (path without query), `request.path` (with it), or
 *   `size(request.url_path) <= N ? request.url_path : "<value>"` (the path up to N code points).
 * - A config entry with `shadow_mode: true` is counted but never refuses (not `limited`).
 * - The rate-limit service looks each descriptor up in its config: `key_value`, then a wildcard
 *   value (`prefix*`), then the key's catch-all; the counter (bucket) key is
 *   `<domain>_<key>_<value>_<window start>`, so a catch-all counts each distinct value apart.
 */
import { parse } from "yaml";
import { maskedRemoteAddress } from "../builders/client-cidr";
import { compileFullMatch } from "../lib/formats";
import { trustedClientAddress } from "./client-address";
import { RATELIMIT_FILTER, entriesOfStage, isRateLimitFilter } from "../builders/envoy-filters";
import { EXPR_DESCRIPTOR_EXTENSION } from "../builders/rules";
import { K8sObject } from "../lib/k8s-object";

export interface Entry {
    key: string;
    value: string;
}

export interface AppliedLimit {
    /** Config entry that matched, e.g. `PATH=api` or `PATH (catch-all)`. */
    entry: string;
    unit: string;
    requestsPerUnit: number;
    unlimited: boolean;
    /** `shadow_mode`: counted and reported, never refused. */
    shadow: boolean;
}

export interface DescriptorExplanation {
    entries: Entry[];
    /** The rate-limit service this descriptor is sent to (the calling filter's gRPC cluster), when known. */
    service?: string;
    /** Undefined: the config has no limit for it; the service answers OK (never limited). */
    limit?: AppliedLimit;
    /** Counter key the service increments in Redis, with the window start left as `{window}`. */
    bucket?: string;
}

export type VhRateLimits = "OVERRIDE" | "INCLUDE" | "IGNORE";

export interface Explanation {
    path: string;
    /** The path after Envoy's normalization (what routing and the descriptors see). */
    normalizedPath: string;
    virtualHost: string;
    /** Undefined: no route matches, Envoy answers 404 without asking the rate-limit service. */
    route?: { name?: string; index: number; match: string; virtualService: string };
    /** Where the `rate_limits` came from (`per-filter`: `RateLimitPerRoute` under the filter's name). */
    rateLimitsFrom: {
        level: "route" | "virtual host" | "route and virtual host" | "route per-filter" | "virtual host per-filter" | "none";
        envoyFilter?: string;
    };
    domain: string;
    descriptors: DescriptorExplanation[];
    /**
     * The calls the gateway makes for the request: one per rate-limit filter that produced
     * descriptors (a filter with none makes no call), in the filters' order.
     */
    calls: { filter: string; service: string; domain: string; descriptors: DescriptorExplanation[] }[];
    /** True when at least one descriptor has a limit, i.e. the request can be refused with 429. */
    limited: boolean;
}

/** One route match of the model, in Envoy's terms. */
export interface RouteMatch {
    kind: "exact" | "prefix" | "regex";
    value: string;
}

export interface ModelRoute {
    name?: string;
    /** Position of the route's source (VirtualService `http[]` entry, or Envoy route). */
    index: number;
    matches: RouteMatch[];
    /** The route's own rate_limits (of the model's filter's stage). */
    rateLimits: any[];
    /** The route has `rate_limits` of any stage (Envoy's OVERRIDE then ignores the virtual host's, whatever the filter's stage). */
    anyRateLimits?: boolean;
    vhRateLimits: VhRateLimits;
    /** The EnvoyFilter(s) that gave the route its rate_limits, when known. */
    envoyFilter?: string;
    /** `RateLimitPerRoute.rate_limits` under the rate-limit filter's name on this route: then only these are sent. */
    perFilter?: { rateLimits: any[]; envoyFilter: string };
}

export interface GatewayModel {
    /** Where the model was read from, e.g. `VirtualService bookinfo` or `Istio-generated route configuration`. */
    source: string;
    gateway: { name: string; port: number; selector: Record<string, string> };
    /** The virtual host the model's request is routed on (`<host>:<port>`). */
    virtualHost: string;
    /** Every virtual host of the VirtualService on the gateway, and whether any `rate_limits` reach it. */
    virtualHosts?: { name: string; limited: boolean }[];
    routes: ModelRoute[];
    domain: string;
    failureModeDeny: boolean;
    filterNames: string[];
    vhostRateLimits: { rateLimits: any[]; envoyFilter: string }[];
    /** `RateLimitPerRoute.rate_limits` under the filter's name on the virtual host (routes without their own use it). */
    vhostPerFilter?: { rateLimits: any[]; envoyFilter: string };
    /** The rate-limit HTTP filter's configured name (where its per-route config is found). */
    httpFilterName?: string;
    /** The filter's `stage`: route and virtual-host `rate_limits` of another stage are not its. */
    stage?: number;
    /** The service the filter calls (its gRPC cluster name), when known. */
    service?: string;
    config: { domain: string; descriptors: any[] };
    /** The other rate-limit filters on the listener, each its own model (they run too, in this order). */
    others?: GatewayModel[];
}

/** `RateLimitPerRoute.rate_limits` under `name` in a `typed_per_filter_config` map, when set and non-empty. */
export function perFilterRateLimits(typedPerFilterConfig: any, name: string): any[] | undefined {
    const rl = field(typedPerFilterConfig?.[name], "rate_limits");
    return Array.isArray(rl) && rl.length ? rl : undefined;
}

/** snake_case or camelCase field of an Envoy/Istio JSON object (both are valid). */
function field(o: any, snake: string): any {
    if (o == null) return undefined;
    if (o[snake] !== undefined) return o[snake];
    const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    return o[camel];
}

function isSubset(sub: Record<string, string> | undefined, sup: Record<string, string>): boolean {
    return Object.entries(sub ?? {}).every(([k, v]) => sup[k] === v);
}

/** `vh_rate_limits` of a `typed_per_filter_config` map, when it configures the rate-limit filter. */
function vhRateLimitsOf(typedPerFilterConfig: any, name: string = RATELIMIT_FILTER): VhRateLimits | undefined {
    const c = typedPerFilterConfig?.[name];
    if (!c) return undefined;
    const v = field(c, "vh_rate_limits") ?? "OVERRIDE";
    if (v === "OVERRIDE" || v === "INCLUDE" || v === "IGNORE") return v;
    if (v === 0 || v === 1 || v === 2) return (["OVERRIDE", "INCLUDE", "IGNORE"] as const)[v];
    throw new Error(`vh_rate_limits ${JSON.stringify(v)} is not modelled`);
}

/**
 * The config of the service a filter calls: the ConfigMap mounted by the Deployment named like the
 * cluster's service (`outbound|<port>||<service>.<namespace>.svc...`), else the only rate-limit ConfigMap.
 */
function readConfig(objects: K8sObject[], cluster?: string): GatewayModel["config"] {
    const isConfig = (o: K8sObject) => o.kind === "ConfigMap" && typeof o.data?.["config.yaml"] === "string" && /(^|\n)domain:/.test(o.data["config.yaml"]);
    const host = cluster?.split("|")[3];
    const [svc, ns] = host ? host.split(".") : [];
    const deployment = objects.find((o) => o.kind === "Deployment" && o.metadata.name === svc && (o.metadata.namespace ?? "default") === ns);
    const mounted: string[] = (deployment?.spec?.template?.spec?.volumes ?? []).map((v: any) => v.configMap?.name).filter(Boolean);
    const cm =
        objects.find((o) => isConfig(o) && mounted.includes(o.metadata.name) && (o.metadata.namespace ?? "default") === ns) ?? objects.find((o) => isConfig(o));
    if (!cm) throw new Error("no rate-limit ConfigMap (data['config.yaml'] with a domain) in the rendered objects");
    const config = parse(cm.data["config.yaml"]);
    return { domain: config?.domain, descriptors: config?.descriptors ?? [] };
}

function readGateway(objects: K8sObject[]): GatewayModel["gateway"] {
    const gateways = objects.filter((o) => o.kind === "Gateway");
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
function routeMatchOf(mt: any): RouteMatch {
    if (Object.keys(mt).some((k) => !["uri", "name"].includes(k))) {
        throw new Error(`VirtualService match fields ${Object.keys(mt).join(", ")} are not modelled`);
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
        const matches: RouteMatch[] = (h.match?.length ? h.match : [{}]).map(routeMatchOf);
        return { name: h.name, index, matches, rateLimits: [], vhRateLimits: "OVERRIDE" as VhRateLimits };
    });
}

/** A patch's `match.context` acts on the gateway: GATEWAY, or ANY (Istio's default when absent). */
function onGateway(context: string | undefined): boolean {
    const c = context ?? "ANY";
    return c === "GATEWAY" || c === "ANY";
}

/** The rate-limit HTTP filters on the gateway's listener, in the order inserted: configured name, stage and the service's cluster. */
function listenerRateLimitFilters(filters: K8sObject[], gatewayPort: number): { name: string; stage: number; cluster?: string }[] {
    const out: { name: string; stage: number; cluster?: string }[] = [];
    for (const f of filters) {
        for (const p of f.spec?.configPatches ?? []) {
            const port = field(p.match?.listener, "port_number");
            const value = p.patch?.value ?? {};
            if (field(p, "apply_to") !== "HTTP_FILTER" || !onGateway(p.match?.context)) continue;
            if ((port !== undefined && Number(port) !== gatewayPort) || !isRateLimitFilter(value)) continue;
            const name = value.name ?? RATELIMIT_FILTER;
            if (out.some((x) => x.name === name)) continue;
            const tc = field(value, "typed_config");
            const cluster = field(field(field(field(tc, "rate_limit_service"), "grpc_service"), "envoy_grpc"), "cluster_name");
            out.push({ name, stage: Number(field(tc, "stage") ?? 0), ...(cluster ? { cluster } : {}) });
        }
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
    vhostPerFilter?: GatewayModel["vhostPerFilter"];
    /** `vh_rate_limits` of the virtual host's RateLimitPerRoute. */
    vhostMode?: VhRateLimits;
    vhostRateLimits: GatewayModel["vhostRateLimits"];
    filterNames: string[];
    /** The routes whose own RateLimitPerRoute sets `vh_rate_limits`. */
    ownMode: Set<ModelRoute>;
}

/** An HTTP_FILTER patch inserting the listener's rate-limit filter: its domain and failure mode. */
function readFilterPatch(f: K8sObject, value: any, t: PatchTarget, found: PatchFindings): void {
    if (value.name !== t.rlName || !isRateLimitFilter(value)) return;
    const tc = field(value, "typed_config") ?? {};
    if (found.domain !== undefined && found.domain !== tc.domain)
        throw new Error(`two ratelimit filters with different domains (${found.domain}, ${tc.domain})`);
    found.domain = tc.domain;
    found.failureModeDeny = field(tc, "failure_mode_deny") === true;
    found.filterNames.push(f.metadata.name);
}

/** A VIRTUAL_HOST patch: the virtual host's own rate_limits of the stage, and its RateLimitPerRoute. */
function readVirtualHostPatch(f: K8sObject, value: any, t: PatchTarget, found: PatchFindings): void {
    const own = entriesOfStage(field(value, "rate_limits"), t.stage);
    if (own.length) {
        found.vhostRateLimits.push({ rateLimits: own, envoyFilter: f.metadata.name });
        found.filterNames.push(f.metadata.name);
    }
    const per = perFilterRateLimits(field(value, "typed_per_filter_config"), t.rlName);
    if (per) {
        found.vhostPerFilter = { rateLimits: per, envoyFilter: f.metadata.name };
        found.filterNames.push(f.metadata.name);
    }
    found.vhostMode = vhRateLimitsOf(field(value, "typed_per_filter_config"), t.rlName) ?? found.vhostMode;
}

/** An HTTP_ROUTE patch: the named routes' own rate_limits of the stage and their RateLimitPerRoute. */
function readRoutePatch(f: K8sObject, value: any, routeName: string | undefined, t: PatchTarget, routes: ModelRoute[], found: PatchFindings): void {
    const all = field(value.route, "rate_limits");
    const own = entriesOfStage(all, t.stage);
    const mode = vhRateLimitsOf(field(value, "typed_per_filter_config"), t.rlName);
    const per = perFilterRateLimits(field(value, "typed_per_filter_config"), t.rlName);
    const any = Array.isArray(all) && all.length > 0;
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
function readPatch(f: K8sObject, p: any, t: PatchTarget, routes: ModelRoute[], found: PatchFindings): void {
    const applyTo = field(p, "apply_to");
    const match = p.match ?? {};
    if (!onGateway(match.context)) return;
    const value = p.patch?.value ?? {};
    if (applyTo === "HTTP_FILTER") {
        // A listener port other than the Gateway server's: the filter is not on this listener.
        const port = field(match.listener, "port_number");
        if (port === undefined || Number(port) === t.port) readFilterPatch(f, value, t, found);
        return;
    }
    const vh = field(match, "route_configuration")?.vhost;
    const vhName: string | undefined = vh?.name;
    if (!(vhName === undefined || vhName === "" || vhName === t.virtualHost)) return;
    if (applyTo === "VIRTUAL_HOST") readVirtualHostPatch(f, value, t, found);
    if (applyTo === "HTTP_ROUTE") readRoutePatch(f, value, vh?.route?.name, t, routes, found);
}

/** A patch gives the virtual host `name` rate_limits of the stage (its own or per filter). */
function patchLimits(p: any, name: string, rlName: string, stage: number): boolean {
    const applyTo = field(p, "apply_to");
    const vhName: string | undefined = field(p.match ?? {}, "route_configuration")?.vhost?.name;
    const value = p.patch?.value ?? {};
    const per = !!perFilterRateLimits(field(value, "typed_per_filter_config"), rlName);
    const has =
        applyTo === "VIRTUAL_HOST"
            ? per || entriesOfStage(field(value, "rate_limits"), stage).length > 0
            : applyTo === "HTTP_ROUTE"
              ? per || entriesOfStage(field(value.route, "rate_limits"), stage).length > 0
              : false;
    return has && onGateway(p.match?.context) && (vhName === undefined || vhName === "" || vhName === name);
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
        .filter((o) => o.kind === "EnvoyFilter" && isSubset(o.spec?.workloadSelector?.labels, gateway.selector))
        .sort((a, b) => Number(a.spec?.priority ?? 0) - Number(b.spec?.priority ?? 0));
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
    const found: PatchFindings = { failureModeDeny: false, vhostRateLimits: [], filterNames: [], ownMode: new Set() };
    for (const f of filters) for (const p of f.spec?.configPatches ?? []) readPatch(f, p, target, routes, found);
    const { domain, vhostPerFilter, vhostMode } = found;
    if (domain === undefined) throw new Error(`no EnvoyFilter inserts ${RATELIMIT_FILTER} into Gateway ${gateway.name}'s pods on port ${gateway.port}`);
    // Which of the VirtualService's virtual hosts any rate_limits reach (a patch names it, or names none / "").
    const virtualHosts = hosts
        .map((h) => `${h}:${gateway.port}`)
        .map((name) => ({
            name,
            limited: filters.some((f) => (f.spec?.configPatches ?? []).some((p: any) => patchLimits(p, name, rlName, stage))),
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
        filterNames: [...new Set(found.filterNames)],
        vhostRateLimits: found.vhostRateLimits,
        ...(vhostPerFilter ? { vhostPerFilter } : {}),
        httpFilterName: rlName,
        stage,
        ...(listenerFilter.cluster ? { service: listenerFilter.cluster } : {}),
        config: readConfig(objects, listenerFilter.cluster),
    };
}

/**
 * The same model read from Envoy's route configuration as Istio generates it (protobuf JSON of a
 * `RouteConfiguration`), with the domain and failure mode of the generated rate-limit filter and
 * the rate-limit service's config from the rendered objects.
 */
export function gatewayModelFromEnvoy(
    routeConfiguration: any,
    virtualHost: string,
    filter: { domain: string; failureModeDeny: boolean; stage?: number; cluster?: string; name?: string },
    objects: K8sObject[],
): GatewayModel {
    const stage = filter.stage ?? 0;
    const rlName = filter.name ?? RATELIMIT_FILTER;
    const vh = (field(routeConfiguration, "virtual_hosts") ?? []).find((v: any) => v.name === virtualHost);
    if (!vh) throw new Error(`route configuration ${routeConfiguration?.name} has no virtual host ${virtualHost}`);
    const vhMode = vhRateLimitsOf(field(vh, "typed_per_filter_config"), rlName) ?? "OVERRIDE";
    const routes: ModelRoute[] = (vh.routes ?? []).map((r: any, index: number) => {
        const m = r.match ?? {};
        const known = ["path", "prefix", "safe_regex", "safeRegex", "path_separated_prefix", "pathSeparatedPrefix", "case_sensitive", "caseSensitive"];
        const extra = Object.keys(m).filter((k) => !known.includes(k));
        if (extra.length) throw new Error(`Envoy route match fields ${extra.join(", ")} are not modelled`);
        if (field(m, "case_sensitive") === false) throw new Error("case-insensitive route matches are not modelled");
        let match: RouteMatch;
        if (m.path !== undefined) match = { kind: "exact", value: m.path };
        else if (m.prefix !== undefined) match = { kind: "prefix", value: m.prefix };
        else if (field(m, "safe_regex")) match = { kind: "regex", value: field(m, "safe_regex").regex };
        else throw new Error(`Envoy route match ${JSON.stringify(m)} is not modelled`);
        return {
            name: r.name,
            index,
            matches: [match],
            rateLimits: entriesOfStage(field(r.route, "rate_limits"), stage),
            ...((field(r.route, "rate_limits") ?? []).length ? { anyRateLimits: true } : {}),
            vhRateLimits: vhRateLimitsOf(field(r, "typed_per_filter_config"), rlName) ?? vhMode,
            envoyFilter: "(generated)",
        };
    });
    const vhRl = entriesOfStage(field(vh, "rate_limits"), stage);
    return {
        source: "Istio-generated route configuration",
        gateway: readGateway(objects),
        virtualHost,
        routes,
        domain: filter.domain,
        failureModeDeny: filter.failureModeDeny,
        filterNames: [],
        vhostRateLimits: vhRl.length ? [{ rateLimits: vhRl, envoyFilter: "(generated)" }] : [],
        stage,
        httpFilterName: rlName,
        ...(filter.cluster ? { service: filter.cluster } : {}),
        config: readConfig(objects, filter.cluster),
    };
}

/**
 * The request path as Envoy's RFC 3986 normalization (Istio's default `BASE`) leaves it: `\` → `/`,
 * `%2E`/`%2e` → `.`, dot segments resolved; the query is kept as sent; a fragment is dropped.
 */
export function normalizePath(path: string): string {
    const hash = path.indexOf("#");
    const noFragment = hash >= 0 ? path.slice(0, hash) : path;
    const q = noFragment.indexOf("?");
    const rawPath = q >= 0 ? noFragment.slice(0, q) : noFragment;
    const query = q >= 0 ? noFragment.slice(q) : "";
    const p = rawPath.replace(/\\/g, "/").replace(/%2e/gi, ".");
    const out: string[] = [];
    const segs = p.split("/");
    if (segs[0] === "") segs.shift();
    segs.forEach((seg, i) => {
        const last = i === segs.length - 1;
        if (seg === ".") {
            if (last) out.push("");
        } else if (seg === "..") {
            out.pop();
            if (last) out.push("");
        } else out.push(seg);
    });
    return `/${out.join("/")}${query}`;
}

/** The path without its query (and fragment): CEL's `request.url_path`. */
export function urlPath(path: string): string {
    return path.split(/[?#]/)[0];
}

function routeMatches(m: RouteMatch, path: string): boolean {
    if (m.kind === "exact") return urlPath(path) === m.value;
    if (m.kind === "prefix") return path.startsWith(m.value);
    return fullMatch(m.value, urlPath(path));
}

function matchText(m: RouteMatch): string {
    return `${m.kind} ${m.value}`;
}

/** RE2 full match, as Envoy's `safe_regex` (google_re2): the same compiler the config validation uses. */
export function fullMatch(regex: string, s: string): boolean {
    let re = compiled.get(regex);
    if (!re) compiled.set(regex, (re = compileFullMatch(regex)));
    return re.test(s);
}
const compiled = new Map<string, { test(s: string): boolean }>();

/** Route the gateway picks for a normalized `path`, or undefined (404). */
export function selectRoute(m: GatewayModel, path: string): { route: ModelRoute; match: RouteMatch } | undefined {
    for (const route of m.routes) {
        const match = route.matches.find((mt) => routeMatches(mt, path));
        if (match) return { route, match };
    }
    return undefined;
}

/** The entries one `rate_limits` element produces for a request with these headers, or undefined. */
export function descriptorFor(
    rateLimit: any,
    headers: Record<string, string>,
    clientAddress?: string,
    firstValues?: Record<string, string>,
): Entry[] | undefined {
    const entries: Entry[] = [];
    for (const action of rateLimit.actions ?? []) {
        const rh = field(action, "request_headers");
        const hvm = field(action, "header_value_match");
        const gk = field(action, "generic_key");
        const ext = action.extension;
        const ra = field(action, "remote_address");
        const mra = field(action, "masked_remote_address");
        if (mra) {
            const masked =
                clientAddress === undefined
                    ? undefined
                    : maskedRemoteAddress(clientAddress, field(mra, "v4_prefix_mask_len") ?? 32, field(mra, "v6_prefix_mask_len") ?? 128);
            if (masked === undefined) return undefined;
            entries.push({ key: "masked_remote_address", value: masked });
        } else if (ra) {
            // The address Envoy trusts (downstream peer or the chosen X-Forwarded-For entry), assumed here.
            if (clientAddress === undefined) return undefined;
            entries.push({ key: "remote_address", value: clientAddress });
        } else if (rh) {
            // A repeated header: `request_headers` sends its first value (router_ratelimit.cc).
            const v = (firstValues ?? headers)[field(rh, "header_name")];
            if (v === undefined) {
                if (field(rh, "skip_if_absent")) continue;
                return undefined;
            }
            entries.push({ key: field(rh, "descriptor_key"), value: v });
        } else if (hvm) {
            const all = (hvm.headers ?? []).every((h: any) => headerMatches(h, headers));
            const expect = field(hvm, "expect_match") ?? true;
            if (all !== expect) return undefined;
            entries.push({ key: field(hvm, "descriptor_key") ?? "header_match", value: field(hvm, "descriptor_value") });
        } else if (gk) {
            entries.push({ key: field(gk, "descriptor_key") ?? "generic_key", value: field(gk, "descriptor_value") });
        } else if (ext && ext.name === EXPR_DESCRIPTOR_EXTENSION) {
            const tc = field(ext, "typed_config") ?? {};
            const text = tc.text;
            const path = headers[":path"];
            let value: string;
            const bounded = /^size\(request\.url_path\) <= (\d+) \? request\.url_path : "([^"\\]*)"$/.exec(String(text));
            if (text === "request.url_path") value = urlPath(path);
            else if (text === "request.path") value = path;
            // The per-value catch-all's bound: the path, or one shared value when it is longer (CEL
            // `size` counts code points; the normalized path is ASCII).
            else if (bounded) value = [...urlPath(path)].length <= Number(bounded[1]) ? urlPath(path) : bounded[2]!;
            else throw new Error(`CEL descriptor expression ${JSON.stringify(text)} is not modelled`);
            entries.push({ key: field(tc, "descriptor_key"), value });
        } else {
            throw new Error(`rate-limit action ${JSON.stringify(action)} is not modelled`);
        }
    }
    return entries.length ? entries : undefined;
}

function headerMatches(h: any, headers: Record<string, string>): boolean {
    // `treat_missing_header_as_empty`: a missing header is matched as the empty value.
    const v = headers[h.name] ?? (field(h, "treat_missing_header_as_empty") === true ? "" : undefined);
    const invert = field(h, "invert_match") === true;
    let ok: boolean;
    const srm = field(h, "safe_regex_match");
    const sm = field(h, "string_match");
    if (v === undefined) {
        // Envoy (HeaderUtility::matchHeaders): a missing header matches only a presence test,
        // `present_match: false`, or `present_match: true` inverted; never an inverted value matcher.
        const present = field(h, "present_match");
        return present !== undefined && present === invert;
    } else if (srm) {
        ok = fullMatch(srm.regex, v);
    } else if (field(h, "exact_match") !== undefined) {
        ok = v === field(h, "exact_match");
    } else if (field(h, "prefix_match") !== undefined) {
        ok = v.startsWith(field(h, "prefix_match"));
    } else if (sm) {
        // `ignore_case` applies to exact/prefix/suffix/contains, not to safe_regex.
        const c = field(sm, "ignore_case") === true ? (s: string) => s.toLowerCase() : (s: string) => s;
        if (sm.exact !== undefined) ok = c(v) === c(sm.exact);
        else if (sm.prefix !== undefined) ok = c(v).startsWith(c(sm.prefix));
        else if (sm.suffix !== undefined) ok = c(v).endsWith(c(sm.suffix));
        else if (sm.contains !== undefined) ok = c(v).includes(c(sm.contains));
        else if (field(sm, "safe_regex")) ok = fullMatch(field(sm, "safe_regex").regex, v);
        else throw new Error(`string_match ${JSON.stringify(sm)} is not modelled`);
    } else if (field(h, "present_match") !== undefined) {
        ok = field(h, "present_match") === true;
    } else {
        throw new Error(`header matcher ${JSON.stringify(h)} is not modelled`);
    }
    return invert ? !ok : ok;
}

/**
 * What the rate-limit service's config says about one descriptor (its lookup, modelled):
 * `key_value`, then a `value` ending in `*` as a prefix, then the key alone.
 */
export function lookupLimit(config: GatewayModel["config"], domain: string, entries: Entry[]): DescriptorExplanation {
    if (config.domain !== domain) return { entries };
    let level: any[] = config.descriptors;
    let node: any;
    const names: string[] = [];
    for (const e of entries) {
        node =
            level.find((d) => d.key === e.key && d.value === e.value) ??
            level.find((d) => d.key === e.key && typeof d.value === "string" && d.value.endsWith("*") && e.value.startsWith(d.value.slice(0, -1))) ??
            level.find((d) => d.key === e.key && d.value === undefined);
        if (!node) return { entries };
        names.push(node.value === undefined ? `${node.key} (catch-all)` : `${node.key}=${node.value}`);
        level = node.descriptors ?? [];
    }
    const rl = node?.rate_limit;
    if (!rl) return { entries };
    const bucket = `${domain}_${entries.map((e) => `${e.key}_${e.value}_`).join("")}{window}`;
    return {
        entries,
        limit: {
            entry: names.join(" / "),
            unit: String(rl.unit ?? "").toLowerCase(),
            requestsPerUnit: Number(rl.requests_per_unit ?? 0),
            unlimited: rl.unlimited === true,
            shadow: field(node, "shadow_mode") === true,
        },
        bucket,
    };
}

/** The client a request comes from, as the model assumes it (the path is given apart). */
export interface ModelRequest {
    /** Request headers (lower-case names; a list: the header repeated); `:path` and `:method` are set by the model. */
    headers?: Record<string, string | string[]>;
    /**
     * The connection's source address (the downstream peer). Defaults to `DEFAULT_CLIENT_ADDRESS`.
     * `remote_address` sends it unless `xffNumTrustedHops` makes an X-Forwarded-For entry the
     * trusted client address (gateway-model/client-address.ts).
     */
    clientAddress?: string;
    /** The gateway's `xff_num_trusted_hops` (Istio's `numTrustedProxies`). Defaults to 0: X-Forwarded-For is ignored. */
    xffNumTrustedHops?: number;
}

/** The client address assumed when none is given (TEST-NET-1, RFC 5737). */
export const DEFAULT_CLIENT_ADDRESS = "192.0.2.1";

/**
 * The `rate_limits` the model's filter sends on a route: `RateLimitPerRoute.rate_limits` under its
 * name (the route's, else the virtual host's) alone when present; else the route's and virtual
 * host's own entries of its stage, combined by `vh_rate_limits`.
 */
export function rateLimitsOf(m: GatewayModel, route: ModelRoute): { rateLimits: any[]; level: Explanation["rateLimitsFrom"]["level"]; envoyFilter?: string } {
    if (route.perFilter) return { rateLimits: route.perFilter.rateLimits, level: "route per-filter", envoyFilter: route.perFilter.envoyFilter };
    if (m.vhostPerFilter) return { rateLimits: m.vhostPerFilter.rateLimits, level: "virtual host per-filter", envoyFilter: m.vhostPerFilter.envoyFilter };
    const vh = m.vhostRateLimits.flatMap((r) => r.rateLimits);
    const vhFilters = m.vhostRateLimits.map((r) => r.envoyFilter).join(", ");
    const own = route.rateLimits;
    const useVh = route.vhRateLimits === "INCLUDE" || (route.vhRateLimits === "OVERRIDE" && own.length === 0 && !route.anyRateLimits);
    const level: Explanation["rateLimitsFrom"]["level"] =
        own.length && useVh && vh.length ? "route and virtual host" : own.length ? "route" : useVh && vh.length ? "virtual host" : "none";
    const envoyFilter = [own.length ? route.envoyFilter : undefined, useVh && vh.length ? vhFilters : undefined].filter(Boolean).join(", ") || undefined;
    return { rateLimits: [...own, ...(useVh ? vh : [])], level, ...(envoyFilter ? { envoyFilter } : {}) };
}

/**
 * Explains one request path against a gateway model: its own filter's descriptors, then those of
 * every other rate-limit filter on the listener (`others`), each call to its own service.
 */
export function explainWith(m: GatewayModel, path: string, request: ModelRequest = {}): Explanation {
    const own = explainOne(m, path, request);
    const rest = (m.others ?? []).map((o) => explainOne(o, path, request));
    if (!rest.length) return own;
    const all = [own, ...rest];
    // Where the descriptors came from: the one filter that sends any, else the first filter's view.
    const sending = all.filter((x) => x.descriptors.length);
    return {
        ...own,
        rateLimitsFrom: sending.length === 1 ? sending[0]!.rateLimitsFrom : own.rateLimitsFrom,
        descriptors: all.flatMap((x) => x.descriptors),
        calls: all.flatMap((x) => x.calls),
        limited: all.some((x) => x.limited),
    };
}

function explainOne(m: GatewayModel, path: string, request: ModelRequest): Explanation {
    const normalizedPath = normalizePath(path);
    const sel = selectRoute(m, normalizedPath);
    const base = { path, normalizedPath, virtualHost: m.virtualHost, domain: m.domain };
    if (!sel) return { ...base, route: undefined, rateLimitsFrom: { level: "none" }, descriptors: [], calls: [], limited: false };
    const { route, match } = sel;
    const { rateLimits, level, envoyFilter } = rateLimitsOf(m, route);
    const joined: Record<string, string> = {};
    const first: Record<string, string> = {};
    for (const [name, v] of Object.entries(request.headers ?? {})) {
        const values = Array.isArray(v) ? v : [v];
        if (!values.length) continue;
        joined[name] = values.join(",");
        first[name] = values[0];
    }
    const pseudo = { ":path": normalizedPath, ":method": "GET" };
    const headers = { ...joined, ...pseudo };
    const client = trustedClientAddress({
        peer: request.clientAddress ?? DEFAULT_CLIENT_ADDRESS,
        xForwardedFor: joined["x-forwarded-for"],
        xffNumTrustedHops: request.xffNumTrustedHops,
    });
    const descriptors = rateLimits
        .map((rl) => descriptorFor(rl, headers, client, { ...first, ...pseudo }))
        .filter((d): d is Entry[] => d !== undefined)
        .map((entries) => ({ ...lookupLimit(m.config, m.domain, entries), ...(m.service ? { service: m.service } : {}) }));
    const filter = m.httpFilterName ?? RATELIMIT_FILTER;
    return {
        ...base,
        route: { name: route.name, index: route.index, match: matchText(match), virtualService: m.source },
        rateLimitsFrom: { level, envoyFilter },
        descriptors,
        calls: descriptors.length ? [{ filter, service: m.service ?? "", domain: m.domain, descriptors }] : [],
        limited: descriptors.some((d) => d.limit && !d.limit.unlimited && !d.limit.shadow),
    };
}

/** Explains one request path against the rendered objects. */
export function explain(objects: K8sObject[], path: string, request: ModelRequest = {}): Explanation {
    return explainWith(gatewayModel(objects), path, request);
}
