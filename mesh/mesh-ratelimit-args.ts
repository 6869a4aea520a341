/**
 * MeshRateLimit's arguments, grouped by the component each group is for, written here (no
 * generator): the package owns them, and the program maps its stack config onto them. A field a
 * component owns has that component's own type (`RateLimitServiceOptionsArgs`, `PathKeyMode`, ...),
 * and tests/unit/mesh-plan.test.ts fails to compile when one parts from the component's field.
 * (Not `Pick` or `Required<X>["field"]`: Pulumi's schema analyzer types a picked field as `Any`
 * without its description, and refuses an indexed one as a union with `undefined`.) Each field's
 * JSDoc states its default for this component. Every field is optional: `undefined` means not given.
 */
import {
    ApiProfileName,
    BookinfoMode,
    DescriptorArgs,
    EspPortModeName,
    FilterNamespaces,
    GatewayHostScope,
    HttpRouteArgs,
    LocalPlacementMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "../components/mesh-enums";
import { RateLimitServiceOptionsArgs } from "../components/global-ratelimit-args";
import { RedisOptionsArgs } from "../components/redis-options";
import { PerValueStoreArgs } from "../components/per-value-store";
import { ClientPrefixArgs, LimitUnit, PathKeyMode } from "../builders/rule-args";
import { ErrorStatus, FilterLayout, RateLimitHeaders } from "../builders/envoy-filters";
import { CounterStore } from "../builders/counter-stores";

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
    /** Advanced: the whole descriptor list as JSON `[{"key":"PATH","value"?:string,"unit":"minute","requestsPerUnit":1}]`; replaces the three limit keys. Defaults to built from the three limits above. */
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

/** The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names. */
export interface MeshGlobalArgs {
    /** What the gateway counts a request by. `url-path` (default): the path without its query string (Envoy's CEL descriptor `request.url_path`), and the `api` route also counts against the per-path catch-all, so no query string and no unmatched API path escapes the limits. `literal`: exactly the specification's tables (`:path` with its query, route limits replace the virtual host's): a query string such as `?n=1` gets its own counter and escapes every limit; for comparison and for proxies older than Istio 1.24 that lack the CEL extension. Defaults to `url-path`. */
    pathKey?: PathKeyMode;
    /** Rate-limit domain, written once and used by both the ConfigMap and the gateway filter. Defaults to A: `ratelimit`, B: `productpage-ratelimit`. */
    domain?: string;
    /** Deny requests (HTTP 500) when the rate-limit service cannot answer. Defaults to `true`. */
    failureModeDeny?: boolean;
    /** The status of a request refused because the rate-limit service could not answer (`failureModeDeny=true`; Envoy's `status_on_error`): `InternalServerError` (500), `ServiceUnavailable` (503) or `TooManyRequests` (429). The specification says only that the request is denied. Defaults to unset (Envoy's 500). */
    statusOnError?: ErrorStatus;
    /** What the gateway tells clients of their global limits: `draft-03` (default) adds `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` of the tightest limit that applied to every response the service counted, refusals included (Envoy's `enable_x_ratelimit_headers: DRAFT_VERSION_03`); `off` adds none. Not in the specification. Defaults to `draft-03`. */
    rateLimitHeaders?: RateLimitHeaders;
    /** How the gateway filters share their listener. `shared` (default): the specification's layout (filters `envoy.filters.http.ratelimit` and `envoy.filters.http.local_ratelimit`, EnvoyFilters `filter-ratelimit`, `filter-ratelimit-svc`, `filter-ratelimit-svc-api`, route and virtual-host `rate_limits`), which every rate-limit filter on the listener reads: one stack per gateway listener; Istio 1.24 or later. `per-instance`: HTTP filters and EnvoyFilters named after the stack's rate-limit service (`<ratelimitNamespace>-<ratelimitServiceName>`), descriptors only under those names (`RateLimitPerRoute`), so any number of stacks and other teams' rate-limit filters share one gateway listener; Istio 1.25 or later. Defaults to `shared`. */
    filterLayout?: FilterLayout;
    /** Timeout of the gateway's call to the rate-limit service (protobuf duration, e.g. `10s`, `0.5s`). Defaults to `10s`. */
    timeout?: string;
    /** A local pre-limit on the gateway, before the rate-limit filter: per pod a token bucket of 2 × each limit a fixed descriptor names (`/productpage`, `api`), refilled by the limit per window, so a flood is refused (429, `x-mesh-ratelimit: pre-limit`) without calling the service; it never refuses traffic that stays within the limits. Per-path counters stay with the service; with `global.service.shadowMode` there is no pre-limit. `false`: every request asks the service. Defaults to `true`. */
    preLimit?: boolean;
    /** Where the counters live. `split` (default): the per-path counters (one per distinct path, which any client can create at will) go to a rate-limit service and a Redis of their own (`<ratelimitServiceName>-per-value`, `redis-per-value`); `/productpage` and `api` keep theirs, which no flood of new paths can evict, reset or slow. A request calls one of the two. `single`: the specification's layout, one service, one Redis, one config with the three descriptors; a flood of new paths can then evict a live `/productpage` counter and reset its limit. Defaults to `split`. */
    counterStore?: CounterStore;
    /** Namespace of the rate-limit Service and Deployment. Defaults to `default`. */
    namespace?: string;
    /** Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`). */
    accessPolicy?: MeshAccessPolicyArgs;
    /** The dashboard and alert rules (GlobalRateLimit's `monitoring`). */
    monitoring?: MeshMonitoringArgs;
    /** The rate-limit service: GlobalRateLimit's `service` argument (its names, images, replicas and Redis client settings). Defaults to GlobalRateLimit's. */
    service?: RateLimitServiceOptionsArgs;
    /** The per-path counters' service and Redis (`global.counterStore` split): GlobalRateLimit's `perValueStore` argument. Defaults to GlobalRateLimit's. */
    perValueStore?: PerValueStoreArgs;
    /** What makes one client for the per-client counters: GlobalRateLimit's `clientPrefix` (IPv4 and IPv6 prefix lengths). Defaults to GlobalRateLimit's (/32, /64). */
    clientPrefix?: ClientPrefixArgs;
    /** Which Redis the service counts in: GlobalRateLimit's `redis` argument (the in-cluster Redis by default, or an existing one). Defaults to GlobalRateLimit's. */
    redis?: RedisOptionsArgs;
}

/** Who may call the rate-limit service and Redis (GlobalRateLimit's `accessPolicy`). */
export interface MeshAccessPolicyArgs {
    /** Least privilege (docs/security.md): Istio AuthorizationPolicies and Kubernetes NetworkPolicies so that only the ingress gateway (`global.accessPolicy.gatewayPrincipal`, pods `mesh.gatewaySelector`) may call the rate-limit service's gRPC port and only the rate-limit service may reach the in-cluster Redis. The service and Redis always run under ServiceAccounts of their own. Defaults to `true`. */
    enabled?: boolean;
    /** Istio identity (`<trust domain>/ns/<namespace>/sa/<service account>`) of the ingress gateway: the only caller the rate-limit service accepts. Not set: the default gateway's service account in `mesh.gatewayNamespace`; set, its namespace must be `mesh.gatewayNamespace` (else the access policies would refuse the gateway). Its namespace is also where the NetworkPolicy admits the gateway pods from; its trust domain names the rate-limit service's identity. Defaults to `cluster.local/ns/<gatewayNamespace>/sa/istio-ingressgateway-service-account`. */
    gatewayPrincipal?: string;
}

/** The dashboard and alert rules (GlobalRateLimit's `monitoring`). */
export interface MeshMonitoringArgs {
    /** Create a Grafana dashboard of the limits (a ConfigMap with the label of `global.monitoring.dashboardLabel`, which Grafana's dashboard sidecar loads): decisions per limit and outcome, service and Redis errors, answer time, config loads, the gateway's filter and pre-limit, the local bucket per pod (docs/monitoring.md). The service's panels need `ratelimitPrometheus=true`. Defaults to `true`. */
    dashboard?: boolean;
    /** Namespace of the dashboard ConfigMap: one Grafana's dashboard sidecar watches (must exist). Defaults to `global.namespace`. */
    dashboardNamespace?: string;
    /** The label, `name=value`, on the dashboard ConfigMap that Grafana's dashboard sidecar looks for (a setting of the Grafana chart). Defaults to `grafana_dashboard=1`. */
    dashboardLabel?: string;
    /** Create alert rules as a `PrometheusRule` (monitoring.coreos.com/v1, the Prometheus operator) in `global.namespace`: the gateway failing closed or about to, the config not loaded, a limit refusing most of its traffic (docs/monitoring.md, runbook). Off by default because it reaches the cluster's alerting; preview stops when the cluster does not serve the kind. Defaults to `false`. */
    alerts?: boolean;
    /** Labels on the `PrometheusRule`, `name=value` comma-separated (e.g. `release=kube-prometheus-stack` for an operator that selects rules by label). Default none. Defaults to unset. */
    ruleLabels?: { [label: string]: string };
}

/** The local token bucket on a workload's sidecar (LocalRateLimit's arguments). */
export interface MeshLocalArgs {
    /** Token bucket size per pod (`max_tokens` = `tokens_per_fill`). Defaults to A: `4`, B: `10`. */
    bucket?: number;
    /** Bucket refill interval (protobuf duration, at least `0.05s`). Defaults to `60s`. */
    fillInterval?: string;
    /** What the sidecar's bucket tells clients: `draft-03` (default) adds `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` of the bucket to every response it counted; `off` adds none. A refusal carries `Retry-After` (the fill interval in whole seconds) either way. Not in the specification. Defaults to `draft-03`. */
    rateLimitHeaders?: RateLimitHeaders;
    /** Observe only: the sidecar's bucket counts (its `rate_limited` statistic grows) but refuses nothing. Not in the specification. Defaults to `false`. */
    shadow?: boolean;
    /** `all-routes`: the whole filter on the sidecar's inbound HTTP chain of `local.port` (only that port). `single-route`: filter holds only `stat_prefix`, the bucket is set per route on virtual host `inbound|http|<localServicePort>`. Defaults to `all-routes`. */
    placement?: LocalPlacementMode;
    /** Value of the `app` label of the workload whose sidecar gets the local limit (spec `<service_label>`). Defaults to `productpage`. */
    serviceLabel?: string;
    /** Port of that workload: its Service port and the container port the Service targets (the two must be equal: the bucket goes on the inbound chain of the container port, and the inbound virtual host `inbound|http|<port>` is named after the Service port). Defaults to `9080`. */
    port?: number;
}

/** The bookinfo sample the limits protect (Bookinfo's arguments). */
export interface MeshBookinfoArgs {
    /** Advanced: the VirtualService's HTTP routes as a JSON list of `{"name"?: string, "exact"?: string[], "prefix"?: string[]}`. Defaults to variant A: the spec 2.5 split (page/login/logout/static, then `api`); B: one route with all matches. */
    routes?: HttpRouteArgs[];
    /** Comma-separated hosts of the bookinfo Gateway and VirtualService (spec 2.5: `*`). The gateway patches name exactly their virtual hosts `<host>:<gatewayPort>` (Istio's names), so another team's host on the same gateway is never limited. The Gateway's server takes them as `<namespace>/<host>`, admitting only the VirtualServices of `bookinfo.namespace` (see `bookinfo.gatewayHostScope`). Defaults to `*`. */
    hosts?: string[];
    /** Namespace of bookinfo and of the local bucket's EnvoyFilter, and by default of the managed-API service (must exist). The rate-limit service and Redis go to `global.namespace`. Defaults to `default`. */
    namespace?: string;
    /** Name of the bookinfo Gateway. Defaults to `bookinfo-gateway`. */
    gatewayName?: string;
    /** Port of the Gateway's HTTP server; the virtual hosts are `<host>:<gatewayPort>` and the rate-limit filter goes on this listener port only. It must be a port the gateway pods bind: when the gateway's Service has this port, Istio binds its `targetPort` instead (the default istio-ingressgateway Service maps 80 to 8080 and 443 to 8443), and the filter would land nowhere. 8080, as in the specification, is the pods' own port. Defaults to `8080`. */
    gatewayPort?: number;
    /** Name of the bookinfo VirtualService (spec `<virtual_service_name>`). Defaults to `bookinfo`. */
    virtualServiceName?: string;
    /** Which VirtualServices the bookinfo Gateway admits. `own-namespace`: only those of `bookinfo.namespace` (its server hosts are Istio's `<namespace>/<host>` for each of `bookinfo.hosts`, `default/*` by default; the virtual host is still `*:<gatewayPort>`). `any-namespace`: spec 2.5 literally, server hosts `bookinfo.hosts` as given: a VirtualService of **any namespace** can bind a host of its own to the Gateway, and Istio gives that host a virtual host of its own without the stack's limits, a side door to productpage (`pulumi preview` refuses when one exists). Only for a gateway the stack has to itself. Defaults to `own-namespace`. */
    gatewayHostScope?: GatewayHostScope;
    /** `deploy`: the stack deploys bookinfo (ServiceAccounts, Services, Deployments, Gateway, VirtualService) in `bookinfo.namespace`. `existing`: bookinfo already runs there (Istio's own sample, with its Gateway and VirtualService named by `bookinfo.gatewayName`, `bookinfo.virtualServiceName`): the stack creates none of it and deploys only the limits on it (variant B only: Istio's sample VirtualService has no `api` route). Preview refuses to create bookinfo over objects that already exist. Defaults to `deploy`. */
    mode?: BookinfoMode;
    /** Tag of the `docker.io/istio/examples-bookinfo-*` images. Defaults to `1.20.2`. */
    version?: string;
}

/** The managed API (ESP) in the mesh (ManagedApi's arguments). */
export interface MeshManagedApiArgs {
    /** Deploy the managed-API service (ESP + echo backend + Ingress). Defaults to `true`. */
    enabled?: boolean;
    /** Namespace of the managed-API service (ESP, echo backend, Ingress; must exist). ESP's image runs as root, so it meets Pod Security `baseline` only: a namespace of its own lets the others enforce `restricted` (docs/security.md, Pod Security). Defaults to `bookinfo.namespace`. */
    namespace?: string;
    /** Comma-separated CIDRs of the cluster's pod and service ranges; only these go through the sidecar, so ESP reaches Google Service Control directly (e.g. `10.4.0.0/14,10.7.240.0/20`). Defaults to required when `managedApi.enabled` is true. */
    includeIpRanges?: string[];
    /** Cloud Endpoints service name passed to ESP as `--service` (e.g. `echo-api.endpoints.PROJECT.cloud.goog`). Defaults to required when `managedApi.enabled` is true. */
    serviceName?: string;
    /** Optional: name of an existing Secret with key `service-account-creds.json`, mounted for ESP off GKE. Defaults to unset. */
    serviceAccountSecret?: string;
    /** `http`: Service port 80 → 8081 named `http` (mesh mutual TLS, spec 2.9). `tcp`: named `tcp`, the sidecar passes bytes through (spec 5.4, not recommended). Defaults to `http`. */
    portMode?: EspPortModeName;
    /** Name of the Ingress for the managed-API service (spec `<ingress_name>`). Defaults to `simple-ingress`. */
    ingressName?: string;
    /** Ingress class of the managed-API Ingress. `seed`: the `kubernetes.io/ingress.class` annotation (Istio serves it when it equals the mesh config's `ingressClass`, `istio` by default). `current`: `managedApi.ingressClassName`; the stack creates an IngressClass of this name with controller `istio.io/ingress-controller` only when the cluster has none, and leaves an existing one alone (another controller: config error). Defaults to `istio`. */
    ingressClassName?: string;
    /** Path prefix routed by the Ingress to ESP. Defaults to `/echo`. */
    ingressPath?: string;
    /** ESP image: a pinned release of ESP v1 (the floating `:1` tag would change under a running stack). Defaults to `gcr.io/endpoints-release/endpoints-runtime:1.57.0`. */
    espImage?: string;
    /** Echo backend image (listens on 8080). Defaults to `gcr.io/google-samples/echo-python:1.0`. */
    echoImage?: string;
}
