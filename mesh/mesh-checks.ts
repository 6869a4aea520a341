/**
 * MeshRateLimit's own checks of its arguments: every field that no component it builds owns (the
 * variant and its presets, the paths, the limits, the mesh placement, the local bucket, bookinfo,
 * the managed API, monitoring labels), each by the rule its declaration states (mesh-fields.ts, run
 * by the `Reader`), and every rule that spans several fields; the variant presets applied. The rate-limit service's and Redis's fields, the timeout, the domain and the namespace
 * are GlobalRateLimit's: its plan checks them (mesh-ratelimit.ts). Pure; returns every problem, each
 * under its field, its fix phrased for the arguments or for whoever reads them from another input.
 */
import { bindCrossCheck } from "../lib/cross-checks";
import { withDefaults } from "../lib/field-decl";
import { BOOKINFO_OPTIONS_FIELDS } from "../components/bookinfo/fields";
import { LOCAL_BUCKET_FIELDS } from "../components/local-ratelimit/fields";
import { MANAGED_API_OPTIONS_FIELDS } from "../components/managed-api/fields";
import { MONITORING_OPTION_FIELDS } from "../components/service/ratelimit-monitoring-fields";
import { MESH_GROUP_CHECKS, MESH_LOCAL_FIELDS } from "./mesh-group-fields";
import type { SpecPaths } from "../builders/routes";
import { defaultRoutes } from "../builders/routes";
import { localBucketOptionsProblems } from "../components/local-ratelimit/component";
import { ManagedApiArgs } from "../components/managed-api/args.generated";
import { managedApiFieldProblems } from "../components/managed-api/resolve";
import {
    ApiProfileName,
    BookinfoMode,
    FilterNamespaces,
    GatewayHostScope,
    LocalPlacementMode,
    MeshMode,
    MutualTlsScope,
    StackVariant,
    VirtualHostScope,
} from "../components/common/mesh-enums";
import { fieldRef } from "../lib/fix-style";
import { isGatewayHost } from "../lib/formats";
import { DEFAULT_GATEWAY_PRINCIPAL, parsePrincipal, principalOf } from "../lib/principal";
import { Problem } from "../lib/problems";
import { keyOf } from "./arg-paths";
import { Reader, readRoutes, textOr } from "./field-reader";
import { readGlobalFilter, readGlobalLimits } from "./global-limit-checks";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";
import { MESH_DEFAULTS } from "./mesh-defaults";
import type { ApiRouteLimit, StackSettings } from "./settings-types";
import { VARIANT_PRESETS } from "./settings-types";

/** What MeshRateLimit's own checks resolve: the settings of the stack but for the rate-limit service and Redis, which GlobalRateLimit resolves. */
export type MeshOwnSettings = Omit<StackSettings, "ratelimit" | "redis">;

/**
 * The default routes hold the page, login and logout paths as one list of exact paths: two of them
 * equal would leave one of the three without a route of its own (the login route silently gone).
 */
function distinctRoutePaths(r: Reader, paths: SpecPaths): void {
    const named = [
        ["page", paths.page],
        ["login", paths.login],
        ["logout", paths.logout],
    ] as const;
    named.forEach(([route, v], i) => {
        const first = named.findIndex(([, w]) => w === v);
        if (first === i) return;
        const path = ["paths", route] as const;
        const def = r.fallbackText(path);
        const own = def !== v && !named.some(([, w]) => w === def) ? def : `${v.replace(/\/+$/, "")}-${route}`;
        const firstKey = keyOf(["paths", named[first][0]]);
        r.fail(path, v, `equals ${fieldRef(firstKey)}: the VirtualService would route the path once, and the ${route} route is dropped`, (s) =>
            s.set(keyOf(path), own),
        );
    });
}

/**
 * MeshRateLimit's arguments checked (its own fields and every combination) and the variant presets
 * applied: the settings, and every problem (none: the settings are whole).
 */
