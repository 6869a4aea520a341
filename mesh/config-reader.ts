/**
 * Reading MeshRateLimit's arguments key by key (`Reader`): each value as the checks read it, every
 * problem collected under its config key with a fix in every style; and the two JSON-valued keys,
 * the VirtualService's routes and the descriptor list. Pure.
 */
import { pipelineWindowProblems } from "../components/global-ratelimit-checks";
import { dnsNameProblem, isDnsName, suggestedDnsName } from "../lib/dns-names";
import { Fix, FixStyle } from "../lib/fix-style";
import { CONFIG_KEYS, ConfigKeySpec, configKeyOfField } from "./config-schema";

import type { HttpRoute } from "../builders/routes";
import { MAX_REQUESTS_PER_UNIT } from "../builders/rule-checks";
import { DEFAULT_PATH_KEY } from "../builders/rule-args";
import { GO_DURATION, UNSENDABLE_PATH, pathAsSent, protoDurationSeconds } from "../lib/formats";
import { Problem } from "../lib/problems";
import { LIST_KEYS, closestValue, problem } from "./config-problems";
import type { DescriptorLimit } from "./settings-types";
import { RATE_LIMIT_UNITS } from "./settings-types";

const DURATION_UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/**
 * Seconds of a duration written loosely (a bare number of seconds, or with `ms`, `s`, `m`, `h`; white
 * space ignored), to the 9 decimals a protobuf duration holds; undefined when it is not one.
 */
function secondsOfLoose(v: string): number | undefined {
    const m = /^(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)?$/.exec(v.replace(/\s+/g, ""));
    return m ? Number((Number(m[1]) * DURATION_UNIT_SECONDS[m[2] ?? "s"]).toFixed(9)) : undefined;
}

/**
 * MeshRateLimit's arguments by key (one per stack config key, mesh/mesh-ratelimit-args.ts): typed
 * values, or text (what a program passes as a string, or config text that `argsOfConfig` could not
 * convert), which the checks read the same way.
 */
export type ArgValues = Readonly<Record<string, unknown>>;

/** Reads MeshRateLimit's arguments, key by key, collecting every problem. */
export class Reader {
    readonly problems: Problem[] = [];
    constructor(private readonly values: ArgValues) {}

