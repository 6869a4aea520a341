/**
 * LocalRateLimit's fields, each declared once (lib/field-decl.ts): their documentation, default,
 * rule, where they go and, for the bucket's options MeshRateLimit's `local` takes too, the stack's
 * key that sets them. LocalRateLimit's resolve (local-ratelimit.ts) runs these rules and reads these
 * defaults, MeshRateLimit's checks and defaults read the bucket's options from here, and
 * components/local-ratelimit/args.generated.ts is generated from these tables (`npm run gen`). Pure.
 */
import { FilterLayout, RateLimitHeaders } from "../../builders/filter-choices";
import { ArgInterface, Rule, booleanRule, customRule, field, oneOfRule, protoDurationRule, wholeNumberRule, withFallback } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";
import { dnsProblem, selectorProblems } from "../common/arg-checks";
import { DEFAULTS } from "../common/defaults";
import { GLOBAL_FIELDS } from "../global-ratelimit/fields";
import { MeshMode } from "../common/mesh-enums";
import { t } from "../../lib/field-types";

/** A DNS label or subdomain (`dnsProblem`: its fix says the name to use). */
export function dnsRule(kind: "label" | "subdomain"): Rule<string> {
    return customRule(`a DNS ${kind}`, (path, value) => dnsProblem(path, value, kind));
}

/** Pod labels: at least one, each a valid label key and value (`selectorProblems`). */
export const LABELS_RULE = customRule<Record<string, string>>("at least one pod label", (path, value) => selectorProblems(path, value));

/** `namespace`: required, a DNS label. */
const namespaceRule = customRule<string>("a DNS label (required)", (path, value): Problem[] => {
    if (value !== undefined) return dnsProblem(path, value, "label");
    return [
        {
            key: path,
            value,
            problem: "is required: the workload's namespace (the filter then reaches only that namespace's pods)",
            fix: 'give the workload\'s namespace, e.g. "shop"',
        },
    ];
});

/** `routes`: a list of route names. */
const routesRule = customRule<string[]>("a list of route names", (path, routes): Problem[] => {
    if (!Array.isArray(routes)) return [{ key: path, value: routes, problem: "must be a list of route names", fix: "give [] for every route, or names" }];
    return routes.flatMap((r, i) =>
        typeof r !== "string" || r === "" ? [{ key: `${path}[${i}]`, value: r, problem: "must be a route name", fix: "remove it, or name the route" }] : [],
    );
});

/**
 * What preview says of a bucket on a waypoint: it is built, on the upstream state of the proven Istio
 * versions (read in pilot/pkg/model/policyattachment.go and pilot/pkg/networking/core/listener_waypoint.go;
 * docs/guide/ambient.md), which may change under it.
 */
export const AMBIENT_LOCAL_BUCKET_WARNING =
    "the local bucket goes on a waypoint through the sidecar patch context Istio's waypoint shares by code reuse (there is no WAYPOINT " +
    "context): Istio documents EnvoyFilter on waypoints as unsupported and liable to break (istio.io, ambient L7 features; disabled in " +
    "istio/istio#55149, re-enabled in #56476, still open in #57350; PR #57971, which would have added the context, was closed unmerged). " +
    "It is proven on the pinned Istio only: check it lands after every Istio upgrade (docs/guide/ambient.md). It counts per waypoint pod.";

