/**
 * Objects shared with the cluster: what the stack creates under a fixed name outside its own
 * namespaces, and what it does when such an object already exists. Decided before any resource is
 * registered, so `pulumi preview` already says it and `pulumi up` never stops halfway with
 * AlreadyExists (pulumi-kubernetes ≥ 4.29 refuses to create an object that exists).
 *
 * The objects:
 * - IngressClass `<ingressClassName>` (cluster-scoped; `current` profile with `managedApi`): Istio
 *   serves an Ingress that names a class only when an IngressClass of that name has controller
 *   `istio.io/ingress-controller`; without the object it falls back to the mesh config's
 *   `ingressControllerMode`, STRICT by default, and ignores the Ingress. Istio does not install one.
 * - PeerAuthentication `default` in the mesh namespace (`current` profile, `mutualTls` with
 *   `mutualTlsScope` `mesh`): mesh-wide, and many meshes already have one.
 * - The EnvoyFilters `filter-ratelimit*` (in the gateway's namespace) and `filter-local-ratelimit-svc`
 *   (in the workload's): the stack's own names, but Istio's rate-limit task uses the same names, so
 *   a mesh that followed it already has them.
 *
 * Rule: an object that carries this stack's owner annotation (`mesh-ratelimit.io/owner:
 * <organization>/<project>/<stack>`, components/ownership.ts) was created by this very stack (an
 * earlier `pulumi up`) and stays managed by it; the `part-of` label, which every stack of the
 * program carries, proves nothing. Any other existing object is never
 * modified, adopted or deleted: either it already gives what the stack needs (then nothing is
 * created and a message says so) or the program stops with the object's name and the fix.
 *
 * Pure: the cluster's answer comes in as a list of objects (`lookupSharedObjects` in
 * cluster/cluster-lookup.ts asks kubectl; offline renders pass an empty list, "the cluster lacks
 * everything").
 */
import {
    DuplicateObject,
    LiveObjectMeta,
    OWNER_ANNOTATION,
    OwnershipVerdict,
    describeHolder,
    isOwnedBy,
    kubectlGetCommand,
    objectId,
} from "../components/ownership";
import { IstioRouting, StackHosts, hostSharers } from "./host-sharers";
import { ISTIO_INGRESS_CONTROLLER } from "../components/managed-api";
import { globalArgsFromSettings, localArgsFromSettings } from "../mesh/mesh-ratelimit";
import { GlobalRateLimitPlan, planGlobalRateLimit } from "../components/global-ratelimit-plan";
import { FilterLayout, PER_INSTANCE_MIN_ISTIO, entriesOfStage, isRateLimitFilter } from "../builders/envoy-filters";
import { Problem } from "../lib/problems";
import { StackSettings } from "../mesh/settings-types";

export const MESH_PEER_AUTHENTICATION = "default";

/** An object as `kubectl get -o json` returns it (only the fields the decisions read). */
export interface LiveObject extends LiveObjectMeta {
    metadata: LiveObjectMeta["metadata"] & { resourceVersion?: string; uid?: string };
    spec?: any;
}

/** A fixed-name object the stack would create outside its own namespaces. */
export interface SharedObjectRef {
    kind: "IngressClass" | "PeerAuthentication" | "EnvoyFilter";
    apiVersion: string;
    name: string;
    /** Absent for cluster-scoped objects. */
    namespace?: string;
    /** kubectl's resource argument (`<plural>.<group>`), unambiguous even when several groups share a kind. */
    resource: string;
}

export type SharedAction =
    /** Absent: the stack creates it (and deletes it on destroy). */
    | "create"
    /** Present and labelled as this stack's: it stays managed by the stack. */
    | "manage"
    /** Present, not the stack's, and already what the stack needs: nothing is created or changed. */
    | "leave";

export interface SharedDecision {
    ref: SharedObjectRef;
    action: SharedAction;
    message: string;
}

export interface SharedObjectsPlan {
    decisions: SharedDecision[];
    /** Non-empty: the program must stop before registering anything. */
    problems: Problem[];
    /** Whether the stack registers IngressClass `<ingressClassName>` (current profile, managed API). */
    ingressClass: boolean;
    /** Whether the stack registers PeerAuthentication `default` (current profile, mutualTls). */
    peerAuthentication: boolean;
}

