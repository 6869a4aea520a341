/**
 * MODEL of the gateway's pre-limit (there is no Envoy binary here): Envoy's local rate-limit filter
 * as the stack configures it in front of the global rate-limit filter, read from the rendered
 * EnvoyFilters. Pure functions and small classes, no I/O; time is given by the caller (seconds).
 *
 * Envoy behaviour modelled (docs/proof/upstream.md, "The pre-limit's bucket", has the sources):
 * - Config: the most specific `typed_per_filter_config` of `envoy.filters.http.local_ratelimit`
 *   (here: the virtual host's) replaces the filter's own; the filter's own has no bucket and no
 *   `filter_enabled`, so on any other virtual host the filter does nothing.
 * - Descriptors: built from the route's `rate_limits` of stage 0 and the virtual host's, combined by
 *   the config's `vh_rate_limits` (the same actions the global filter sends to the service); a
 *   configured descriptor matches a request descriptor only when every entry is equal.
 * - Buckets (`LocalRateLimiterImpl::requestAllowed`): the matched buckets, sorted by fill rate
 *   (smallest first), each takes one token in turn; the first without one refuses the request (429,
 *   `response_headers_to_add`) and the later ones keep theirs. With no match, the default bucket
 *   is used (`always_consume_default_token_bucket: false`).
 * - Each bucket is `AtomicTokenBucketImpl`: it starts full and refills continuously at
 *   `tokens_per_fill / fill_interval` tokens a second up to `max_tokens`; a request needs one whole
 *   token. The state is one time stamp, `time_in_seconds`, and the tokens are
 *   `min(max_tokens, (now - time_in_seconds) × fill_rate)`, as in Envoy (doubles in both).
 * - One bucket set per gateway pod (per Envoy process, shared by its worker threads).
 */
import { LOCAL_RATELIMIT_FILTER, RATELIMIT_FILTER } from "../builders/envoy-filters";
import { Entry, GatewayModel, ModelRequest, DEFAULT_CLIENT_ADDRESS, reachesGatewayPods } from "./model";
import { field, patchesOf, snakeKeys } from "../builders/rendered-config";
import { descriptorFor, normalizePath, selectRoute } from "./evaluate";
import { explainWith } from "./explain";
import { K8sObject } from "../lib/k8s-object";

/** Whether an HTTP filter name is the local rate-limit filter's, canonical or of one instance (`<canonical>/<namespace>/<name>`). */
function isLocalName(name: unknown): name is string {
    return name === LOCAL_RATELIMIT_FILTER || (typeof name === "string" && name.startsWith(`${LOCAL_RATELIMIT_FILTER}/`));
}

/** Envoy's `AtomicTokenBucketImpl`, one whole token per request. */
export class TokenBucketModel {
    private timeInSeconds: number;
    readonly fillRate: number;

    constructor(
        readonly maxTokens: number,
        tokensPerFill: number,
        fillIntervalSeconds: number,
        now: number,
    ) {
        this.fillRate = tokensPerFill / fillIntervalSeconds;
        // Starts full.
        this.timeInSeconds = now - maxTokens / this.fillRate;
    }

    /** Tokens at `now` (a fraction while refilling). */
    tokens(now: number): number {
        return Math.min(this.maxTokens, (now - this.timeInSeconds) * this.fillRate);
    }

    /** Takes one token at `now` if there is a whole one. */
    consume(now: number): boolean {
        const total = this.tokens(now);
        if (total < 1) return false;
        this.timeInSeconds = now - (total - 1) / this.fillRate;
        return true;
    }
}

export interface PreLimitDescriptorModel {
    entries: Entry[];
    maxTokens: number;
    tokensPerFill: number;
    fillSeconds: number;
}

export interface PreLimitConfigModel {
    envoyFilter: string;
    vhMode: "INCLUDE" | "OVERRIDE" | "IGNORE";
    descriptors: PreLimitDescriptorModel[];
    defaultBucket: { maxTokens: number; tokensPerFill: number; fillSeconds: number };
    alwaysConsumeDefault: boolean;
    /** The header a refusal carries. */
    header?: { key: string; value: string };
    statPrefix: string;
    /** The config's own `rate_limits` (per-instance layout): then it reads no route or virtual-host `rate_limits`. */
    rateLimits?: any[];
    /** Per-route configs by route name (per-instance layout); a route without one uses this config. */
    routes?: Record<string, PreLimitConfigModel>;
}