/** The bucket's refill, what it tells clients and whether it refuses (`LocalBucketOptions`), in the interface's order. */
export const LOCAL_BUCKET_FIELDS = {
    fillInterval: field({
        doc: "The bucket's refill interval, a protobuf duration of at least `0.05s`.",
        type: t.string(),
        default: "60s",
        rule: protoDurationRule(0.05),
        goesTo: { envoy: "the local rate-limit filter's token_bucket.fill_interval (and Retry-After, in whole seconds)" },
        stackKey: "localFillInterval",
        stackGroup: "local",
    }),
    rateLimitHeaders: field<RateLimitHeaders>({
        doc:
            "What the bucket tells clients. `RateLimitHeaders.Draft03`: every response it counted carries `X-RateLimit-Limit` (the bucket), " +
            "`X-RateLimit-Remaining` (tokens left) and `X-RateLimit-Reset` (seconds to the next fill). `RateLimitHeaders.Off`: none. A refusal " +
            "carries `Retry-After` (the fill interval in whole seconds) either way.",
        type: t.enum(RateLimitHeaders, "RateLimitHeaders"),
        default: RateLimitHeaders.Draft03,
        defaultNote: ", and to `Off` with `shadow`",
        // The values any filter's headers take (GlobalRateLimit's rule: a switch word fixed to the value it means).
        rule: GLOBAL_FIELDS.rateLimitHeaders.rule,
        goesTo: { envoy: "the local rate-limit filter's enable_x_ratelimit_headers" },
        stackKey: "localRateLimitHeaders",
        stackGroup: "local",
    }),
    shadow: field({
        doc: "Observe only: the bucket counts (Envoy's `local_rate_limit.rate_limited` statistic grows) but refuses nothing (`filter_enforced` 0 %).",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { envoy: "the local rate-limit filter's filter_enforced (0 % in shadow, else 100 %)" },
        stackKey: "localShadow",
        stackGroup: "local",
    }),
};