export function refName(r: SharedObjectRef): string {
    return objectId(r);
}

/** Every fixed-name object outside the stack's own namespaces that these settings would create. */
export function sharedObjectRefs(s: StackSettings, global: GlobalRateLimitPlan = planGlobalRateLimit(globalArgsFromSettings(s))): SharedObjectRef[] {
    const refs: SharedObjectRef[] = [];
    if (s.managedApi && s.apiProfile === "current") {
        refs.push({
            kind: "IngressClass",
            apiVersion: "networking.k8s.io/v1",
            name: s.managedApi.ingressClassName,
            resource: "ingressclasses.networking.k8s.io",
        });
    }
    if (s.mesh.mutualTls && s.mesh.mutualTlsScope === "mesh" && s.apiProfile === "current") {
        refs.push({
            kind: "PeerAuthentication",
            apiVersion: "security.istio.io/v1",
            name: MESH_PEER_AUTHENTICATION,
            namespace: s.mesh.namespace,
            resource: "peerauthentications.security.istio.io",
        });
    }
    // The names and namespaces come from the same plans the components build their filters from.
    const local = localArgsFromSettings(s);
    const filters = [...global.filters, { name: local.filterName!, namespace: local.namespace! }];
    for (const { name, namespace } of filters) {
        refs.push({ kind: "EnvoyFilter", apiVersion: "networking.istio.io/v1alpha3", name, namespace, resource: "envoyfilters.networking.istio.io" });
    }
    return refs;
}

function findLive(live: LiveObject[], r: SharedObjectRef): LiveObject | undefined {
    return live.find((o) => o.kind === r.kind && o.metadata.name === r.name && (r.namespace === undefined || o.metadata.namespace === r.namespace));
}

/**
 * The decision table. `live` holds the objects the cluster already has (any subset of
 * `sharedObjectRefs(s)`; other objects are ignored).
 *
 * | object | absent | this stack's | someone else's |
 * |---|---|---|---|
 * | IngressClass | create | manage | controller `istio.io/ingress-controller`: leave; other controller: problem |
 * | PeerAuthentication default | create | manage | mesh-wide STRICT: leave; anything else: problem |
 * | EnvoyFilter filter-ratelimit* | create | manage | problem (the stack needs its own content there) |
 */
