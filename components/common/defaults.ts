/**
 * The components' own defaults, one typed table. The components take their defaults from here; the
 * stack's config schema (program/config-keys.ts) prints these same values as its keys' defaults, so the
 * stack config layer depends on the components and never the other way round. Pure. The plain fields
 * of the components keep their defaults in their declarations (components/*-fields.ts), not here.
 * The paths are MeshRateLimit's (`paths`, `limits.apiRoute`); Bookinfo's default routes are made of them.
 */

export const DEFAULTS = {
    /** The service's own HTTP and debug ports (fixed by the pinned image; the gRPC port must differ from both). */
    ratelimitHttpPort: 8080,
    ratelimitDebugPort: 6070,
    awaitRollout: true,
    apiProfile: "current",
    meshNamespace: "istio-system",
    gatewayNamespace: "istio-system",
    limitedPath: "/productpage",
    pagePath: "/productpage",
    loginPath: "/login",
    logoutPath: "/logout",
    staticPrefix: "/static",
    apiPrefix: "/api/v1/products",
    apiRoute: "api",
} as const;
