/**
 * The one reader of rendered configuration, beside the types that write it: an EnvoyFilter's patches
 * read in either spelling Istio accepts (snake_case as Envoy names the fields, or protobuf JSON's
 * camelCase), each into one `RenderedPatch`, the rate-limit HTTP filter a patch inserts into one
 * `RenderedRateLimitFilter`, and the rate-limit service's `config.yaml` into the writer's own
 * `RateLimitServiceConfig` (ratelimit-config.ts). gateway-model/ (and through it prove/) and
 * program/ read rendered objects through it; no other source walks `configPatches`, spells a field
 * both ways or parses `config.yaml` itself (tests/unit/one-reader.test.ts). Pure.
 */
import { parse } from "yaml";
import { K8sObject } from "../lib/k8s-object";
import { RATELIMIT_FILTER, RATELIMIT_TYPE } from "./envoy-types";
import { CONFIG_FILE_KEY, ConfigDescriptor, DESCRIPTOR_SWITCHES, RateLimitServiceConfig, ServiceLimit } from "./ratelimit-config";

/** The service's config as read: the writer's types, with the limits the service also reads (`unlimited`). */
export type ReadServiceConfig = RateLimitServiceConfig<ServiceLimit>;

/** The lowerCamelCase JSON name of a snake_case proto field name (`typed_config` → `typedConfig`). */
export function camelOf(snake: string): string {
    return snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** snake_case or camelCase field of an Envoy/Istio JSON object (both are valid). */
export function field(o: any, snake: string): any {
    if (o == null) return undefined;
    // Both spellings present: Istio's protobuf JSON decoder reads the proto name, then the JSON name
    // over it, so the lowerCamelCase value is the one Envoy gets.
    const camel = o[camelOf(snake)];
    return camel !== undefined ? camel : o[snake];
}

/**
 * Every value of a field present in `o`, under either spelling (snake_case first). For a judge that
 * must not pick one: Istio decodes a patch value with protobuf JSON, which takes both spellings and,
 * given both, keeps one of them (golang/protobuf's jsonpb: the camelCase one), so a check must hold
 * for each spelling written.
 */
export function fieldSpellings(o: any, snake: string): any[] {
    if (o == null) return [];
    return [...new Set([snake, camelOf(snake)])].map((k) => o[k]).filter((v) => v !== undefined);
}

/**
 * Where a patch value can hold per-filter config (snake_case; `[]`: each element of a list): at its
 * top (a virtual host's or a route's own), in a ROUTE_CONFIGURATION value's virtual hosts and their
 * routes, and in a VIRTUAL_HOST value's routes. Istio merges each into the route configuration, so
 * every one of them can switch off or override an HTTP filter on the routes it reaches.
 */
export const PER_FILTER_CONFIG_PATHS: readonly (readonly string[])[] = [
    ["typed_per_filter_config"],
    ["virtual_hosts", "[]", "typed_per_filter_config"],
    ["virtual_hosts", "[]", "routes", "[]", "typed_per_filter_config"],
    ["routes", "[]", "typed_per_filter_config"],
];

/** Every value at `path` below `o`, each field under either spelling (`fieldSpellings`), each list element for `[]`. */
function valuesAt(o: any, path: readonly string[]): any[] {
    if (!path.length) return [o];
    const [f, ...rest] = path;
    if (f === "[]") return Array.isArray(o) ? o.flatMap((e) => valuesAt(e, rest)) : [];
    return fieldSpellings(o, f!).flatMap((v) => valuesAt(v, rest));
}

/** Every per-filter config map a patch value writes, at its top or nested (PER_FILTER_CONFIG_PATHS), under either spelling. */
export function perFilterConfigsIn(value: any): Record<string, any>[] {
    return PER_FILTER_CONFIG_PATHS.flatMap((path) => valuesAt(value, path)).filter((m) => m !== null && typeof m === "object" && !Array.isArray(m));
}

/** protobuf JSON (camelCase) → the snake_case field names of the rendered filters, at every depth (`@type` kept). */
export function snakeKeys(o: any): any {
    if (Array.isArray(o)) return o.map(snakeKeys);
    if (o === null || typeof o !== "object") return o;
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.startsWith("@") ? k : k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(v)]));
}

