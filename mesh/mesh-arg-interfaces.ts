/**
 * MeshRateLimit's argument interfaces as tables of declarations (mesh-fields.ts), in the order
 * mesh/mesh-ratelimit-args.generated.ts states them, and what that generated file imports. A group extends
 * the options of the component it is for: the component declares those fields. Data only.
 */
import { ArgInterface } from "../lib/field-decl";
import {
    MESH_ACCESS_FIELDS,
    MESH_BOOKINFO_FIELDS,
    MESH_GLOBAL_FIELDS,
    MESH_LIMITS_FIELDS,
    MESH_LOCAL_FIELDS,
    MESH_MANAGED_API_FIELDS,
    MESH_PATHS_FIELDS,
    MESH_PLACEMENT_FIELDS,
    MESH_TOP_FIELDS,
} from "./mesh-fields";

/** What mesh/mesh-ratelimit-args.generated.ts imports, by module. */
export const MESH_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "../components/common/mesh-enums": [
        "ApiProfileName",
        "BookinfoMode",
        "DescriptorArgs",
        "FilterNamespaces",
        "LocalPlacementMode",
        "MeshMode",
        "MutualTlsScope",
        "StackVariant",
        "VirtualHostScope",
    ],
    "../components/global-ratelimit/args.generated": ["GlobalRateLimitOptions"],
    "../components/bookinfo/args.generated": ["BookinfoOptions"],
    "../components/local-ratelimit/component": ["LocalBucketOptions"],
    "../components/managed-api/args.generated": ["ManagedApiOptions"],
    "../components/service/ratelimit-monitoring": ["MonitoringOptionsArgs"],
    "../builders/rule-args": ["LimitUnit"],
};

/** MeshRateLimit's argument interfaces, in the file's order; a group extends the options of the component it is for. */
export const MESH_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "MeshRateLimitArgs",
        doc: "The whole specified stack (docs/specification.md), its arguments grouped by the component each is for. Every field is optional; the defaults are the stack's.",
        fields: MESH_TOP_FIELDS,
    },
    { name: "MeshPathsArgs", doc: MESH_TOP_FIELDS.paths.doc, fields: MESH_PATHS_FIELDS },
    { name: "MeshLimitsArgs", doc: MESH_TOP_FIELDS.limits.doc, fields: MESH_LIMITS_FIELDS },
    { name: "MeshPlacementArgs", doc: MESH_TOP_FIELDS.mesh.doc, fields: MESH_PLACEMENT_FIELDS },
    {
        name: "MeshGlobalArgs",
        doc: "The global limits' service and gateway filter: GlobalRateLimit's arguments, by GlobalRateLimit's names, with the stack's defaults.",
        extends: "GlobalRateLimitOptions",
        fields: MESH_GLOBAL_FIELDS,
    },
    { name: "MeshAccessPolicyArgs", doc: MESH_GLOBAL_FIELDS.accessPolicy.doc, fields: MESH_ACCESS_FIELDS },
    { name: "MeshLocalArgs", doc: MESH_TOP_FIELDS.local.doc, extends: "LocalBucketOptions", fields: MESH_LOCAL_FIELDS },
    {
        name: "MeshBookinfoArgs",
        doc: "The bookinfo sample the limits protect: Bookinfo's arguments, and whether to deploy it.",
        extends: "BookinfoOptions",
        fields: MESH_BOOKINFO_FIELDS,
    },
    { name: "MeshManagedApiArgs", doc: MESH_TOP_FIELDS.managedApi.doc, extends: "ManagedApiOptions", fields: MESH_MANAGED_API_FIELDS },
];
