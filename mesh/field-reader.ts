/**
 * Reading MeshRateLimit's arguments field by field (`Reader`, by path: `global.timeout`): each value
 * as the checks read it, every problem collected under its field with a fix in every style; and the
 * two JSON-shaped fields, the VirtualService's routes and the descriptor list. Pure.
 */
import { Fix, FixStyle } from "../lib/fix-style";
import { MESH_DEFAULTS } from "./mesh-defaults";

import type { HttpRoute } from "../builders/routes";
import { DEFAULT_PATH_KEY } from "../builders/rule-args";
import { MAX_REQUESTS_PER_UNIT, overUint32Problem } from "../builders/rule-checks";
import { booleanProblems, dnsNameProblems, oneOfProblems, wholeNumberProblems } from "../lib/field-checks";
import { UNSENDABLE_PATH, pathAsSent } from "../lib/formats";
import { Problem } from "../lib/problems";
import { ARGS_FIX, LIST_FIELDS, problem, underField } from "./arg-problems";
import type { DescriptorLimit } from "./settings-types";
import { RATE_LIMIT_UNITS } from "./settings-types";

/** MeshRateLimit's arguments as given: nested objects, each field typed, or text a program passed where a type was expected. */
export type ArgValues = Readonly<Record<string, unknown>>;

/** The value at a field path (`global.service.replicas`), or undefined when any part is absent. */
export function valueAt(values: ArgValues, field: string): unknown {
    let v: unknown = values;
    for (const part of field.split(".")) {
        if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
        v = (v as Record<string, unknown>)[part];
    }
    return v;
}

/** Reads MeshRateLimit's arguments, field by field, collecting every problem. */
export class Reader {
    readonly problems: Problem[] = [];
    constructor(private readonly values: ArgValues) {}

    /** The value at a field, typed as given. */
    value(field: string): unknown {
        return valueAt(this.values, field);
    }

