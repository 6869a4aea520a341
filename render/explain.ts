/**
 * MODEL of the ingress gateway (there is no Envoy binary here): what rate-limit request Envoy
 * builds for a request path from the objects this stack renders, and which limit of the
 * rendered `config.yaml` answers it.
 *
 * Everything is read from the rendered objects (Gateway, VirtualService, EnvoyFilters, the
 * rate-limit ConfigMap); nothing is a constant of the specification. Pure functions, no I/O.
 *
 * Envoy behaviour modelled (see docs/rls.md):
 * - Route selection: the gateway virtual host `<vs host>:<gateway server port>` holds the routes of
 *   the VirtualService's `http[]` in order; the first whose match applies wins (`exact` compares
 *   the path without its query string, `prefix` the whole `:path`); no match → 404, no call to
 *   the rate-limit service.
 * - `rate_limits` of the route replace those of the virtual host (Envoy's default
 *   `vh_rate_limits: OVERRIDE`); an EnvoyFilter MERGE patch adds them.
 * - One `rate_limits` element yields one descriptor, and only if every action yields an entry:
 *   `request_headers` (`:path` → the full path) and `header_value_match` (RE2 full match).
 * - The rate-limit service looks each descriptor up in its config: `key_value`, then a wildcard
 *   value (`prefix*`), then the key's catch-all; the counter (bucket) key is
 *   `<domain>_<key>_<value>_<window start>`, so a catch-all counts each distinct value apart.
 */
import { parse } from "yaml";
import { compileFullMatch } from "../components/settings";

export interface K8sObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; [k: string]: unknown };
    [k: string]: any;
}

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
}

export interface DescriptorExplanation {
    entries: Entry[];
    /** Undefined: the config has no limit for it; the service answers OK (never limited). */
    limit?: AppliedLimit;
    /** Counter key the service increments in Redis, with the window start left as `{window}`. */
    bucket?: string;
}

export interface Explanation {
    path: string;
    virtualHost: string;
    /** Undefined: no route matches, Envoy answers 404 without asking the rate-limit service. */
    route?: { name?: string; index: number; match: string; virtualService: string };
    /** Where the `rate_limits` came from. */
    rateLimitsFrom: { level: "route" | "virtual host" | "none"; envoyFilter?: string };
    domain: string;
    descriptors: DescriptorExplanation[];
    /** True when at least one descriptor has a limit, i.e. the request can be refused with 429. */
    limited: boolean;
}

export interface GatewayModel {
    gateway: { name: string; port: number; selector: Record<string, string> };
    virtualHost: string;
    virtualService: { name: string; http: any[] };
    domain: string;
    failureModeDeny: boolean;
    filterNames: string[];
    vhostRateLimits: { rateLimits: any[]; envoyFilter: string }[];
    routeRateLimits: { route: string; rateLimits: any[]; envoyFilter: string }[];
    config: { domain: string; descriptors: any[] };
}

const RATELIMIT_FILTER = "envoy.filters.http.ratelimit";

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

