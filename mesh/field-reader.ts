/**
 * Reading MeshRateLimit's arguments field by field (`Reader`, by typed path: `["global", "timeout"]`):
 * each value as given, typed, or its default (mesh-defaults.ts), checked by the rule its declaration
 * states (mesh-fields.ts); every problem collected under its field with a fix in every style; and the two list-shaped fields, the VirtualService's routes and the descriptor list.
 * A value of the wrong type (text where a number or a switch belongs) is a problem, never converted:
 * whoever reads the arguments from text (the program, from stack config) converts at its edge. Pure.
 */
import { bindCrossCheck } from "../lib/cross-checks";
import { MESH_ROUTE_CHECKS } from "../components/rules/mesh-route-fields";
import { Fix, FixStyle } from "../lib/fix-style";
import { MESH_DEFAULTS } from "./mesh-defaults";
import { meshDeclarationOf } from "./mesh-fields";

import type { HttpRoute } from "../builders/routes";
import { DEFAULT_PATH_KEY, LimitUnit } from "../builders/rule-args";
import { MAX_REQUESTS_PER_UNIT, overUint32Problem } from "../components/rules/rule-checks";
import type { DescriptorArgs } from "../components/common/mesh-enums";
import { Problem } from "../lib/problems";
import { ARGS_FIX, LIST_FIELDS, problem, underField } from "./arg-problems";
import { ArgPath, keyOf, valueAtPath } from "./arg-paths";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";
import { RATE_LIMIT_UNITS } from "./settings-types";

/** Reads MeshRateLimit's arguments, field by field, collecting every problem. */
export class Reader {
    readonly problems: Problem[] = [];
    constructor(private readonly args: MeshRateLimitArgs) {}

    /** The value at a field as given: undefined when not given, or given as empty text. */
    given(path: ArgPath): unknown {
        const v = valueAtPath(this.args, path);
        return typeof v === "string" && v.trim() === "" ? undefined : (v ?? undefined);
    }

    /** A given value as the messages show it: text as given, a list comma-separated, an object as JSON. */
    shown(path: ArgPath): string | undefined {
        const v = this.given(path);
        if (v === undefined) return undefined;
        if (LIST_FIELDS.has(keyOf(path)) && Array.isArray(v)) return v.join(",");
        return (typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v)).trim();
    }

    /** A field's default (mesh-defaults.ts), undefined when it has none fixed (the variant's, or derived). */
    fallback(path: ArgPath): unknown {
        return valueAtPath(MESH_DEFAULTS, path);
    }

    /** A field's default as the messages show it: "" when it has no fixed one. */
    fallbackText(path: ArgPath): string {
        const d = this.fallback(path);
        return d === undefined ? "" : Array.isArray(d) ? d.join(",") : String(d);
    }

    fail(path: ArgPath, value: unknown, text: string, fix: Fix): void {
        this.problems.push(problem(keyOf(path), value, text, fix));
    }

    /** Text as given (trimmed), or its default. */
    str(path: ArgPath): string {
        return this.shown(path) ?? this.fallbackText(path);
    }

    /** One of a choice's values as given (trimmed), or its default; a refused value is the default. */
    oneOf<T extends string>(path: ArgPath): T {
        const given = this.given(path);
        const v = given === undefined ? this.fallbackText(path) : typeof given === "string" ? given.trim() : given;
        return (this.declared(path, v) ? v : this.fallbackText(path)) as T;
    }

    /**
     * Whether `value` meets the rule declared for the field at `path` (mesh-fields.ts), its problems
     * added; the fix falls back to `fallback`, else the field's declared default.
     */
    declared(path: ArgPath, value: unknown, fallback?: unknown): boolean {
        const d = meshDeclarationOf(path);
        if (d === undefined) throw new Error(`internal: ${keyOf(path)} has no declaration`);
        const problems = d.rule.problems(keyOf(path), value, fallback ?? d.default);
        this.add(problems);
        return problems.length === 0;
    }

    /** Problems of a field's value (lib/field-checks.ts), their fixes phrased for the arguments until a reader of another input phrases them. */
    private add(problems: Problem[]): void {
        for (const p of problems) this.problems.push(p.fixWith ? { ...p, fix: p.fixWith(ARGS_FIX) } : p);
    }

    /**
     * A limit's requests per unit as given, or its default (else `fallback`): a whole number of at
     * least 1, and no more than the rate-limit service counts (its declared rule).
     */
    requestsPerUnit(path: ArgPath, fallback?: number): number {
        const def = this.fallback(path);
        const value = typeof def === "number" ? def : (fallback ?? 1);
        const given = this.given(path);
        if (given === undefined) return value;
        return this.declared(path, given, value) ? (given as number) : value;
    }

    /** A limit of `unit` whose requests per unit are the number at `path` (read as `requestsPerUnit` reads it). */
    limit(path: ArgPath, unit: LimitUnit, fallback?: number): Pick<DescriptorArgs, "unit" | "requestsPerUnit"> {
        return { unit, requestsPerUnit: this.requestsPerUnit(path, fallback) };
    }

    /** A boolean as given, or its default. */
    bool(path: ArgPath): boolean {
        const given = this.given(path);
        const fallback = this.fallback(path) === true;
        if (given === undefined) return fallback;
        return this.declared(path, given, fallback) ? (given as boolean) : fallback;
    }

    /** A URL path as given (trimmed), or its default; checked either way. */
    path(path: ArgPath): string {
        const v = this.str(path);
        this.declared(path, v);
        return v;
    }

    /** A DNS name as given (trimmed), or its default; checked either way. */
    dnsName(path: ArgPath): string {
        const v = this.str(path);
        this.declared(path, v);
        return v;
    }

    /**
     * A component's problems on its own arguments (its one message each), reported under the field of
     * MeshRateLimit's arguments that holds them (`prefix` + the component's field path), with the value
     * as given and the component's fix.
     */
    byComponent(prefix: ArgPath, problems: Problem[]): void {
        for (const p of problems) this.problems.push(underField(`${keyOf(prefix)}.`, p));
    }
}