    /** A field's value as the messages show it: text as given, a list comma-separated, a number or boolean written out. */
    private text(field: string): string | undefined {
        const v = this.value(field);
        if (v === undefined || v === null) return undefined;
        if (LIST_FIELDS.has(field) && Array.isArray(v)) return v.join(",");
        return (typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v)).trim();
    }

    /** A field's default (mesh-defaults.ts) as the messages show it: "" when it has no fixed one. */
    spec(field: string): { default: string } {
        const d = valueAt(MESH_DEFAULTS, field);
        return { default: d === undefined ? "" : Array.isArray(d) ? d.join(",") : String(d) };
    }

    /**
     * The value given, as text, or undefined when not given (`undefined`) or empty. A value equal to
     * the default is a value given: telling a Pulumi.yaml default from a user's value is the program's
     * task, at its edge (program/config-args.ts).
     */
    given(field: string): string | undefined {
        const v = this.text(field);
        return v === undefined || v === "" ? undefined : v;
    }

    /** A field a component checks, as given, or its default (typed by its kind): MeshRateLimit reads it without checking it. */
    raw<T>(field: string): T {
        return (this.value(field) ?? valueAt(MESH_DEFAULTS, field)) as T;
    }

    fail(field: string, value: string | undefined, text: string, fix: Fix): void {
        this.problems.push(problem(field, value, text, fix));
    }

    str(field: string): string {
        return this.given(field) ?? this.spec(field).default;
    }

    oneOf<T extends string>(field: string, allowed: readonly T[]): T {
        const v = this.str(field);
        const problems = oneOfProblems(field, v, allowed, this.spec(field).default);
        this.add(problems);
        return problems.length ? allowed[0] : (v as T);
    }

    /** Problems of a field's value (lib/field-checks.ts), their fixes phrased for the arguments until a reader of another input phrases them. */
    private add(problems: Problem[]): void {
        for (const p of problems) this.problems.push(p.fixWith ? { ...p, fix: p.fixWith(ARGS_FIX) } : p);
    }

    /**
     * A whole number: a number as given, or text that spells one. `limit`: the max is the rate-limit
     * service's (a 32-bit unsigned number); a value under the min reads as before it had one.
     */
    int(field: string, opts: { min: number; max?: number; fallback?: number; overMax?: (n: number) => Problem }): number {
        const v = this.value(field);
        const given = typeof v === "number" ? v : this.given(field);
        const text = given === undefined ? this.spec(field).default : String(given);
        if (text === "") return opts.fallback ?? opts.min;
        const def = /^\d+$/.test(this.spec(field).default) ? Number(this.spec(field).default) : (opts.fallback ?? opts.min);
        const problems = wholeNumberProblems(field, typeof given === "number" ? given : text, { ...opts, fallback: def, text: true });
        this.add(problems.map((p) => ({ ...p, value: text })));
        return problems.length ? (opts.fallback ?? opts.min) : Number(text);
    }

    /**
     * A limit's requests per unit: a whole number of at least 1 (read as `int` reads one), and no more
     * than the rate-limit service counts (the rules' own statement, builders/rule-checks.ts).
     */
    requestsPerUnit(field: string, fallback?: number): number {
        // The bound bounds the fix of a value that is no whole number too (5e9 proposes 4294967295).
        const overMax = (n: number) => overUint32Problem(field, n);
        return this.int(field, { min: 1, max: MAX_REQUESTS_PER_UNIT, overMax, ...(fallback !== undefined ? { fallback } : {}) });
    }

    /** A boolean as given, or text that spells one in any case. */
    bool(field: string): boolean {
        const given = this.value(field);
        if (typeof given === "boolean") return given;
        const v = this.str(field);
        const problems = booleanProblems(field, v, this.spec(field).default === "true", true);
        this.add(problems);
        return problems.length ? this.spec(field).default === "true" : v.toLowerCase() === "true";
    }

    json<T>(field: string): T | undefined {
        const v = this.given(field);
        if (v === undefined) return undefined;
        // A typed value is taken as it is; text (a program's string) is parsed.
        if (typeof this.value(field) !== "string") return this.value(field) as T;
        try {
            return JSON.parse(v) as T;
        } catch (e) {
            this.fail(
                field,
                v,
                `is not valid JSON (${(e as Error).message})`,
                (s) => `${s.set(field, "<json>")} (docs/configuration.md gives the shape), or ${s.rm(field)}`,
            );
            return undefined;
        }
    }

    path(field: string): string {
        const v = this.str(field);
        if (!v.startsWith("/") || /\s/.test(v)) {
            this.fail(field, v, "must be a URL path starting with '/' and without spaces", (s) =>
                s.set(field, `/${v.replace(/^\/*/, "").replace(/\s+/g, "")}`),
            );
        } else if (pathAsSent(v) !== v) this.fail(field, v, UNSENDABLE_PATH, (s) => s.set(field, pathAsSent(v)));
        return v;
    }

    dnsName(field: string, kind: "label" | "subdomain"): string {
        const v = this.str(field);
        this.add(dnsNameProblems(field, v, kind));
        return v;
    }

    /**
     * A component's problems on its own arguments (its one message each), reported under the field of
     * MeshRateLimit's arguments that holds them (`prefix` + the component's field path), with the value
     * as given and the component's fix.
     */
    byComponent(prefix: string, problems: Problem[]): void {
        for (const p of problems) this.problems.push(underField(prefix, p));
    }
}

// ---------------------------------------------------------------------------------------------
// The JSON-valued keys

export function readRoutes(r: Reader, key: string, fallback: HttpRoute[]): HttpRoute[] {
    const parsed = r.json<unknown>(key);
    if (parsed === undefined) return fallback;
    const shapeFix = (s: FixStyle) => s.set(key, '[{"exact":["/productpage"],"prefix":["/static"]},{"name":"api","prefix":["/api/v1/products"]}]');
    if (!Array.isArray(parsed) || parsed.length === 0) {
        r.fail(key, r.given(key), "must be a non-empty JSON list of routes", shapeFix);
        return fallback;
    }
    const routes: HttpRoute[] = [];
    const names = new Set<string>();
    parsed.forEach((e: any, i: number) => {
        const exact = e?.exact ?? [];
        const prefix = e?.prefix ?? [];
        const okList = (l: unknown) => Array.isArray(l) && l.every((s) => typeof s === "string" && s.startsWith("/"));
        if (typeof e !== "object" || e === null || !okList(exact) || !okList(prefix) || exact.length + prefix.length === 0) {
            r.fail(key, r.given(key), `route #${i + 1} needs 'exact' and/or 'prefix': non-empty lists of paths starting with '/'`, shapeFix);
            return;
        }
        if (e.name !== undefined && (typeof e.name !== "string" || !e.name)) {
            r.fail(key, r.given(key), `route #${i + 1} has an invalid 'name'`, shapeFix);
            return;
        }
        if (e.name && names.has(e.name)) {
            r.fail(key, r.given(key), `route name '${e.name}' appears twice`, "give every route a distinct name");
        }
        if (e.name) names.add(e.name);
        routes.push({ name: e.name, exact, prefix });
    });
    return routes.length ? routes : fallback;
}