export function planSharedObjects(
    s: StackSettings,
    live: LiveObject[],
    global: GlobalRateLimitPlan = planGlobalRateLimit(globalArgsFromSettings(s)),
    owner = "",
): SharedObjectsPlan {
    const plan: SharedObjectsPlan = { decisions: [], problems: [], ingressClass: false, peerAuthentication: false };
    for (const ref of sharedObjectRefs(s, global)) {
        const o = findLive(live, ref);
        const name = refName(ref);
        let action: SharedAction | undefined;
        let message = "";
        if (!o) {
            action = "create";
            message = `${name}: not in the cluster; the stack creates it and deletes it on destroy`;
        } else if (isOwnedBy(o, owner)) {
            action = "manage";
            message = `${name}: created by this stack (${OWNER_ANNOTATION}=${owner}); kept under its management`;
        } else if (ref.kind === "IngressClass") {
            const controller: unknown = o.spec?.controller;
            if (controller === ISTIO_INGRESS_CONTROLLER) {
                action = "leave";
                message = `${name}: already exists with controller ${ISTIO_INGRESS_CONTROLLER} (not created by this stack); Istio serves the Ingress through it; the stack leaves it alone and never deletes it`;
            } else {
                plan.problems.push({
                    key: "ingressClassName",
                    value: ref.name,
                    problem: `${name} already exists with controller '${String(controller)}', not ${ISTIO_INGRESS_CONTROLLER}: Istio would not serve an Ingress of this class, and the stack never modifies an IngressClass it did not create`,
                    fix: `pulumi config set ingressClassName istio-mesh   (any name no IngressClass uses yet: the stack then creates that class for Istio), or have the class's owner point it at ${ISTIO_INGRESS_CONTROLLER}`,
                });
            }
        } else if (ref.kind === "PeerAuthentication") {
            const mode: unknown = o.spec?.mtls?.mode;
            const selector = o.spec?.selector;
            const meshWide = !selector || Object.keys(selector.matchLabels ?? {}).length === 0;
            if (mode === "STRICT" && meshWide) {
                action = "leave";
                message = `${name}: already exists with mtls.mode STRICT (not created by this stack): mesh mutual TLS is on; the stack creates no PeerAuthentication and never changes or deletes this one`;
            } else {
                const what = meshWide
                    ? `mtls.mode ${mode === undefined ? "unset (PERMISSIVE in the root namespace)" : String(mode)}`
                    : "a workload selector, so it is not mesh-wide";
                plan.problems.push({
                    key: "mutualTls",
                    value: "true",
                    problem: `${name} already exists with ${what} and was not created by this stack; the stack needs mesh-wide STRICT mutual TLS and never modifies an object it did not create`,
                    fix: meshWide
                        ? `make it STRICT yourself: kubectl -n ${ref.namespace} patch peerauthentication ${ref.name} --type merge -p '{"spec":{"mtls":{"mode":"STRICT"}}}'   (then the stack leaves it as it is), or pulumi config set mutualTls false`
                        : `the name '${ref.name}' in ${ref.namespace} is reserved for the mesh-wide policy: rename that workload policy, or pulumi config set mutualTls false`,
                });
            }
        } else {
            const other = o.metadata.annotations?.[OWNER_ANNOTATION];
            plan.problems.push({
                key: "meshNamespace",
                value: s.mesh.namespace,
                problem: `${name} already exists and was not created by this stack (${other !== undefined ? `it belongs to stack ${other}` : `no ${OWNER_ANNOTATION}=${owner} annotation`}); creating it would merge into it or stop pulumi up halfway, and taking it over would replace someone else's rate limiting`,
                fix:
                    other !== undefined
                        ? `two stacks need objects of their own: pulumi config set filterLayout per-instance   (gateway filters named after the stack's own service) with namespaces of the stack's own (workloadNamespace, ratelimitNamespace); or destroy stack ${other} first`
                        : `if it is left from Istio's rate-limit task or an earlier install, remove it first: kubectl -n ${ref.namespace} delete envoyfilter ${ref.name}; otherwise remove the other rate-limit setup before deploying this stack`,
            });
        }
        if (action) {
            plan.decisions.push({ ref, action, message });
            const registered = action !== "leave";
            if (ref.kind === "IngressClass") plan.ingressClass = registered;
            if (ref.kind === "PeerAuthentication") plan.peerAuthentication = registered;
        }
    }
    return plan;
}

// ---------------------------------------------------------------------------------------------
// Ownership: every object the stack would create, looked up before anything is registered
// (components/ownership.ts records them; cluster/cluster-lookup.ts lookupObjects asks kubectl).

/** Per component type: the config key that places its objects (the problem's key) and the fix that moves them. */
const PLACEMENT: Readonly<Record<string, { key: string; fix: string }>> = {
    "mesh-ratelimit:index:Bookinfo": {
        key: "bookinfo",
        fix: "pulumi config set bookinfo existing   (bookinfo already runs there: the stack deploys only its limits on it), or pulumi config set workloadNamespace <namespace>   (a namespace of the stack's own, which must exist, for its own bookinfo)",
    },
    "mesh-ratelimit:index:Redis": {
        key: "ratelimitNamespace",
        fix: "pulumi config set ratelimitNamespace <namespace>   (a namespace of the stack's own for the rate-limit service and its Redis), or pulumi config set redisMode external with redisAddress",
    },
    "mesh-ratelimit:index:RateLimitService": {
        key: "ratelimitNamespace",
        fix: "pulumi config set ratelimitNamespace <namespace>   (a namespace of the stack's own), or pulumi config set ratelimitServiceName <name> and configName <name>",
    },
    "mesh-ratelimit:index:AccessPolicies": {
        key: "ratelimitNamespace",
        fix: "pulumi config set ratelimitNamespace <namespace>   (a namespace of the stack's own), or pulumi config set accessPolicies false",
    },
    "mesh-ratelimit:index:RateLimitMonitoring": {
        key: "ratelimitNamespace",
        fix: "pulumi config set ratelimitNamespace <namespace>, or monitoringDashboardNamespace <namespace>, or pulumi config set monitoringDashboard false",
    },
    "mesh-ratelimit:index:GlobalRateLimit": {
        key: "gatewayNamespace",
        fix: "pulumi config set filterLayout per-instance   (filters named after the stack's own service), or gatewayNamespace; if it is left from Istio's rate-limit task, remove it first",
    },
    "mesh-ratelimit:index:LocalRateLimit": {
        key: "workloadNamespace",
        fix: "pulumi config set workloadNamespace <namespace>; if it is left from Istio's rate-limit task, remove it first",
    },
    "mesh-ratelimit:index:ManagedApi": {
        key: "managedApiNamespace",
        fix: "pulumi config set managedApiNamespace <namespace>, or ingressName <name>, or pulumi config set managedApi false",
    },
    "mesh-ratelimit:index:MeshMutualTls": {
        key: "mutualTls",
        fix: "pulumi config set mutualTls false, or give the stack namespaces of its own (workloadNamespace, ratelimitNamespace)",
    },
};