// ---------------------------------------------------------------------------------------------
// The list-valued fields

/** The descriptor list as the stack's JSON gives it: a named path's limit, then the catch-all (every path its own counter). */
export const DESCRIPTOR_LIST_EXAMPLE = JSON.stringify([
    { key: DEFAULT_PATH_KEY, value: MESH_DEFAULTS.paths.limited, unit: MESH_DEFAULTS.limits.unit, requestsPerUnit: MESH_DEFAULTS.limits.limitedPath },
    { key: DEFAULT_PATH_KEY, unit: MESH_DEFAULTS.limits.unit, requestsPerUnit: MESH_DEFAULTS.limits.catchAll },
]);

/** The routes as the stack's JSON gives them: the default paths' routes, the api route by its default name. */
const ROUTE_LIST_EXAMPLE = JSON.stringify([
    { exact: [MESH_DEFAULTS.paths.page], prefix: [MESH_DEFAULTS.paths.staticPrefix] },
    { name: MESH_DEFAULTS.limits.apiRoute, prefix: [MESH_DEFAULTS.paths.apiPrefix] },
]);

/** A list field as given: undefined when not given, or (a problem reported) when it is no non-empty list. */
function givenList(r: Reader, path: ArgPath, what: string, example: string): { list?: unknown[]; fix: (s: FixStyle) => string } {
    const fix = (s: FixStyle) => s.set(keyOf(path), example);
    const given = r.given(path);
    if (given === undefined) return { fix };
    if (Array.isArray(given) && given.length > 0) return { list: given, fix };
    r.fail(path, r.shown(path), `must be a non-empty JSON list of ${what}`, fix);
    return { fix };
}

export function readRoutes(r: Reader, path: ArgPath, fallback: HttpRoute[]): HttpRoute[] {
    const { list: parsed, fix: shapeFix } = givenList(r, path, "routes", ROUTE_LIST_EXAMPLE);
    if (!parsed) return fallback;
    const routes: HttpRoute[] = [];
    const names = new Set<string>();
    parsed.forEach((e: any, i: number) => {
        const exact = e?.exact ?? [];
        const prefix = e?.prefix ?? [];
        const okList = (l: unknown) => Array.isArray(l) && l.every((s) => typeof s === "string" && s.startsWith("/"));
        if (typeof e !== "object" || e === null || !okList(exact) || !okList(prefix) || exact.length + prefix.length === 0) {
            r.fail(path, r.shown(path), `route #${i + 1} needs 'exact' and/or 'prefix': non-empty lists of paths starting with '/'`, shapeFix);
            return;
        }
        if (e.name !== undefined && (typeof e.name !== "string" || !e.name)) {
            r.fail(path, r.shown(path), `route #${i + 1} has an invalid 'name'`, shapeFix);
            return;
        }
        if (e.name && names.has(e.name)) {
            r.fail(path, r.shown(path), `route name '${e.name}' appears twice`, "give every route a distinct name");
        }
        if (e.name) names.add(e.name);
        routes.push({ name: e.name, exact, prefix });
    });
    return routes.length ? routes : fallback;
}

