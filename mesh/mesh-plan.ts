/**
 * MeshRateLimit's plan: its arguments checked once and completely, before anything is registered.
 * Unknown fields, then MeshRateLimit's own fields and the rules that span several (mesh-checks.ts),
 * then each component's own checks on the arguments MeshRateLimit hands it: GlobalRateLimit checks
 * `global` (its service, Redis, timeout, domain, namespace and everything its limits grow), Bookinfo
 * checks `bookinfo`. A component's problem is reported under the field of MeshRateLimit's arguments
 * that holds it (`global.` + the component's field). Pure.
 */
import { BOOKINFO_PORT, ResolvedBookinfo, bookinfoVirtualHosts } from "../builders/bookinfo";
import { BookinfoArgs } from "../components/bookinfo/args.generated";
import { BookinfoPlan, planBookinfo } from "../components/bookinfo/resolve";
import { FILTER_NAMES, FilterLayout, LOCAL_STAT_PREFIX } from "../builders/envoy-filters";
import { escapeRe2 } from "../builders/rules";
import { podMatchers } from "../components/service/ratelimit-monitoring";
import { GlobalRateLimitArgs } from "../components/global-ratelimit/args.generated";
import { GlobalRateLimitPlan, planGlobalRateLimit } from "../components/global-ratelimit/plan";
import { COMPONENT_ARG_INTERFACES } from "../components/all/arg-types";
import { LocalRateLimitArgs } from "../components/local-ratelimit/component";
import { LOCAL_ARGS_FIELDS } from "../components/local-ratelimit/fields";
import { GATEWAY_NAME_LABEL } from "../builders/filter-target";
import { MeshMode } from "../components/common/mesh-enums";
import { ManagedApiArgs } from "../components/managed-api/args.generated";
import { deepFreeze, plainCopy } from "../lib/frozen";
import { Problem } from "../lib/problems";
import { argTypesOf, unknownFields } from "../lib/unknown-fields";
import { MESH_ARG_INTERFACES } from "./mesh-arg-interfaces";
import { meshArgsError, problem, underField } from "./arg-problems";
import { MeshOwnSettings, checkMeshArgs } from "./mesh-checks";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";
import { keyOf, valueAtPath } from "./arg-paths";
import { StackSettings } from "./settings-types";
import { globalLimitsFromSettings } from "./spec-limits";

/**
 * The GlobalRateLimit arguments of the stack: `global` spread as given (GlobalRateLimit's own fields,
 * which it checks and defaults), then what MeshRateLimit derives: the rules from `limits`, the domain
 * from the variant, the gateway and the dashboard's selectors, the access policy's switch.
 */
export function globalArgsOf(
    args: MeshRateLimitArgs,
    s: MeshOwnSettings,
    bookinfo: Pick<ResolvedBookinfo, "namespace" | "hosts" | "gatewayHostScope" | "gatewayPort">,
): GlobalRateLimitArgs {
    // MeshRateLimit's own fields under `global` (its path key feeds the rules; the access policy and monitoring are reshaped below).
    const { pathKey: _pathKey, accessPolicy: _access, monitoring: _monitoring, ...own } = args.global ?? {};
    return {
        ...own,
        ...globalLimitsFromSettings(s),
        domain: s.global.domain,
        gateway: {
            // Ambient: the Gateway API Gateway Bookinfo creates, by name (targetRefs); its filters live in its namespace.
            ...(s.meshMode === MeshMode.Ambient
                ? { gatewayApiName: s.bookinfo.gatewayName }
                : { selector: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value } }),
            namespace: s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace,
            // Istio's names of the virtual hosts of the Gateway and VirtualService Bookinfo creates.
            virtualHosts: bookinfoVirtualHosts(bookinfo),
            ...(s.mesh.vhostScope === "all" ? { allVirtualHosts: true } : {}),
        },
        // The specification's names in its own layout; per-instance names otherwise (unique on a shared gateway).
        ...(s.global.filterLayout === FilterLayout.Shared ? { filterNamePrefix: FILTER_NAMES.global } : {}),
        // The stack's default layout is the specification's (shared); GlobalRateLimit's own is per-instance.
        filterLayout: s.global.filterLayout,
        monitoring: {
            dashboard: s.monitoring.dashboard,
            dashboardNamespace: s.monitoring.dashboardNamespace,
            dashboardLabel: s.monitoring.dashboardLabel,
            alerts: s.monitoring.alerts,
            ruleLabels: s.monitoring.ruleLabels,
            // The gateway's rate-limit counters are kept per route target cluster: bookinfo's productpage only.
            gatewayClusters: escapeRe2(`outbound|${BOOKINFO_PORT}||productpage.${s.bookinfo.namespace}.svc.cluster.local`),
            // The bucket's pods: the app's (its sidecar), or on ambient the waypoint's.
            localBuckets: s.local.enabled
                ? [{ title: s.local.serviceLabel, selector: podMatchers(s.bookinfo.namespace, localBucketPods(s)), statPrefix: LOCAL_STAT_PREFIX }]
                : [],
        },
        awaitRollout: s.awaitRollout,
        ...(s.meshMode === MeshMode.Ambient ? { meshMode: s.meshMode } : {}),
        // Who may call the service and Redis (components/service/access-policies.ts).
        ...(s.access.enabled ? { accessPolicy: { gatewayPrincipal: s.access.gatewayPrincipal } } : {}),
    };
}