/** A protobuf JSON duration (`"60s"`, `"0.5s"`) in seconds; the model reads no other form. */
export function durationSeconds(d: unknown): number {
    const m = /^(\d+(?:\.\d+)?)s$/.exec(String(d));
    if (!m) throw new Error(`duration ${JSON.stringify(d)} is not modelled`);
    return Number(m[1]);
}

function fullPercent(p: any): boolean {
    const v = p?.default_value;
    return v?.numerator === 100 && (v?.denominator === "HUNDRED" || v?.denominator === undefined);
}

/** An Envoy `token_bucket` (snake_case or camelCase JSON): its size, refill and refill interval in seconds. */
export function tokenBucketOf(tb: any): { maxTokens: number; tokensPerFill: number; fillSeconds: number } {
    return {
        maxTokens: Number(field(tb, "max_tokens")),
        tokensPerFill: Number(field(tb, "tokens_per_fill") ?? 1),
        fillSeconds: durationSeconds(field(tb, "fill_interval")),
    };
}

/**
 * The pre-limit on the model's virtual host, read from the rendered EnvoyFilters of the gateway's
 * pods; undefined when there is none. Throws when the local filter would not sit directly before the
 * rate-limit filter on the gateway's port, or a field it relies on is not modelled.
 */
export function readPreLimit(objects: K8sObject[], m: GatewayModel): PreLimitConfigModel | undefined {
    const selects = (o: K8sObject) => reachesGatewayPods(o.spec, m.gateway.selector);
    const globalName = m.httpFilterName ?? RATELIMIT_FILTER;
    let inserted: { envoyFilter: string; name: string } | undefined;
    const gateway = objects.filter((o) => o.kind === "EnvoyFilter" && selects(o));
    // The local filter inserted directly before the model's rate-limit filter, on the gateway's port.
    for (const p of gateway.flatMap(patchesOf)) {
        if (!p.onGateway || p.applyTo !== "HTTP_FILTER" || !isLocalName(p.name)) continue;
        const f = p.envoyFilter;
        if (p.port !== undefined && p.port !== m.gateway.port) continue;
        const before = p.subFilter;
        if (before !== globalName && (before === RATELIMIT_FILTER || String(before).startsWith(`${RATELIMIT_FILTER}/`))) continue; // another instance's
        if (p.operation !== "INSERT_BEFORE" || before !== globalName)
            throw new Error(`EnvoyFilter ${f.metadata.name}: the local filter is not inserted directly before ${globalName}: not modelled`);
        if (field(p.typedConfig, "token_bucket") || field(p.typedConfig, "filter_enabled"))
            throw new Error(`EnvoyFilter ${f.metadata.name}: a listener-wide local bucket is not modelled`);
        inserted = { envoyFilter: f.metadata.name, name: p.name! };
    }
    const localName = inserted?.name ?? LOCAL_RATELIMIT_FILTER;
    let config: { filter: string; value: any } | undefined;
    const routes: { route: string; filter: string; value: any }[] = [];
    for (const p of gateway.flatMap(patchesOf)) {
        const vh = p.virtualHost;
        const local = p.typedPerFilterConfig[localName];
        if (!p.onGateway || !local || !(vh === undefined || vh === "" || vh === m.virtualHost)) continue;
        const filter = p.envoyFilter.metadata.name;
        if (p.applyTo === "VIRTUAL_HOST") config = { filter, value: snakeKeys(local) };
        if (p.applyTo === "HTTP_ROUTE" && p.route) routes.push({ route: p.route, filter, value: snakeKeys(local) });
    }
    if (!config) return undefined;
    if (!inserted) throw new Error(`EnvoyFilter ${config.filter} configures ${localName} on ${m.virtualHost}, but no patch inserts the filter`);
    const out = parseLocalConfig(`EnvoyFilter ${config.filter}`, config.filter, config.value);
    if (routes.length)
        out.routes = Object.fromEntries(routes.map((r) => [r.route, parseLocalConfig(`EnvoyFilter ${r.filter} route ${r.route}`, r.filter, r.value)]));
    return out;
}