/**
 * The ownership decisions as problems: every object that exists and is not this stack's, named with
 * who holds it and the fix; every object two of the stack's components would both write. Empty: every
 * object is absent (created) or this stack's own (kept).
 */
export function ownershipProblems(verdicts: OwnershipVerdict[], duplicates: DuplicateObject[], owner: string): Problem[] {
    const problems: Problem[] = [];
    for (const v of verdicts) {
        if (v.state !== "foreign") continue;
        const place = PLACEMENT[v.ref.component ?? ""] ?? { key: "workloadNamespace", fix: "give the stack names or namespaces of its own" };
        const ours = v.labels?.["app.kubernetes.io/part-of"] === "mesh-ratelimit" && v.otherOwner === undefined;
        const relocate = place.fix;
        problems.push({
            key: place.key,
            problem: `${objectId(v.ref)} already exists and is not this stack's (${owner}): ${describeHolder(v)}. Creating it would merge into it by server-side apply (or stop pulumi up halfway on a conflicting field) and pulumi destroy would then delete it; the stack takes nothing it did not create (see it: ${kubectlGetCommand(v.ref)})`,
            fix:
                v.otherOwner !== undefined
                    ? `two stacks need objects of their own: ${relocate}; or destroy stack ${v.otherOwner} first`
                    : ours
                      ? `${relocate}. If it is this very stack's, made before owner annotations existed: kubectl annotate ${v.ref.kind.toLowerCase()} ${v.ref.name}${v.ref.namespace ? ` -n ${v.ref.namespace}` : ""} ${OWNER_ANNOTATION}=${owner}`
                      : relocate,
        });
    }
    for (const d of duplicates) {
        problems.push({
            key: "workloadNamespace",
            problem: `${d.id} would be written by two of the stack's resources: ${d.resources.join(", ")}`,
            fix: "give the components separate namespaces or names (ratelimitNamespace, workloadNamespace, managedApiNamespace)",
        });
    }
    return problems;
}

/** One line for the preview: how many objects were checked and what each kind's decisions were. */
export function ownershipSummary(verdicts: OwnershipVerdict[]): string {
    const byKind = new Map<string, { absent: number; ours: number; foreign: number }>();
    for (const v of verdicts) {
        const c = byKind.get(v.ref.kind) ?? { absent: 0, ours: 0, foreign: 0 };
        c[v.state]++;
        byKind.set(v.ref.kind, c);
    }
    const kinds = [...byKind.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, c]) => `${k} ${c.absent + c.ours + c.foreign}${c.ours ? ` (${c.ours} this stack's)` : ""}${c.foreign ? ` (${c.foreign} refused)` : ""}`);
    return `checked ${verdicts.length} objects in the cluster before creating any: ${kinds.join(", ")}`;
}

// ---------------------------------------------------------------------------------------------
// Reach: which gateway pods the gateway filters would apply to, and the mesh-wide mutual TLS
// policies already in force. Decided before anything is registered (cluster/cluster-lookup.ts
// asks kubectl; offline renders skip it).

/** What the program asks the cluster for the reach checks. */
export interface MeshReachQuery {
    /** `key=value` of the gateway pods (`gatewaySelector`), looked up in every namespace. */
    gatewaySelector: string;
    /** Istio's root namespace, where mesh-wide PeerAuthentications live. */
    meshNamespace: string;
    /** Namespaces whose EnvoyFilters reach the gateway's pods (its own and the root namespace). */
    envoyFilterNamespaces: string[];
}

