/**
 * Bookinfo's arguments (each field documented here once) and the settings the stack resolves them to.
 */
import { GatewayHostScope, HttpRouteArgs } from "./mesh-enums";
import { HttpRoute } from "../builders/routes";

/** The sample's Gateway and VirtualService as the stack's settings hold them (MeshRateLimit's `bookinfo`, defaults filled in). */
export interface BookinfoSettings {
    namespace: string;
    /** Hosts of the VirtualService, and of the Gateway's server (each as `<namespace>/<host>` with `gatewayHostScope` `own-namespace`). */
    hosts: string[];
    /** Which namespaces' VirtualServices the Gateway admits. */
    gatewayHostScope: GatewayHostScope;
    version: string;
    gatewayName: string;
    gatewayPort: number;
    virtualServiceName: string;
    routes: HttpRoute[];
}

/**
 * The sample's names, hosts and routes: Bookinfo's arguments, and MeshRateLimit's `bookinfo` (which
 * adds `mode`). Each field documented here once.
 */
export interface BookinfoOptions {
    /** Namespace of the sample (must exist; the pods ask for a sidecar themselves). In MeshRateLimit also the local bucket's EnvoyFilter's, and by default the managed API's; the rate-limit service and Redis go to `global.namespace`. Defaults to `default`. */
    namespace?: string;
    /** Tag of the `docker.io/istio/examples-bookinfo-*` images. Defaults to `1.20.2`. */
    version?: string;
    /** Name of the Gateway. Defaults to `bookinfo-gateway`. */
    gatewayName?: string;
    /** Port of the Gateway's HTTP server; Istio names its virtual hosts `<host>:<gatewayPort>`, and the rate-limit filter goes on this listener port only. It must be a port the gateway pods bind: when the gateway's Service has this port, Istio binds its `targetPort` instead (the default istio-ingressgateway Service maps 80 to 8080 and 443 to 8443), and the filter would land nowhere. 8080, as in the specification, is the pods' own port. Defaults to `8080`. */
    gatewayPort?: number;
    /** Hosts of the Gateway and the VirtualService (spec 2.5: `*`). The gateway patches name exactly their virtual hosts `<host>:<gatewayPort>` (Istio's names), so another team's host on the same gateway is never limited. The Gateway's server takes them as `<namespace>/<host>`, admitting only the VirtualServices of `namespace` (see `gatewayHostScope`). Defaults to `["*"]`. */
    hosts?: string[];
    /** Which VirtualServices the Gateway admits. `own-namespace`: only those of `namespace` (server hosts `<namespace>/<host>`, `default/*` by default; the virtual host is still `*:<gatewayPort>`), so no other namespace can bind a host of its own to the Gateway and reach the sample around the limits. `any-namespace`: spec 2.5 literally, server hosts as given: a VirtualService of **any namespace** can bind a host of its own, and Istio gives that host a virtual host of its own without the limits, a side door to productpage (MeshRateLimit's `pulumi preview` refuses when one exists). Only for a gateway the stack has to itself. Defaults to `own-namespace`. */
    gatewayHostScope?: GatewayHostScope;
    /** Name of the VirtualService (spec `<virtual_service_name>`). Defaults to `bookinfo`. */
    virtualServiceName?: string;
    /** The VirtualService's HTTP routes to productpage, each `{name?, exact?, prefix?}`. Defaults to the specification's split (page, login, logout, static; then `api` for the API prefix); MeshRateLimit's variant B: one route with every match. */
    routes?: HttpRouteArgs[];
}

export interface BookinfoArgs extends BookinfoOptions {
    /** Labels of the ingress gateway pods the Gateway selects. Defaults to `{ istio: "ingressgateway" }`. */
    gatewaySelector?: Record<string, string>;
    /** `app` label of the workload whose sidecar exports the local limiter's counters. Defaults to `productpage`. */
    localStatsApp?: string;
    /** Wait for the Deployments to become ready. Defaults to `true`. */
    awaitRollout?: boolean;
}
