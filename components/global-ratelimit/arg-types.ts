/**
 * GlobalRateLimit's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { GLOBAL_ARG_INTERFACES } from "./fields";
import { ACCESS_LOG_ARG_INTERFACES } from "./gateway-access-log-fields";
import { MONITORING_ARG_INTERFACES } from "../service/ratelimit-monitoring-fields";
import { ACCESS_POLICY_ARG_INTERFACES } from "../service/access-policy-fields";
import { RULE_ARG_INTERFACES } from "../rules/rule-arg-interfaces";
import { REQUEST_COST_ARG_INTERFACES } from "../rules/request-cost-fields";
import { CLIENT_CIDR_ARG_INTERFACES } from "../rules/client-cidr-fields";
import { IDENTITY_ARG_INTERFACES } from "../rules/identity-fields";
import { GATEWAY_TARGET_ARG_INTERFACES } from "./gateway-target-fields";
import { REDIS_ARG_INTERFACES } from "../service/redis-fields";
import { CLIENT_PREFIX_ARG_INTERFACES } from "../rules/client-prefix-fields";

/** The tables of GlobalRateLimit's argument types. */
export const GLOBAL_ARG_TABLES: readonly ArgInterface[] = [
    ...GLOBAL_ARG_INTERFACES,
    ...ACCESS_LOG_ARG_INTERFACES,
    ...MONITORING_ARG_INTERFACES,
    ...ACCESS_POLICY_ARG_INTERFACES,
    ...RULE_ARG_INTERFACES,
    ...REQUEST_COST_ARG_INTERFACES,
    ...CLIENT_CIDR_ARG_INTERFACES,
    ...IDENTITY_ARG_INTERFACES,
    ...GATEWAY_TARGET_ARG_INTERFACES,
    ...REDIS_ARG_INTERFACES,
    ...CLIENT_PREFIX_ARG_INTERFACES,
];

/** Every field of each of GlobalRateLimit's argument types, by the type's name. */
export const GLOBAL_ARG_TYPES: ArgTypes = argTypesOf(GLOBAL_ARG_TABLES);