/** An EnvoyFilter as the reader needs it: rendered (`K8sObject`) or live (`kubectl get -o json`). */
export interface RenderedFilter {
    metadata: { name: string; namespace?: string };
    spec?: any;
}

/** One of an EnvoyFilter's `configPatches`, read whichever way it is spelt. */
export interface RenderedPatch {
    /** The EnvoyFilter that holds it. */
    envoyFilter: RenderedFilter;
    applyTo?: string;
    operation?: string;
    /** `match.context`; absent: Istio's default, ANY. */
    context: string;
    /** The context reaches a gateway: GATEWAY or ANY. */
    onGateway: boolean;
    /** `match.listener.port_number`; undefined: every listener. */
    port?: number;
    /** `match.listener.name` (a waypoint's `main_internal`); undefined: any listener. */
    listenerName?: string;
    /** `match.listener.filter_chain.name` (a waypoint's `inbound-vip|<port>|http|<host>`); undefined: any chain. */
    filterChainName?: string;
    /** `match.listener.filter_chain.filter.sub_filter.name`: the HTTP filter an inserted one goes before. */
    subFilter?: string;
    /** `match.route_configuration.vhost.name`; undefined or `""`: every virtual host. */
    virtualHost?: string;
    /** `match.route_configuration.vhost.route.name`. */
    route?: string;
    /** `patch.value` as written (`{}` without one). */
    value: any;
    /** `patch.value.name`. */
    name?: string;
    /** `patch.value.typed_config`. */
    typedConfig?: any;
    /** The `rate_limits` a VIRTUAL_HOST patch gives the host, or an HTTP_ROUTE patch its route; undefined when it gives none (or no list). */
    rateLimits?: any[];
    /** `patch.value.typed_per_filter_config` (`{}` without one). */
    typedPerFilterConfig: Record<string, any>;
    /** Every `typed_per_filter_config` written, under either spelling (`[]` without one): what a judge reads (`fieldSpellings`). */
    typedPerFilterConfigSpellings: Record<string, any>[];
    /** Every per-filter config the value writes, at its top or nested in its virtual hosts and routes, either spelling (`perFilterConfigsIn`): what the ownership rule judges. */
    perFilterConfigs: Record<string, any>[];
    /** `patch.value.response_headers_to_add`, as written. */
    responseHeadersToAdd?: any;
}

/** The patches of an EnvoyFilter (none for another kind or a filter without patches), in their order. */
export function patchesOf(f: RenderedFilter): RenderedPatch[] {
    const patches: any[] = Array.isArray(f?.spec?.configPatches) ? f.spec.configPatches : [];
    return patches.map((p) => readPatch(f, p ?? {}));
}

function readPatch(f: RenderedFilter, p: any): RenderedPatch {
    const match = p.match ?? {};
    const listener = field(match, "listener");
    const vhost = field(match, "route_configuration")?.vhost;
    const value = p.patch?.value ?? {};
    const applyTo: string | undefined = field(p, "apply_to");
    const port = field(listener, "port_number");
    const context: string = typeof match.context === "string" ? match.context : "ANY";
    const rateLimits = applyTo === "VIRTUAL_HOST" ? field(value, "rate_limits") : applyTo === "HTTP_ROUTE" ? field(value.route, "rate_limits") : undefined;
    return {
        envoyFilter: f,
        ...(applyTo !== undefined ? { applyTo } : {}),
        ...(p.patch?.operation !== undefined ? { operation: p.patch.operation } : {}),
        context,
        onGateway: context === "GATEWAY" || context === "ANY",
        ...(port !== undefined ? { port: Number(port) } : {}),
        ...optional("listenerName", listener?.name),
        ...optional("filterChainName", field(listener, "filter_chain")?.name),
        ...optional("subFilter", field(field(field(listener, "filter_chain"), "filter"), "sub_filter")?.name),
        ...optional("virtualHost", vhost?.name),
        ...optional("route", vhost?.route?.name),
        value,
        ...optional("name", value.name),
        ...optional("typedConfig", field(value, "typed_config")),
        ...(Array.isArray(rateLimits) ? { rateLimits } : {}),
        typedPerFilterConfig: field(value, "typed_per_filter_config") ?? {},
        typedPerFilterConfigSpellings: fieldSpellings(value, "typed_per_filter_config").filter((m) => m !== null && typeof m === "object"),
        perFilterConfigs: perFilterConfigsIn(value),
        ...optional("responseHeadersToAdd", field(value, "response_headers_to_add")),
    };
}

