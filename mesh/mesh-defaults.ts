/**
 * The stack's defaults of the fields MeshRateLimit reads itself, in the shape of its arguments (the
 * fields it hands a component as given take that component's defaults).
 * Each value is stated once: MeshRateLimit's own fields' in their declarations (mesh-fields.ts,
 * `defaultsOf`), a component's field's in components/common/defaults.ts or the component's declarations;
 * this object places it under its field and is type-checked against the arguments. A field absent
 * here has no fixed default (the variant's preset, or derived from other fields). Pure.
 */
import { GLOBAL_FIELDS } from "../components/global-ratelimit/fields";
import { BOOKINFO_OPTIONS_FIELDS } from "../components/bookinfo/fields";
import { MANAGED_API_OPTIONS_FIELDS } from "../components/managed-api/fields";
import { LOCAL_BUCKET_FIELDS } from "../components/local-ratelimit/fields";
import { MONITORING_OPTION_FIELDS } from "../components/service/ratelimit-monitoring-fields";
import { defaultsOf } from "../lib/field-decl";
import {
    MESH_ACCESS_FIELDS,
    MESH_BOOKINFO_FIELDS,
    MESH_LIMITS_FIELDS,
    MESH_LOCAL_FIELDS,
    MESH_MANAGED_API_FIELDS,
    MESH_PATHS_FIELDS,
    MESH_PLACEMENT_FIELDS,
    MESH_TOP_FIELDS,
} from "./mesh-fields";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";

const BOOKINFO = defaultsOf(BOOKINFO_OPTIONS_FIELDS);
// The managed API's namespace has no fixed default here: it is bookinfo's.
const { namespace: _bookinfos, ...MANAGED_API } = defaultsOf(MANAGED_API_OPTIONS_FIELDS);

export const MESH_DEFAULTS = {
    ...defaultsOf(MESH_TOP_FIELDS),
    paths: defaultsOf(MESH_PATHS_FIELDS),
    limits: defaultsOf(MESH_LIMITS_FIELDS),
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
        accessPolicy: defaultsOf(MESH_ACCESS_FIELDS),
    },
    local: { ...defaultsOf(LOCAL_BUCKET_FIELDS), ...defaultsOf(MESH_LOCAL_FIELDS) },
    mesh: defaultsOf(MESH_PLACEMENT_FIELDS),
    bookinfo: { ...BOOKINFO, ...defaultsOf(MESH_BOOKINFO_FIELDS) },
    managedApi: { ...defaultsOf(MESH_MANAGED_API_FIELDS), ...MANAGED_API },
} as const satisfies MeshRateLimitArgs;
