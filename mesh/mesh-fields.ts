/**
 * MeshRateLimit's own fields, each declared once (lib/field-decl.ts): the fields of its arguments
 * and of its groups that no component it builds owns (a group's inherited fields are the
 * component's, declared in the component's files). The checks (mesh-checks.ts, through the
 * `Reader`) run these rules, mesh-defaults.ts places these defaults, the stack's keys take their
 * names, kinds, defaults and descriptions from here (program/config-keys.ts), and
 * mesh/mesh-ratelimit-args.generated.ts is generated from these tables (`npm run gen:arg-types`). The rules
 * are mesh-field-rules.ts's; the fields the groups declare themselves are in mesh-group-fields.ts. Pure.
 */
import { LimitUnit } from "../builders/rule-args";
import { ApiProfileName, FilterNamespaces, MeshMode, MutualTlsScope, StackVariant, VirtualHostScope } from "../components/common/mesh-enums";
import { DEFAULTS } from "../components/common/defaults";
import { FieldDecl, NestedDecl, booleanRule, dnsNameRule, field, nested, takenAsGiven } from "../lib/field-decl";
import { checkedWith, crossCheck } from "../lib/cross-checks";
import { MTLS_CONTEXT_CHECK } from "../components/mesh-mtls/fields";
import { built, choiceRule, labelRule, listed, requestsPerUnitRule, urlPathRule } from "./mesh-field-rules";
import { MESH_ACCESS_FIELDS, MESH_BOOKINFO_FIELDS, MESH_GLOBAL_FIELDS, MESH_LOCAL_FIELDS, MESH_MANAGED_API_FIELDS } from "./mesh-group-fields";

export { MESH_ACCESS_FIELDS, MESH_BOOKINFO_FIELDS, MESH_GLOBAL_FIELDS, MESH_LOCAL_FIELDS, MESH_MANAGED_API_FIELDS };
import { BOOKINFO_ARGS_FIELDS } from "../components/bookinfo/fields";
import { t } from "../lib/field-types";

/** Bookinfo's Gateway selector as one label `key=value`, as MeshRateLimit's `mesh.gatewaySelector` takes it. */
const GATEWAY_SELECTOR = Object.entries(BOOKINFO_ARGS_FIELDS.gatewaySelector.default)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

