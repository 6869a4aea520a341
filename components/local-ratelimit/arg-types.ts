/**
 * LocalRateLimit's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { LOCAL_ARG_INTERFACES } from "./fields";

/** The tables of LocalRateLimit's argument types. */
export const LOCAL_ARG_TABLES: readonly ArgInterface[] = [...LOCAL_ARG_INTERFACES];

/** Every field of each of LocalRateLimit's argument types, by the type's name. */
export const LOCAL_ARG_TYPES: ArgTypes = argTypesOf(LOCAL_ARG_TABLES);