/**
 * The same model read from the route configuration Istio generated (protobuf JSON): the virtual
 * host's `typed_per_filter_config` of the local filter; undefined when it has none.
 */
export function preLimitFromEnvoy(routeConfiguration: any, virtualHost: string): PreLimitConfigModel | undefined {
    const vhs = field(routeConfiguration, "virtual_hosts") ?? [];
    const vh = vhs.find((v: any) => v.name === virtualHost);
    if (!vh) throw new Error(`route configuration ${routeConfiguration?.name} has no virtual host ${virtualHost}`);
    const c = (field(vh, "typed_per_filter_config") ?? {})[LOCAL_RATELIMIT_FILTER];
    return c ? parseLocalConfig(`generated virtual host ${virtualHost}`, "(generated)", snakeKeys(c)) : undefined;
}

export function parseLocalConfig(where: string, envoyFilter: string, c: any): PreLimitConfigModel {
    if (!fullPercent(c.filter_enabled) || !fullPercent(c.filter_enforced))
        throw new Error(`${where}: a pre-limit not enabled and enforced at 100 % is not modelled`);
    if (c.stage || c.local_rate_limit_per_downstream_connection || c.local_cluster_rate_limit)
        throw new Error(`${where}: stage, per-connection and cluster-wide buckets are not modelled`);
    return {
        ...(Array.isArray(c.rate_limits) && c.rate_limits.length ? { rateLimits: c.rate_limits } : {}),
        envoyFilter,
        vhMode: c.vh_rate_limits ?? "OVERRIDE",
        descriptors: (c.descriptors ?? []).map((d: any) => {
            if ((d.entries ?? []).some((e: any) => !e.value)) throw new Error(`${where}: wildcard descriptors are not modelled`);
            return { entries: d.entries.map((e: any) => ({ key: e.key, value: e.value })), ...tokenBucketOf(d.token_bucket) };
        }),
        defaultBucket: tokenBucketOf(c.token_bucket),
        alwaysConsumeDefault: c.always_consume_default_token_bucket !== false,
        header: c.response_headers_to_add?.[0]?.header,
        statPrefix: c.stat_prefix,
    };
}

/** The descriptors the local filter builds for a request (its own `vh_rate_limits`; [] when no route matches). */
export function preLimitDescriptors(m: GatewayModel, cfg: PreLimitConfigModel, path: string, request: ModelRequest = {}): Entry[][] {
    const normalized = normalizePath(path, m.pathNormalization);
    const sel = selectRoute(m, normalized);
    if (!sel) return [];
    const headers0 = { ...(request.headers ?? {}), ":path": normalized, ":method": "GET" };
    // Per-instance: the route's own config (else the virtual host's) with its own rate_limits.
    const c = (sel.route.name !== undefined ? cfg.routes?.[sel.route.name] : undefined) ?? cfg;
    if (c.rateLimits)
        return c.rateLimits
            .map((rl) => descriptorFor(rl, headers0, request.clientAddress ?? DEFAULT_CLIENT_ADDRESS))
            .filter((d): d is Entry[] => d !== undefined);
    const own = sel.route.rateLimits;
    const vh = m.vhostRateLimits.flatMap((r) => r.rateLimits);
    const useVh = cfg.vhMode === "INCLUDE" || (cfg.vhMode === "OVERRIDE" && own.length === 0);
    const headers = { ...(request.headers ?? {}), ":path": normalized, ":method": "GET" };
    return [...own, ...(useVh ? vh : [])]
        .map((rl) => descriptorFor(rl, headers, request.clientAddress ?? DEFAULT_CLIENT_ADDRESS))
        .filter((d): d is Entry[] => d !== undefined);
}

const keyOf = (entries: Entry[]) => JSON.stringify(entries.map((e) => [e.key, e.value]));