export function readDescriptors(r: Reader, key: string, fallback: DescriptorLimit[]): DescriptorLimit[] {
    const parsed = r.json<unknown>(key);
    if (parsed === undefined) return fallback;
    const example = (s: FixStyle) =>
        s.set(key, '[{"key":"PATH","value":"/productpage","unit":"minute","requestsPerUnit":1},{"key":"PATH","unit":"minute","requestsPerUnit":100}]');
    if (!Array.isArray(parsed) || parsed.length === 0) {
        r.fail(key, r.given(key), "must be a non-empty JSON list of descriptors", example);
        return fallback;
    }
    const out: DescriptorLimit[] = [];
    const seen = new Set<string>();
    parsed.forEach((d: any, i: number) => {
        const where = `descriptor #${i + 1}`;
        if (typeof d !== "object" || d === null) {
            r.fail(key, r.given(key), `${where} is not an object`, example);
            return;
        }
        const extra = Object.keys(d).filter((k) => !["key", "value", "unit", "requestsPerUnit"].includes(k));
        if (extra.length) {
            r.fail(key, r.given(key), `${where} has unknown field(s) ${extra.join(", ")}`, "allowed fields: key, value, unit, requestsPerUnit");
        }
        if (typeof d.key !== "string" || d.key === "") {
            r.fail(key, r.given(key), `${where} has an empty or missing 'key'`, `set "key":"${DEFAULT_PATH_KEY}"`);
            return;
        }
        if (d.key !== DEFAULT_PATH_KEY) {
            r.fail(
                key,
                r.given(key),
                `${where} uses key '${d.key}', but the gateway filters only send '${DEFAULT_PATH_KEY}': it would never match`,
                `set "key":"${DEFAULT_PATH_KEY}"`,
            );
        }
        if (d.value !== undefined && (typeof d.value !== "string" || d.value === "")) {
            r.fail(key, r.given(key), `${where} has an empty or non-string 'value'`, "omit 'value' for the catch-all, or give a non-empty string");
        }
        if (!RATE_LIMIT_UNITS.includes(d.unit)) {
            r.fail(key, r.given(key), `${where} has unit ${JSON.stringify(d.unit)}`, `use one of ${RATE_LIMIT_UNITS.join(", ")}`);
        }
        if (!Number.isSafeInteger(d.requestsPerUnit) || d.requestsPerUnit < 1) {
            r.fail(key, r.given(key), `${where} has requestsPerUnit ${JSON.stringify(d.requestsPerUnit)}`, "use a whole number of at least 1");
        } else if (d.requestsPerUnit > MAX_REQUESTS_PER_UNIT) {
            // The rules' own statement of the bound; the fix names the entry, not the whole list.
            r.fail(
                key,
                r.given(key),
                `${where} has requestsPerUnit ${d.requestsPerUnit}, which ${overUint32Problem("requestsPerUnit", d.requestsPerUnit).problem}`,
                `give it at most ${MAX_REQUESTS_PER_UNIT}, or the same rate in a shorter unit`,
            );
        }
        const id = `${d.key}=${d.value ?? "*"}`;
        if (seen.has(id)) {
            r.fail(
                key,
                r.given(key),
                `${where} duplicates ${d.value === undefined ? `the catch-all for '${d.key}'` : `'${id}'`}; the rate-limit service rejects duplicate descriptors`,
                "remove one of the two entries",
            );
        }
        seen.add(id);
        out.push({ key: d.key, value: d.value, unit: d.unit, requestsPerUnit: d.requestsPerUnit });
    });
    return out;
}