/** The labels of the pods that hold the local bucket: the app's, or on ambient its waypoint's (Istio's gateway-name label). */
function localBucketPods(s: MeshOwnSettings): Record<string, string> {
    return s.meshMode === MeshMode.Ambient ? { [GATEWAY_NAME_LABEL]: LOCAL_ARGS_FIELDS.waypoint.default } : { app: s.local.serviceLabel };
}

/** The namespaces the stack runs pods in (bookinfo, the rate-limit service and Redis, the managed API), each once. */
export function stackNamespaces(s: StackSettings): string[] {
    return [...new Set([s.bookinfo.namespace, s.ratelimit.namespace, ...(s.managedApi ? [s.managedApi.namespace] : [])])];
}

/** The LocalRateLimit arguments of the stack. */
export function localArgsOf(s: MeshOwnSettings): LocalRateLimitArgs {
    // The bucket's options as given (LocalBucketOptions), then what MeshRateLimit decides.
    const { placement: _placement, serviceLabel: _label, enabled: _enabled, ...options } = s.local;
    return {
        ...options,
        // Ambient: on the waypoint (created by LocalRateLimit) that serves the app's Service, which Bookinfo labels for it.
        ...(s.meshMode === MeshMode.Ambient ? { meshMode: s.meshMode, service: s.local.serviceLabel } : { selector: { app: s.local.serviceLabel } }),
        // single-route: the bucket per route on every route of the inbound virtual host.
        ...(s.local.placement === "single-route" ? { routes: [] } : {}),
        // The workload's own namespace: the filter then reaches only its pods (root: every namespace's).
        namespace: s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.bookinfo.namespace,
        rootNamespace: s.mesh.namespace,
        ...(s.mesh.filterNamespaces === "root" ? { reachAllNamespaces: true } : {}),
        filterName: FILTER_NAMES.local,
        filterLayout: s.global.filterLayout,
    };
}

