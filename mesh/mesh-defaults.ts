/**
 * The stack's defaults of the fields MeshRateLimit reads itself, in the shape of its arguments (the
 * fields it hands a component as given take that component's defaults).
 * Each value is stated once, in components/defaults.ts (or the const object of its choice); this
 * object places it under its field and is type-checked against the arguments. A field absent here
 * has no fixed default (the variant's preset, or derived from other fields). Pure.
 */
import { BOOKINFO_PORT } from "../builders/bookinfo";
import { DEFAULTS } from "../components/defaults";
import { GLOBAL_FIELDS } from "../components/global-ratelimit-fields";
import { MONITORING_OPTION_FIELDS } from "../components/ratelimit-monitoring-fields";
import { defaultsOf } from "../lib/field-decl";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args";

export const MESH_DEFAULTS = {
    variant: "A",
    apiProfile: DEFAULTS.apiProfile,
    paths: {
        limited: DEFAULTS.limitedPath,
        page: DEFAULTS.pagePath,
        login: DEFAULTS.loginPath,
        logout: DEFAULTS.logoutPath,
        staticPrefix: DEFAULTS.staticPrefix,
        apiPrefix: DEFAULTS.apiPrefix,
    },
    limits: { apiRoute: DEFAULTS.apiRoute, apiDescriptorValue: "api", unit: "minute", limitedPath: 1, catchAll: 100 },
    global: {
        pathKey: GLOBAL_FIELDS.pathKey.default,
        failureModeDeny: GLOBAL_FIELDS.failureModeDeny.default,
        rateLimitHeaders: GLOBAL_FIELDS.rateLimitHeaders.default,
        // The specification's layout (GlobalRateLimit's own default is per-instance).
        filterLayout: "shared",
        preLimit: GLOBAL_FIELDS.preLimit.default,
        counterStore: GLOBAL_FIELDS.counterStore.default,
        namespace: GLOBAL_FIELDS.namespace.default,
        monitoring: defaultsOf(MONITORING_OPTION_FIELDS),
        accessPolicy: { enabled: true },
    },
    local: {
        fillInterval: DEFAULTS.localFillInterval,
        rateLimitHeaders: GLOBAL_FIELDS.rateLimitHeaders.default,
        shadow: false,
        placement: "all-routes",
        serviceLabel: DEFAULTS.serviceLabel,
        port: BOOKINFO_PORT,
    },
    mesh: {
        namespace: DEFAULTS.meshNamespace,
        gatewaySelector: DEFAULTS.gatewaySelector,
        gatewayNamespace: DEFAULTS.gatewayNamespace,
        vhostScope: "gateway-hosts",
        filterNamespaces: "own",
        mutualTlsScope: "workloads",
        mutualTls: true,
    },
    bookinfo: {
        hosts: [DEFAULTS.gatewayHosts],
        namespace: DEFAULTS.workloadNamespace,
        gatewayName: DEFAULTS.gatewayName,
        gatewayPort: DEFAULTS.gatewayPort,
        virtualServiceName: DEFAULTS.virtualServiceName,
        gatewayHostScope: DEFAULTS.gatewayHostScope,
        mode: "deploy",
        version: DEFAULTS.bookinfoVersion,
    },
    managedApi: {
        enabled: true,
        portMode: DEFAULTS.espPortMode,
        ingressName: DEFAULTS.ingressName,
        ingressClassName: DEFAULTS.ingressClassName,
        ingressPath: DEFAULTS.ingressPath,
        espImage: DEFAULTS.espImage,
        echoImage: DEFAULTS.echoImage,
    },
    awaitRollout: DEFAULTS.awaitRollout,
} as const satisfies MeshRateLimitArgs;
