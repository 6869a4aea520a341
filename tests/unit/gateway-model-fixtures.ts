/**
 * Small hand-written gateway-model inputs shared by the gateway model's unit tests
 * (gateway-model-exact.test.ts for gateway-model/explain.ts, explain-format.test.ts for
 * render/explain-format.ts): a model like variant A's, and the Kubernetes objects the stack renders,
 * reduced to what the model reads. Each is a function or a constant, called from inside a test.
 */
import { Explanation, GatewayModel, ModelRoute, VhRateLimits } from "../../gateway-model/model";
import { K8sObject } from "../../lib/k8s-object";

// ---------------------------------------------------------------------------------------------
// Builders (called from inside each test)
// ---------------------------------------------------------------------------------------------

export const RL = "envoy.filters.http.ratelimit";
export const PER_ROUTE_TYPE = "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute";
export const SELECTOR = { istio: "ingressgateway" };

/** The CEL descriptor the stack uses by default: the path without its query. */
export const celUrlPath = (key = "PATH") => ({
    extension: {
        name: "envoy.rate_limit_descriptors.expr",
        typed_config: {
            "@type": "type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor",
            descriptor_key: key,
            text: "request.url_path",
        },
    },
});
/** `request_headers` on `:path` (pathKey=literal): the path as sent, query included. */
export const literalPath = (key = "PATH") => ({ request_headers: { header_name: ":path", descriptor_key: key } });
export const apiMatch = () => ({
    header_value_match: {
        descriptor_key: "PATH",
        descriptor_value: "api",
        headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: "(?:/api/v1/products/[1-9][0-9]?)(?:\\?.*)?" } }],
    },
});

/** The ratelimit config of spec variant A (docs/specification.md): /productpage 1, api 2, catch-all 100 per minute. */
export const bookinfoConfig = (domain = "ratelimit") => ({
    domain,
    descriptors: [
        { key: "PATH", value: "/productpage", rate_limit: { unit: "minute", requests_per_unit: 1 } },
        { key: "PATH", value: "api", rate_limit: { unit: "minute", requests_per_unit: 2 } },
        { key: "PATH", rate_limit: { unit: "minute", requests_per_unit: 100 } },
    ],
});

export function route(
    name: string | undefined,
    index: number,
    matches: ModelRoute["matches"],
    rateLimits: any[] = [],
    vhRateLimits: VhRateLimits = "OVERRIDE",
    envoyFilter?: string,
): ModelRoute {
    return { name, index, matches, rateLimits, vhRateLimits, ...(envoyFilter ? { envoyFilter } : {}) };
}

/** A gateway model like the stack's variant A, written by hand. */
export function bookinfoModel(opts: { apiMode?: VhRateLimits; vhActions?: any[]; config?: GatewayModel["config"]; domain?: string } = {}): GatewayModel {
    return {
        source: "VirtualService bookinfo",
        gateway: { name: "bookinfo-gateway", port: 8080, selector: SELECTOR },
        virtualHost: "*:8080",
        routes: [
            route("pages", 0, [
                { kind: "exact", value: "/productpage" },
                { kind: "exact", value: "/login" },
                { kind: "exact", value: "/logout" },
                { kind: "prefix", value: "/static" },
            ]),
            route(
                "api",
                1,
                [{ kind: "prefix", value: "/api/v1/products" }],
                [{ actions: [apiMatch()] }],
                opts.apiMode ?? "INCLUDE",
                "filter-ratelimit-svc-api",
            ),
        ],
        domain: opts.domain ?? "ratelimit",
        failureModeDeny: true,
        // The filter's enable_x_ratelimit_headers: DRAFT_VERSION_03, as the stack renders it.
        rateLimitHeaders: true,
        filterNames: ["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api"],
        vhostRateLimits: [{ rateLimits: [{ actions: opts.vhActions ?? [celUrlPath()] }], envoyFilter: "filter-ratelimit-svc" }],
        config: opts.config ?? bookinfoConfig(),
    };
}

export const entries = (x: Explanation) => x.descriptors.map((d) => d.entries);

// Kubernetes objects, as the stack renders them (rendered/*.yaml), reduced to what the model reads.