export function checkMeshArgs(a: MeshRateLimitArgs): { settings: MeshOwnSettings; problems: Problem[] } {
    const r = new Reader(a);
    // Read in this order: the problems are reported in it.
    const variant = r.oneOf<StackVariant>(["variant"]);
    const apiProfile = r.oneOf<ApiProfileName>(["apiProfile"]);
    const meshMode = r.oneOf<MeshMode>(["meshMode"]);
    const paths = {
        limited: r.path(["paths", "limited"]),
        page: r.path(["paths", "page"]),
        login: r.path(["paths", "login"]),
        logout: r.path(["paths", "logout"]),
        staticPrefix: r.path(["paths", "staticPrefix"]),
        apiPrefix: r.path(["paths", "apiPrefix"]),
    };
    if (r.given(["bookinfo", "routes"]) === undefined) distinctRoutePaths(r, paths);
    const limits = readGlobalLimits(r, a, variant, paths);
    const filter = readGlobalFilter(a);
    const local = readLocal(r, a, variant);
    const { mesh, hosts } = readMesh(r, a);
    const bookinfo = readBookinfo(r, a, variant, paths, hosts, limits);
    const bookinfoMode = r.oneOf<BookinfoMode>(["bookinfo", "mode"]);
    if (bookinfoMode === BookinfoMode.Existing && limits.apiRoute) {
        r.fail(
            ["bookinfo", "mode"],
            bookinfoMode,
            "variant A limits the VirtualService route named 'api', which only the stack's own bookinfo has (Istio's sample VirtualService has one route): on an existing bookinfo the api limit would silently never apply",
            (s) => s.set(keyOf(["variant"]), "B"),
        );
    }
    const access = readAccess(r, a, mesh, meshMode === MeshMode.Ambient ? bookinfo.gatewayName : undefined);
    const managedApi = readManagedApi(r, a, bookinfo.namespace);
    const monitoring = readMonitoring(a);
    const awaitRollout = r.bool(["awaitRollout"]);
    if (meshMode === MeshMode.Ambient) ambientProblems(r, { apiProfile, mesh, managedApi: managedApi !== undefined });
    const { domain, descriptors, apiRoute } = limits;
    return {
        settings: {
            variant,
            apiProfile,
            meshMode,
            paths,
            global: { domain, descriptors, ...filter, apiRoute },
            local,
            mesh,
            bookinfo,
            bookinfoMode,
            access,
            managedApi,
            monitoring,
            awaitRollout,
        },
        problems: r.problems,
    };
}

/** The sidecar's local token bucket. */
function readLocal(r: Reader, a: MeshRateLimitArgs, variant: StackVariant): StackSettings["local"] {
    const preset = VARIANT_PRESETS[variant];
    const given = a.local ?? {};
    const d = MESH_DEFAULTS.local;
    // The bucket and its port are LocalRateLimit's: their declarations run its rules, with the variant's bucket and the stack's port as the fixes' fallbacks.
    // The bucket's options (LocalBucketOptions) are LocalRateLimit's, taken as given: any it gains reaches it unnamed here.
    const { placement: _placement, serviceLabel: _label, bucket: givenBucket, port: _port, enabled: _enabled, ...options } = given;
    const bucket = givenBucket ?? preset.localBucket;
    const port = withDefaults(MESH_LOCAL_FIELDS, given).port;
    r.declared(["local", "bucket"], bucket, preset.localBucket);
    r.declared(["local", "port"], port);
    r.byComponent(["local"], localBucketOptionsProblems(options));
    // The options' declared defaults (LocalRateLimit's), read for the two the stack's settings hold.
    const o = withDefaults(LOCAL_BUCKET_FIELDS, options);
    const local = {
        ...options,
        bucket,
        fillInterval: o.fillInterval,
        placement: r.oneOf<LocalPlacementMode>(["local", "placement"]),
        enabled: r.bool(["local", "enabled"]),
        serviceLabel: textOr(given.serviceLabel, d.serviceLabel),
        port,
        shadow: o.shadow,
    };
    r.declared(["local", "serviceLabel"], local.serviceLabel);
    return local;
}

