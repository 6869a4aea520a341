/**
 * PlatformRateLimit's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { PLATFORM_ARG_INTERFACES } from "./fields";
import { GLOBAL_ARG_TABLES } from "../global-ratelimit/arg-types";

/** The tables of PlatformRateLimit's argument types. */
export const PLATFORM_ARG_TABLES: readonly ArgInterface[] = [...PLATFORM_ARG_INTERFACES, ...GLOBAL_ARG_TABLES];

/** Every field of each of PlatformRateLimit's argument types, by the type's name. */
export const PLATFORM_ARG_TYPES: ArgTypes = argTypesOf(PLATFORM_ARG_TABLES);