/** The fields of `MeshRateLimitArgs`, in the interface's order. */
export const MESH_TOP_FIELDS = {
    variant: field<StackVariant>({
        doc: "Preset of the specification: `A` (domain `ratelimit`, `api` route limit, bucket 4) or `B` (domain `productpage-ratelimit`, no route split, bucket 10).",
        type: t.enum(StackVariant, "StackVariant"),
        default: StackVariant.A,
        rule: choiceRule(StackVariant),
        goesTo: built("the variant's presets: the domain, the api route limit, the bucket"),
        stackKey: "variant",
        stackGroup: "variant",
    }),
    apiProfile: field<ApiProfileName>({
        doc: "`current`: API versions today's clusters serve (networking.k8s.io/v1 Ingress, PeerAuthentication). `seed`: exactly the versions the specification names (extensions/v1beta1 Ingress, `authPolicy` in the mesh ConfigMap).",
        type: t.enum(ApiProfileName, "ApiProfileName"),
        default: DEFAULTS.apiProfile,
        rule: choiceRule(ApiProfileName),
        goesTo: built("the API versions of the Ingress and of mutual TLS"),
        stackKey: "apiProfile",
        stackGroup: "variant",
    }),
    meshMode: field<MeshMode>({
        doc:
            "The Istio data plane the stack runs on. `sidecar`: a sidecar in every pod, the ingress selected by `mesh.gatewaySelector`. `ambient`: " +
            "no sidecars (every pod enrolled with `istio.io/dataplane-mode: ambient`, ztunnel carrying it with mutual TLS), the ingress a Gateway " +
            "API Gateway named `bookinfo.gatewayName` in `mesh.gatewayNamespace` that the global limits target by name, the local bucket on a " +
            "waypoint serving productpage; needs `apiProfile` `current`, `mesh.filterNamespaces` `own` and no managed API (docs/guide/ambient.md).",
        type: t.enum(MeshMode, "MeshMode"),
        default: MeshMode.Sidecar,
        rule: choiceRule(MeshMode),
        goesTo: built("every pod's mesh labels, the ingress and the filters' target"),
        stackKey: "meshMode",
        stackGroup: "variant",
    }),
    awaitRollout: field({
        doc: "Wait for Deployments to become ready. `false` adds `pulumi.com/skipAwait` (for clusters without nodes, or GitOps-style applies).",
        type: t.boolean(),
        default: DEFAULTS.awaitRollout,
        rule: booleanRule(),
        goesTo: built("the Deployments' `pulumi.com/skipAwait` annotation"),
        stackKey: "awaitRollout",
        stackGroup: "operations",
    }),
    paths: nested({ doc: "The bookinfo paths the specification names: the stack's routes and limits are made of them.", type: t.ref("MeshPathsArgs") }),
    limits: nested({
        doc: "The specification's global limits (spec 2.4, 2.6), which MeshRateLimit turns into GlobalRateLimit's rules.",
        type: t.ref("MeshLimitsArgs"),
    }),
    mesh: nested({
        doc: "Where the stack sits in the mesh: Istio's root namespace, the ingress gateway, the reach of its filters, mutual TLS.",
        type: t.ref("MeshPlacementArgs"),
    }),
    global: nested({
        doc: "The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names.",
        type: t.ref("MeshGlobalArgs"),
    }),
    local: nested({ doc: "The local token bucket on a workload's sidecar (LocalRateLimit's arguments).", type: t.ref("MeshLocalArgs") }),
    bookinfo: nested({ doc: "The bookinfo sample the limits protect (Bookinfo's arguments).", type: t.ref("MeshBookinfoArgs") }),
    managedApi: nested({ doc: "The managed API (ESP) in the mesh (ManagedApi's arguments).", type: t.ref("MeshManagedApiArgs") }),
    kubeContext: field<string>({
        doc: "kubectl context of the seed profile's mesh ConfigMap edit.",
        type: t.string(),
        defaultNote: "the current context",
        rule: checkedWith(MTLS_CONTEXT_CHECK, "a kubectl context"),
        goesTo: built("MeshMutualTls's `kubeContext`"),
    }),
    createIngressClass: field({
        doc: "`current` profile: create IngressClass `<managedApi.ingressClassName>` (false when the cluster has one for Istio).",
        type: t.boolean(),
        default: true,
        rule: takenAsGiven<boolean>("true or false (handed to ManagedApi as given)"),
        goesTo: built("ManagedApi's `createIngressClass`"),
    }),
    keepIngressClassOnDestroy: field({
        doc: "`current` profile: `pulumi destroy` leaves the IngressClass the stack created (other Ingresses use it).",
        type: t.boolean(),
        default: false,
        rule: takenAsGiven<boolean>("true or false (handed to ManagedApi as given)"),
        goesTo: built("ManagedApi's `keepIngressClassOnDestroy`"),
    }),
    createPeerAuthentication: field({
        doc: "`current` profile: create PeerAuthentication `default` (false when the mesh has a STRICT one).",
        type: t.boolean(),
        default: true,
        rule: takenAsGiven<boolean>("true or false (handed to MeshMutualTls as given)"),
        goesTo: built("MeshMutualTls's `createPeerAuthentication`"),
    }),
    keepPeerAuthenticationOnDestroy: field({
        doc: "`current` profile: `pulumi destroy` leaves PeerAuthentication `default` the stack created (other workloads run under it).",
        type: t.boolean(),
        default: false,
        rule: takenAsGiven<boolean>("true or false (handed to MeshMutualTls as given)"),
        goesTo: built("MeshMutualTls's `keepPeerAuthenticationOnDestroy`"),
    }),
};