/** The cluster's answer: the gateway pods of every namespace, and the PeerAuthentications of the root namespace. */
export interface MeshReachState {
    gatewayPods: LiveObject[];
    peerAuthentications: LiveObject[];
    /** The EnvoyFilters of `envoyFilterNamespaces` (other stacks', hand-written ones, the stack's own). Absent: not checked. */
    envoyFilters?: LiveObject[];
    /** The Istio Gateways and VirtualServices of every namespace (program/host-sharers.ts). Absent: not checked. */
    gateways?: IstioRouting[];
    virtualServices?: IstioRouting[];
}

export function meshReachQuery(s: StackSettings): MeshReachQuery {
    return {
        gatewaySelector: `${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}`,
        meshNamespace: s.mesh.namespace,
        envoyFilterNamespaces: [...new Set([s.mesh.gatewayNamespace, s.mesh.namespace])],
    };
}

/** A PeerAuthentication without a workload selector: in the root namespace, it governs the whole mesh. */
export function isMeshWide(pa: LiveObject): boolean {
    return Object.keys(pa.spec?.selector?.matchLabels ?? {}).length === 0;
}

/**
 * The reach decisions:
 * - gateway filters in Istio's root namespace (the default install's gateway namespace, or
 *   `filterNamespaces` `root`) apply to pods with the selector's label in **every** namespace: when
 *   such pods also run outside `gatewayNamespace` (another team's gateway deployment with the same
 *   labels), the program stops, naming them. Its filters would reach that gateway, and the
 *   rate-limit service's access policy would refuse that gateway's calls (HTTP 500).
 * - no gateway pod with the selector's label in `gatewayNamespace`: a message (the limits start to
 *   apply when such pods exist).
 * - mesh-wide PeerAuthentications: with `mutualTlsScope` `workloads` a message (they keep governing
 *   everyone else; the stack's own pods are STRICT through their workload-level policies, which win);
 *   with `mesh`, one under another name than `default` is a problem (Istio applies only the oldest
 *   mesh-wide policy, so the stack's would be ignored or would silently replace it).
 */
