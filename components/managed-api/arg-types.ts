/**
 * ManagedApi's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { MANAGED_API_ARG_INTERFACES } from "./fields";

/** The tables of ManagedApi's argument types. */
export const MANAGED_API_ARG_TABLES: readonly ArgInterface[] = [...MANAGED_API_ARG_INTERFACES];

/** Every field of each of ManagedApi's argument types, by the type's name. */
export const MANAGED_API_ARG_TYPES: ArgTypes = argTypesOf(MANAGED_API_ARG_TABLES);