/** A path of the bookinfo sample: its text, default and key. */
function pathField(doc: string, def: string, stackKey: string, goesTo: string) {
    return field({ doc, type: t.string(), default: def, rule: urlPathRule, goesTo: built(goesTo), stackKey, stackGroup: "paths" });
}

/** The fields of `MeshPathsArgs`. */
export const MESH_PATHS_FIELDS = {
    limited: pathField(
        "Exact request path limited globally to `limits.limitedPath` per unit (spec `<limited_path>`).",
        DEFAULTS.limitedPath,
        "limitedPath",
        "the limited path's descriptor value",
    ),
    page: pathField("Exact path of the product page route (spec `<page_path>`).", DEFAULTS.pagePath, "pagePath", "the VirtualService's routes"),
    login: pathField("Exact login path (spec `<login_path>`).", DEFAULTS.loginPath, "loginPath", "the VirtualService's routes"),
    logout: pathField("Exact logout path (spec `<logout_path>`).", DEFAULTS.logoutPath, "logoutPath", "the VirtualService's routes"),
    staticPrefix: pathField("Path prefix of static assets (spec `<static_prefix>`).", DEFAULTS.staticPrefix, "staticPrefix", "the VirtualService's routes"),
    apiPrefix: pathField(
        "Path prefix of the product API (spec `<api_prefix>`).",
        DEFAULTS.apiPrefix,
        "apiPrefix",
        "the VirtualService's routes and the api regex",
    ),
};

/** Requests per unit of one of the limits. */
function limitField(doc: string, stackKey: string, def: number) {
    return field({ doc, type: t.number(), default: def, rule: requestsPerUnitRule, goesTo: LIMIT_GOES_TO, stackKey, stackGroup: "limits" });
}

/** The limits' fields judged with others (global-limit-checks.ts, mesh-checks.ts): the api route with the routes, the variant and `paths.limited`; the list with the limits it replaces. */
export const MESH_LIMITS_CHECKS = {
    apiRoute: crossCheck(
        "api route",
        ["apiRoute", "apiRouteRegex", "apiDescriptorValue"],
        "a route of the VirtualService, a regex within the api prefix, a value apart from paths.limited",
    ),
    descriptors: crossCheck("descriptors", ["descriptors"], "each entry valid, replacing the preset limits"),
};

/** Where a limit's requests per unit go. */
const LIMIT_GOES_TO = { object: "a descriptor of the service config" };