/** The Bookinfo arguments of the stack: `bookinfo` as checked, the gateway's selector and the local bucket's workload. */
export function bookinfoArgsOf(s: MeshOwnSettings): BookinfoArgs {
    const b = s.bookinfo;
    return {
        ...b,
        gatewaySelector: { [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value },
        routes: b.routes.map((r) => ({ ...(r.name !== undefined ? { name: r.name } : {}), exact: r.exact, prefix: r.prefix })),
        localStatsApp: s.local.serviceLabel,
        awaitRollout: s.awaitRollout,
        ...(s.meshMode === MeshMode.Ambient ? { meshMode: s.meshMode, gatewayApiNamespace: s.mesh.gatewayNamespace } : {}),
        // The waypoint LocalRateLimit creates for the bucket (its default name), serving the app's Service.
        ...(s.meshMode === MeshMode.Ambient && s.local.enabled ? { localWaypoint: LOCAL_ARGS_FIELDS.waypoint.default } : {}),
    };
}

/** The ManagedApi arguments of the stack (when it has one): its options as given, the stack's defaults filled in. */
export function managedApiArgsOf(s: MeshOwnSettings): ManagedApiArgs {
    return { ...s.managedApi!, apiProfile: s.apiProfile, awaitRollout: s.awaitRollout };
}

/** Whether the user gave the field a problem is about (or the list or object it is in), rather than MeshRateLimit deriving it. */
function isGiven(args: MeshRateLimitArgs, field: string): boolean {
    return valueAtPath(args, field.replace(/\[\d+\].*$/, "").split(".")) !== undefined;
}

/**
 * A component's problems as MeshRateLimit's, under `prefix` (the field holding the component's
 * arguments): those of a field the user gave always, unless MeshRateLimit's own checks reported the
 * field already; those of what MeshRateLimit derived (the rules from the limits, the routes from the
 * paths, the dashboard from them) only when its own checks passed (else they repeat its problems).
 * `derived` names where such a problem is reported, with its fix.
 */
function componentProblems(
    args: MeshRateLimitArgs,
    prefix: string,
    problems: Problem[],
    own: Problem[],
    derived: (p: Problem) => Problem = (p) => p,
): Problem[] {
    const ownKeys = new Set(own.map((p) => p.key));
    const out: Problem[] = [];
    for (const p of problems) {
        const moved = underField(prefix, p);
        if (ownKeys.has(moved.key)) continue;
        if (isGiven(args, moved.key)) out.push(moved);
        else if (!own.length) out.push(derived(moved));
    }
    return out;
}

/** Where a GlobalRateLimit problem of what MeshRateLimit derived is reported: the rules under the descriptor list, the dashboard under its switch. */
function derivedGlobalProblem(p: Problem): Problem {
    // GlobalRateLimit's rules and per-path limits, which MeshRateLimit makes of its descriptors.
    if (/^global\.(rules|perPath)\b/.test(p.key)) return problem(keyOf(["limits", "descriptors"]), undefined, p.problem, "give fewer descriptors");
    if (p.key === keyOf(["global", "monitoring", "dashboard"])) return problem(p.key, p.value, p.problem, (s) => s.set(p.key, "false"));
    return p;
}

/** Only `planMeshRateLimit` makes a MeshRateLimitPlan. */
const PLAN_MAKER = Symbol("planMeshRateLimit");

/**
 * MeshRateLimit's arguments, validated (every problem reported before anything is registered), and
 * what they make: the settings the program's checks of the cluster read, and the plans of the
 * components that are computed before any of them is registered. Made only by `planMeshRateLimit`;
 * the program hands it to MeshRateLimit (`opts.plan`), so nothing is validated or computed twice.
 */
export class MeshRateLimitPlan {
    constructor(
        maker: typeof PLAN_MAKER,
        /** The arguments, as given (the fields that are not checked here included). */
        readonly args: MeshRateLimitArgs,
        /** The validated, fully-defaulted settings, frozen: MeshRateLimit's own, with the service and Redis as GlobalRateLimit resolved them. */
        readonly settings: StackSettings,
        /** The Bookinfo and GlobalRateLimit of the stack: their arguments' plans (the component checks `plan.args`); Bookinfo's resolved. */
        readonly bookinfo: BookinfoPlan,
        readonly global: GlobalRateLimitPlan,
    ) {
        if (maker !== PLAN_MAKER) throw new Error("internal: a MeshRateLimitPlan is made by planMeshRateLimit");
    }

    /**
     * The same plan for arguments that differ only in what the program learns from the cluster
     * (`kubeContext`, `createIngressClass`, `keepIngressClassOnDestroy`, `createPeerAuthentication`, `keepPeerAuthenticationOnDestroy`).
     */
    withOptions(
        options: Pick<
            MeshRateLimitArgs,
            "kubeContext" | "createIngressClass" | "keepIngressClassOnDestroy" | "createPeerAuthentication" | "keepPeerAuthenticationOnDestroy"
        >,
    ): MeshRateLimitPlan {
        return new MeshRateLimitPlan(PLAN_MAKER, { ...this.args, ...options }, this.settings, this.bookinfo, this.global);
    }
}

/** Every argument type MeshRateLimit's arguments nest: its own groups' and its components'. */
const MESH_ARG_TYPES = argTypesOf([...COMPONENT_ARG_INTERFACES, ...MESH_ARG_INTERFACES]);

/** Validates MeshRateLimit's arguments (an `InputError` listing every problem under its field) and computes its plan. Pure. */
export function planMeshRateLimit(args: MeshRateLimitArgs): MeshRateLimitPlan {
    const a = args ?? {};
    // Unknown fields at any depth; the descriptor list reports its own (the same words as its other problems).
    const unknown = unknownFields(MESH_ARG_TYPES, "MeshRateLimitArgs", "an argument of MeshRateLimit", a).filter(
        (p) => !p.key.startsWith("limits.descriptors["),
    );
    const { settings: own, problems } = checkMeshArgs(a);
    const bookinfo = planBookinfo(bookinfoArgsOf(own));
    // Bookinfo's resolved names; when it refuses them, the settings it was given (the same fields), so GlobalRateLimit's own problems are still found.
    const global = planGlobalRateLimit(globalArgsOf(a, own, bookinfo.value ?? own.bookinfo));
    const all = [...unknown, ...problems];
    // Bookinfo's first: the virtual hosts GlobalRateLimit is given are made of its names and port.
    all.push(...componentProblems(a, "bookinfo.", bookinfo.problems, all));
    all.push(...componentProblems(a, "global.", global.problems, all, derivedGlobalProblem));
    if (all.length) throw meshArgsError(all);
    const { ratelimit, redis } = global.service;
    // Read-only from here: the program's checks of the cluster and the components read the same settings
    // (MeshRateLimit's own a frozen copy, the service's and Redis's GlobalRateLimit's resolved, frozen objects).
    const settings: StackSettings = { ...plainCopy(own), ratelimit, redis };
    deepFreeze(settings);
    return new MeshRateLimitPlan(PLAN_MAKER, a, settings, bookinfo, global);
}
