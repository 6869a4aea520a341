/**
 * PlatformRateLimit's fields, each declared once (lib/field-decl.ts): the plain ones with their
 * documentation, default, rule and where they go; the nested ones with their documentation and
 * type. The resolve (platform-ratelimit-resolve.ts) reads these rules and defaults, nothing below
 * it fills a default, and components/platform-ratelimit/args.generated.ts is generated from these tables
 * (`npm run gen`). The service's other settings, Redis and the monitoring are
 * GlobalRateLimit's (their defaults are its own). Pure.
 */
import { RateLimitHeaders } from "../../builders/filter-choices";
import { ArgInterface, booleanRule, customRule, dnsNameRule, field, nested, oneOfRule, protoDurationRule } from "../../lib/field-decl";
import { DEFAULTS } from "../common/defaults";
import { GLOBAL_FIELDS } from "../global-ratelimit/fields";
import { t } from "../../lib/field-types";

/** The platform service's own names (the rest of `service` as GlobalRateLimit's): their defaults and where they go. */
export const PLATFORM_SERVICE_NAMES = {
    name: { default: "ratelimit-platform", goesTo: { object: "the service's Deployment and Service names" } },
    configName: { default: "ratelimit-platform-config", goesTo: { object: "the service's ConfigMap name" } },
} as const;

/** One set of platform limits. */
export const PLATFORM_LIMITS_FIELDS = {
    rules: nested({
        doc:
            "Typed rules, as GlobalRateLimit's `rules` (a rule's name is unique across `defaults` and `overrides`); they apply on every host and " +
            "route of the gateway, so a rule takes no `route`. Defaults to none.",
        type: t.list(t.ref("RateLimitRuleArgs")),
    }),
    perPath: nested({
        doc: "Every path its own counter, as GlobalRateLimit's `perPath` (the descriptor key is the platform's own; `descriptorKey` is not taken). Defaults to none.",
        type: t.ref("PerPathLimitsArgs"),
    }),
};

/** The gateway a platform team runs (checked by gateway-target.ts, as GlobalRateLimit's, and `listenerPorts` by the resolve). */
export const PLATFORM_GATEWAY_FIELDS = {
    selector: nested({
        doc: 'Labels of the gateway\'s pods, e.g. `{ istio: "ingressgateway" }`. Give this or `gatewayApiName`.',
        type: t.map(t.string()),
    }),
    gatewayApiName: nested({
        doc: "Name of a Gateway API `Gateway` (class `istio`) in `namespace`. Give this or `selector`. Defaults to none.",
        type: t.string(),
    }),
    namespace: field({
        doc: "Namespace of the gateway's pods, where the EnvoyFilters are created.",
        type: t.string(),
        default: DEFAULTS.gatewayNamespace,
        rule: dnsNameRule("label"),
        goesTo: { object: "the platform's EnvoyFilters' namespace" },
    }),
    listenerPorts: nested({
        doc:
            "The listener ports the defaults filter goes on (the pods' ports). The overrides filter goes on every HTTP listener of the pods " +
            "whatever this says, so a server another namespace's Gateway adds on any port meets them. Defaults to every listener of the gateway.",
        type: t.list(t.number()),
    }),
};

/** The component's failure mode and timeout, each filter's unless `filters` says otherwise. */
export const PLATFORM_CALL_FIELDS = {
    failureModeDeny: field({
        doc:
            "When the platform's service cannot answer, for both filters unless `filters` says otherwise: `true` refuses the request with HTTP " +
            "500, `false` lets it through (every team's traffic crosses these filters, so an outage of the platform's service would otherwise " +
            "stop the whole gateway). A boolean.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { envoy: "each platform filter's `failure_mode_deny` (and the monitoring's fail-mode alerts)" },
    }),
    timeout: field({
        doc:
            "How long the gateway waits for the platform's service, for both filters unless `filters` says otherwise (protobuf duration). A filter " +
            "that fails open lets a call slower than this through uncounted: under a flood aimed at the service its calls took up to 325 ms, and " +
            "50 ms let 3-4.9 % through uncounted, 1 s none (docs/proof/benchmarks.md). A hung platform service holds every team's requests this long.",
        type: t.string(),
        // About 3 × the slowest call measured under a flood aimed at the service (325 ms): no call outlasts it.
        default: "1s",
        defaultNote: " (1 s)",
        rule: protoDurationRule(0.001),
        goesTo: { envoy: "each platform filter's `timeout`" },
    }),
};

/** One filter's own call: the component's fields, defaulted to the component's values. */
export const PLATFORM_FILTER_CALL_FIELDS = {
    failureModeDeny: field<boolean>({
        doc: "`true`: refuse with HTTP 500 when the service cannot answer; `false`: let the request through.",
        type: t.boolean(),
        defaultNote: "the component's `failureModeDeny`",
        rule: PLATFORM_CALL_FIELDS.failureModeDeny.rule,
        goesTo: PLATFORM_CALL_FIELDS.failureModeDeny.goesTo,
    }),
    timeout: field<string>({
        doc: "How long the gateway waits for the service (protobuf duration).",
        type: t.string(),
        defaultNote: "the component's `timeout`",
        rule: PLATFORM_CALL_FIELDS.timeout.rule,
        goesTo: PLATFORM_CALL_FIELDS.timeout.goesTo,
    }),
};

