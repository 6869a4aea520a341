/**
 * The MODEL of the ingress gateway, its types (there is no Envoy binary here) (there is no Envoy binary here): what rate-limit request Envoy
 * builds for a request from the gateway's route configuration, and which limit of the rate-limit
 * service's `config.yaml` answers it.
 *
 * Two front ends build the same model, and the istio tier checks that they agree:
 * - `gatewayModel(objects)` reads the objects this stack renders (Gateway, VirtualService,
 *   EnvoyFilters, the rate-limit ConfigMap); nothing is a constant of the specification.
 * - `gatewayModelFromEnvoy(...)` reads the route configuration Istio's own generator produced.
 * Pure functions, no I/O.
 *
 * Envoy behaviour modelled (docs/proof/upstream.md has the sources):
 * - Path normalization before routing, under each of Istio's `pathNormalization` settings
 *   (evaluate.ts `normalizePath`; BASE, Istio's default, unless the model says otherwise): `\`
 *   becomes `/`, `.`/`..` segments (also written `%2E`, also with `;` parameters) are resolved;
 *   repeated slashes are kept (merged with MERGE_SLASHES and DECODE_AND_MERGE_SLASHES, which also
 *   decodes `%2F` and `%5C`); other percent-encodings, letter case and `;` parameters are left as
 *   they are. NONE leaves the path as sent. The query string is never touched; a fragment is never
 *   part of the path (Envoy strips or refuses it).
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
 *   `query_parameters` (the first occurrence whose percent-decoded name is exactly the parameter's,
 *   its value percent-decoded, the query split on `&` only, `+` kept: Envoy's
 *   `parseAndDecodeQueryString` and `getFirstValue`; nothing when it is absent),
 *   `generic_key`, `remote_address` (the trusted client address, gateway-model/client-address.ts),
 *   `masked_remote_address` (that address with its host bits cleared, `<network>/<length>`), and the
 *   CEL extension with `request.url_path` (path without query), `request.path` (with it), or
 *   `size(request.url_path) <= N ? request.url_path : "<value>"` (the path up to N code points).
 * - A config entry with `shadow_mode: true` is counted but never refuses (not `limited`).
 * - The rate-limit service looks each descriptor up in its config: `key_value`, then a wildcard
 *   value (`prefix*`), then the key's catch-all; the counter (bucket) key is
 *   `<domain>_<key>_<value>_<window start>`, so a catch-all counts each distinct value apart.
 */
import { ReadServiceConfig, field } from "../builders/rendered-config";
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { HeadersOption } from "./rate-limit-headers";

/**
 * Istio's `meshConfig.pathNormalization`, as its generator sets the gateway's HTTP connection
 * manager (pilot/pkg/networking/core/listener_builder.go): NONE `normalize_path: false`; BASE (the
 * default) `normalize_path: true`; MERGE_SLASHES also `merge_slashes: true`;
 * DECODE_AND_MERGE_SLASHES also `path_with_escaped_slashes_action: UNESCAPE_AND_FORWARD`. Every
 * other setting keeps escaped slashes (`KEEP_UNCHANGED`).
 */
export type PathNormalization = "NONE" | "BASE" | "MERGE_SLASHES" | "DECODE_AND_MERGE_SLASHES";

/** The setting the model assumes when none is declared: Istio's default. */
export const DEFAULT_PATH_NORMALIZATION: PathNormalization = "BASE";

export interface Entry {
    key: string;
    value: string;
}

export interface AppliedLimit {
    /** Config entry that matched, e.g. `PATH=api` or `PATH (catch-all)`. */
    entry: string;
    unit: string;
    /** Requests allowed per `unit`: the entry's `requests_per_unit`. */
    requests: number;
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
    /** The `rate_limits` element's `x_ratelimit_option` (a rule's `rateLimitHeaders`): undefined, the filter's setting. */
    headersOption?: HeadersOption;
    /** The descriptor's own `hits_addend` (a rule's cost); undefined: the request-level addend (1). */
    hitsAddend?: number;
    /** Sent when the response is done (`apply_on_stream_done`), its cost read from the response: not known before. */
    afterResponse?: { format: string };
}

export type VhRateLimits = "OVERRIDE" | "INCLUDE" | "IGNORE";