export function planMeshReach(
    s: StackSettings,
    state: MeshReachState,
    global: GlobalRateLimitPlan = planGlobalRateLimit(globalArgsFromSettings(s)),
): { problems: Problem[]; messages: string[] } {
    const problems: Problem[] = [];
    const messages: string[] = [];
    const sel = `${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}`;
    const filterNs = s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace;
    const byNs = new Map<string, string[]>();
    for (const p of state.gatewayPods) {
        const ns = p.metadata.namespace ?? "default";
        byNs.set(ns, [...(byNs.get(ns) ?? []), p.metadata.name]);
    }
    const others = [...byNs.keys()].filter((ns) => ns !== s.mesh.gatewayNamespace).sort();
    if (filterNs === s.mesh.namespace && others.length) {
        const list = others.map((ns) => `${ns} (${byNs.get(ns)!.slice(0, 3).join(", ")}${byNs.get(ns)!.length > 3 ? ", ..." : ""})`).join("; ");
        problems.push({
            key: "gatewaySelector",
            value: sel,
            problem: `also selects gateway pods outside ${s.mesh.gatewayNamespace}: ${list}. The gateway EnvoyFilters live in ${filterNs}, Istio's root namespace, so they would apply to those gateways too (their hosts on port ${s.bookinfo.gatewayPort} with the stack's limits and its outages; with accessPolicies the rate-limit service refuses their calls, HTTP 500)`,
            fix: `give the stack's gateway pods a label no other gateway has and select it: pulumi config set gatewaySelector <key>=<value>; or run the gateway in a namespace of its own (pulumi config set gatewayNamespace <namespace>, filterNamespaces own)`,
        });
    }
    if (!byNs.has(s.mesh.gatewayNamespace)) {
        messages.push(
            `no pod labelled ${sel} runs in ${s.mesh.gatewayNamespace} (gatewayNamespace): the gateway limits apply once the gateway's pods run there`,
        );
    }
    const meshWide = state.peerAuthentications.filter((pa) => isMeshWide(pa) && (pa.metadata.namespace ?? s.mesh.namespace) === s.mesh.namespace);
    if (s.mesh.mutualTls && meshWide.length) {
        const names = meshWide.map((pa) => `${pa.metadata.name} (${pa.spec?.mtls?.mode ?? "mode unset"})`).join(", ");
        const disabled = meshWide.filter((pa) => pa.spec?.mtls?.mode === "DISABLE");
        if (s.mesh.mutualTlsScope === "workloads" && disabled.length) {
            // Clients choose mutual TLS from namespace- and mesh-wide policies only: with a mesh-wide
            // DISABLE they send plain text, which the stack's STRICT pods refuse.
            problems.push({
                key: "mutualTlsScope",
                value: s.mesh.mutualTlsScope,
                problem: `the mesh-wide PeerAuthentication ${disabled.map((pa) => `${s.mesh.namespace}/${pa.metadata.name}`).join(", ")} has mode DISABLE: clients decide from it to send plain text, which the stack's STRICT pods (workload-level policies) would refuse, so the gateway's calls to the rate-limit service and bookinfo's calls would fail`,
                fix: "pulumi config set mutualTls false   (the stack's pods then follow the mesh), or change that policy's mode",
            });
        } else if (s.mesh.mutualTlsScope === "workloads") {
            messages.push(
                `mesh-wide PeerAuthentication in ${s.mesh.namespace}: ${names}; it keeps governing every other workload. The stack's own pods are STRICT through their workload-level PeerAuthentications, which take precedence`,
            );
        } else {
            const foreign = meshWide.filter((pa) => pa.metadata.name !== MESH_PEER_AUTHENTICATION);
            if (foreign.length) {
                problems.push({
                    key: "mutualTlsScope",
                    value: s.mesh.mutualTlsScope,
                    problem: `the mesh already has a mesh-wide PeerAuthentication under another name: ${foreign.map((pa) => `${s.mesh.namespace}/${pa.metadata.name} (${pa.spec?.mtls?.mode ?? "mode unset"})`).join(", ")}. Istio applies only the oldest mesh-wide policy, so PeerAuthentication ${MESH_PEER_AUTHENTICATION} would be ignored or would silently take its place`,
                    fix: `pulumi config set mutualTlsScope workloads   (STRICT for the stack's own pods only), or make the existing policy STRICT yourself and pulumi config set mutualTls false`,
                });
            }
        }
    }
    const neighbours = planListenerNeighbours(s, state, global);
    const sharers = s.mesh.vhostScope === "all" ? [] : hostSharers(stackHostsOf(s, state, global), state.gateways ?? [], state.virtualServices ?? []);
    return { problems: [...problems, ...neighbours.problems], messages: [...messages, ...neighbours.messages, ...sharers.map((h) => h.message)] };
}

/** The stack's limited virtual hosts on its gateway, for the host-sharing check. */
export function stackHostsOf(s: StackSettings, state: Pick<MeshReachState, "gatewayPods">, global: GlobalRateLimitPlan): StackHosts {
    return {
        virtualHosts: global.args.gateway.virtualHosts ?? [],
        port: s.bookinfo.gatewayPort,
        gatewayPodLabels: gatewayPodLabels(s, state),
        ownGateway: `${s.bookinfo.namespace}/${s.bookinfo.gatewayName}`,
        ownVirtualService: `${s.bookinfo.namespace}/${s.bookinfo.virtualServiceName}`,
    };
}

