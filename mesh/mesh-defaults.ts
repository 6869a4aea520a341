/**
 * The stack's defaults of the fields MeshRateLimit reads itself, in the shape of its arguments (the
 * fields it hands a component as given take that component's defaults).
 * Each value is stated once, in components/defaults.ts, a field's declaration (components/*-fields.ts)
 * or the const object of its choice; this
 * object places it under its field and is type-checked against the arguments. A field absent here
 * has no fixed default (the variant's preset, or derived from other fields). Pure.
 */
import { BOOKINFO_PORT } from "../builders/bookinfo";
import { DEFAULTS } from "../components/defaults";
import { GLOBAL_FIELDS } from "../components/global-ratelimit-fields";
import { BOOKINFO_ARGS_FIELDS, BOOKINFO_OPTIONS_FIELDS } from "../components/bookinfo-fields";
import { MANAGED_API_OPTIONS_FIELDS } from "../components/managed-api-fields";
import { LOCAL_BUCKET_FIELDS } from "../components/local-ratelimit-fields";
import { MONITORING_OPTION_FIELDS } from "../components/ratelimit-monitoring-fields";
import { defaultsOf } from "../lib/field-decl";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args";

const BOOKINFO = defaultsOf(BOOKINFO_OPTIONS_FIELDS);
// The managed API's namespace has no fixed default here: it is bookinfo's.
const { namespace: _bookinfos, ...MANAGED_API } = defaultsOf(MANAGED_API_OPTIONS_FIELDS);
/** Bookinfo's Gateway selector as one label `key=value`, as the stack's `gatewaySelector` takes it. */
const GATEWAY_SELECTOR = Object.entries(BOOKINFO_ARGS_FIELDS.gatewaySelector.default)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

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
        ...defaultsOf(LOCAL_BUCKET_FIELDS),
        placement: "all-routes",
        serviceLabel: BOOKINFO_ARGS_FIELDS.localStatsApp.default,
        port: BOOKINFO_PORT,
    },
    mesh: {
        namespace: DEFAULTS.meshNamespace,
        gatewaySelector: GATEWAY_SELECTOR,
        gatewayNamespace: DEFAULTS.gatewayNamespace,
        vhostScope: "gateway-hosts",
        filterNamespaces: "own",
        mutualTlsScope: "workloads",
        mutualTls: true,
    },
    bookinfo: { ...BOOKINFO, mode: "deploy" },
    managedApi: { enabled: true, ...MANAGED_API },
    awaitRollout: DEFAULTS.awaitRollout,
} as const satisfies MeshRateLimitArgs;