/** The fields of `MeshLimitsArgs`. */
export const MESH_LIMITS_FIELDS = {
    apiRoute: field({
        doc: "Variant A: name of the VirtualService route that carries the route-level limit (spec 2.6). Must name one of the routes.",
        type: t.string(),
        default: DEFAULTS.apiRoute,
        rule: checkedWith<string>(MESH_LIMITS_CHECKS.apiRoute, "a route's name"),
        goesTo: { envoy: "the route whose rate_limits the route patch sets" },
        stackKey: "apiRoute",
        stackGroup: "paths",
    }),
    apiRouteRegex: field<string>({
        doc: "Variant A: RE2 regex (full match) on the request path without its query that produces descriptor `PATH=<apiDescriptorValue>` (with `global.pathKey` `url-path` the filter accepts an optional `?query` after it; with `literal` it is matched against `:path` as written).",
        type: t.string(),
        defaultNote: "`<apiPrefix>/[1-9][0-9]?` (n from 1 to 99)",
        rule: checkedWith(MESH_LIMITS_CHECKS.apiRoute, "an RE2 regular expression"),
        goesTo: { envoy: "the route patch's header match on the path" },
        stackKey: "apiRouteRegex",
        stackGroup: "paths",
    }),
    apiDescriptorValue: field({
        doc: "Variant A: descriptor value sent for paths matching `limits.apiRouteRegex`.",
        type: t.string(),
        default: "api",
        rule: checkedWith<string>(MESH_LIMITS_CHECKS.apiRoute, "a descriptor value"),
        goesTo: { envoy: "the route patch's descriptor value" },
        stackKey: "apiDescriptorValue",
        stackGroup: "paths",
    }),
    unit: field<LimitUnit>({
        doc: `Time unit of every global limit: ${listed(Object.values(LimitUnit))}.`,
        type: t.enum(LimitUnit, "LimitUnit"),
        default: LimitUnit.Minute,
        rule: choiceRule(LimitUnit),
        goesTo: { object: "the unit of each descriptor of the service config" },
        stackKey: "unit",
        stackGroup: "limits",
    }),
    limitedPath: limitField("Requests per unit for `PATH=<limitedPath>`.", "limitedPathLimit", 1),
    api: field<number>({
        doc: "Variant A: requests per unit shared by every path matching `limits.apiRouteRegex`.",
        type: t.number(),
        defaultNote: "A: `2`; not allowed in B",
        rule: requestsPerUnitRule,
        goesTo: LIMIT_GOES_TO,
        stackKey: "apiLimit",
        stackGroup: "limits",
    }),
    catchAll: limitField("Requests per unit for any other path (each distinct path has its own counter).", "catchAllLimit", 100),
    descriptors: field<unknown[]>({
        doc: "Advanced: the whole descriptor list, each a `DescriptorArgs` (the specification's descriptor table); replaces `limits.limitedPath`, `limits.api` and `limits.catchAll`, and `limits.unit`.",
        type: t.list(t.ref("DescriptorArgs")),
        defaultNote: "the list built from those",
        rule: checkedWith(MESH_LIMITS_CHECKS.descriptors, "a non-empty list of descriptors"),
        goesTo: { object: "the descriptors of the service config" },
        stackKey: "descriptors",
        stackGroup: "limits",
    }),
};

