/**
 * Every argument type of the components, read at run time from the tables they are declared by
 * (components/*-fields.ts), and the unknown-field check of a component's arguments against them
 * (lib/unknown-fields.ts). MeshRateLimit adds its own tables (mesh/mesh-arg-interfaces.ts).
 */
import { ArgInterface } from "../lib/field-decl";
import { ArgTypes, argTypesOf, unknownFields } from "../lib/unknown-fields";
import { Problem } from "../lib/problems";
import { ACCESS_POLICY_ARG_INTERFACES } from "./access-policy-fields";
import { BOOKINFO_ARG_INTERFACES } from "./bookinfo-fields";
import { CLIENT_CIDR_ARG_INTERFACES } from "./client-cidr-fields";
import { CLIENT_PREFIX_ARG_INTERFACES } from "./client-prefix-fields";
import { ACCESS_LOG_ARG_INTERFACES } from "./gateway-access-log-fields";
import { GATEWAY_TARGET_ARG_INTERFACES } from "./gateway-target-fields";
import { GLOBAL_ARG_INTERFACES } from "./global-ratelimit-fields";
import { IDENTITY_ARG_INTERFACES } from "./identity-fields";
import { LOCAL_ARG_INTERFACES } from "./local-ratelimit-fields";
import { MANAGED_API_ARG_INTERFACES } from "./managed-api-fields";
import { MESH_ROUTE_ARG_INTERFACES } from "./mesh-route-fields";
import { MTLS_ARG_INTERFACES } from "./mesh-mtls-fields";
import { PLATFORM_ARG_INTERFACES } from "./platform-ratelimit-fields";
import { MONITORING_ARG_INTERFACES } from "./ratelimit-monitoring-fields";
import { REDIS_ARG_INTERFACES } from "./redis-fields";
import { REQUEST_COST_ARG_INTERFACES } from "./request-cost-fields";
import { RULE_ARG_INTERFACES } from "./rule-arg-interfaces";

/** The components' argument interfaces, every table of them. */
export const COMPONENT_ARG_INTERFACES: readonly ArgInterface[] = [
    ...GLOBAL_ARG_INTERFACES,
    ...PLATFORM_ARG_INTERFACES,
    ...BOOKINFO_ARG_INTERFACES,
    ...MANAGED_API_ARG_INTERFACES,
    ...LOCAL_ARG_INTERFACES,
    ...MTLS_ARG_INTERFACES,
    ...REDIS_ARG_INTERFACES,
    ...MONITORING_ARG_INTERFACES,
    ...ACCESS_POLICY_ARG_INTERFACES,
    ...CLIENT_PREFIX_ARG_INTERFACES,
    ...RULE_ARG_INTERFACES,
    ...MESH_ROUTE_ARG_INTERFACES,
    ...GATEWAY_TARGET_ARG_INTERFACES,
    ...ACCESS_LOG_ARG_INTERFACES,
    ...CLIENT_CIDR_ARG_INTERFACES,
    ...IDENTITY_ARG_INTERFACES,
    ...REQUEST_COST_ARG_INTERFACES,
];

/** Every field of each of the components' argument types, by the type's name. */
export const COMPONENT_ARG_TYPES: ArgTypes = argTypesOf(COMPONENT_ARG_INTERFACES);

/** The components whose arguments are one of these types, `<Component>Args`. */
export type ComponentName = "GlobalRateLimit" | "PlatformRateLimit" | "LocalRateLimit" | "Bookinfo" | "ManagedApi" | "MeshMutualTls";

/**
 * Every argument and nested field of `args` that `component` does not know, each with the closest
 * known name: a program without a type checker (Python, YAML, JavaScript) would otherwise have a
 * misspelt field ignored, or a misspelt rule field widen the rule to every request.
 */
export function unknownFieldProblems(component: ComponentName, args: unknown): Problem[] {
    return unknownFields(COMPONENT_ARG_TYPES, `${component}Args`, `an argument of ${component}`, args);
}
