/**
 * Stack config → one validated, fully-defaulted settings object.
 *
 * Pure: no Pulumi runtime, no I/O. `resolveSettings` collects *every* problem before failing, so a
 * user fixes their config in one round; the error names the key, the value and the fix.
 */
import { DEFAULT_REDIS_MAXMEMORY, REDIS_EVICTION_POLICY, redisMaxMemoryProblem } from "../builders/failure-bounds";
import { DEFAULTS } from "../components/defaults";
import { domainProblems, grpcPortProblems, statusWithoutDenyProblems } from "../components/global-ratelimit-checks";
import { REDIS_NAME } from "../components/redis";
import { LABEL_KEY, LABEL_VALUE, isDnsName } from "../lib/dns-names";
import { DEFAULT_GATEWAY_PRINCIPAL, PRINCIPAL_PROBLEM, parsePrincipal, principalOf, suggestedPrincipal } from "../lib/principal";
import { readRedisConnection } from "./redis-settings";

import { CounterStore } from "../builders/counter-stores";
import { ErrorStatus, FilterLayout } from "../builders/envoy-filters";
import type { SpecPaths } from "../builders/routes";
import { defaultApiRegex, defaultRoutes } from "../builders/routes";
import { LimitUnit, PathKeyMode } from "../builders/rule-args";
import { MAX_REQUESTS_PER_UNIT } from "../builders/rule-checks";
import { DEFAULT_PATH_KEY } from "../builders/rule-args";
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
import { compileFullMatch, isCidr, isGatewayHost } from "../lib/formats";
import { Problem } from "../lib/problems";
import { RawConfig, argsOfConfig, configError } from "./config-problems";
import { ArgValues, Reader, readDescriptors, readRoutes } from "./config-reader";
import type { ApiRouteLimit, DescriptorLimit, StackSettings } from "./settings-types";
import { PATH_KEYS, RATE_LIMIT_UNITS, VARIANT_PRESETS } from "./settings-types";

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
    const ratelimit = readRatelimitService(r);
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
    r.byComponent(statusWithoutDenyProblems(statusOnError, failureModeDeny), statusOnError ?? "", (s) => s.rm("statusOnError"));
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

/** The rate-limit service and the Redis it deploys (GlobalRateLimit derives its Redis timeout from the gateway's timeout). */
function readRatelimitService(r: Reader): StackSettings["ratelimit"] {
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
