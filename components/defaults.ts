/**
 * The components' own defaults, one typed table. The components take their defaults from here; the
 * stack's config schema (program/config-keys.ts) prints these same values as its keys' defaults, so the
 * stack config layer depends on the components and never the other way round. Pure. GlobalRateLimit's
 * plain fields keep their defaults in their declarations (global-ratelimit-fields.ts, service-fields.ts,
 * redis-fields.ts, ratelimit-monitoring-fields.ts, client-prefix-fields.ts), not here.
 */

export const DEFAULTS = {
    /** The service's own HTTP and debug ports (fixed by the pinned image; the gRPC port must differ from both). */
    ratelimitHttpPort: 8080,
    ratelimitDebugPort: 6070,
    awaitRollout: true,
    apiProfile: "current",
    meshNamespace: "istio-system",
    gatewayNamespace: "istio-system",
    localFillInterval: "60s",
    limitedPath: "/productpage",
    pagePath: "/productpage",
    loginPath: "/login",
    logoutPath: "/logout",
    staticPrefix: "/static",
    apiPrefix: "/api/v1/products",
    apiRoute: "api",
    gatewaySelector: "istio=ingressgateway",
    workloadNamespace: "default",
    bookinfoVersion: "1.20.2",
    gatewayName: "bookinfo-gateway",
    gatewayPort: 8080,
    gatewayHosts: "*",
    /** Only bookinfo's own namespace binds VirtualServices to its Gateway (components/mesh-enums.ts GatewayHostScope). */
    gatewayHostScope: "own-namespace",
    virtualServiceName: "bookinfo",
    serviceLabel: "productpage",
    echoImage: "gcr.io/google-samples/echo-python:1.0",
    // A fixed patch release of ESP v1 (the floating `:1` tag moves under a running stack).
    espImage: "gcr.io/endpoints-release/endpoints-runtime:1.57.0",
    espPortMode: "http",
    ingressClassName: "istio",
    ingressName: "simple-ingress",
    ingressPath: "/echo",
} as const;