/** Reads the gateway-side rate-limit model from the rendered objects. Throws when a piece is missing. */
export function gatewayModel(objects: K8sObject[]): GatewayModel {
    const gateways = objects.filter((o) => o.kind === "Gateway");
    if (gateways.length !== 1) throw new Error(`expected one Gateway in the rendered objects, found ${gateways.length}`);
    const gw = gateways[0];
    const server = (gw.spec?.servers ?? []).find((s: any) => /^HTTP$/i.test(s.port?.protocol ?? ""));
    if (!server) throw new Error(`Gateway ${gw.metadata.name} has no HTTP server`);
    const gateway = { name: gw.metadata.name, port: Number(server.port.number), selector: gw.spec?.selector ?? {} };

    const vss = objects.filter(
        (o) => o.kind === "VirtualService" && (o.spec?.gateways ?? []).some((g: string) => g === gateway.name || g.endsWith(`/${gateway.name}`)),
    );
    if (vss.length !== 1) throw new Error(`expected one VirtualService bound to Gateway ${gateway.name}, found ${vss.length}`);
    const vs = vss[0];
    const hosts: string[] = vs.spec?.hosts ?? [];
    if (hosts.length !== 1) throw new Error(`the model handles a VirtualService with one host; ${vs.metadata.name} has ${hosts.length}`);
    const virtualHost = `${hosts[0]}:${gateway.port}`;

    // Only filters that select the gateway's pods and patch the GATEWAY context act on it.
    const filters = objects.filter((o) => o.kind === "EnvoyFilter" && isSubset(o.spec?.workloadSelector?.labels, gateway.selector));
    let domain: string | undefined;
    let failureModeDeny = false;
    const vhostRateLimits: GatewayModel["vhostRateLimits"] = [];
    const routeRateLimits: GatewayModel["routeRateLimits"] = [];
    const filterNames: string[] = [];
    for (const f of filters) {
        for (const p of f.spec?.configPatches ?? []) {
            const applyTo = field(p, "apply_to");
            const match = p.match ?? {};
            if (match.context !== "GATEWAY") continue;
            const value = p.patch?.value ?? {};
            if (applyTo === "HTTP_FILTER" && value.name === RATELIMIT_FILTER) {
                const tc = field(value, "typed_config") ?? {};
                if (domain !== undefined && domain !== tc.domain) throw new Error(`two ratelimit filters with different domains (${domain}, ${tc.domain})`);
                domain = tc.domain;
                failureModeDeny = field(tc, "failure_mode_deny") === true;
                filterNames.push(f.metadata.name);
            }
            const vh = field(match, "route_configuration")?.vhost;
            const vhName: string | undefined = vh?.name;
            const vhMatches = vhName === undefined || vhName === "" || vhName === virtualHost;
            if (applyTo === "VIRTUAL_HOST" && vhMatches && field(value, "rate_limits")) {
                vhostRateLimits.push({ rateLimits: field(value, "rate_limits"), envoyFilter: f.metadata.name });
                filterNames.push(f.metadata.name);
            }
            if (applyTo === "HTTP_ROUTE" && vhMatches && field(value.route, "rate_limits")) {
                const routeName: string | undefined = vh?.route?.name;
                if (!routeName) throw new Error(`EnvoyFilter ${f.metadata.name}: a route patch without route name is not modelled`);
                routeRateLimits.push({ route: routeName, rateLimits: field(value.route, "rate_limits"), envoyFilter: f.metadata.name });
                filterNames.push(f.metadata.name);
            }
        }
    }
    if (domain === undefined) throw new Error(`no EnvoyFilter inserts ${RATELIMIT_FILTER} into Gateway ${gateway.name}'s pods`);

    const cm = objects.find((o) => o.kind === "ConfigMap" && typeof o.data?.["config.yaml"] === "string" && /(^|\n)domain:/.test(o.data["config.yaml"]));
    if (!cm) throw new Error("no rate-limit ConfigMap (data['config.yaml'] with a domain) in the rendered objects");
    const config = parse(cm.data["config.yaml"]);

    return {
        gateway,
        virtualHost,
        virtualService: { name: vs.metadata.name, http: vs.spec?.http ?? [] },
        domain,
        failureModeDeny,
        filterNames: [...new Set(filterNames)],
        vhostRateLimits,
        routeRateLimits,
        config: { domain: config?.domain, descriptors: config?.descriptors ?? [] },
    };
}

function uriMatches(uri: any, path: string): { ok: boolean; text: string } {
    const noQuery = path.split("?")[0];
    if (uri === undefined) return { ok: true, text: "(any path)" };
    if (uri.exact !== undefined) return { ok: noQuery === uri.exact, text: `exact ${uri.exact}` };
    if (uri.prefix !== undefined) return { ok: path.startsWith(uri.prefix), text: `prefix ${uri.prefix}` };
    if (uri.regex !== undefined) return { ok: fullMatch(uri.regex, noQuery), text: `regex ${uri.regex}` };
    throw new Error(`VirtualService uri match ${JSON.stringify(uri)} is not modelled`);
}

/** RE2 full match, as Envoy's `safe_regex` (google_re2): the same compiler the config validation uses. */
export function fullMatch(regex: string, s: string): boolean {
    return compileFullMatch(regex).test(s);
}

/** Route the gateway picks for `path`, or undefined (404). */
export function selectRoute(m: GatewayModel, path: string): Explanation["route"] {
    for (const [index, h] of m.virtualService.http.entries()) {
        const matches: any[] = h.match ?? [undefined];
        for (const mt of matches) {
            if (mt && Object.keys(mt).some((k) => !["uri", "name"].includes(k))) {
                throw new Error(`VirtualService match fields ${Object.keys(mt).join(", ")} are not modelled`);
            }
            const r = uriMatches(mt?.uri, path);
            if (r.ok) return { name: h.name, index, match: r.text, virtualService: m.virtualService.name };
        }
    }
    return undefined;
}

/** The entries one `rate_limits` element produces for a request with these headers, or undefined. */
export function descriptorFor(rateLimit: any, headers: Record<string, string>): Entry[] | undefined {
    const entries: Entry[] = [];
    for (const action of rateLimit.actions ?? []) {
        const rh = field(action, "request_headers");
        const hvm = field(action, "header_value_match");
        const gk = field(action, "generic_key");
        if (rh) {
            const v = headers[field(rh, "header_name")];
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
        } else {
            throw new Error(`rate-limit action ${Object.keys(action).join(", ")} is not modelled`);
        }
    }
    return entries.length ? entries : undefined;
}