/** LocalRateLimit's own fields, in the interface's order. */
export const LOCAL_ARGS_FIELDS = {
    selector: field<Record<string, string>>({
        doc: 'Pod labels of the workload, e.g. `{ app: "orders" }`: required with `MeshMode.Sidecar`; not given on ambient, where `service` names the workload.',
        type: t.map(t.string()),
        defaultNote: "none: required with `MeshMode.Sidecar`",
        rule: LABELS_RULE,
        goesTo: { object: "the EnvoyFilter's workloadSelector" },
    }),
    port: field<number>({
        doc:
            "The workload's port: the bucket goes on the sidecar's inbound chain of this port only (other inbound ports are not limited), and " +
            "Istio names its inbound virtual host `inbound|http|<port>`. On ambient: the Service's port (the waypoint's chain is per Service port).",
        type: t.number(),
        required: true,
        rule: withFallback(wholeNumberRule({ min: 1, max: 65535 }), 8080),
        goesTo: { envoy: "the inbound listener match's portNumber, and the per-route patches' virtual host" },
    }),
    bucket: field<number>({
        doc: "Tokens in the bucket, and tokens added per fill (`max_tokens` = `tokens_per_fill`).",
        type: t.number(),
        required: true,
        rule: withFallback(wholeNumberRule({ min: 1, max: 1_000_000_000 }), 10),
        goesTo: { envoy: "the local rate-limit filter's token_bucket.max_tokens and tokens_per_fill" },
    }),
    routes: field<string[]>({
        doc:
            "Limit only these inbound routes (the bucket is set per route; the filter itself holds only its stat prefix). An empty list: every " +
            "route of the inbound virtual host, set per route.",
        type: t.list(t.string()),
        defaultNote: "the whole filter on the sidecar's inbound HTTP chain (all routes, one place)",
        rule: routesRule,
        goesTo: { envoy: "the HTTP_ROUTE patches' typed_per_filter_config on `inbound|http|<port>`" },
    }),
    namespace: field<string>({
        doc:
            "Namespace of the EnvoyFilter: the workload's own, so the bucket reaches only that namespace's pods with `selector`'s labels. Istio's " +
            "root namespace (`rootNamespace`) is refused unless `reachAllNamespaces` is set: a filter there applies to matching pods in every namespace.",
        type: t.string(),
        required: true,
        rule: namespaceRule,
        goesTo: { object: "the EnvoyFilter's namespace" },
    }),
    rootNamespace: field<string>({
        doc: "Istio's root namespace (the mesh config's `rootNamespace`).",
        type: t.string(),
        default: DEFAULTS.meshNamespace,
        rule: dnsRule("label"),
        goesTo: { object: "nothing: `namespace` is refused when it is this one, unless `reachAllNamespaces`" },
    }),
    reachAllNamespaces: field({
        doc:
            "Allow `namespace` to be Istio's root namespace, where the bucket applies to every pod with `selector`'s labels in the whole mesh, " +
            "other teams' included.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "nothing: lets `namespace` be the root namespace" },
    }),
    filterName: field<string>({
        doc: "Name of the EnvoyFilter.",
        type: t.string(),
        defaultNote: "the component's name",
        rule: dnsRule("subdomain"),
        goesTo: { object: "the EnvoyFilter's name (and the per-instance HTTP filter's name)" },
    }),
    meshMode: field<MeshMode>({
        doc:
            "The mesh the workload runs in. `MeshMode.Sidecar`: the bucket goes on the workload's sidecar. `MeshMode.Ambient`: on the " +
            "waypoint that serves the Service `service` (created as `waypoint` unless `createWaypoint` is false), counted per waypoint pod; " +
            "preview warns that Istio does not support EnvoyFilter on waypoints (docs/guide/ambient.md).",
        type: t.enum(MeshMode, "MeshMode"),
        default: MeshMode.Sidecar,
        rule: oneOfRule(MeshMode, "MeshMode"),
        goesTo: { object: "the EnvoyFilter's target (workloadSelector, or targetRefs to the waypoint) and, on ambient, the waypoint Gateway" },
    }),
    service: field<string>({
        doc:
            "`MeshMode.Ambient`: the workload's Service in `namespace` (required there). The bucket goes on the waypoint's chain of this " +
            "Service's `port` only. The Service must carry `istio.io/use-waypoint: <waypoint>` for the waypoint to serve it, and " +
            '`istio.io/ingress-use-waypoint: "true"` for the ingress gateway\'s requests to pass it too: the component does not label it.',
        type: t.string(),
        defaultNote: "none: required with `MeshMode.Ambient`",
        rule: dnsRule("label"),
        goesTo: { envoy: "the waypoint's filter chain and route configuration names `inbound-vip|<port>|http|<service>.<namespace>.svc.<clusterDomain>`" },
    }),
    waypoint: field<string>({
        doc: "`MeshMode.Ambient`: name of the waypoint `Gateway` (class `istio-waypoint`) in `namespace` that serves `service`.",
        type: t.string(),
        default: "waypoint",
        rule: dnsRule("label"),
        goesTo: { object: "the EnvoyFilter's targetRefs, and the waypoint Gateway's name" },
    }),
    createWaypoint: field({
        doc:
            "`MeshMode.Ambient`: create the waypoint `Gateway` (listener `mesh`, port 15008, HBONE), removed on destroy. `false`: take the " +
            "waypoint of that name, which must exist (`istioctl waypoint apply`); an EnvoyFilter aimed at a missing one applies nowhere.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: { object: "whether the waypoint Gateway is created" },
    }),
    clusterDomain: field<string>({
        doc: "`MeshMode.Ambient`: the cluster's DNS domain, the last part of the Service's host in the waypoint's chain name.",
        type: t.string(),
        default: "cluster.local",
        rule: dnsRule("subdomain"),
        goesTo: { envoy: "the waypoint's chain name `inbound-vip|<port>|http|<service>.<namespace>.svc.<clusterDomain>`" },
    }),
    filterLayout: field<FilterLayout>({
        doc:
            "The HTTP filter's name. `FilterLayout.PerInstance`: `envoy.filters.http.local_ratelimit/<namespace>/<filterName>`, so two " +
            "LocalRateLimits on the same pods never read each other's per-route bucket (Envoy finds it by the filter's name). " +
            "`FilterLayout.Shared`: `envoy.filters.http.local_ratelimit` (spec 2.7).",
        type: t.enum(FilterLayout, "FilterLayout"),
        default: FilterLayout.PerInstance,
        rule: oneOfRule(FilterLayout, "FilterLayout"),
        goesTo: { envoy: "the HTTP filter's name" },
    }),
};

/** The argument interfaces generated from these tables (components/local-ratelimit/args.generated.ts), in the file's order. */
export const LOCAL_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "LocalBucketOptions",
        doc: "The bucket's refill, what it tells clients and whether it refuses: LocalRateLimit's arguments and MeshRateLimit's `local`. Each field documented here once.",
        fields: LOCAL_BUCKET_FIELDS,
    },
    { name: "LocalRateLimitArgs", doc: "", extends: "LocalBucketOptions", fields: LOCAL_ARGS_FIELDS },
];

/** Where the generated interfaces' field types come from. */
export const LOCAL_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../../builders/filter-choices": ["FilterLayout", "RateLimitHeaders"],
    "../common/mesh-enums": ["MeshMode"],
};
