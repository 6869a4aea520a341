/**
 * Every argument type of the package's components together: the union of each component's own
 * tables (its folder's arg-types.ts), which MeshRateLimit's plan extends with its own tables
 * (mesh/mesh-arg-interfaces.ts) and the schema tests compare with plugin/schema.json.
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { Problem } from "../../lib/problems";
import { componentFieldProblems } from "../common/arg-checks";
import { BOOKINFO_ARG_TABLES } from "../bookinfo/arg-types";
import { GLOBAL_ARG_TABLES } from "../global-ratelimit/arg-types";
import { LOCAL_ARG_TABLES } from "../local-ratelimit/arg-types";
import { MANAGED_API_ARG_TABLES } from "../managed-api/arg-types";
import { MTLS_ARG_TABLES } from "../mesh-mtls/arg-types";
import { PLATFORM_ARG_TABLES } from "../platform-ratelimit/arg-types";

/** The components' argument interfaces, every table of them, each once. */
export const COMPONENT_ARG_INTERFACES: readonly ArgInterface[] = [
    ...new Set([...GLOBAL_ARG_TABLES, ...PLATFORM_ARG_TABLES, ...BOOKINFO_ARG_TABLES, ...MANAGED_API_ARG_TABLES, ...LOCAL_ARG_TABLES, ...MTLS_ARG_TABLES]),
];

/** Every field of each of the components' argument types, by the type's name. */
export const COMPONENT_ARG_TYPES: ArgTypes = argTypesOf(COMPONENT_ARG_INTERFACES);

/** The components whose arguments are one of these types, `<Component>Args`. */
export type ComponentName = "GlobalRateLimit" | "PlatformRateLimit" | "LocalRateLimit" | "Bookinfo" | "ManagedApi" | "MeshMutualTls";

/** The tables of each component's own check (its folder's arg-types.ts). */
export const ARG_TABLES_OF: Readonly<Record<ComponentName, readonly ArgInterface[]>> = {
    GlobalRateLimit: GLOBAL_ARG_TABLES,
    PlatformRateLimit: PLATFORM_ARG_TABLES,
    LocalRateLimit: LOCAL_ARG_TABLES,
    Bookinfo: BOOKINFO_ARG_TABLES,
    ManagedApi: MANAGED_API_ARG_TABLES,
    MeshMutualTls: MTLS_ARG_TABLES,
};

/** `component`'s unknown fields, checked against every component's types (what its own check must match). */
export function unknownFieldProblems(component: ComponentName, args: unknown): Problem[] {
    return componentFieldProblems(COMPONENT_ARG_TYPES, component, args);
}