/** The configured descriptor a request descriptor matches (every entry equal), if any. */
export function matchingDescriptor(cfg: PreLimitConfigModel, entries: Entry[]): PreLimitDescriptorModel | undefined {
    return cfg.descriptors.find((d) => keyOf(d.entries) === keyOf(entries));
}

export interface PreLimitDecision {
    allowed: boolean;
    /** The descriptor whose bucket had no token. */
    refusedBy?: Entry[];
    /** Request descriptors that have a bucket. */
    matched: Entry[][];
}

/** One gateway pod's buckets (one Envoy process). */
export class PreLimitPod {
    private readonly buckets = new Map<string, TokenBucketModel>();
    private readonly defaultBucket: TokenBucketModel;

    constructor(
        readonly cfg: PreLimitConfigModel,
        now: number,
    ) {
        for (const d of cfg.descriptors) this.buckets.set(keyOf(d.entries), new TokenBucketModel(d.maxTokens, d.tokensPerFill, d.fillSeconds, now));
        const b = cfg.defaultBucket;
        this.defaultBucket = new TokenBucketModel(b.maxTokens, b.tokensPerFill, b.fillSeconds, now);
    }

    tokens(entries: Entry[], now: number): number | undefined {
        return this.buckets.get(keyOf(entries))?.tokens(now);
    }

    /** Envoy's decision for a request with these descriptors at `now`. */
    decide(descriptors: Entry[][], now: number): PreLimitDecision {
        const matched = descriptors.map((entries) => ({ entries, bucket: this.buckets.get(keyOf(entries)) })).filter((x) => x.bucket !== undefined);
        // Smallest fill rate first (a stable sort; Envoy's std::sort leaves equal rates in any order).
        const ordered = [...matched].sort((a, b) => a.bucket!.fillRate - b.bucket!.fillRate);
        for (const x of ordered) if (!x.bucket!.consume(now)) return { allowed: false, refusedBy: x.entries, matched: matched.map((y) => y.entries) };
        if (!matched.length || this.cfg.alwaysConsumeDefault) {
            if (!this.defaultBucket.consume(now)) return { allowed: false, matched: [] };
        }
        return { allowed: true, matched: matched.map((y) => y.entries) };
    }
}

/** Lines for `npm run explain`: who decides this request, the pre-limit or the service. */
export function formatPreLimit(m: GatewayModel, cfg: PreLimitConfigModel | undefined, path: string, request: ModelRequest = {}): string {
    if (!cfg) return "  pre-limit: none on this virtual host: the rate-limit service decides every request";
    const descriptors = preLimitDescriptors(m, cfg, path, request);
    if (!descriptors.length) {
        // Per-value counters in a store of their own: another filter sends them, the pre-limit never sees them.
        const perValue = (m.others ?? []).some((o) => explainWith(o, path, request).descriptors.length > 0);
        return perValue
            ? "  pre-limit: no bucket (per-value counters, sent by the per-value filter to their own service): only the service counts them\n  who decides: the service, for every such request (the pre-limit cannot bound these counters)"
            : "  pre-limit: no descriptor, nothing to count: the request passes it";
    }
    const out: string[] = [];
    for (const entries of descriptors) {
        const d = matchingDescriptor(cfg, entries);
        const name = entries.map((e) => `${e.key}=${e.value}`).join(", ");
        out.push(
            d
                ? `  pre-limit ${name}: ${d.maxTokens} tokens per gateway pod, refilled ${d.tokensPerFill} per ${d.fillSeconds} s (EnvoyFilter ${cfg.envoyFilter})`
                : `  pre-limit ${name}: no bucket (a per-value counter): only the service counts it`,
        );
    }
    const bounded = descriptors.some((e) => matchingDescriptor(cfg, e));
    out.push(
        bounded
            ? `  who decides: the pre-limit first: with a token in every bucket above the request goes on and the service decides; with an empty one the gateway refuses it (429, ${cfg.header ? `${cfg.header.key}: ${cfg.header.value}` : "no marker header"}) without asking the service`
            : "  who decides: the service, for every such request (the pre-limit cannot bound this counter)",
    );
    return out.join("\n");
}