const BOTH_AS_COMPONENT = "Defaults to the component's `failureModeDeny` and `timeout`.";

/** The two platform filters' calls. */
export const PLATFORM_FILTERS_FIELDS = {
    overrides: nested({
        doc: `The overrides filter (a platform's ceiling is often worth failing closed for). ${BOTH_AS_COMPONENT}`,
        type: t.ref("PlatformFilterCallArgs"),
    }),
    defaults: nested({ doc: `The defaults filter. ${BOTH_AS_COMPONENT}`, type: t.ref("PlatformFilterCallArgs") }),
};

/** `preLimit`: Envoy's local rate-limit filter before each platform filter. */
export const PRE_LIMIT = field({
    doc:
        "A pre-limit before each platform filter: Envoy's local rate-limit filter with, per gateway pod and listener, a bucket of twice each " +
        "fixed limit (a rule without a per-client or per-value counter, a named path), refilled at the limit's rate. A flood past such a " +
        "limit is refused (429, `x-mesh-ratelimit: pre-limit`) without calling the platform's service, while traffic the service would allow " +
        "never is; per-client and per-value counters have no bucket (the filter's `timeout` and fail mode bound their calls). None in the " +
        "service's shadow mode. A boolean.",
    type: t.boolean(),
    default: true,
    rule: booleanRule(),
    goesTo: { object: "a local rate-limit filter before each platform filter (none in the service's shadow mode)" },
});

/** A list of identity names (users or groups), each a non-empty string. */
function identityListRule(example: string) {
    return customRule<string[]>("a list of non-empty names", (p, v) =>
        Array.isArray(v) && v.every((x) => typeof x === "string" && x.trim() !== "")
            ? []
            : [{ key: p, value: v, problem: "must be a list of non-empty names", fix: `give e.g. [${JSON.stringify(example)}]` }],
    );
}

/** `admission`: the API server's admission policy that enforces the platform's limits (builders/admission-policy.ts). */
export const PLATFORM_ADMISSION_FIELDS = {
    install: field({
        doc:
            "Whether the component installs the ValidatingAdmissionPolicy and its binding that refuse, at the API server, an EnvoyFilter that " +
            "switches off, loosens or takes the platform's limits or names (docs/security.md). `false` for a cluster whose admin installs the " +
            "policy instead (the same objects: the package's `renderProgram` lists them for a program with `install: true`). A boolean.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: { object: "a ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (cluster-scoped)" },
    }),
    platformUsers: field<string[]>({
        doc:
            "The user names the platform's own stack writes as, never refused by the policy (a service account is " +
            "`system:serviceaccount:<namespace>:<name>`).",
        type: t.list(t.string()),
        defaultNote: "none (the platform writes as a member of `platformGroups`)",
        rule: identityListRule("system:serviceaccount:platform:deployer"),
        goesTo: { object: "the admission policy's matchConditions" },
    }),
    platformGroups: field<string[]>({
        doc:
            "The groups whose members are the platform's identity, never refused by the policy (`system:masters`: cluster admins, who can " +
            "remove the policy anyway; `system:serviceaccounts:<namespace>`: every service account of a namespace).",
        type: t.list(t.string()),
        default: ["system:masters"] as string[],
        rule: identityListRule("platform-admins"),
        goesTo: { object: "the admission policy's matchConditions" },
    }),
    rootNamespace: field({
        doc: "Istio's root namespace (`meshConfig.rootNamespace`), whose EnvoyFilters reach every proxy: the policy is bound there too.",
        type: t.string(),
        default: "istio-system",
        rule: dnsNameRule("label"),
        goesTo: { object: "the admission policy binding's namespaces" },
    }),
};

const { name, configName } = PLATFORM_SERVICE_NAMES;

