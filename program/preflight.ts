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
 * <organization>/<project>/<stack>`, components/common/ownership.ts) was created by this very stack (an
 * earlier `pulumi up`) and stays managed by it; the `part-of` label, which every stack of the
 * program carries, proves nothing. Any other existing object is never
 * modified, adopted or deleted: either it already gives what the stack needs (then nothing is
 * created and a message says so) or the program stops with the object's name and the fix.
 *
 * Pure: the cluster's answer comes in as a list of objects (`lookupSharedObjects` in
 * cluster/cluster-lookup.ts asks kubectl; offline renders pass an empty list, "the cluster lacks
 * everything").
 */
import { GlobalRateLimitPlan } from "../components/global-ratelimit/plan";
import { ISTIO_INGRESS_CONTROLLER } from "../builders/managed-api";
import {
    DuplicateObject,
    LiveObjectMeta,
    OWNER_ANNOTATION,
    ObjectRef,
    OwnershipVerdict,
    describeHolder,
    hasIdLessOwner,
    isOwnedBy,
    kubectlResource,
    kubectlGetCommand,
    objectId,
    ownerWithoutId,
} from "../components/common/ownership";
import { Problem } from "../lib/problems";
import { localArgsOf } from "../mesh/mesh-plan";
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
export function sharedObjectRefs(s: StackSettings, global: GlobalRateLimitPlan): SharedObjectRef[] {
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
    const local = localArgsOf(s);
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
export function planSharedObjects(s: StackSettings, live: LiveObject[], global: GlobalRateLimitPlan, owner = ""): SharedObjectsPlan {
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
        } else if (hasIdLessOwner(o, owner)) {
            const key = ref.kind === "IngressClass" ? "ingressClassName" : ref.kind === "PeerAuthentication" ? "mutualTls" : "meshNamespace";
            plan.problems.push(idLessOwnerProblem({ ...ref, resourceName: ref.name }, owner, key));
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
            const d = foreignPeerAuthentication(ref, o);
            if ("refused" in d) plan.problems.push(d.refused);
            else [action, message] = ["leave", d.leave];
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

/** Someone else's PeerAuthentication under the stack's name: left when it is mesh-wide STRICT, else refused. */
function foreignPeerAuthentication(ref: SharedObjectRef, o: LiveObject): { leave: string } | { refused: Problem } {
    const name = refName(ref);
    const mode: unknown = o.spec?.mtls?.mode;
    const selector = o.spec?.selector;
    const meshWide = !selector || Object.keys(selector.matchLabels ?? {}).length === 0;
    if (mode === "STRICT" && meshWide) {
        return {
            leave: `${name}: already exists with mtls.mode STRICT (not created by this stack): mesh mutual TLS is on; the stack creates no PeerAuthentication and never changes or deletes this one`,
        };
    }
    const what = meshWide
        ? `mtls.mode ${mode === undefined ? "unset (PERMISSIVE in the root namespace)" : String(mode)}`
        : "a workload selector, so it is not mesh-wide";
    return {
        refused: {
            key: "mutualTls",
            value: "true",
            problem: `${name} already exists with ${what} and was not created by this stack; the stack needs mesh-wide STRICT mutual TLS and never modifies an object it did not create`,
            fix: meshWide
                ? `make it STRICT yourself: kubectl -n ${ref.namespace} patch peerauthentication ${ref.name} --type merge -p '{"spec":{"mtls":{"mode":"STRICT"}}}'   (then the stack leaves it as it is), or pulumi config set mutualTls false`
                : `the name '${ref.name}' in ${ref.namespace} is reserved for the mesh-wide policy: rename that workload policy, or pulumi config set mutualTls false`,
        },
    };
}

// ---------------------------------------------------------------------------------------------
// Ownership: every object the stack would create, looked up before anything is registered
// (components/common/ownership.ts records them; cluster/cluster-lookup.ts lookupObjects asks kubectl).

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
        if (v.otherOwner !== undefined && v.otherOwner === ownerWithoutId(owner) && v.otherOwner !== owner) {
            problems.push(idLessOwnerProblem(v.ref, owner, place.key, place.fix));
            continue;
        }
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

/**
 * An object that carries this stack name's owner value without a stack id (`<org>/<project>/<stack>`,
 * as releases before stack ids wrote it). That value is shared by every stack of the name in every
 * self-managed backend, so it proves nothing: refused, with the fix for each case. Never adopted
 * silently: adopting it is what let one person's `up` take another's objects.
 */
export function idLessOwnerProblem(ref: ObjectRef, owner: string, key: string, relocate?: string): Problem {
    const old = ownerWithoutId(owner);
    const ns = ref.namespace ? ` -n ${ref.namespace}` : "";
    return {
        key,
        problem: `${objectId(ref)} carries ${OWNER_ANNOTATION}=${old}, the owner value without a stack id that every stack named ${old.split("/").pop()} writes in every self-managed backend; it may be this stack's (made before stack ids) or another backend's stack of the same name, so the stack does not take it (this stack is ${owner})`,
        fix: `if this stack's state lists it (pulumi stack export | grep '${ref.name}'), mark it as this stack's: kubectl annotate ${kubectlResource(ref)} ${ref.name}${ns} ${OWNER_ANNOTATION}=${owner} --overwrite; if it does not, it is another stack's: ${relocate ?? "give the stack names or namespaces of its own"}, or that stack's owner destroys it first`,
    };
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