export interface Explanation {
    /** The request's method as the client wrote it. */
    method?: string;
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
    calls: {
        filter: string;
        service: string;
        domain: string;
        descriptors: DescriptorExplanation[];
        /**
         * The X-RateLimit headers this filter adds to the response of the request when it is the
         * first of its window (remaining: the limit less one; reset: the whole window, its upper
         * bound); `{}` when it adds none.
         */
        responseHeaders: Record<string, string>;
    }[];
    /** True when at least one descriptor has a limit, i.e. the request can be refused with 429. */
    limited: boolean;
    /**
     * The descriptors sent when the response is done (a response cost), one call per filter that
     * has any; never enforced on this request. Undefined: none.
     */
    afterResponse?: { filter: string; service: string; domain: string; descriptors: DescriptorExplanation[] }[];
    /** The `RateLimit-Policy` values of the response: the route's, then the virtual host's (Envoy's order). */
    rateLimitPolicy?: string[];
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
    /** The route's `RateLimit-Policy` values (`response_headers_to_add`). */
    policy?: string[];
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
    /** The filter's `enable_x_ratelimit_headers` is DRAFT_VERSION_03. */
    rateLimitHeaders?: boolean;
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
    /** The config of the service the filter calls, as its writer types it (builders/ratelimit-config.ts). */
    config: ReadServiceConfig;
    /** The other rate-limit filters on the listener, each its own model (they run too, in this order). */
    others?: GatewayModel[];
    /** The virtual host's `RateLimit-Policy` values (`response_headers_to_add`). */
    vhostPolicy?: string[];
    /** The mesh's `pathNormalization` the gateway runs with; undefined: Istio's default, BASE (the rendered objects do not say). */
    pathNormalization?: PathNormalization;
}

/** The `RateLimit-Policy` values of a `response_headers_to_add` list (snake_case or camelCase JSON). */
export function policyValues(headersToAdd: any): string[] {
    return (Array.isArray(headersToAdd) ? headersToAdd : [])
        .map((h) => h?.header)
        .filter((h) => typeof h?.key === "string" && h.key.toLowerCase() === "ratelimit-policy" && typeof h.value === "string")
        .map((h) => h.value as string);
}

/** `RateLimitPerRoute.rate_limits` under `name` in a `typed_per_filter_config` map, when set and non-empty. */
export function perFilterRateLimits(typedPerFilterConfig: any, name: string): any[] | undefined {
    const rl = field(typedPerFilterConfig?.[name], "rate_limits");
    return Array.isArray(rl) && rl.length ? rl : undefined;
}

export function isSubset(sub: Record<string, string> | undefined, sup: Record<string, string>): boolean {
    return Object.entries(sub ?? {}).every(([k, v]) => sup[k] === v);
}

/**
 * Whether an EnvoyFilter reaches the pods a Gateway selects (`selector`), as Istio decides it
 * (pilot/pkg/model/policyattachment.go): with `targetRefs`, when one names the Gateway API Gateway
 * whose name the pods carry (`gateway.networking.k8s.io/gateway-name`, the label Istio gives that
 * Gateway's pods; an ambient stack's Gateway selects them by it); otherwise by its workloadSelector.
 */
export function reachesGatewayPods(spec: any, selector: Record<string, string>): boolean {
    const refs: any[] = spec?.targetRefs ?? [];
    if (refs.length)
        return refs.some(
            (r) => r?.group === "gateway.networking.k8s.io" && r?.kind === "Gateway" && r?.name === selector["gateway.networking.k8s.io/gateway-name"],
        );
    return isSubset(spec?.workloadSelector?.labels, selector);
}

/** `vh_rate_limits` of a `typed_per_filter_config` map, when it configures the rate-limit filter. */
export function vhRateLimitsOf(typedPerFilterConfig: any, name: string = RATELIMIT_FILTER): VhRateLimits | undefined {
    const c = typedPerFilterConfig?.[name];
    if (!c) return undefined;
    const v = field(c, "vh_rate_limits") ?? "OVERRIDE";
    if (v === "OVERRIDE" || v === "INCLUDE" || v === "IGNORE") return v;
    if (v === 0 || v === 1 || v === 2) return (["OVERRIDE", "INCLUDE", "IGNORE"] as const)[v];
    throw new Error(`vh_rate_limits ${JSON.stringify(v)} is not modelled`);
}

/** The client a request comes from, as the model assumes it (the path is given apart). */
export interface ModelRequest {
    /** The request's method as the client wrote it. Defaults to `GET`. */
    method?: string;
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
    /**
     * The payload (claims) of the request's JSON Web Token as the gateway's JWT filter verified it
     * (gateway-model/jwt-metadata-model.ts). Defaults to none: no token.
     */
    jwtPayload?: Record<string, unknown>;
}

/** The client address assumed when none is given (TEST-NET-1, RFC 5737). */
export const DEFAULT_CLIENT_ADDRESS = "192.0.2.1";