/** PlatformRateLimit's own fields, in the interface's order. */
export const PLATFORM_ARGS_FIELDS = {
    gateway: nested({
        doc: "The shared gateway: every host and route on its listeners gets the platform's limits.",
        type: t.ref("PlatformGatewayArgs"),
        required: true,
    }),
    defaults: nested({
        doc:
            "Limits for every host and route that no team's GlobalRateLimit covers: a GlobalRateLimit on a host replaces them there " +
            "(`platformDefaults: PlatformDefaults.Replace`, its default) or keeps them beside its own rules (`PlatformDefaults.Merge`). Defaults to none.",
        type: t.ref("PlatformLimitsArgs"),
    }),
    overrides: nested({
        doc: "Limits on every host and route, on top of every team's limits, that no GlobalRateLimit can turn off or loosen. Defaults to none.",
        type: t.ref("PlatformLimitsArgs"),
    }),
    teamHosts: nested({
        doc:
            'Hosts the platform assigns to teams: namespace → Gateway hosts (`b.example.com`), e.g. `{ "team-b": ["b.example.com"] }`. Only a ' +
            "GlobalRateLimit deployed in the namespace a host is assigned to (and, at the API server, a service account of that namespace) may " +
            "turn the defaults off on it (`platformDefaults: replace`); a host assigned to no one is no one's, unless `routeBoundOwnership`. " +
            "Written on the defaults EnvoyFilter, where each team's preview reads it, and into the admission policy. Defaults to none.",
        type: t.map(t.list(t.string())),
    }),
    routeBoundOwnership: field({
        doc:
            "Whether a host assigned to no one belongs to the namespaces whose route binds it to a gateway that exists and serves it (a " +
            "VirtualService bound to an Istio Gateway whose servers list the host, an HTTPRoute to a Gateway API Gateway). The previews check " +
            "those conditions; the API server cannot read routes, so its policy then admits a switch on an unassigned host by a service account " +
            "of any namespace (docs/security.md). A boolean.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "the defaults EnvoyFilter's route-bound-ownership annotation and the admission policy" },
    }),
    admission: nested({
        doc: "The admission policy that enforces the platform's limits at the API server. Defaults to installed, the platform being `system:masters`.",
        type: t.ref("PlatformAdmissionArgs"),
    }),
    rateLimitHeaders: field<RateLimitHeaders>({
        doc:
            "What the platform's refusals tell clients, as a team's `rateLimitHeaders`: `RateLimitHeaders.Draft03` gives each counted response " +
            "`X-RateLimit-*` of the tightest platform limit, and each 429 of an override or default its source's `RateLimit-Policy`; a " +
            "pre-limit's 429 carries `Retry-After`. `RateLimitHeaders.Off`: none.",
        type: t.enum(RateLimitHeaders, "RateLimitHeaders"),
        default: RateLimitHeaders.Draft03,
        rule: oneOfRule(RateLimitHeaders, "RateLimitHeaders", {
            meant: { on: RateLimitHeaders.Draft03, true: RateLimitHeaders.Draft03, false: RateLimitHeaders.Off },
        }),
        goesTo: { envoy: "each platform filter's enable_x_ratelimit_headers and response_headers_to_add" },
    }),
    namespace: field({
        doc: "Namespace of the platform's rate-limit service, its ConfigMap and Redis (must exist).",
        type: t.string(),
        default: GLOBAL_FIELDS.namespace.default,
        rule: GLOBAL_FIELDS.namespace.rule,
        goesTo: GLOBAL_FIELDS.namespace.goesTo,
    }),
    ...PLATFORM_CALL_FIELDS,
    filters: nested({
        doc: "Each filter's own failure mode and timeout, over `failureModeDeny` and `timeout`. Defaults to none (both filters as those say).",
        type: t.ref("PlatformFiltersArgs"),
    }),
    preLimit: PRE_LIMIT,
    service: nested({
        doc: `The rate-limit service. \`name\` defaults to \`${name.default}\`, \`configName\` to \`${configName.default}\`; the rest as GlobalRateLimit's.`,
        type: t.ref("RateLimitServiceOptionsArgs"),
    }),
    redis: nested({
        doc: "Redis. Defaults to one deployed by the component (`redis` in `namespace`: give `namespace` a namespace no GlobalRateLimit uses).",
        type: t.ref("RedisOptionsArgs"),
    }),
    monitoring: nested({
        doc: "The Grafana dashboard and alert rules, as GlobalRateLimit's. Defaults as documented on each field.",
        type: t.ref("MonitoringArgs"),
    }),
};

/** The argument interfaces generated from these tables (components/platform-ratelimit/args.generated.ts), in the file's order. */
export const PLATFORM_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "PlatformLimitsArgs",
        doc: "One set of platform limits: rules and per-path limits, as GlobalRateLimit takes them, on every host and route.",
        fields: PLATFORM_LIMITS_FIELDS,
    },
    { name: "PlatformGatewayArgs", doc: "The gateway a platform team runs.", fields: PLATFORM_GATEWAY_FIELDS },
    { name: "PlatformFilterCallArgs", doc: "How one platform filter calls the platform's service.", fields: PLATFORM_FILTER_CALL_FIELDS },
    { name: "PlatformFiltersArgs", doc: "The two platform filters' calls, each on its own.", fields: PLATFORM_FILTERS_FIELDS },
    { name: "PlatformAdmissionArgs", doc: "The API server's admission policy for the platform's limits.", fields: PLATFORM_ADMISSION_FIELDS },
    { name: "PlatformRateLimitArgs", doc: "", fields: PLATFORM_ARGS_FIELDS },
];

/** Where the generated interfaces' field types come from. */
export const PLATFORM_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../../builders/filter-choices": ["RateLimitHeaders"],
    "../../builders/rule-args": ["PerPathLimitsArgs", "RateLimitRuleArgs"],
    "../global-ratelimit/args.generated": ["RateLimitServiceOptionsArgs"],
    "../service/ratelimit-monitoring": ["MonitoringArgs"],
    "../service/redis-options": ["RedisOptionsArgs"],
};
