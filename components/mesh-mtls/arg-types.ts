/**
 * MeshMutualTls's argument types for the unknown-field check: its own table of declarations and every
 * table its fields nest (tests/unit/arg-checks.test.ts holds that nothing reachable is missing).
 */
import { ArgInterface } from "../../lib/field-decl";
import { ArgTypes, argTypesOf } from "../../lib/unknown-fields";
import { MTLS_ARG_INTERFACES } from "./fields";

/** The tables of MeshMutualTls's argument types. */
export const MTLS_ARG_TABLES: readonly ArgInterface[] = [...MTLS_ARG_INTERFACES];

/** Every field of each of MeshMutualTls's argument types, by the type's name. */
export const MTLS_ARG_TYPES: ArgTypes = argTypesOf(MTLS_ARG_TABLES);