/**
 * What an ambient mesh cannot carry, each refused with why (the local bucket it carries, on a
 * waypoint: components/local-ratelimit/component.ts): the seed profile (its mesh ConfigMap `authPolicy` and extensions/v1beta1 Ingress predate
 * ambient), filters in the root namespace (a filter aimed at a Gateway API Gateway must live in the
 * Gateway's namespace) and the managed API (ESP relies on its sidecar's outbound IP ranges).
 */
function ambientProblems(r: Reader, o: { apiProfile: ApiProfileName; mesh: StackSettings["mesh"]; managedApi: boolean }): void {
    if (o.apiProfile === ApiProfileName.Seed)
        r.fail(["apiProfile"], o.apiProfile, "is seed: its APIs (the mesh ConfigMap's authPolicy, extensions/v1beta1 Ingress) predate ambient mode", (s) =>
            s.set(keyOf(["apiProfile"]), ApiProfileName.Current),
        );
    if (o.mesh.filterNamespaces === FilterNamespaces.Root)
        r.fail(
            ["mesh", "filterNamespaces"],
            o.mesh.filterNamespaces,
            "is root: on ambient the filters target the Gateway API Gateway by name, which Istio honours only for filters in the Gateway's own namespace",
            (s) => s.set(keyOf(["mesh", "filterNamespaces"]), FilterNamespaces.Own),
        );
    if (o.managedApi)
        r.fail(
            ["managedApi", "enabled"],
            true,
            "is true: the managed API's ESP pod relies on its sidecar's outbound IP ranges, and an ambient mesh has no sidecars",
            (s) => s.set(keyOf(["managedApi", "enabled"]), "false"),
        );
}

/** The mesh: root namespace, the gateway (selector, namespace, hosts), scopes and mutual TLS. */
function readMesh(r: Reader, a: MeshRateLimitArgs): { mesh: StackSettings["mesh"]; hosts: string[] } {
    const selectorText = textOr(a.mesh?.gatewaySelector, MESH_DEFAULTS.mesh.gatewaySelector);
    const [selKey, selValue] = selectorText.split("=");
    r.declared(["mesh", "gatewaySelector"], selectorText);
    const [defaultKey, defaultValue] = MESH_DEFAULTS.mesh.gatewaySelector.split("=");
    const mesh = {
        namespace: r.dnsName(["mesh", "namespace"]),
        // (A bad selector is reported above; the default's parts only keep the type whole until then.)
        gatewaySelector: { key: selKey ?? defaultKey, value: selValue ?? defaultValue },
        gatewayNamespace: r.dnsName(["mesh", "gatewayNamespace"]),
        vhostScope: r.oneOf<VirtualHostScope>(["mesh", "vhostScope"]),
        filterNamespaces: r.oneOf<FilterNamespaces>(["mesh", "filterNamespaces"]),
        mutualTls: r.bool(["mesh", "mutualTls"]),
        mutualTlsScope: r.oneOf<MutualTlsScope>(["mesh", "mutualTlsScope"]),
    };
    // The typed list; a single value (not a list) is one host. Problems show the list comma-separated.
    const given: unknown = a.bookinfo?.hosts;
    const list = given === undefined ? [] : Array.isArray(given) ? given.map(String) : [String(given)];
    const givenText = list.join(",").trim();
    const hostsText = givenText === "" ? MESH_DEFAULTS.bookinfo.hosts.join(",") : givenText;
    const hosts = (givenText === "" ? [...MESH_DEFAULTS.bookinfo.hosts] : list).map((h) => h.trim()).filter(Boolean);
    const badHosts = hosts.filter((h) => !isGatewayHost(h));
    if (!hosts.length || badHosts.length || new Set(hosts).size !== hosts.length) {
        const fixed = [...new Set(hosts.filter(isGatewayHost))];
        r.fail(
            ["bookinfo", "hosts"],
            hostsText,
            !hosts.length
                ? "must name at least one host"
                : badHosts.length
                  ? `has invalid host(s): ${badHosts.join(", ")} (each must be '*', '*.<domain>' or a DNS name, without a port)`
                  : "names a host twice",
            (s) => s.set(keyOf(["bookinfo", "hosts"]), fixed.length ? fixed.join(",") : "*"),
        );
    }
    return { mesh, hosts };
}