const optional = <K extends string>(key: K, v: any): { [k in K]?: any } => (v !== undefined ? ({ [key]: v } as { [k in K]: any }) : {});

/** `namespace/name` of an object (`default` without a namespace). */
export function namespacedName(f: RenderedFilter): string {
    return `${f.metadata.namespace ?? "default"}/${f.metadata.name}`;
}

/** The labels an EnvoyFilter's `workloadSelector` selects (`{}`: every pod of its namespace). */
export function workloadLabelsOf(f: RenderedFilter): Record<string, string> {
    return f.spec?.workloadSelector?.labels ?? {};
}

/** An EnvoyFilter's priority (Istio applies lower first; 0 by default). */
export function priorityOf(f: RenderedFilter): number {
    return Number(f.spec?.priority ?? 0);
}

/** Whether an HTTP filter value is Envoy's rate-limit filter (by its canonical name or its config's type). */
export function isRateLimitFilter(value: any): boolean {
    const t = field(value, "typed_config")?.["@type"];
    return (
        value?.name === RATELIMIT_FILTER ||
        t === RATELIMIT_TYPE ||
        (typeof t === "string" && t.endsWith("/envoy.extensions.filters.http.ratelimit.v3.RateLimit"))
    );
}

/** The route or virtual-host `rate_limits` entries a rate-limit filter of `stage` reads (an entry's `stage` defaults to 0). */
export function entriesOfStage(rateLimits: any[] | undefined, stage: number): any[] {
    return (Array.isArray(rateLimits) ? rateLimits : []).filter((e) => Number(e?.stage ?? 0) === stage);
}

/** The rate-limit HTTP filter an HTTP_FILTER patch inserts, read from its `typed_config`. */
export interface RenderedRateLimitFilter {
    /** Its configured name, as written (Envoy requires one). */
    name?: string;
    domain?: string;
    /** `stage` (0 by default). */
    stage: number;
    /** The gRPC cluster of the service it calls. */
    cluster?: string;
    failureModeDeny: boolean;
    /** `status_on_error`, as written. */
    statusOnError?: any;
    /** The filter's own `rate_limits` (empty: none). */
    rateLimits: any[];
    /** `enable_x_ratelimit_headers` is DRAFT_VERSION_03 (by name or number). */
    rateLimitHeaders: boolean;
    /** `response_headers_to_add` of its refusals, as written. */
    responseHeadersToAdd?: any;
}

/** The rate-limit filter a patch inserts (HTTP_FILTER with Envoy's rate-limit filter), else undefined. */
export function rateLimitFilterOf(p: RenderedPatch): RenderedRateLimitFilter | undefined {
    if (p.applyTo !== "HTTP_FILTER" || !isRateLimitFilter(p.value)) return undefined;
    const tc = p.typedConfig ?? {};
    const cluster = field(field(field(field(tc, "rate_limit_service"), "grpc_service"), "envoy_grpc"), "cluster_name");
    const own = field(tc, "rate_limits");
    const headers = field(tc, "enable_x_ratelimit_headers");
    return {
        ...optional("name", p.name),
        ...optional("domain", tc.domain),
        stage: Number(field(tc, "stage") ?? 0),
        ...optional("cluster", cluster),
        failureModeDeny: field(tc, "failure_mode_deny") === true,
        ...optional("statusOnError", field(tc, "status_on_error")),
        rateLimits: Array.isArray(own) ? own : [],
        rateLimitHeaders: headers === "DRAFT_VERSION_03" || headers === 1,
        ...optional("responseHeadersToAdd", field(tc, "response_headers_to_add")),
    };
}

