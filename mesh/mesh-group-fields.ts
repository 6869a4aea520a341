/**
 * The fields MeshRateLimit's groups declare themselves (`global`, `global.accessPolicy`, `local`,
 * `bookinfo`, `managedApi`), each declared once (lib/field-decl.ts); a group's other fields are the
 * component's it extends, declared in that component's files. mesh-fields.ts holds the arguments'
 * own tables and lists these with them. Pure.
 */
import { GLOBAL_ARGS_FIELDS } from "../components/global-ratelimit/fields";
import { BookinfoMode, LocalPlacementMode } from "../components/common/mesh-enums";
import { BOOKINFO_PORT } from "../builders/bookinfo";
import { booleanRule, field, nested } from "../lib/field-decl";
import { checkedWith, crossCheck } from "../lib/cross-checks";
import { bucketPortRule, bucketRule, built, choiceRule, labelValueRule } from "./mesh-field-rules";
import { BOOKINFO_ARGS_FIELDS } from "../components/bookinfo/fields";
import { t } from "../lib/field-types";

/** Group fields judged with others (mesh-checks.ts): the gateway's principal with the mesh's placement, the managed API's with `enabled`. */
export const MESH_GROUP_CHECKS = {
    principal: crossCheck("gateway principal", ["gatewayPrincipal"], "its namespace mesh.gatewayNamespace, its form GlobalRateLimit's"),
    managedApi: crossCheck("managed API on", ["includeIpRanges", "serviceName"], "ManagedApi's rules, when managedApi.enabled"),
};

/** The fields `MeshGlobalArgs` declares itself (the others are GlobalRateLimit's). */
export const MESH_GLOBAL_FIELDS = {
    domain: field<string>({
        doc: "Rate-limit domain, written once and used by both the ConfigMap and the gateway filter.",
        type: t.string(),
        defaultNote: "A: `ratelimit`, B: `productpage-ratelimit`",
        rule: GLOBAL_ARGS_FIELDS.domain.rule,
        goesTo: GLOBAL_ARGS_FIELDS.domain.goesTo,
        stackKey: "domain",
        stackGroup: "limits",
    }),
    accessPolicy: nested({ doc: "Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`).", type: t.ref("MeshAccessPolicyArgs") }),
    monitoring: nested({ doc: "The dashboard and alert rules (GlobalRateLimit's `monitoring`).", type: t.ref("MonitoringOptionsArgs") }),
};

/** The fields of `MeshAccessPolicyArgs`. */
export const MESH_ACCESS_FIELDS = {
    enabled: field({
        doc: "Least privilege (docs/security.md): Istio AuthorizationPolicies and Kubernetes NetworkPolicies so that only the ingress gateway (`global.accessPolicy.gatewayPrincipal`, pods `mesh.gatewaySelector`) may call the rate-limit service's gRPC port and only the rate-limit service may reach the in-cluster Redis. The service and Redis always run under ServiceAccounts of their own.",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: built("the AuthorizationPolicies and NetworkPolicies, created or not"),
        stackKey: "accessPolicies",
        stackGroup: "service",
    }),
    gatewayPrincipal: field<string>({
        doc: "Istio identity (`<trust domain>/ns/<namespace>/sa/<service account>`) of the ingress gateway: the only caller the rate-limit service accepts. Not set: the default gateway's service account in `mesh.gatewayNamespace`; set, its namespace must be `mesh.gatewayNamespace` (else the access policies would refuse the gateway). Its namespace is also where the NetworkPolicy admits the gateway pods from; its trust domain names the rate-limit service's identity.",
        type: t.string(),
        defaultNote: "`cluster.local/ns/<gatewayNamespace>/sa/istio-ingressgateway-service-account`",
        rule: checkedWith(MESH_GROUP_CHECKS.principal, "an Istio principal"),
        goesTo: built("the AuthorizationPolicy's principal"),
        stackKey: "gatewayPrincipal",
        stackGroup: "service",
    }),
};