    /** An argument as the checks and messages read it: the config form of its value (a list comma-separated, JSON written out). */
    private text(key: string): string | undefined {
        const v = this.values[key];
        if (v === undefined || v === null) return undefined;
        if (LIST_KEYS.has(key) && Array.isArray(v)) return v.join(",");
        return (typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v)).trim();
    }

    spec(key: string): ConfigKeySpec {
        const s = CONFIG_KEYS.find((k) => k.key === key);
        if (!s) throw new Error(`internal: config key ${key} is not in CONFIG_KEYS`);
        return s;
    }

    /**
     * The user's value, or undefined when unset, empty or equal to the key's declared default. The
     * Pulumi CLI merges the defaults Pulumi.yaml declares into the config a program reads, so a
     * program cannot tell a declared default from a value the user set: a rule about a key the user
     * gave must not fire on its default.
     */
    given(key: string): string | undefined {
        const spec = this.spec(key);
        const v = this.text(key);
        return v === undefined || v === "" || v === spec.default ? undefined : v;
    }

    fail(key: string, value: string | undefined, text: string, fix: Fix): void {
        this.problems.push(problem(key, value, text, fix));
    }

    str(key: string): string {
        return this.given(key) ?? this.spec(key).default;
    }

    oneOf<T extends string>(key: string, allowed: readonly T[]): T {
        const v = this.str(key);
        if ((allowed as readonly string[]).includes(v)) return v as T;
        const def = this.spec(key).default;
        const near = closestValue(v, allowed, (allowed as readonly string[]).includes(def) ? def : allowed[0]);
        this.fail(key, v, `must be one of ${allowed.map((a) => `'${a}'`).join(", ")}`, (s) => s.set(key, near));
        return allowed[0];
    }

    /** `limit`: the max is the rate-limit service's (a 32-bit unsigned number); a value under the min reads as before it had one. */
    int(key: string, opts: { min: number; max?: number; fallback?: number; limit?: boolean }): number {
        const given = this.given(key);
        const text = given ?? this.spec(key).default;
        if (text === "") return opts.fallback ?? opts.min;
        const n = Number(text);
        const max = opts.max ?? Number.MAX_SAFE_INTEGER;
        if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n)) {
            // A number with a fraction: the nearest whole one. Not a number at all: the default.
            const def = /^\d+$/.test(this.spec(key).default) ? Number(this.spec(key).default) : (opts.fallback ?? opts.min);
            const near = Number.isFinite(n) && text.trim() !== "" ? Math.min(Math.max(Math.round(n), opts.min), max) : def;
            this.fail(key, text, "must be a whole number", (s) => s.set(key, String(near)));
            return opts.fallback ?? opts.min;
        }
        if (n < opts.min || n > max) {
            const range =
                opts.limit && n > max
                    ? `at most ${max}: the rate-limit service counts in a 32-bit unsigned number`
                    : opts.max === undefined || opts.limit
                      ? `at least ${opts.min}`
                      : `between ${opts.min} and ${max}`;
            this.fail(key, text, `must be ${range}`, (s) => s.set(key, String(Math.min(Math.max(n, opts.min), max))));
            return opts.fallback ?? opts.min;
        }
        return n;
    }

    bool(key: string): boolean {
        const v = this.str(key).toLowerCase();
        if (v === "true") return true;
        if (v === "false") return false;
        this.fail(key, this.str(key), "must be true or false", (s) =>
            s.set(key, ["yes", "y", "on", "1"].includes(v) ? "true" : ["no", "n", "off", "0"].includes(v) ? "false" : this.spec(key).default),
        );
        return this.spec(key).default === "true";
    }

    json<T>(key: string): T | undefined {
        const v = this.given(key);
        if (v === undefined) return undefined;
        // A typed value is taken as it is; text (config, or a program's string) is parsed.
        if (typeof this.values[key] !== "string") return this.values[key] as T;
        try {
            return JSON.parse(v) as T;
        } catch (e) {
            this.fail(
                key,
                v,
                `is not valid JSON (${(e as Error).message})`,
                (s) => `${s.set(key, "<json>")} (docs/configuration.md gives the shape), or ${s.rm(key)}`,
            );
            return undefined;
        }
    }

    path(key: string): string {
        const v = this.str(key);
        if (!v.startsWith("/") || /\s/.test(v)) {
            this.fail(key, v, "must be a URL path starting with '/' and without spaces", (s) => s.set(key, `/${v.replace(/^\/*/, "").replace(/\s+/g, "")}`));
        } else if (pathAsSent(v) !== v) this.fail(key, v, UNSENDABLE_PATH, (s) => s.set(key, pathAsSent(v)));
        return v;
    }

    dnsName(key: string, kind: "label" | "subdomain"): string {
        const v = this.str(key);
        if (!isDnsName(v, kind)) this.fail(key, v, dnsNameProblem(kind), (s) => s.set(key, suggestedDnsName(v, kind)));
        return v;
    }

    protoDuration(key: string, minSeconds: number): string {
        const v = this.str(key);
        const secs = protoDurationSeconds(v);
        if (secs === undefined) {
            // The same length in seconds when it reads as one (never below the minimum), else the default.
            const meant = secondsOfLoose(v);
            const text = meant === undefined ? undefined : `${Math.max(meant, minSeconds)}s`;
            const fix = text !== undefined && protoDurationSeconds(text) !== undefined ? text : this.spec(key).default;
            this.fail(key, v, "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')", (s) => s.set(key, fix));
        } else if (secs < minSeconds) {
            this.fail(key, v, `must be at least ${minSeconds}s`, (s) => s.set(key, `${minSeconds}s`));
        }
        return v;
    }

    goDuration(key: string): string {
        const v = this.str(key);
        const squeezed = v.replace(/\s+/g, "");
        this.byComponent(pipelineWindowProblems(v), v, (s) => s.set(key, squeezed !== v && GO_DURATION.test(squeezed) ? squeezed : this.spec(key).default));
        return v;
    }

    /**
     * A key checked by a component's own rule (its one message): each of the component's problems is
     * reported under the config key that sets its field (config-schema.ts CONFIG_KEY_OF_FIELD), with
     * the value as read and the fix phrased for config.
     */
    byComponent(problems: Problem[], value: string, fix: Fix): void {
        for (const p of problems) this.fail(configKeyOfField(p.key), value, p.problem, fix);
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
            r.fail(
                key,
                r.given(key),
                `${where} has requestsPerUnit ${d.requestsPerUnit}, more than the rate-limit service can count (a 32-bit unsigned number)`,
                `use at most ${MAX_REQUESTS_PER_UNIT}, or the same rate in a shorter unit`,
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
