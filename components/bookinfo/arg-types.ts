/**
 * Bookinfo's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { BOOKINFO_ARG_INTERFACES } from "./fields";
import { MESH_ROUTE_ARG_INTERFACES } from "../rules/mesh-route-fields";

/** The tables of Bookinfo's argument types. */
export const BOOKINFO_ARG_TABLES: readonly ArgInterface[] = [...BOOKINFO_ARG_INTERFACES, ...MESH_ROUTE_ARG_INTERFACES];

/** Every field of each of Bookinfo's argument types, by the type's name. */
export const BOOKINFO_ARG_TYPES: ArgTypes = argTypesOf(BOOKINFO_ARG_TABLES);