/** The labels of the gateway pods in `gatewayNamespace`; without any, the selector's own label stands in. */
function gatewayPodLabels(s: StackSettings, state: Pick<MeshReachState, "gatewayPods">): Record<string, string>[] {
    const podLabels = state.gatewayPods.filter((p) => (p.metadata.namespace ?? "default") === s.mesh.gatewayNamespace).map((p) => p.metadata.labels ?? {});
    return podLabels.length ? podLabels : [{ [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value }];
}

/** Another rate-limit filter found on the stack's gateway pods and listener port, and what it means. */
export interface Neighbour {
    envoyFilter: string;
    httpFilter: string;
    domain: string;
    verdict: "coexists" | "leaks";
    why: string;
}

/**
 * The other rate-limit filters on the stack's gateway pods and listener port (other stacks'
 * EnvoyFilters, hand-written ones) and whether they coexist with the stack's filters or leak:
 * - a filter reads the route and virtual-host `rate_limits` of its `stage` on every host of the
 *   listener, and per-route config under its own name only (docs/upstream.md);
 * - per-instance layout (stage 10, descriptors under its own name): another filter leaks into the
 *   stack's hosts only when its own patches put `rate_limits` of its stage (or config under its
 *   name) on them: a virtual host named `""` or not named, or one of the stack's. Then requests to
 *   the stack's hosts also call that filter's service (and fail with it when it fails closed): a
 *   message naming it and the fix for its owner;
 * - shared layout (the specification's: canonical name, stage 0): another filter at stage 0 reads
 *   the stack's `rate_limits` on the stack's hosts, so each request calls both services: a problem,
 *   fixed by the per-instance layout.
 */
export function classifyNeighbours(
    s: StackSettings,
    state: MeshReachState,
    plan: GlobalRateLimitPlan = planGlobalRateLimit(globalArgsFromSettings(s)),
): Neighbour[] {
    const gatewayNs = s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace;
    const ownObjects = new Set(plan.filters.map((f) => `${gatewayNs}/${f.name}`));
    const ownHosts = new Set(s.mesh.vhostScope === "all" ? [] : (plan.args.gateway.virtualHosts ?? []));
    const port = s.bookinfo.gatewayPort;
    const shared = s.global.filterLayout === FilterLayout.Shared;
    const ownStage = shared ? 0 : 10;
    const out: Neighbour[] = [];
    // Not the stack's own, in a namespace whose filters reach the gateway, selecting its pods.
    const known = gatewayPodLabels(s, state);
    const reaching = (state.envoyFilters ?? []).filter((f) => {
        if (ownObjects.has(`${f.metadata.namespace}/${f.metadata.name}`)) return false;
        if (![s.mesh.gatewayNamespace, s.mesh.namespace].includes(String(f.metadata.namespace))) return false;
        const sel: Record<string, string> = f.spec?.workloadSelector?.labels ?? {};
        return known.some((labels) => Object.entries(sel).every(([k, v]) => labels[k] === v));
    });
    // Every descriptor patch of those filters, wherever it sits (a filter and its rate_limits are often in separate objects).
    const allPatches: any[] = reaching.flatMap((f) => f.spec?.configPatches ?? []);
    for (const f of reaching) {
        const id = `${f.metadata.namespace}/${f.metadata.name}`;
        const patches: any[] = f.spec?.configPatches ?? [];
        for (const p of patches) {
            const value = p.patch?.value ?? {};
            const pPort = p.match?.listener?.portNumber;
            if (p.applyTo !== "HTTP_FILTER" || !isRateLimitFilter(value) || (pPort !== undefined && Number(pPort) !== port)) continue;
            const stage = Number(value.typed_config?.stage ?? 0);
            const name: string = value.name;
            const base = { envoyFilter: id, httpFilter: name, domain: String(value.typed_config?.domain ?? "") };
            if (name === plan.httpFilterNames.global) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `it has the stack's own HTTP filter name ${name}: it reads the stack's per-route config and the stack reads its`,
                });
                continue;
            }
            if (shared && stage === ownStage) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `both run at stage 0 on listener ${port}: it reads the stack's route and virtual-host rate_limits, so every request to the stack's hosts also calls its service (domain ${base.domain}), and the stack's filter reads its`,
                });
                continue;
            }
            // Which virtual hosts its own descriptors reach.
            const reached = allPatches.filter((q) => {
                const v = q.patch?.value ?? {};
                const vh = q.match?.routeConfiguration?.vhost?.name;
                const onOurs = vh === undefined || vh === "" || ownHosts.has(vh) || s.mesh.vhostScope === "all";
                const rl = q.applyTo === "VIRTUAL_HOST" ? v.rate_limits : q.applyTo === "HTTP_ROUTE" ? v.route?.rate_limits : undefined;
                const per = v.typed_per_filter_config?.[name]?.rate_limits;
                return onOurs && (entriesOfStage(rl, stage).length > 0 || (Array.isArray(per) && per.length > 0));
            });
            if (reached.length) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `its descriptors reach the stack's virtual hosts (a patch names ${[...new Set(reached.map((q) => JSON.stringify(q.match?.routeConfiguration?.vhost?.name ?? "(none)")))].join(", ")}): requests to them also call its service (domain ${base.domain})${value.typed_config?.failure_mode_deny ? " and get 500 when it is down (failure_mode_deny)" : ""}`,
                });
            } else {
                out.push({
                    ...base,
                    verdict: "coexists",
                    why: shared
                        ? `it runs at stage ${stage} and its descriptors sit on its own hosts: it never reads the stack's stage-0 rate_limits`
                        : `it reads only ${stage === ownStage ? "" : `stage-${stage} `}rate_limits and config under its own name, on its own hosts; the stack's descriptors are RateLimitPerRoute under ${plan.httpFilterNames.global}`,
                });
            }
        }
    }
    return out;
}