/** Whether an object is a rate-limit service's ConfigMap: a `config.yaml` entry with a domain. */
export function isServiceConfigMap(o: K8sObject): boolean {
    const text = o.kind === "ConfigMap" ? o.data?.[CONFIG_FILE_KEY] : undefined;
    return typeof text === "string" && /(^|\n)domain:/.test(text);
}

/** A service ConfigMap's `config.yaml`, read into the writer's type (`where` names it in errors). */
export function serviceConfigOf(o: K8sObject): ReadServiceConfig {
    const where = `ConfigMap ${namespacedName(o)} ${CONFIG_FILE_KEY}`;
    return readServiceConfig(String(o.data?.[CONFIG_FILE_KEY] ?? ""), where);
}

/** The fields of a config.yaml descriptor the writer's type declares; any other is not read. */
const NODE_FIELDS: ReadonlySet<string> = new Set<keyof ConfigDescriptor>(["key", "value", "rate_limit", "descriptors", ...DESCRIPTOR_SWITCHES]);

/** The fields of a limit the service reads. */
const LIMIT_FIELDS = ["unit", "requests_per_unit", "unlimited"];

function limitOf(rl: any): ServiceLimit {
    if (rl?.unlimited !== undefined) return { unlimited: rl.unlimited === true };
    return { unit: String(rl?.unit ?? ""), requests_per_unit: Number(rl?.requests_per_unit ?? 0) };
}

/**
 * The text of a `config.yaml` read into the writer's type. Throws, naming the descriptor, on a
 * field the writer does not write (so the model never reads a config it only half understands).
 */
export function readServiceConfig(text: string, where: string): ReadServiceConfig {
    const doc = parse(text) ?? {};
    if (typeof doc.domain !== "string") throw new Error(`${where} has no domain: a rate-limit service config needs \`domain: <name>\``);
    return { domain: doc.domain, descriptors: descriptorsOf(doc.descriptors, `${where} descriptors`) };
}

function descriptorsOf(list: unknown, where: string): ConfigDescriptor<ServiceLimit>[] {
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list)) throw new Error(`${where} is ${JSON.stringify(list)}, not a list of descriptors`);
    return list.map((n: any, i: number): ConfigDescriptor<ServiceLimit> => {
        const at = `${where}[${i}]`;
        if (typeof n?.key !== "string") throw new Error(`${at} has no key: each descriptor needs \`key: <name>\``);
        const other = Object.keys(n).filter((k) => !NODE_FIELDS.has(k));
        if (other.length)
            throw new Error(
                `${at} (key ${n.key}) has ${other.join(", ")}, which the model does not read (it reads ${[...NODE_FIELDS].join(", ")}): remove it, or model it in builders/ratelimit-config.ts first`,
            );
        const rl = n.rate_limit;
        const rlOther = rl && typeof rl === "object" ? Object.keys(rl).filter((k) => !LIMIT_FIELDS.includes(k)) : [];
        if (rlOther.length)
            throw new Error(`${at} (key ${n.key}) rate_limit has ${rlOther.join(", ")}, which the model does not read (it reads ${LIMIT_FIELDS.join(", ")})`);
        return {
            key: n.key,
            ...(n.value !== undefined ? { value: String(n.value) } : {}),
            ...(rl !== undefined ? { rate_limit: limitOf(rl) } : {}),
            ...Object.fromEntries(DESCRIPTOR_SWITCHES.filter((k) => n[k] !== undefined).map((k) => [k, n[k] === true])),
            ...(n.descriptors !== undefined ? { descriptors: descriptorsOf(n.descriptors, `${at} (key ${n.key}) descriptors`) } : {}),
        };
    });
}