function headerMatches(h: any, headers: Record<string, string>): boolean {
    const v = headers[h.name];
    const invert = field(h, "invert_match") === true;
    let ok: boolean;
    const srm = field(h, "safe_regex_match");
    const sm = field(h, "string_match");
    if (v === undefined) {
        ok = false;
    } else if (srm) {
        ok = fullMatch(srm.regex, v);
    } else if (field(h, "exact_match") !== undefined) {
        ok = v === field(h, "exact_match");
    } else if (field(h, "prefix_match") !== undefined) {
        ok = v.startsWith(field(h, "prefix_match"));
    } else if (sm) {
        if (sm.exact !== undefined) ok = v === sm.exact;
        else if (sm.prefix !== undefined) ok = v.startsWith(sm.prefix);
        else if (sm.suffix !== undefined) ok = v.endsWith(sm.suffix);
        else if (sm.contains !== undefined) ok = v.includes(sm.contains);
        else if (field(sm, "safe_regex")) ok = fullMatch(field(sm, "safe_regex").regex, v);
        else throw new Error(`string_match ${JSON.stringify(sm)} is not modelled`);
    } else if (field(h, "present_match") !== undefined) {
        ok = true;
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
        limit: { entry: names.join(" / "), unit: String(rl.unit ?? "").toLowerCase(), requestsPerUnit: Number(rl.requests_per_unit ?? 0), unlimited: rl.unlimited === true },
        bucket,
    };
}

/** Explains one request path against a gateway model. */
export function explainWith(m: GatewayModel, path: string): Explanation {
    const route = selectRoute(m, path);
    const base = { path, virtualHost: m.virtualHost, domain: m.domain };
    if (!route) return { ...base, route, rateLimitsFrom: { level: "none" }, descriptors: [], limited: false };
    const own = route.name ? m.routeRateLimits.filter((r) => r.route === route.name) : [];
    const from: Explanation["rateLimitsFrom"] = own.length
        ? { level: "route", envoyFilter: own.map((r) => r.envoyFilter).join(", ") }
        : m.vhostRateLimits.length
          ? { level: "virtual host", envoyFilter: m.vhostRateLimits.map((r) => r.envoyFilter).join(", ") }
          : { level: "none" };
    const rateLimits = (own.length ? own : m.vhostRateLimits).flatMap((r) => r.rateLimits);
    const headers = { ":path": path, ":method": "GET" };
    const descriptors = rateLimits
        .map((rl) => descriptorFor(rl, headers))
        .filter((d): d is Entry[] => d !== undefined)
        .map((entries) => lookupLimit(m.config, m.domain, entries));
    return { ...base, route, rateLimitsFrom: from, descriptors, limited: descriptors.some((d) => d.limit && !d.limit.unlimited) };
}

/** Explains one request path against the rendered objects. */
export function explain(objects: K8sObject[], path: string): Explanation {
    return explainWith(gatewayModel(objects), path);
}

const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };

/** Start of the fixed, epoch-aligned window containing `nowMs` (seconds since the epoch). */
export function windowStart(unit: string, nowMs: number): number {
    const d = UNIT_SECONDS[unit];
    if (!d) throw new Error(`unit ${unit} has no fixed window length in this model`);
    return Math.floor(nowMs / 1000 / d) * d;
}

/** Human-readable lines for the CLI. */
export function formatExplanation(x: Explanation, nowMs: number = Date.now()): string {
    const out: string[] = [`GET ${x.path}`];
    out.push(`  virtual host: ${x.virtualHost}`);
    if (!x.route) {
        out.push("  route: none matches (Envoy answers 404; the rate-limit service is not asked)");
        return out.join("\n");
    }
    out.push(`  route: ${x.route.name ?? "(unnamed)"} (VirtualService ${x.route.virtualService} http[${x.route.index}], ${x.route.match})`);
    out.push(
        `  rate_limits: ${x.rateLimitsFrom.level === "none" ? "none" : `from the ${x.rateLimitsFrom.level} (EnvoyFilter ${x.rateLimitsFrom.envoyFilter})`}` +
            (x.rateLimitsFrom.level === "route" ? "; they replace the virtual host's" : ""),
    );
    out.push(`  domain: ${x.domain}`);
    if (!x.descriptors.length) out.push("  descriptors: none (nothing is sent: never limited globally)");
    x.descriptors.forEach((d, i) => {
        out.push(`  descriptor ${i + 1}: ${d.entries.map((e) => `${e.key}=${e.value}`).join(", ")}`);
        if (!d.limit) {
            out.push("    limit: none in the config (the service answers OK: never limited)");
        } else if (d.limit.unlimited) {
            out.push(`    limit: unlimited (config entry ${d.limit.entry})`);
        } else {
            out.push(`    limit: ${d.limit.requestsPerUnit} per ${d.limit.unit} (config entry ${d.limit.entry})`);
            const w = windowStart(d.limit.unit, nowMs);
            out.push(`    bucket: ${d.bucket!.replace("{window}", String(w))} (window starting ${new Date(w * 1000).toISOString()}, fixed and epoch-aligned)`);
        }
    });
    return out.join("\n");
}