/** `major.minor` of an image tag such as `1.24.3` or `1.26.0-distroless`; undefined for other tags. */
export function istioVersionOfImage(image: string | undefined): string | undefined {
    const m = /:(\d+)\.(\d+)(?:\.\d+)?(?:-[\w.]+)?$/.exec(image ?? "");
    return m ? `${m[1]}.${m[2]}` : undefined;
}

function atLeast(version: string, min: string): boolean {
    const [a, b] = version.split(".").map(Number);
    const [c, d] = min.split(".").map(Number);
    return a! > c! || (a === c && b! >= d!);
}

/** The Istio version of each gateway pod in `gatewayNamespace`, read from its `istio-proxy` container's image tag (pods with another tag are skipped). */
export function gatewayProxyVersions(s: StackSettings, state: MeshReachState): { pod: string; version: string }[] {
    return state.gatewayPods
        .filter((p) => (p.metadata.namespace ?? "default") === s.mesh.gatewayNamespace)
        .flatMap((p) => {
            const c = (p.spec?.containers ?? []).find((x: any) => x.name === "istio-proxy");
            const version = istioVersionOfImage(c?.image);
            return version ? [{ pod: p.metadata.name, version }] : [];
        });
}

/** The neighbours as preview lines: a message for each, a problem when the stack's own layout leaks. */
export function planListenerNeighbours(
    s: StackSettings,
    state: MeshReachState,
    global: GlobalRateLimitPlan = planGlobalRateLimit(globalArgsFromSettings(s)),
): { problems: Problem[]; messages: string[] } {
    const problems: Problem[] = [];
    const messages: string[] = [];
    const shared = s.global.filterLayout === FilterLayout.Shared;
    if (!shared) {
        const old = gatewayProxyVersions(s, state).filter((v) => !atLeast(v.version, PER_INSTANCE_MIN_ISTIO));
        if (old.length) {
            problems.push({
                key: "filterLayout",
                value: s.global.filterLayout,
                problem: `the gateway's proxies run Istio ${[...new Set(old.map((v) => v.version))].join(", ")} (${old
                    .slice(0, 3)
                    .map((v) => v.pod)
                    .join(
                        ", ",
                    )}): per-instance filters need Istio ${PER_INSTANCE_MIN_ISTIO} or later (Envoy 1.33's RateLimitPerRoute.rate_limits); there the limits would not apply`,
                fix: `pulumi config set filterLayout shared   (the specification's layout, one stack per gateway listener), or upgrade the gateway to Istio ${PER_INSTANCE_MIN_ISTIO} or later`,
            });
        }
    }
    for (const n of classifyNeighbours(s, state, global)) {
        const head = `rate-limit filter ${n.httpFilter} (EnvoyFilter ${n.envoyFilter}) on the gateway's listener ${s.bookinfo.gatewayPort}`;
        if (n.verdict === "coexists") messages.push(`${head}: coexists safely: ${n.why}`);
        else if (shared)
            problems.push({
                key: "filterLayout",
                value: s.global.filterLayout,
                problem: `${head} would leak: ${n.why}`,
                fix: `pulumi config set filterLayout per-instance   (needs Istio ${PER_INSTANCE_MIN_ISTIO} or later; descriptors under the stack's own filter name)`,
            });
        else
            messages.push(
                `${head} would leak into the stack's hosts: ${n.why}. The fix is its owner's: name its own virtual hosts in its patches (vhost name <host>:<port>, never ""), or move to per-filter RateLimitPerRoute config under a filter name of its own`,
            );
    }
    return { problems, messages };
}