export function gatewayObj(
    name = "bookinfo-gateway",
    servers: any[] = [{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    selector: Record<string, string> = SELECTOR,
): K8sObject {
    return { apiVersion: "networking.istio.io/v1beta1", kind: "Gateway", metadata: { name, namespace: "default" }, spec: { selector, servers } };
}

export function virtualServiceObj(http: any[], gateways: string[] = ["bookinfo-gateway"], hosts: string[] = ["*"], name = "bookinfo"): K8sObject {
    return { apiVersion: "networking.istio.io/v1beta1", kind: "VirtualService", metadata: { name, namespace: "default" }, spec: { gateways, hosts, http } };
}

export function envoyFilterObj(name: string, configPatches: any[], labels: Record<string, string> | undefined = SELECTOR): K8sObject {
    return {
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { name, namespace: "istio-system" },
        spec: { ...(labels ? { workloadSelector: { labels } } : {}), configPatches },
    };
}

/** `null` leaves the field out. */
export function globalFilterPatch(domain = "ratelimit", failureModeDeny: boolean | null = true, context: string | null = "GATEWAY") {
    return {
        applyTo: "HTTP_FILTER",
        match: {
            ...(context !== null ? { context } : {}),
            listener: { filterChain: { filter: { name: "envoy.filters.network.http_connection_manager", subFilter: { name: "envoy.filters.http.router" } } } },
        },
        patch: {
            operation: "INSERT_BEFORE",
            value: {
                name: RL,
                typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit",
                    domain,
                    ...(failureModeDeny === null ? {} : { failure_mode_deny: failureModeDeny }),
                },
            },
        },
    };
}

export function vhostPatch(rateLimits: any[] | undefined, vhostName: string | undefined = "", mode?: VhRateLimits, context = "GATEWAY") {
    return {
        applyTo: "VIRTUAL_HOST",
        match: { context, routeConfiguration: { vhost: vhostName === undefined ? undefined : { name: vhostName, route: { action: "ANY" } } } },
        patch: {
            operation: "MERGE",
            value: {
                ...(rateLimits ? { rate_limits: rateLimits } : {}),
                ...(mode ? { typed_per_filter_config: { [RL]: { "@type": PER_ROUTE_TYPE, vh_rate_limits: mode } } } : {}),
            },
        },
    };
}

export function routePatch(routeName: string | undefined, rateLimits: any[] | undefined, mode?: VhRateLimits | number, vhostName = "*:8080") {
    return {
        applyTo: "HTTP_ROUTE",
        match: { context: "GATEWAY", routeConfiguration: { vhost: { name: vhostName, route: { ...(routeName ? { name: routeName } : {}), action: "ANY" } } } },
        patch: {
            operation: "MERGE",
            value: {
                ...(rateLimits ? { route: { rate_limits: rateLimits } } : {}),
                ...(mode !== undefined ? { typed_per_filter_config: { [RL]: { "@type": PER_ROUTE_TYPE, vh_rate_limits: mode } } } : {}),
            },
        },
    };
}

export function configMapObj(yamlText: string, name = "ratelimit-config"): K8sObject {
    return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { "config.yaml": yamlText } };
}

export const BOOKINFO_CONFIG_YAML = [
    "domain: ratelimit",
    "descriptors:",
    "  - key: PATH",
    "    value: /productpage",
    "    rate_limit:",
    "      unit: minute",
    "      requests_per_unit: 1",
    "  - key: PATH",
    "    value: api",
    "    rate_limit:",
    "      unit: minute",
    "      requests_per_unit: 2",
    "  - key: PATH",
    "    rate_limit:",
    "      unit: minute",
    "      requests_per_unit: 100",
    "",
].join("\n");

export const BOOKINFO_HTTP = () => [
    {
        match: [{ uri: { exact: "/productpage" } }, { uri: { exact: "/login" } }, { uri: { exact: "/logout" } }, { uri: { prefix: "/static" } }],
        route: [{ destination: { host: "productpage" } }],
    },
    { name: "api", match: [{ uri: { prefix: "/api/v1/products" } }], route: [{ destination: { host: "productpage" } }] },
];

/** The objects of variant A (rendered/*.yaml), plus whatever a test adds. */
export function bookinfoObjects(extra: K8sObject[] = [], opts: { apiMode?: VhRateLimits | null } = {}): K8sObject[] {
    const apiMode = opts.apiMode === undefined ? "INCLUDE" : opts.apiMode;
    return [
        gatewayObj(),
        virtualServiceObj(BOOKINFO_HTTP()),
        envoyFilterObj("filter-ratelimit", [globalFilterPatch()]),
        envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }])]),
        envoyFilterObj("filter-ratelimit-svc-api", [routePatch("api", [{ actions: [apiMatch()] }], apiMode ?? undefined)]),
        configMapObj(BOOKINFO_CONFIG_YAML),
        ...extra,
    ];
}