/** The fields of `MeshPlacementArgs`. */
export const MESH_PLACEMENT_FIELDS = {
    namespace: field({
        doc: "Istio's root namespace (its `rootNamespace`): an EnvoyFilter there reaches matching pods in every namespace. Holds the mesh-wide PeerAuthentication and the mesh ConfigMap (`mesh.mutualTlsScope` `mesh`) and, with `mesh.filterNamespaces` `root`, every EnvoyFilter.",
        type: t.string(),
        default: DEFAULTS.meshNamespace,
        rule: dnsNameRule("label"),
        goesTo: built("the namespace of the mesh-wide objects"),
        stackKey: "meshNamespace",
        stackGroup: "names",
    }),
    gatewaySelector: field({
        doc: "Label `key=value` of the ingress gateway pods the bookinfo Gateway and the global filters select.",
        type: t.string(),
        default: GATEWAY_SELECTOR,
        rule: labelRule,
        goesTo: built("the Gateway's and the gateway EnvoyFilters' selector"),
        stackKey: "gatewaySelector",
        stackGroup: "names",
    }),
    gatewayNamespace: field({
        doc: "Namespace of the ingress gateway's pods; holds the gateway EnvoyFilters. When it is Istio's root namespace (the default install), a filter there reaches pods with the selector's label in every namespace: `pulumi preview` refuses when gateway pods with that label run in another namespace too.",
        type: t.string(),
        default: DEFAULTS.gatewayNamespace,
        rule: dnsNameRule("label"),
        goesTo: built("the gateway EnvoyFilters' namespace"),
        stackKey: "gatewayNamespace",
        stackGroup: "names",
    }),
    vhostScope: field<VirtualHostScope>({
        doc: "Which virtual hosts of the gateway the limits apply to. `gateway-hosts`: only the stack's own Gateway's (`<host>:<gatewayPort>` for each of `bookinfo.hosts`), and the rate-limit filter only on `bookinfo.gatewayPort`. `all`: spec 2.4 literally, virtual host `\"\"` and every listener: **every host on the gateway**, other teams' included, gets the per-path counters and, with `global.failureModeDeny`, fails with HTTP 500 when the service is down. Only for a gateway the stack has to itself.",
        type: t.enum(VirtualHostScope, "VirtualHostScope"),
        default: VirtualHostScope.GatewayHosts,
        rule: choiceRule(VirtualHostScope),
        goesTo: { envoy: "the gateway patches' virtual hosts and listener port" },
        stackKey: "vhostScope",
        stackGroup: "sharing",
    }),
    filterNamespaces: field<FilterNamespaces>({
        doc: "Where the EnvoyFilters live. `own`: the gateway filters in `mesh.gatewayNamespace`, the sidecar's local bucket in `bookinfo.namespace` (it then reaches only that namespace's pods). `root`: all in `mesh.namespace` (spec 2.2 literally): the local bucket then reaches every `app: <serviceLabel>` pod of **every namespace**.",
        type: t.enum(FilterNamespaces, "FilterNamespaces"),
        default: FilterNamespaces.Own,
        rule: choiceRule(FilterNamespaces),
        goesTo: built("the EnvoyFilters' namespaces"),
        stackKey: "filterNamespaces",
        stackGroup: "sharing",
    }),
    mutualTlsScope: field<MutualTlsScope>({
        doc: "With `mesh.mutualTls`: `workloads`: STRICT mutual TLS for the stack's own pods only (a PeerAuthentication `mesh-ratelimit-mtls` selecting `app.kubernetes.io/part-of=mesh-ratelimit` in each of its namespaces), whatever the mesh-wide policy says, except a mesh-wide `DISABLE` (clients would then send plain text, which these pods refuse: `pulumi preview` stops). `mesh`: spec 2.10 literally, for **the whole mesh**: PeerAuthentication `default` in `mesh.namespace` (`current`) or `authPolicy: MUTUAL_TLS` in the mesh ConfigMap (`seed`); clients without sidecars anywhere in the mesh are then refused.",
        type: t.enum(MutualTlsScope, "MutualTlsScope"),
        default: MutualTlsScope.Workloads,
        rule: choiceRule(MutualTlsScope),
        goesTo: built("MeshMutualTls's `scope`"),
        stackKey: "mutualTlsScope",
        stackGroup: "sharing",
    }),
    mutualTls: field({
        doc: "Mutual TLS for the stack's traffic (spec 2.10), as wide as `mesh.mutualTlsScope` says: by default STRICT for the stack's own pods only.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: built("MeshMutualTls, created or not"),
        stackKey: "mutualTls",
        stackGroup: "managed-api",
    }),
};

/** Each table of MeshRateLimit's own fields, by the argument path of the group holding it ("" for the arguments themselves). */
export const MESH_FIELD_TABLES: Readonly<Record<string, Readonly<Record<string, FieldDecl<unknown> | NestedDecl>>>> = {
    "": MESH_TOP_FIELDS,
    paths: MESH_PATHS_FIELDS,
    limits: MESH_LIMITS_FIELDS,
    mesh: MESH_PLACEMENT_FIELDS,
    global: MESH_GLOBAL_FIELDS,
    "global.accessPolicy": MESH_ACCESS_FIELDS,
    local: MESH_LOCAL_FIELDS,
    bookinfo: MESH_BOOKINFO_FIELDS,
    managedApi: MESH_MANAGED_API_FIELDS,
};

/** The declaration of MeshRateLimit's own plain field at `path` (its names), if it has one. */
export function meshDeclarationOf(path: readonly string[]): FieldDecl<unknown> | undefined {
    const d = MESH_FIELD_TABLES[path.slice(0, -1).join(".")]?.[path[path.length - 1]];
    return d !== undefined && "rule" in d ? d : undefined;
}