export function readDescriptors(r: Reader, path: ArgPath, fallback: DescriptorArgs[]): DescriptorArgs[] {
    const { list: parsed, fix: example } = givenList(r, path, "descriptors", DESCRIPTOR_LIST_EXAMPLE);
    if (!parsed) return fallback;
    const out: DescriptorArgs[] = [];
    const seen = new Set<string>();
    parsed.forEach((d: any, i: number) => {
        const where = `descriptor #${i + 1}`;
        if (typeof d !== "object" || d === null) {
            r.fail(path, r.shown(path), `${where} is not an object`, example);
            return;
        }
        const extra = Object.keys(d).filter((k) => !["key", "value", "unit", "requestsPerUnit"].includes(k));
        if (extra.length) {
            r.fail(path, r.shown(path), `${where} has unknown field(s) ${extra.join(", ")}`, "allowed fields: key, value, unit, requestsPerUnit");
        }
        if (typeof d.key !== "string" || d.key === "") {
            r.fail(path, r.shown(path), `${where} has an empty or missing 'key'`, `set "key":"${DEFAULT_PATH_KEY}"`);
            return;
        }
        if (d.key !== DEFAULT_PATH_KEY) {
            r.fail(
                path,
                r.shown(path),
                `${where} uses key '${d.key}', but the gateway filters only send '${DEFAULT_PATH_KEY}': it would never match`,
                `set "key":"${DEFAULT_PATH_KEY}"`,
            );
        }
        if (d.value !== undefined && (typeof d.value !== "string" || d.value === "")) {
            r.fail(path, r.shown(path), `${where} has an empty or non-string 'value'`, "omit 'value' for the catch-all, or give a non-empty string");
        }
        if (!RATE_LIMIT_UNITS.includes(d.unit)) {
            r.fail(path, r.shown(path), `${where} has unit ${JSON.stringify(d.unit)}`, `use one of ${RATE_LIMIT_UNITS.join(", ")}`);
        }
        if (!Number.isSafeInteger(d.requestsPerUnit) || d.requestsPerUnit < 1) {
            r.fail(path, r.shown(path), `${where} has requestsPerUnit ${JSON.stringify(d.requestsPerUnit)}`, "use a whole number of at least 1");
        } else if (d.requestsPerUnit > MAX_REQUESTS_PER_UNIT) {
            // The rules' own statement of the bound; the fix names the entry, not the whole list.
            r.fail(
                path,
                r.shown(path),
                `${where} has requestsPerUnit ${d.requestsPerUnit}, which ${overUint32Problem("requestsPerUnit", d.requestsPerUnit).problem}`,
                `give it at most ${MAX_REQUESTS_PER_UNIT}, or the same rate in a shorter unit`,
            );
        }
        const id = `${d.key}=${d.value ?? "*"}`;
        if (seen.has(id)) {
            r.fail(
                path,
                r.shown(path),
                `${where} duplicates ${d.value === undefined ? `the catch-all for '${d.key}'` : `'${id}'`}; the rate-limit service rejects duplicate descriptors`,
                "remove one of the two entries",
            );
        }
        seen.add(id);
        out.push({ key: d.key, value: d.value, unit: d.unit, requestsPerUnit: d.requestsPerUnit });
    });
    return out;
}

/** A text field as given (trimmed), or its default when not given or empty: an empty text is read as not given, as before. */
export function textOr(given: unknown, fallback: string): string {
    const v = given === undefined || given === null ? "" : String(given).trim();
    return v === "" ? fallback : v;
}

/** The descriptors' cross-field check (components/rules/mesh-route-fields.ts). */
bindCrossCheck(MESH_ROUTE_CHECKS.descriptors, "mesh/field-reader.ts readDescriptors", readDescriptors);
