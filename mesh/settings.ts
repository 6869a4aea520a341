/**
 * Stack config → one validated, fully-defaulted settings object.
 *
 * Pure: no Pulumi runtime, no I/O. `resolveSettings` collects *every* problem before failing, so a
 * user fixes their config in one round; the error names the key, the value and the fix.
 */
import { DEFAULTS } from "../components/defaults";
import { CONFIG_KEYS, ConfigKeySpec, configKeyOfField } from "./config-schema";
import { domainProblems, grpcPortProblems, pipelineWindowProblems } from "../components/global-ratelimit-checks";
import { readRedisConnection } from "./redis-settings";
import { DEFAULT_GATEWAY_PRINCIPAL, PRINCIPAL_PROBLEM, parsePrincipal, principalOf, suggestedPrincipal } from "../lib/principal";
import { LABEL_KEY, LABEL_VALUE, dnsNameProblem, isDnsName, suggestedDnsName } from "../lib/dns-names";
import { Fix, FixStyle } from "../lib/fix-style";
import { DEFAULT_REDIS_MAXMEMORY, REDIS_EVICTION_POLICY, redisMaxMemoryProblem, redisTimeoutFor } from "../builders/failure-bounds";
import { REDIS_NAME } from "../components/redis";

import type { DescriptorLimit, StackSettings, ApiRouteLimit } from "./settings-types";
import type { HttpRoute, SpecPaths } from "../builders/routes";
import { DEFAULT_PATH_KEY } from "../builders/rules";
import { LimitUnit, PathKeyMode } from "../builders/rule-args";
import { MAX_REQUESTS_PER_UNIT } from "../builders/rule-checks";
import { CounterStore } from "../builders/counter-stores";
import {
    ApiProfileName,
    BookinfoMode,
    EspPortModeName,
    FilterNamespaces,
    LocalPlacementMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "../components/mesh-enums";
import { PATH_KEYS, RATE_LIMIT_UNITS, VARIANT_PRESETS } from "./settings-types";
import { LIST_KEYS, RawConfig, argsOfConfig, closestValue, problem, configError } from "./config-problems";
import { Problem } from "../lib/problems";
import { defaultApiRegex, defaultRoutes } from "../builders/routes";
import { ErrorStatus, FilterLayout } from "../builders/envoy-filters";
import { GO_DURATION, UNSENDABLE_PATH, compileFullMatch, isCidr, isGatewayHost, pathAsSent, protoDurationSeconds } from "../lib/formats";

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
class Reader {
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
// Resolution

function readRoutes(r: Reader, key: string, fallback: HttpRoute[]): HttpRoute[] {
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

function readDescriptors(r: Reader, key: string, fallback: DescriptorLimit[]): DescriptorLimit[] {
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

/**
 * Stack config → MeshRateLimit's arguments (`argsOfConfig`, lenient) → their checks
 * (`validateMeshArgs`): the settings, or an `InputError` (stack config) listing every problem, each
 * under its config key. `extraProblems` (e.g. unknown keys) are reported together with the rest.
 */
export function resolveSettings(raw: RawConfig, extraProblems: Problem[] = []): StackSettings {
    return validateMeshArgs(argsOfConfig(raw), extraProblems);
}

/**
 * MeshRateLimit's arguments checked, every one and every combination, and the variant presets
 * applied: the validated, fully-defaulted settings. Pure. Throws an `InputError` (kind stack-config)
 * listing every problem under its key (a config key and an argument have one name); each fix is
 * phrased for config or for arguments when the error is rendered (`formatProblems`).
 */
/**
 * The default routes hold the page, login and logout paths as one list of exact paths: two of them
 * equal would leave one of the three without a route of its own (the login route silently gone).
 */
function distinctRoutePaths(r: Reader, paths: SpecPaths): void {
    const named = [
        ["pagePath", paths.page],
        ["loginPath", paths.login],
        ["logoutPath", paths.logout],
    ] as const;
    named.forEach(([key, v], i) => {
        const first = named.findIndex(([, w]) => w === v);
        if (first === i) return;
        const def = r.spec(key).default;
        const own = def !== v && !named.some(([, w]) => w === def) ? def : `${v.replace(/\/+$/, "")}-${key.replace("Path", "")}`;
        r.fail(key, v, `equals ${named[first][0]}: the VirtualService would route the path once, and the ${key.replace("Path", "")} route is dropped`, (s) =>
            s.set(key, own),
        );
    });
}

export function validateMeshArgs(values: ArgValues, extraProblems: Problem[] = []): StackSettings {
    const r = new Reader(values);
    r.problems.push(...extraProblems);
    // Read in this order: the problems are reported in it.
    const variant = r.oneOf<StackVariant>("variant", ["A", "B"]);
    const apiProfile = r.oneOf<ApiProfileName>("apiProfile", ["current", "seed"]);
    const paths = {
        limited: r.path("limitedPath"),
        page: r.path("pagePath"),
        login: r.path("loginPath"),
        logout: r.path("logoutPath"),
        staticPrefix: r.path("staticPrefix"),
        apiPrefix: r.path("apiPrefix"),
    };
    if (r.given("virtualServiceRoutes") === undefined) distinctRoutePaths(r, paths);
    const limits = readGlobalLimits(r, variant, paths);
    const filter = readGlobalFilter(r);
    const local = readLocal(r, variant);
    const { mesh, hosts } = readMesh(r);
    const bookinfo = readBookinfo(r, variant, paths, hosts, limits);
    const bookinfoMode = r.oneOf<BookinfoMode>("bookinfo", [BookinfoMode.Deploy, BookinfoMode.Existing]);
    if (bookinfoMode === BookinfoMode.Existing && limits.apiRoute) {
        r.fail(
            "bookinfo",
            bookinfoMode,
            "variant A limits the VirtualService route named 'api', which only the stack's own bookinfo has (Istio's sample VirtualService has one route): on an existing bookinfo the api limit would silently never apply",
            (s) => s.set("variant", "B"),
        );
    }
    const ratelimit = readRatelimitService(r, filter.timeout);
    const redis = readRedisConnection(r, ratelimit.redisPipelineWindow);
    const access = readAccess(r, mesh);
    const managedApi = readManagedApi(r, bookinfo.namespace);
    const monitoring = readMonitoring(r, ratelimit.namespace);
    const awaitRollout = r.bool("awaitRollout");
    if (r.problems.length) throw configError(r.problems);
    const { domain, descriptors, apiRoute } = limits;
    return {
        variant,
        apiProfile,
        paths,
        global: { domain, descriptors, ...filter, apiRoute },
        local,
        mesh,
        bookinfo,
        bookinfoMode,
        ratelimit,
        redis,
        access,
        managedApi,
        monitoring,
        awaitRollout,
    };
}

/** The global limits: the domain, the descriptors (the variant's preset, or the whole list given) and variant A's route limit. */
function readGlobalLimits(
    r: Reader,
    variant: StackVariant,
    paths: SpecPaths,
): { domain: string; descriptors: DescriptorLimit[]; apiRoute?: ApiRouteLimit; apiRouteName: string } {
    const preset = VARIANT_PRESETS[variant];
    const domain = r.given("domain") ?? preset.domain;
    r.byComponent(domainProblems(domain), domain, (s) => s.set("domain", domain.replace(/[^A-Za-z0-9_.-]/g, "") || preset.domain));
    const unit = r.oneOf<LimitUnit>("unit", RATE_LIMIT_UNITS);
    const limitedPathLimit = r.int("limitedPathLimit", { min: 1, max: MAX_REQUESTS_PER_UNIT, limit: true });
    const catchAllLimit = r.int("catchAllLimit", { min: 1, max: MAX_REQUESTS_PER_UNIT, limit: true });
    let apiLimit: number | undefined;
    if (preset.routeSplit) {
        apiLimit = r.int("apiLimit", { min: 1, max: MAX_REQUESTS_PER_UNIT, limit: true, fallback: preset.apiLimit });
    } else if (r.given("apiLimit") !== undefined) {
        r.fail(
            "apiLimit",
            r.given("apiLimit"),
            `applies only to variant A (variant ${variant} has no '${r.str("apiRoute")}' route limit)`,
            (s) => `${s.rm("apiLimit")}, or ${s.set("variant", "A")}`,
        );
    }

    let apiRoute: ApiRouteLimit | undefined;
    const apiRouteName = r.str("apiRoute");
    const descriptorValue = r.str("apiDescriptorValue");
    if (preset.routeSplit) {
        // The specification writes `<api_prefix>/[1-9]{1,2}`, which misses 10, 20, ... 90 although it
        // means "a number from 1 to 99"; this form matches exactly 1..99 (README, deviations).
        const regex = r.given("apiRouteRegex") ?? defaultApiRegex(paths.apiPrefix);
        try {
            compileFullMatch(regex);
        } catch (e) {
            r.fail(
                "apiRouteRegex",
                regex,
                `is not a valid RE2 regular expression (${(e as Error).message.replace(/^Invalid regular expression: /, "")}); Envoy would reject the route patch`,
                (s) => s.set("apiRouteRegex", defaultApiRegex(paths.apiPrefix)),
            );
        }
        apiRoute = { route: apiRouteName, regex, descriptorValue };
    } else {
        for (const k of ["apiRouteRegex"]) {
            if (r.given(k) !== undefined) {
                r.fail(k, r.given(k), "applies only to variant A", (s) => s.rm(k));
            }
        }
    }

    const presetDescriptors: DescriptorLimit[] = [
        { key: DEFAULT_PATH_KEY, value: paths.limited, unit, requestsPerUnit: limitedPathLimit },
        ...(apiLimit !== undefined ? [{ key: DEFAULT_PATH_KEY, value: descriptorValue, unit, requestsPerUnit: apiLimit }] : []),
        { key: DEFAULT_PATH_KEY, unit, requestsPerUnit: catchAllLimit },
    ];
    if (presetDescriptors[0].value === descriptorValue && apiLimit !== undefined) {
        r.fail("apiDescriptorValue", descriptorValue, "equals limitedPath, so two descriptors would collide", (s) => s.set("apiDescriptorValue", "api"));
    }
    const descriptors = readDescriptors(r, "descriptors", presetDescriptors);
    if (r.given("descriptors") !== undefined) {
        for (const k of ["limitedPathLimit", "apiLimit", "catchAllLimit"]) {
            if (r.given(k) !== undefined) {
                r.fail(k, r.given(k), "is ignored because 'descriptors' replaces the whole list", (s) => `${s.rm(k)}, or ${s.rm("descriptors")}`);
            }
        }
    }
    return { domain, descriptors, apiRoute, apiRouteName };
}

/** How the gateway's rate-limit filter asks the service. */
function readGlobalFilter(r: Reader): Omit<StackSettings["global"], "domain" | "descriptors" | "apiRoute"> {
    const pathKey = r.oneOf<PathKeyMode>("pathKey", PATH_KEYS);
    const failureModeDeny = r.bool("failureModeDeny");
    const preLimit = r.bool("preLimit");
    const counterStore = r.oneOf<CounterStore>("counterStore", Object.values(CounterStore));
    const filterLayout = r.oneOf<FilterLayout>("filterLayout", Object.values(FilterLayout));
    const statusOnError = r.given("statusOnError") === undefined ? undefined : r.oneOf<ErrorStatus>("statusOnError", Object.values(ErrorStatus));
    if (statusOnError !== undefined && !failureModeDeny) {
        r.fail("statusOnError", statusOnError, "has no effect with failureModeDeny=false (the request passes when the service cannot answer)", (s) =>
            s.rm("statusOnError"),
        );
    }
    const timeout = r.protoDuration("rateLimitTimeout", 0.001);
    return { failureModeDeny, preLimit, counterStore, timeout, pathKey, filterLayout, ...(statusOnError !== undefined ? { statusOnError } : {}) };
}

/** The sidecar's local token bucket. */
function readLocal(r: Reader, variant: StackVariant): StackSettings["local"] {
    const preset = VARIANT_PRESETS[variant];
    const local = {
        bucket: r.int("localBucket", { min: 1, max: 1_000_000_000, fallback: preset.localBucket }),
        // Envoy refuses fill intervals below 50 ms.
        fillInterval: r.protoDuration("localFillInterval", 0.05),
        placement: r.oneOf<LocalPlacementMode>("localPlacement", ["all-routes", "single-route"]),
        serviceLabel: r.str("serviceLabel"),
        servicePort: r.int("localServicePort", { min: 1, max: 65535 }),
    };
    if (!LABEL_VALUE.test(local.serviceLabel) || local.serviceLabel === "" || local.serviceLabel.length > 63) {
        r.fail("serviceLabel", local.serviceLabel, "must be a valid label value", (s) => s.set("serviceLabel", "productpage"));
    }
    return local;
}

/** The mesh: root namespace, the gateway (selector, namespace, hosts), scopes and mutual TLS. */
function readMesh(r: Reader): { mesh: StackSettings["mesh"]; hosts: string[] } {
    const selectorText = r.str("gatewaySelector");
    const [selKey, selValue, ...selRest] = selectorText.split("=");
    if (selRest.length || !selKey || selValue === undefined || !LABEL_KEY.test(selKey) || !LABEL_VALUE.test(selValue)) {
        r.fail("gatewaySelector", selectorText, "must be one label written key=value", (s) => s.set("gatewaySelector", DEFAULTS.gatewaySelector));
    }
    const mesh = {
        namespace: r.dnsName("meshNamespace", "label"),
        // (A bad selector is reported above; the default's parts only keep the type whole until then.)
        gatewaySelector: { key: selKey ?? DEFAULTS.gatewaySelector.split("=")[0], value: selValue ?? DEFAULTS.gatewaySelector.split("=")[1] },
        gatewayNamespace: r.dnsName("gatewayNamespace", "label"),
        vhostScope: r.oneOf<VirtualHostScope>("vhostScope", ["gateway-hosts", "all"]),
        filterNamespaces: r.oneOf<FilterNamespaces>("filterNamespaces", ["own", "root"]),
        mutualTls: r.bool("mutualTls"),
        mutualTlsScope: r.oneOf<MutualTlsScope>("mutualTlsScope", ["workloads", "mesh"]),
    };
    const hostsText = r.str("gatewayHosts");
    const hosts = hostsText
        .split(",")
        .map((h) => h.trim())
        .filter(Boolean);
    const badHosts = hosts.filter((h) => !isGatewayHost(h));
    if (!hosts.length || badHosts.length || new Set(hosts).size !== hosts.length) {
        const fixed = [...new Set(hosts.filter(isGatewayHost))];
        r.fail(
            "gatewayHosts",
            hostsText,
            !hosts.length
                ? "must name at least one host"
                : badHosts.length
                  ? `has invalid host(s): ${badHosts.join(", ")} (each must be '*', '*.<domain>' or a DNS name, without a port)`
                  : "names a host twice",
            (s) => s.set("gatewayHosts", fixed.length ? fixed.join(",") : "*"),
        );
    }
    return { mesh, hosts };
}

/** Bookinfo: its namespace, Gateway and VirtualService (whose routes must name variant A's route). */
function readBookinfo(
    r: Reader,
    variant: StackVariant,
    paths: SpecPaths,
    hosts: string[],
    global: { apiRoute?: ApiRouteLimit; apiRouteName: string },
): StackSettings["bookinfo"] {
    const preset = VARIANT_PRESETS[variant];
    const { apiRoute, apiRouteName } = global;
    const workloadNamespace = r.dnsName("workloadNamespace", "label");
    const routes = readRoutes(r, "virtualServiceRoutes", defaultRoutes(paths, preset.routeSplit, apiRouteName));
    if (apiRoute && !routes.some((rt) => rt.name === apiRoute!.route)) {
        const have = routes.map((rt) => rt.name).filter(Boolean);
        r.fail(
            "apiRoute",
            apiRoute.route,
            `names no route of the VirtualService (routes: ${have.length ? have.map((n) => `'${n}'`).join(", ") : "none named"}); Istio would silently ignore the route patch`,
            have.length ? (s) => s.set("apiRoute", have[0]!) : "name a route in virtualServiceRoutes",
        );
    }
    const bookinfo = {
        namespace: workloadNamespace,
        hosts,
        version: r.str("bookinfoVersion"),
        gatewayName: r.dnsName("gatewayName", "subdomain"),
        gatewayPort: r.int("gatewayPort", { min: 1, max: 65535 }),
        virtualServiceName: r.dnsName("virtualServiceName", "subdomain"),
        routes,
    };
    return bookinfo;
}

/** The rate-limit service and the Redis it deploys; its Redis timeout follows the gateway's timeout. */
function readRatelimitService(r: Reader, timeout: string): StackSettings["ratelimit"] {
    const ratelimit = {
        namespace: r.dnsName("ratelimitNamespace", "label"),
        serviceName: r.dnsName("ratelimitServiceName", "label"),
        grpcPort: r.int("ratelimitGrpcPort", { min: 1, max: 65535 }),
        httpPort: DEFAULTS.ratelimitHttpPort,
        debugPort: DEFAULTS.ratelimitDebugPort,
        configName: r.dnsName("configName", "subdomain"),
        image: r.str("ratelimitImage"),
        replicas: r.int("ratelimitReplicas", { min: 1, max: 100 }),
        logLevel: r.oneOf("ratelimitLogLevel", ["warn", "debug", "info", "error"]),
        redisPoolSize: r.int("redisPoolSize", { min: 1, max: 10_000 }),
        redisPipelineWindow: r.goDuration("redisPipelineWindow"),
        redisPipelineLimit: r.int("redisPipelineLimit", { min: 0 }),
        localCacheSizeInBytes: r.int("localCacheSizeInBytes", { min: 0 }),
        prometheus: r.bool("ratelimitPrometheus"),
        shadowMode: r.bool("shadowMode"),
        redisImage: r.str("redisImage"),
        redisMaxMemory: r.str("redisMaxMemory"),
        redisName: REDIS_NAME,
        redisEvictionPolicy: REDIS_EVICTION_POLICY,
        redisTimeout: redisTimeoutFor(protoDurationSeconds(timeout) ?? 10),
    };
    const maxMemoryProblem = redisMaxMemoryProblem(ratelimit.redisMaxMemory);
    if (maxMemoryProblem) r.fail("redisMaxMemory", ratelimit.redisMaxMemory, maxMemoryProblem, (s) => s.set("redisMaxMemory", DEFAULT_REDIS_MAXMEMORY));
    r.byComponent(grpcPortProblems(ratelimit.grpcPort), String(ratelimit.grpcPort), (s) => s.set("ratelimitGrpcPort", String(DEFAULTS.ratelimitGrpcPort)));
    return ratelimit;
}

/** Who may call the service and Redis: the gateway's principal, in the gateway's namespace. */
function readAccess(r: Reader, mesh: StackSettings["mesh"]): StackSettings["access"] {
    // Not given: the default gateway's service account, in the gateway's namespace.
    const access = {
        enabled: r.bool("accessPolicies"),
        gatewayPrincipal: r.given("gatewayPrincipal") ?? principalOf({ ...parsePrincipal(DEFAULT_GATEWAY_PRINCIPAL)!, namespace: mesh.gatewayNamespace }),
    };
    const principal = parsePrincipal(access.gatewayPrincipal);
    if (!principal) {
        r.fail("gatewayPrincipal", access.gatewayPrincipal, PRINCIPAL_PROBLEM, (s) => s.set("gatewayPrincipal", suggestedPrincipal(access.gatewayPrincipal)));
    } else if (access.enabled && principal.namespace !== mesh.gatewayNamespace) {
        // The access policies admit only this identity: one of another namespace than the gateway's
        // pods would refuse every call of the gateway (HTTP 500 for every limited request).
        const fixed = principalOf({ ...principal, namespace: mesh.gatewayNamespace });
        r.fail(
            "gatewayPrincipal",
            access.gatewayPrincipal,
            `names namespace ${principal.namespace}, but the gateway runs in gatewayNamespace ${mesh.gatewayNamespace}: the access policies would refuse the gateway's calls`,
            (s) =>
                `${s.set("gatewayPrincipal", fixed)}   (the gateway's service account in ${mesh.gatewayNamespace}), or ${s.set("gatewayNamespace", principal.namespace)}`,
        );
    }
    return access;
}

/** The managed API (ESP), when `managedApi` is on: its required keys have no default. */
function readManagedApi(r: Reader, workloadNamespace: string): StackSettings["managedApi"] {
    let managedApi: StackSettings["managedApi"];
    if (r.bool("managedApi")) {
        const rangesText = r.given("includeIpRanges");
        const ranges = (rangesText ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean);
        if (!rangesText) {
            r.fail(
                "includeIpRanges",
                undefined,
                "is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)",
                (s) => `${s.set("includeIpRanges", "10.4.0.0/14,10.7.240.0/20")}   (your cluster's pod and service CIDRs), or ${s.set("managedApi", "false")}`,
            );
        } else {
            const bad = ranges.filter((c) => !isCidr(c));
            if (bad.length || ranges.length === 0) {
                r.fail(
                    "includeIpRanges",
                    rangesText,
                    `has invalid CIDR(s): ${bad.join(", ") || "(empty)"}`,
                    "use comma-separated CIDRs such as 10.4.0.0/14,10.7.240.0/20",
                );
            }
        }
        const serviceName = r.given("espServiceName");
        if (!serviceName) {
            r.fail(
                "espServiceName",
                undefined,
                "is required: ESP needs the Cloud Endpoints service it serves (--service)",
                (s) => `${s.set("espServiceName", "echo-api.endpoints.MY_PROJECT.cloud.goog")}, or ${s.set("managedApi", "false")}`,
            );
        } else if (!isDnsName(serviceName, "subdomain")) {
            r.fail("espServiceName", serviceName, "must be a DNS name such as echo-api.endpoints.MY_PROJECT.cloud.goog", (s) =>
                s.set("espServiceName", "echo-api.endpoints.MY_PROJECT.cloud.goog"),
            );
        }
        const secret = r.given("espServiceAccountSecret");
        if (secret !== undefined) r.dnsName("espServiceAccountSecret", "subdomain");
        managedApi = {
            namespace: r.given("managedApiNamespace") ? r.dnsName("managedApiNamespace", "label") : workloadNamespace,
            includeIpRanges: ranges,
            serviceName: serviceName ?? "",
            serviceAccountSecret: secret,
            portMode: r.oneOf<EspPortModeName>("espPortMode", ["http", "tcp"]),
            ingressName: r.dnsName("ingressName", "subdomain"),
            ingressClassName: r.dnsName("ingressClassName", "subdomain"),
            ingressPath: r.path("ingressPath"),
            espImage: r.str("espImage"),
            echoImage: r.str("echoImage"),
        };
    }
    return managedApi;
}

/** The dashboard and alert rules; the dashboard goes to the service's namespace unless given. */
function readMonitoring(r: Reader, ratelimitNamespace: string): StackSettings["monitoring"] {
    const labelOf = (text: string): [string, string] | undefined => {
        const [k, v, ...more] = text.split("=");
        return more.length || !k || v === undefined || !LABEL_KEY.test(k.trim()) || !LABEL_VALUE.test(v.trim()) || v.length > 63
            ? undefined
            : [k.trim(), v.trim()];
    };
    const dashboardLabel = r.str("monitoringDashboardLabel");
    if (!labelOf(dashboardLabel)) {
        r.fail("monitoringDashboardLabel", dashboardLabel, "must be one label written name=value", (s) =>
            s.set("monitoringDashboardLabel", "grafana_dashboard=1"),
        );
    }
    const ruleLabelsText = r.str("monitoringRuleLabels");
    const ruleLabels: Record<string, string> = {};
    for (const part of ruleLabelsText.split(",").filter((t) => t.trim())) {
        const kv = labelOf(part);
        if (kv) ruleLabels[kv[0]] = kv[1];
        else
            r.fail("monitoringRuleLabels", ruleLabelsText, `'${part}' is not a label written name=value`, (s) =>
                s.set("monitoringRuleLabels", "release=kube-prometheus-stack"),
            );
    }
    const dashboardNamespace = r.given("monitoringDashboardNamespace")?.trim() ? r.dnsName("monitoringDashboardNamespace", "label") : ratelimitNamespace;
    const monitoring = { dashboard: r.bool("monitoringDashboard"), dashboardNamespace, dashboardLabel, alerts: r.bool("monitoringAlerts"), ruleLabels };
    return monitoring;
}

// ---------------------------------------------------------------------------------------------
// Values derived from settings: computed once, never typed twice.

/** Name Istio gives the sidecar's inbound virtual host for the workload port. */
export function inboundVhostName(s: StackSettings): string {
    return `inbound|http|${s.local.servicePort}`;
}