/** Bookinfo: its namespace, Gateway and VirtualService (whose routes must name variant A's route). */
function readBookinfo(
    r: Reader,
    a: MeshRateLimitArgs,
    variant: StackVariant,
    paths: SpecPaths,
    hosts: string[],
    global: { apiRoute?: ApiRouteLimit; apiRouteName: string },
): StackSettings["bookinfo"] {
    const preset = VARIANT_PRESETS[variant];
    const { apiRoute, apiRouteName } = global;
    // Bookinfo checks its names and port (mesh-plan.ts reports its problems under `bookinfo.`).
    const b = a.bookinfo ?? {};
    const d = MESH_DEFAULTS.bookinfo;
    const workloadNamespace = textOr(b.namespace, d.namespace);
    const routes = readRoutes(r, ["bookinfo", "routes"], defaultRoutes(paths, preset.routeSplit, apiRouteName));
    if (apiRoute && !routes.some((rt) => rt.name === apiRoute!.route)) {
        const have = routes.map((rt) => rt.name).filter(Boolean);
        r.fail(
            ["limits", "apiRoute"],
            apiRoute.route,
            `names no route of the VirtualService (routes: ${have.length ? have.map((n) => `'${n}'`).join(", ") : "none named"}); Istio would silently ignore the route patch`,
            have.length
                ? (s) => s.set(keyOf(["limits", "apiRoute"]), have[0]!)
                : (s) => `name a route in ${s.name ? s.name(keyOf(["bookinfo", "routes"])) : keyOf(["bookinfo", "routes"])}`,
        );
    }
    // Bookinfo's options as given (it checks them): any it gains reaches it unnamed here; then the stack's defaults.
    const { mode: _mode, ...options } = b;
    const bookinfo = {
        ...options,
        namespace: workloadNamespace,
        hosts,
        version: textOr(b.version, d.version),
        gatewayName: textOr(b.gatewayName, d.gatewayName),
        gatewayPort: withDefaults(BOOKINFO_OPTIONS_FIELDS, b).gatewayPort,
        virtualServiceName: textOr(b.virtualServiceName, d.virtualServiceName),
        // Bookinfo checks it (one of GatewayHostScope), as it checks its names.
        gatewayHostScope: textOr(b.gatewayHostScope, d.gatewayHostScope) as GatewayHostScope,
        routes,
    };
    return bookinfo;
}

/** Who may call the service and Redis: the gateway's principal, in the gateway's namespace. */
function readAccess(r: Reader, a: MeshRateLimitArgs, mesh: StackSettings["mesh"], gatewayApiName?: string): StackSettings["access"] {
    // Not given: the default gateway's service account, in the gateway's namespace; on ambient, the
    // one Istio gives a Gateway API Gateway's pods (`<name>-istio`).
    const account = gatewayApiName !== undefined ? { serviceAccount: `${gatewayApiName}-istio` } : {};
    const access = {
        enabled: r.bool(["global", "accessPolicy", "enabled"]),
        gatewayPrincipal:
            textOr(a.global?.accessPolicy?.gatewayPrincipal, "") ||
            principalOf({ ...parsePrincipal(DEFAULT_GATEWAY_PRINCIPAL)!, namespace: mesh.gatewayNamespace, ...account }),
    };
    // GlobalRateLimit checks the principal's form; the gateway's namespace is MeshRateLimit's to compare.
    const principal = parsePrincipal(access.gatewayPrincipal);
    if (principal && access.enabled && principal.namespace !== mesh.gatewayNamespace) {
        // The access policies admit only this identity: one of another namespace than the gateway's
        // pods would refuse every call of the gateway (HTTP 500 for every limited request).
        const fixed = principalOf({ ...principal, namespace: mesh.gatewayNamespace });
        r.fail(
            ["global", "accessPolicy", "gatewayPrincipal"],
            access.gatewayPrincipal,
            `names namespace ${principal.namespace}, but the gateway runs in ${fieldRef(keyOf(["mesh", "gatewayNamespace"]))} ${mesh.gatewayNamespace}: the access policies would refuse the gateway's calls`,
            (s) =>
                `${s.set(keyOf(["global", "accessPolicy", "gatewayPrincipal"]), fixed)}   (the gateway's service account in ${mesh.gatewayNamespace}), or ${s.set(keyOf(["mesh", "gatewayNamespace"]), principal.namespace)}`,
        );
    }
    return access;
}

