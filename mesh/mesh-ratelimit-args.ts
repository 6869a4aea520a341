/**
 * MeshRateLimit's arguments, grouped by the component each group is for, written here (no
 * generator): the package owns them, and the program maps its stack config onto them. A group
 * extends the options of the component it is for (`GlobalRateLimitOptions`, `LocalBucketOptions`,
 * `BookinfoOptions`, `ManagedApiOptions`, `MonitoringOptionsArgs`): a field the component owns is
 * declared and documented once, there, and Pulumi's schema analyzer carries it into this group with
 * its words. A group declares only what is MeshRateLimit's own, or what it holds to another contract
 * (optional here, required by the component). Not `Pick` or `Omit`: the analyzer types a picked
 * field as `Any` without its description. Every field is optional: `undefined` means not given.
 */
import {
    ApiProfileName,
    BookinfoMode,
    DescriptorArgs,
    FilterNamespaces,
    LocalPlacementMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "../components/mesh-enums";
import { GlobalRateLimitOptions } from "../components/global-ratelimit-args";
import { BookinfoOptions } from "../components/bookinfo-args";
import { LocalBucketOptions } from "../components/local-ratelimit";
import { ManagedApiOptions } from "../components/managed-api-args";
import { MonitoringOptionsArgs } from "../components/ratelimit-monitoring";
import { LimitUnit } from "../builders/rule-args";

/** The whole specified stack (docs/specification.md), its arguments grouped by the component each is for. Every field is optional; the defaults are the stack's. */
export interface MeshRateLimitArgs {
    /** Preset of the specification: `A` (domain `ratelimit`, `api` route limit, bucket 4) or `B` (domain `productpage-ratelimit`, no route split, bucket 10). Defaults to `A`. */
    variant?: StackVariant;
    /** `current`: API versions today's clusters serve (networking.k8s.io/v1 Ingress, PeerAuthentication). `seed`: exactly the versions the specification names (extensions/v1beta1 Ingress, `authPolicy` in the mesh ConfigMap). Defaults to `current`. */
    apiProfile?: ApiProfileName;
    /** Wait for Deployments to become ready. `false` adds `pulumi.com/skipAwait` (for clusters without nodes, or GitOps-style applies). Defaults to `true`. */
    awaitRollout?: boolean;
    /** The bookinfo paths the specification names: the stack's routes and limits are made of them. */
    paths?: MeshPathsArgs;
    /** The specification's global limits (spec 2.4, 2.6), which MeshRateLimit turns into GlobalRateLimit's rules. */
    limits?: MeshLimitsArgs;
    /** Where the stack sits in the mesh: Istio's root namespace, the ingress gateway, the reach of its filters, mutual TLS. */
    mesh?: MeshPlacementArgs;
    /** The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names. */
    global?: MeshGlobalArgs;
    /** The local token bucket on a workload's sidecar (LocalRateLimit's arguments). */
    local?: MeshLocalArgs;
    /** The bookinfo sample the limits protect (Bookinfo's arguments). */
    bookinfo?: MeshBookinfoArgs;
    /** The managed API (ESP) in the mesh (ManagedApi's arguments). */
    managedApi?: MeshManagedApiArgs;
    /** kubectl context of the seed profile's mesh ConfigMap edit. Defaults to the current context. */
    kubeContext?: string;
    /** `current` profile: create IngressClass `<managedApi.ingressClassName>` (false when the cluster has one for Istio). Defaults to `true`. */
    createIngressClass?: boolean;
    /** `current` profile: `pulumi destroy` leaves the IngressClass the stack created (other Ingresses use it). Defaults to `false`. */
    keepIngressClassOnDestroy?: boolean;
    /** `current` profile: create PeerAuthentication `default` (false when the mesh has a STRICT one). Defaults to `true`. */
    createPeerAuthentication?: boolean;
    /** `current` profile: `pulumi destroy` leaves PeerAuthentication `default` the stack created (other workloads run under it). Defaults to `false`. */
    keepPeerAuthenticationOnDestroy?: boolean;
}

/** The bookinfo paths the specification names: the stack's routes and limits are made of them. */
export interface MeshPathsArgs {
    /** Exact request path limited globally to `limits.limitedPath` per unit (spec `<limited_path>`). Defaults to `/productpage`. */
    limited?: string;
    /** Exact path of the product page route (spec `<page_path>`). Defaults to `/productpage`. */
    page?: string;
    /** Exact login path (spec `<login_path>`). Defaults to `/login`. */
    login?: string;
    /** Exact logout path (spec `<logout_path>`). Defaults to `/logout`. */
    logout?: string;
    /** Path prefix of static assets (spec `<static_prefix>`). Defaults to `/static`. */
    staticPrefix?: string;
    /** Path prefix of the product API (spec `<api_prefix>`). Defaults to `/api/v1/products`. */
    apiPrefix?: string;
}

/** The specification's global limits (spec 2.4, 2.6), which MeshRateLimit turns into GlobalRateLimit's rules. */
export interface MeshLimitsArgs {
    /** Variant A: name of the VirtualService route that carries the route-level limit (spec 2.6). Must name one of the routes. Defaults to `api`. */
    apiRoute?: string;
    /** Variant A: RE2 regex (full match) on the request path without its query that produces descriptor `PATH=<apiDescriptorValue>` (with `global.pathKey` `url-path` the filter accepts an optional `?query` after it; with `literal` it is matched against `:path` as written). Defaults to `<apiPrefix>/[1-9][0-9]?` (n from 1 to 99). */
    apiRouteRegex?: string;
    /** Variant A: descriptor value sent for paths matching `limits.apiRouteRegex`. Defaults to `api`. */
    apiDescriptorValue?: string;
    /** Time unit of every global limit: `second`, `minute`, `hour` or `day`. Defaults to `minute`. */
    unit?: LimitUnit;
    /** Requests per unit for `PATH=<limitedPath>`. Defaults to `1`. */
    limitedPath?: number;
    /** Variant A: requests per unit shared by every path matching `limits.apiRouteRegex`. Defaults to A: `2`; not allowed in B. */
    api?: number;
    /** Requests per unit for any other path (each distinct path has its own counter). Defaults to `100`. */
    catchAll?: number;
    /** Advanced: the whole descriptor list, each a `DescriptorArgs` (the specification's descriptor table); replaces `limitedPath`, `api` and `catchAll`, and `unit`. Defaults to the list built from those. */
    descriptors?: DescriptorArgs[];
}

/** Where the stack sits in the mesh: Istio's root namespace, the ingress gateway, the reach of its filters, mutual TLS. */
export interface MeshPlacementArgs {
    /** Istio's root namespace (its `rootNamespace`): an EnvoyFilter there reaches matching pods in every namespace. Holds the mesh-wide PeerAuthentication and the mesh ConfigMap (`mesh.mutualTlsScope` `mesh`) and, with `mesh.filterNamespaces` `root`, every EnvoyFilter. Defaults to `istio-system`. */
    namespace?: string;
    /** Label `key=value` of the ingress gateway pods the bookinfo Gateway and the global filters select. Defaults to `istio=ingressgateway`. */
    gatewaySelector?: string;
    /** Namespace of the ingress gateway's pods; holds the gateway EnvoyFilters. When it is Istio's root namespace (the default install), a filter there reaches pods with the selector's label in every namespace: `pulumi preview` refuses when gateway pods with that label run in another namespace too. Defaults to `istio-system`. */
    gatewayNamespace?: string;
    /** Which virtual hosts of the gateway the limits apply to. `gateway-hosts`: only the stack's own Gateway's (`<host>:<gatewayPort>` for each of `bookinfo.hosts`), and the rate-limit filter only on `bookinfo.gatewayPort`. `all`: spec 2.4 literally, virtual host `""` and every listener: **every host on the gateway**, other teams' included, gets the per-path counters and, with `global.failureModeDeny`, fails with HTTP 500 when the service is down. Only for a gateway the stack has to itself. Defaults to `gateway-hosts`. */
    vhostScope?: VirtualHostScope;
    /** Where the EnvoyFilters live. `own`: the gateway filters in `mesh.gatewayNamespace`, the sidecar's local bucket in `bookinfo.namespace` (it then reaches only that namespace's pods). `root`: all in `mesh.namespace` (spec 2.2 literally): the local bucket then reaches every `app: <serviceLabel>` pod of **every namespace**. Defaults to `own`. */
    filterNamespaces?: FilterNamespaces;
    /** With `mesh.mutualTls`: `workloads`: STRICT mutual TLS for the stack's own pods only (a PeerAuthentication `mesh-ratelimit-mtls` selecting `app.kubernetes.io/part-of=mesh-ratelimit` in each of its namespaces), whatever the mesh-wide policy says, except a mesh-wide `DISABLE` (clients would then send plain text, which these pods refuse: `pulumi preview` stops). `mesh`: spec 2.10 literally, for **the whole mesh**: PeerAuthentication `default` in `mesh.namespace` (`current`) or `authPolicy: MUTUAL_TLS` in the mesh ConfigMap (`seed`); clients without sidecars anywhere in the mesh are then refused. Defaults to `workloads`. */
    mutualTlsScope?: MutualTlsScope;
    /** Mutual TLS for the stack's traffic (spec 2.10), as wide as `mesh.mutualTlsScope` says: by default STRICT for the stack's own pods only. Defaults to `true`. */
    mutualTls?: boolean;
}

/** The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names, with the stack's defaults. */
export interface MeshGlobalArgs extends GlobalRateLimitOptions {
    /** Rate-limit domain, written once and used by both the ConfigMap and the gateway filter. Defaults to A: `ratelimit`, B: `productpage-ratelimit`. */
    domain?: string;
    /** Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`). */
    accessPolicy?: MeshAccessPolicyArgs;
    /** The dashboard and alert rules (GlobalRateLimit's `monitoring`). */
    monitoring?: MonitoringOptionsArgs;
}

/** Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`). */
export interface MeshAccessPolicyArgs {
    /** Least privilege (docs/security.md): Istio AuthorizationPolicies and Kubernetes NetworkPolicies so that only the ingress gateway (`global.accessPolicy.gatewayPrincipal`, pods `mesh.gatewaySelector`) may call the rate-limit service's gRPC port and only the rate-limit service may reach the in-cluster Redis. The service and Redis always run under ServiceAccounts of their own. Defaults to `true`. */
    enabled?: boolean;
    /** Istio identity (`<trust domain>/ns/<namespace>/sa/<service account>`) of the ingress gateway: the only caller the rate-limit service accepts. Not set: the default gateway's service account in `mesh.gatewayNamespace`; set, its namespace must be `mesh.gatewayNamespace` (else the access policies would refuse the gateway). Its namespace is also where the NetworkPolicy admits the gateway pods from; its trust domain names the rate-limit service's identity. Defaults to `cluster.local/ns/<gatewayNamespace>/sa/istio-ingressgateway-service-account`. */
    gatewayPrincipal?: string;
}

/** The local token bucket on a workload's sidecar (LocalRateLimit's arguments). */
export interface MeshLocalArgs extends LocalBucketOptions {
    /** Token bucket size per pod (`max_tokens` = `tokens_per_fill`). Defaults to A: `4`, B: `10`. */
    bucket?: number;
    /** `all-routes`: the whole filter on the sidecar's inbound HTTP chain of `local.port` (only that port). `single-route`: filter holds only `stat_prefix`, the bucket is set per route on virtual host `inbound|http|<localServicePort>`. Defaults to `all-routes`. */
    placement?: LocalPlacementMode;
    /** Value of the `app` label of the workload whose sidecar gets the local limit (spec `<service_label>`). Defaults to `productpage`. */
    serviceLabel?: string;
    /** Port of that workload: its Service port and the container port the Service targets (the two must be equal: the bucket goes on the inbound chain of the container port, and the inbound virtual host `inbound|http|<port>` is named after the Service port). Defaults to `9080`. */
    port?: number;
}

/** The bookinfo sample the limits protect: Bookinfo's arguments, and whether to deploy it. */
export interface MeshBookinfoArgs extends BookinfoOptions {
    /** `deploy`: the stack deploys bookinfo (ServiceAccounts, Services, Deployments, Gateway, VirtualService) in `bookinfo.namespace`. `existing`: bookinfo already runs there (Istio's own sample, with its Gateway and VirtualService named by `bookinfo.gatewayName`, `bookinfo.virtualServiceName`): the stack creates none of it and deploys only the limits on it (variant B only: Istio's sample VirtualService has no `api` route). Preview refuses to create bookinfo over objects that already exist. Defaults to `deploy`. */
    mode?: BookinfoMode;
}

/** The managed API (ESP) in the mesh (ManagedApi's arguments). */
export interface MeshManagedApiArgs extends ManagedApiOptions {
    /** Deploy the managed-API service (ESP + echo backend + Ingress). Defaults to `true`. */
    enabled?: boolean;
    /** Comma-separated CIDRs of the cluster's pod and service ranges; only these go through the sidecar, so ESP reaches Google Service Control directly (e.g. `10.4.0.0/14,10.7.240.0/20`). Defaults to required when `managedApi.enabled` is true. */
    includeIpRanges?: string[];
    /** Cloud Endpoints service name passed to ESP as `--service` (e.g. `echo-api.endpoints.PROJECT.cloud.goog`). Defaults to required when `managedApi.enabled` is true. */
    serviceName?: string;
}
