/**
 * GlobalRateLimit's fields, each declared once (lib/field-decl.ts): the plain ones with their
 * documentation, default, rule, where they go and the stack's key that sets them; the nested ones
 * with their documentation and their hand-written type. The checks run these rules, the plan and
 * the stack read these defaults, and components/global-ratelimit/args.generated.ts is generated from these
 * tables (`npm run gen`), so an argument's JSDoc is never written by hand. Pure.
 */
import { CounterStore } from "../../builders/counter-stores";
import { ErrorStatus, FilterLayout, RateLimitHeaders } from "../../builders/filter-choices";
import { DEFAULT_RULE_KEY, PathKeyMode } from "../../builders/rule-args";
import { ArgInterface, booleanRule, customRule, dnsNameRule, field, nested, oneOfRule, protoDurationRule } from "../../lib/field-decl";
import { fieldProblem } from "../../lib/field-checks";
import { dnsNameProblem, isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { NAME } from "../rules/rule-checks";
import { DEFAULTS } from "../common/defaults";
import { PlatformDefaults } from "./platform-defaults";
import { MeshMode } from "../common/mesh-enums";
import { PER_VALUE_FIELDS, SERVICE_FIELDS } from "../service/fields";
import { t } from "../../lib/field-types";

/** The EnvoyFilters' name prefix with `FilterLayout.Shared` (the specification's names), `filterNamePrefix`'s default there. */
export const DEFAULT_FILTER_PREFIX = "filter-ratelimit";

/** `domain`: non-empty, letters, digits, '_', '.', '-' (what the service accepts); the fix joins a text's valid words with '-'. */
const domainRule = customRule<string>("letters, digits, '_', '.', '-'", (path, domain) => {
    if (typeof domain === "string" && /^[A-Za-z0-9_.-]+$/.test(domain)) return [];
    const fixed = (typeof domain === "string" ? domain : "").trim().replace(/[^A-Za-z0-9_.-]+/g, "-") || "my-gateway";
    return [fieldProblem(path, domain, "must be non-empty and use only letters, digits, '_', '.', '-'", (s) => s.set(path, fixed))];
});

/**
 * The fields the gateway's call to the service takes as given (their defaults filled): its failure
 * mode and its timeout (the service's Redis timeout is derived from it, builders/failure-bounds.ts).
 */
export const CALL_FIELDS = {
    failureModeDeny: field({
        doc:
            "When the service cannot answer (down, unreachable, Redis failing, or slower than `timeout`): `true` refuses the request with HTTP 500 " +
            "(fail closed, the specification's choice); `false` lets it through unlimited (fail open: on a gateway other teams share, a rate-limit " +
            "outage then never takes their traffic down with it). A boolean; anything else is refused.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: { envoy: "the ratelimit filter's failure_mode_deny" },
        stackKey: "failureModeDeny",
        stackGroup: "limits",
    }),
    timeout: field({
        doc: "Timeout of the gateway's call to the service (a protobuf duration, e.g. `0.5s`).",
        type: t.string(),
        default: "10s",
        rule: protoDurationRule(0.001),
        goesTo: { envoy: "the ratelimit filter's timeout" },
        stackKey: "rateLimitTimeout",
        stackGroup: "limits",
    }),
};

/** The plain fields of `GlobalRateLimitOptions` and its nested ones, in the interface's order. */
export const GLOBAL_FIELDS = {
    pathKey: field<PathKeyMode>({
        doc:
            "What a path is counted by. `PathKeyMode.UrlPath`: the path without its query string (Envoy's CEL descriptor `request.url_path`), so no " +
            "query string gets a counter of its own; in MeshRateLimit the `api` route's paths also count against the per-path catch-all, so no " +
            "unmatched API path escapes either. `PathKeyMode.Literal`: `:path` as written, query included (the specification's tables): a query " +
            "such as `?n=1` gets its own counter and escapes every limit; for comparison and for proxies older than Istio 1.24, which lack the CEL extension.",
        type: t.enum(PathKeyMode, "PathKeyMode"),
        default: PathKeyMode.UrlPath,
        rule: oneOfRule(PathKeyMode, "PathKeyMode"),
        goesTo: { envoy: "the rate_limits actions' descriptor of the path" },
        stackKey: "pathKey",
        stackGroup: "limits",
    }),
    clientPrefix: nested({
        doc:
            "What makes one client for every per-client counter (`perClientAddress`, `clientCidr.perAddress`, and the fallback counters of long " +
            "paths, untrusted per-value values and missing per-value fields): the leading bits of its trusted address (Envoy's " +
            "`masked_remote_address`). Defaults to `{ v4: 32, v6: 64 }`: each IPv4 address, each IPv6 /64 (whoever holds a /64 can use any of its addresses).",
        type: t.ref("ClientPrefixArgs"),
    }),
    namespace: field({
        doc: "Namespace of the service, its ConfigMap and Redis (must exist). Plain, not an output: it places the objects.",
        type: t.string(),
        default: "default",
        rule: dnsNameRule("label"),
        goesTo: { object: "the namespace of the service, its ConfigMap and Redis" },
        stackKey: "ratelimitNamespace",
        stackGroup: "service",
    }),
    ...CALL_FIELDS,
    statusOnError: field<ErrorStatus>({
        doc:
            "The status of a request refused because the service could not answer (`failureModeDeny`; Envoy's `status_on_error`, Envoy 1.29+): " +
            "`ErrorStatus.ServiceUnavailable` (503) lets clients and load balancers tell an outage from a bug, `ErrorStatus.TooManyRequests` (429) " +
            'makes it look like a limit. The specification says only "deny". Only with `failureModeDeny: true`.',
        type: t.enum(ErrorStatus, "ErrorStatus"),
        defaultNote: "none (Envoy's 500)",
        rule: oneOfRule(ErrorStatus, "ErrorStatus", { suggest: ErrorStatus.ServiceUnavailable }),
        goesTo: { envoy: "the ratelimit filter's status_on_error" },
        stackKey: "statusOnError",
        stackGroup: "limits",
    }),
    rateLimitHeaders: field<RateLimitHeaders>({
        doc:
            "What the gateway tells clients of their limits. `RateLimitHeaders.Draft03`: every response the service counted, a refusal included, " +
            "carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` of the tightest limit that applied (Envoy's " +
            "`enable_x_ratelimit_headers`, from the service's answer); a rule with `rateLimitHeaders: false` stays out of them. With " +
            "`CounterStore.Split` a request counted by both services gets one set from each. `RateLimitHeaders.Off`: none, except for rules with " +
            "`rateLimitHeaders: true`.",
        type: t.enum(RateLimitHeaders, "RateLimitHeaders"),
        default: RateLimitHeaders.Draft03,
        defaultNote: ", and to `Off` with `service.shadowMode` (which refuses nothing, and then publishes no RateLimit-Policy either)",
        rule: oneOfRule(RateLimitHeaders, "RateLimitHeaders", {
            meant: { on: RateLimitHeaders.Draft03, true: RateLimitHeaders.Draft03, false: RateLimitHeaders.Off },
        }),
        goesTo: { envoy: "the ratelimit filter's enable_x_ratelimit_headers" },
        stackKey: "rateLimitHeaders",
        stackGroup: "limits",
    }),
    filterLayout: field<FilterLayout>({
        doc:
            "How the filters share the gateway listener. `FilterLayout.PerInstance`: HTTP filters named after this instance's service " +
            "(`envoy.filters.http.ratelimit/<namespace>/<service.name>`, the pre-limit `envoy.filters.http.local_ratelimit/<namespace>/<service.name>`), " +
            "descriptors only as `RateLimitPerRoute` under that name, stage 10: any number of instances and programs share one listener, and a " +
            "request calls only the service of the instance owning its virtual host. Needs Istio 1.25 or later (Envoy 1.33). `FilterLayout.Shared`: " +
            "the specification's layout (canonical filter names, route and virtual-host `rate_limits`, read by every rate-limit filter on the " +
            "listener): one instance per listener, for Istio 1.24.",
        type: t.enum(FilterLayout, "FilterLayout"),
        default: FilterLayout.PerInstance,
        defaultNote: "; MeshRateLimit's to `FilterLayout.Shared`, the specification's layout",
        rule: oneOfRule(FilterLayout, "FilterLayout"),
        goesTo: { envoy: "the HTTP filters' names and where the descriptors go" },
        stackKey: "filterLayout",
        stackGroup: "limits",
    }),
    preLimit: field({
        doc:
            "A pre-limit on the gateway: Envoy's local rate-limit filter before the rate-limit filter, on the same listeners and virtual hosts, with " +
            "one token bucket per pod for every limit a fixed descriptor names (a rule, a named path): 2 × the limit, refilled by the limit per " +
            "window. It refuses (429, `x-mesh-ratelimit: pre-limit`) only what the service would refuse too while traffic stays within the limits, " +
            "so a flood no longer reaches the service. Per-value counters (each path, header value or client address) stay with the service alone, " +
            "and so does everything in the service's shadow mode (`service.shadowMode`: no pre-limit). A boolean; `false` sends every request to the service.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: { envoy: "the local_ratelimit filter before the ratelimit filter" },
        stackKey: "preLimit",
        stackGroup: "limits",
    }),
    counterStore: field<CounterStore>({
        doc:
            "Where the counters live. `CounterStore.Split`: when the rules make both fixed counters (a named path, a rule without a per-value split) " +
            "and per-value ones (`perPath.eachPath`, `header.perValue`, `query.perValue`, `perClientAddress`, `clientCidr.perAddress`), the " +
            "per-value ones go to a service and a Redis of their own (`<service.name>-per-value`, `redis-per-value`), so no flood of new keys can " +
            "evict, reset or slow a fixed limit (builders/counter-stores.ts). `CounterStore.Single`: the specification's layout, one service and one " +
            "Redis for all (a flood of new paths can then evict a live fixed counter).",
        type: t.enum(CounterStore, "CounterStore"),
        default: CounterStore.Split,
        rule: oneOfRule(CounterStore, "CounterStore"),
        goesTo: { object: "a second service, Redis and ratelimit filter for the per-value counters" },
        stackKey: "counterStore",
        stackGroup: "limits",
    }),
    service: nested({ doc: "The rate-limit service. Defaults as documented on each field.", type: t.ref("RateLimitServiceOptionsArgs") }),
    perValueStore: nested({ doc: "The per-value side of `CounterStore.Split`. Defaults as documented on each field.", type: t.ref("PerValueStoreArgs") }),
    redis: nested({ doc: "Redis. Defaults to one deployed by the component.", type: t.ref("RedisOptionsArgs") }),
};

/** The fields `GlobalRateLimitArgs` adds, plain and nested, in the interface's order. */
export const GLOBAL_ARGS_FIELDS = {
    domain: field({
        doc: "Rate-limit domain, written once for both the gateway filter and the service config. Plain, not an output: the config is checked before anything is registered.",
        type: t.string(),
        required: true,
        rule: domainRule,
        goesTo: { envoy: "the ratelimit filter's domain and the service config's" },
    }),
    gateway: nested({ doc: "The gateway whose requests are limited.", type: t.ref("GatewayTargetArgs"), required: true }),
    rules: nested({
        doc:
            "Typed rules: what to count (path, header, client address, route) and how much. Plain, not outputs: they decide the objects and are " +
            "checked before anything is registered. Defaults to none.",
        type: t.list(t.ref("RateLimitRuleArgs")),
    }),
    perPath: nested({ doc: "Per-path counters (every distinct path its own counter). Defaults to none.", type: t.ref("PerPathLimitsArgs") }),
    ruleKey: field({
        doc: "Descriptor key of each rule's first entry (its value is the rule's name).",
        type: t.string(),
        default: DEFAULT_RULE_KEY,
        rule: customRule<string>("a descriptor key of letters, digits, '_', '.', '-'", (path, value, fallback) =>
            typeof value === "string" && NAME.test(value)
                ? []
                : [{ key: path, value, problem: "must be a non-empty descriptor key of letters, digits, '_', '.', '-'", fix: `use "${fallback}"` }],
        ),
        goesTo: { envoy: "the descriptor key of each rule's first entry" },
    }),
    filterNamePrefix: field({
        doc: "Prefix of the EnvoyFilter names: `<prefix>` (HTTP filter), `<prefix>-svc` (virtual-host actions), `<prefix>-svc-api` (route actions).",
        type: t.string(),
        defaultNote:
            `\`<namespace>-<service.name>\` (unique in the cluster, as the service is) with \`FilterLayout.PerInstance\`, \`${DEFAULT_FILTER_PREFIX}\` ` +
            "(the specification's names) with `FilterLayout.Shared`",
        rule: customRule<string>("a DNS subdomain", (path, value) =>
            isDnsName(value, "subdomain")
                ? []
                : [{ key: path, value, problem: dnsNameProblem("subdomain"), fix: `use "${suggestedDnsName(value, "subdomain")}"` }],
        ),
        goesTo: { object: "the EnvoyFilters' names" },
    }),
    awaitRollout: field({
        doc: "Wait for the Deployments to become ready.",
        type: t.boolean(),
        default: DEFAULTS.awaitRollout,
        rule: booleanRule(),
        goesTo: { object: "the Deployments' pulumi.com/skipAwait annotation" },
    }),
    meshMode: field<MeshMode>({
        doc:
            "The mesh the service and Redis run in. `MeshMode.Sidecar`: each pod gets its own sidecar, started first. `MeshMode.Ambient`: each pod " +
            "is enrolled in ambient mode (`istio.io/dataplane-mode: ambient`, no sidecar): ztunnel carries its traffic with mutual TLS and " +
            "enforces the access policies' identities. The gateway filters are the same in both: aim `gateway` at a Gateway API Gateway on ambient.",
        type: t.enum(MeshMode, "MeshMode"),
        default: MeshMode.Sidecar,
        rule: oneOfRule(MeshMode, "MeshMode"),
        goesTo: { object: "the service's and Redis's pod labels and annotations" },
    }),
    accessPolicy: nested({
        doc:
            "Least privilege: when given, an Istio AuthorizationPolicy and a Kubernetes NetworkPolicy let only the gateway call the service's gRPC " +
            "port, and only the service reach the Redis the component deploys. Defaults to none (any pod may call the service), because the " +
            "gateway's identity cannot be derived from its selector.",
        type: t.ref("AccessPolicyArgs"),
    }),
    monitoring: nested({
        doc:
            "What a platform team looks at: a Grafana dashboard ConfigMap (on by default) and alert rules as a `PrometheusRule` (off by default), " +
            "generated from the same rules. Defaults as documented on each field.",
        type: t.ref("MonitoringArgs"),
    }),
    platformDefaults: field<PlatformDefaults>({
        doc:
            "What this instance's virtual hosts do with a platform team's defaults on the same gateway (PlatformRateLimit, deployed by another " +
            "stack or not at all): `PlatformDefaults.Replace` turns them off on these hosts (this instance's rules replace them), " +
            "`PlatformDefaults.Merge` keeps them beside this instance's rules. The platform's overrides apply either way. Only with `FilterLayout.PerInstance`.",
        type: t.enum(PlatformDefaults, "PlatformDefaults"),
        default: PlatformDefaults.Replace,
        rule: oneOfRule(PlatformDefaults, "PlatformDefaults"),
        goesTo: { envoy: "the platform's defaults filter, off on these virtual hosts" },
    }),
    accessLog: nested({
        doc:
            "An access log on the gateway's own pods and ports (an EnvoyFilter appending a file access log to their HTTP connection managers, " +
            "nothing mesh-wide) in the JSON format `mesh-ratelimit replay` reads and takes from the program: each request's time, method, path, " +
            "host, client and upstream, and the request headers the rules read (secret ones left out). Defaults to none (the gateway's logs are the mesh's own).",
        type: t.ref("GatewayAccessLogArgs"),
    }),
};

/**
 * The argument interfaces generated from these tables (components/global-ratelimit/args.generated.ts, by
 * `npm run gen`), in the file's order: each one's documentation and its fields' table.
 */
export const GLOBAL_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "RateLimitServiceOptionsArgs", doc: "The envoyproxy/ratelimit service.", fields: SERVICE_FIELDS },
    {
        name: "GlobalRateLimitOptions",
        doc:
            "The rate-limit service, its Redis and the gateway's filter: GlobalRateLimit's arguments, and MeshRateLimit's `global` (which adds its " +
            "domain preset, access switch and monitoring). Each field documented here once. Plain values, except where a field says an output is " +
            "accepted: the others decide which objects exist, so `pulumi preview` must know them to list the objects.",
        fields: GLOBAL_FIELDS,
    },
    { name: "GlobalRateLimitArgs", doc: "", extends: "GlobalRateLimitOptions", fields: GLOBAL_ARGS_FIELDS },
    { name: "PerValueStoreArgs", doc: "The service and Redis of the per-value counters (`counterStore: CounterStore.Split`).", fields: PER_VALUE_FIELDS },
];

/** Where the generated interfaces' field types come from (the hand-written ones among them). */
export const GLOBAL_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "@pulumi/pulumi": ["pulumi"],
    "../../builders/counter-stores": ["CounterStore"],
    "../../builders/filter-choices": ["ErrorStatus", "FilterLayout", "RateLimitHeaders"],
    "../../builders/rule-args": ["ClientPrefixArgs", "PathKeyMode", "PerPathLimitsArgs", "RateLimitRuleArgs"],
    "../service/access-policies": ["AccessPolicyArgs"],
    "./gateway-access-log": ["GatewayAccessLogArgs"],
    "./gateway-target": ["GatewayTargetArgs"],
    "../common/mesh-enums": ["MeshMode"],
    "./platform-defaults": ["PlatformDefaults"],
    "../service/ratelimit-monitoring": ["MonitoringArgs"],
    "../service/redis-options": ["RedisOptionsArgs"],
    "../service/fields": ["ServiceLogLevel"],
};