/** The managed API (ESP), when `managedApi.enabled`: ManagedApi's own rules on its fields, turning it off offered for the required ones. */
function readManagedApi(r: Reader, a: MeshRateLimitArgs, workloadNamespace: string): StackSettings["managedApi"] {
    if (!r.bool(["managedApi", "enabled"])) return undefined;
    const given = (a.managedApi ?? {}) as Partial<ManagedApiArgs> & MeshRateLimitArgs["managedApi"];
    const d = MESH_DEFAULTS.managedApi;
    r.byComponent(
        ["managedApi"],
        managedApiFieldProblems(given, (s) => s.set("enabled", "false")),
    );
    const ranges = given.includeIpRanges as unknown;
    // ManagedApi's options as given (it checks them above): any it gains reaches it unnamed here; then the stack's defaults.
    const { enabled: _enabled, ...options } = given;
    return {
        ...options,
        namespace: given.namespace ?? workloadNamespace,
        includeIpRanges: Array.isArray(ranges) ? ranges : typeof ranges === "string" && ranges ? [ranges] : [],
        serviceName: given.serviceName ?? "",
        serviceAccountSecret: given.serviceAccountSecret,
        portMode: withDefaults(MANAGED_API_OPTIONS_FIELDS, given).portMode,
        ingressName: textOr(given.ingressName, d.ingressName),
        ingressClassName: textOr(given.ingressClassName, d.ingressClassName),
        ingressPath: textOr(given.ingressPath, d.ingressPath),
        espImage: textOr(given.espImage, d.espImage),
        echoImage: textOr(given.echoImage, d.echoImage),
    };
}

/** The dashboard and alert rules; the dashboard goes to the service's namespace unless given. */
function readMonitoring(a: MeshRateLimitArgs): StackSettings["monitoring"] {
    // GlobalRateLimit checks every one; the dashboard goes to the service's namespace unless given.
    const m = a.global?.monitoring ?? {};
    const d = withDefaults(MONITORING_OPTION_FIELDS, m);
    return {
        dashboard: d.dashboard,
        dashboardNamespace: m.dashboardNamespace || a.global?.namespace || MESH_DEFAULTS.global.namespace,
        dashboardLabel: d.dashboardLabel,
        alerts: d.alerts,
        ruleLabels: m.ruleLabels ?? {},
    };
}

// ---------------------------------------------------------------------------------------------
// Values derived from settings: computed once, never typed twice.

/** Name Istio gives the sidecar's inbound virtual host for the workload port. */
export function inboundVhostName(s: StackSettings): string {
    return `inbound|http|${s.local.port}`;
}

/** The groups' cross-field checks (mesh-group-fields.ts MESH_GROUP_CHECKS). */
bindCrossCheck(MESH_GROUP_CHECKS.principal, "mesh-checks.ts readAccess", readAccess);
bindCrossCheck(MESH_GROUP_CHECKS.managedApi, "mesh-checks.ts readManagedApi", readManagedApi);