/** The fields `MeshLocalArgs` declares itself (the others are LocalRateLimit's). */
export const MESH_LOCAL_FIELDS = {
    enabled: field({
        doc:
            "Create the local token bucket on the workload's sidecar (spec 2.7). With `meshMode` `ambient`: on the waypoint `waypoint` the " +
            "stack creates for productpage's Service, counted per waypoint pod; Istio does not support EnvoyFilter on waypoints, and preview " +
            "says so (docs/guide/ambient.md).",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: built("LocalRateLimit, created or not"),
        stackKey: "localBucketEnabled",
        stackGroup: "local",
    }),
    bucket: field<number>({
        doc: "Token bucket size per pod (`max_tokens` = `tokens_per_fill`).",
        type: t.number(),
        defaultNote: "A: `4`, B: `10`",
        rule: bucketRule,
        goesTo: { envoy: "the local_ratelimit filter's token_bucket max_tokens and tokens_per_fill" },
        stackKey: "localBucket",
        stackGroup: "local",
    }),
    placement: field<LocalPlacementMode>({
        doc: "`all-routes`: the whole filter on the sidecar's inbound HTTP chain of `local.port` (only that port). `single-route`: filter holds only `stat_prefix`, the bucket is set per route on virtual host `inbound|http|<localServicePort>`.",
        type: t.enum(LocalPlacementMode, "LocalPlacementMode"),
        default: LocalPlacementMode.AllRoutes,
        rule: choiceRule(LocalPlacementMode),
        goesTo: { envoy: "where the local_ratelimit filter's bucket sits" },
        stackKey: "localPlacement",
        stackGroup: "local",
    }),
    serviceLabel: field({
        doc: "Value of the `app` label of the workload whose sidecar gets the local limit (spec `<service_label>`).",
        type: t.string(),
        default: BOOKINFO_ARGS_FIELDS.localStatsApp.default,
        rule: labelValueRule,
        goesTo: built("the local EnvoyFilter's workload selector"),
        stackKey: "serviceLabel",
        stackGroup: "local",
    }),
    port: field({
        doc: "Port of that workload: its Service port and the container port the Service targets (the two must be equal: the bucket goes on the inbound chain of the container port, and the inbound virtual host `inbound|http|<port>` is named after the Service port).",
        type: t.number(),
        default: BOOKINFO_PORT,
        rule: bucketPortRule,
        goesTo: { envoy: "the local EnvoyFilter's inbound listener port" },
        stackKey: "localServicePort",
        stackGroup: "local",
    }),
};

/** The fields `MeshBookinfoArgs` declares itself (the others are Bookinfo's). */
export const MESH_BOOKINFO_FIELDS = {
    mode: field<BookinfoMode>({
        doc: "`deploy`: the stack deploys bookinfo (ServiceAccounts, Services, Deployments, Gateway, VirtualService) in `bookinfo.namespace`. `existing`: bookinfo already runs there (Istio's own sample, with its Gateway and VirtualService named by `bookinfo.gatewayName`, `bookinfo.virtualServiceName`): the stack creates none of it and deploys only the limits on it (variant B only: Istio's sample VirtualService has no `api` route). Preview refuses to create bookinfo over objects that already exist.",
        type: t.enum(BookinfoMode, "BookinfoMode"),
        default: BookinfoMode.Deploy,
        rule: choiceRule(BookinfoMode),
        goesTo: built("Bookinfo, created or not"),
        stackKey: "bookinfo",
        stackGroup: "operations",
    }),
};

/** The fields `MeshManagedApiArgs` declares itself (the others are ManagedApi's). */
export const MESH_MANAGED_API_FIELDS = {
    enabled: field({
        doc: "Deploy the managed-API service (ESP + echo backend + Ingress).",
        type: t.boolean(),
        default: true,
        rule: booleanRule(),
        goesTo: built("ManagedApi, created or not"),
        stackKey: "managedApi",
        stackGroup: "managed-api",
    }),
    includeIpRanges: field<string[]>({
        doc: "Comma-separated CIDRs of the cluster's pod and service ranges; only these go through the sidecar, so ESP reaches Google Service Control directly (e.g. `10.4.0.0/14,10.7.240.0/20`).",
        type: t.list(t.string()),
        defaultNote: "required when `managedApi.enabled` is true",
        rule: checkedWith(MESH_GROUP_CHECKS.managedApi, "CIDRs"),
        goesTo: built("the ESP pod's `traffic.sidecar.istio.io/includeOutboundIPRanges`"),
        stackKey: "includeIpRanges",
        stackGroup: "managed-api",
    }),
    serviceName: field<string>({
        doc: "Cloud Endpoints service name passed to ESP as `--service` (e.g. `echo-api.endpoints.PROJECT.cloud.goog`).",
        type: t.string(),
        defaultNote: "required when `managedApi.enabled` is true",
        rule: checkedWith(MESH_GROUP_CHECKS.managedApi, "a Cloud Endpoints service name"),
        goesTo: built("ESP's `--service`"),
        stackKey: "espServiceName",
        stackGroup: "managed-api",
    }),
};
