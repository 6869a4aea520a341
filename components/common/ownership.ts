/**
 * Which objects a Pulumi stack owns, and the check that keeps it from taking anything else.
 *
 * Every Kubernetes object the stack creates carries the annotation
 * `mesh-ratelimit.io/owner: <organization>/<project>/<stack>@<stackId>`: one value per stack, never
 * shared by two stacks of the same program (the label `app.kubernetes.io/part-of=mesh-ratelimit` is
 * the same for every stack and so says nothing about ownership). The stack id is a random value kept
 * with the stack (the program's `stackId` config key): the name alone is not enough, since every
 * self-managed backend reports the organization `organization`, so two people's stacks `local` would
 * otherwise be one owner.
 *
 * Before anything is registered, `plannedObjects` constructs the components once against an
 * in-memory monitor, in a Pulumi runtime context of its own, and returns every Kubernetes object
 * (kind, namespace, name) they would create. The program looks those up in the cluster and refuses
 * any that exists without this stack's annotation; only then does it construct the components for
 * real, with `ownerTransformation`, so a refusal registers nothing at all. (The Kubernetes provider
 * 4.25 creates by server-side apply, which merges into an existing object of the same name instead of
 * failing, so it cannot be relied on to notice.)
 *
 * The decisions are pure: the cluster's answer comes in as a list of objects.
 */
import * as pulumi from "@pulumi/pulumi";

/** The annotation that names the stack an object belongs to. */
export const OWNER_ANNOTATION = "mesh-ratelimit.io/owner";

/** The running stack's organization (`organization`, the self-managed backends' name, when unit-test mocks set none). */
function currentOrganization(): string {
    try {
        return pulumi.getOrganization();
    } catch {
        return "organization";
    }
}

/**
 * The owner value of the stack being deployed: `<organization>/<project>/<stack>@<stackId>`, or
 * without `@<stackId>` when none is given (the value earlier releases wrote, which two stacks
 * of the same name in two self-managed backends share: give an id).
 */
export function currentStackOwner(stackId?: string): string {
    const base = `${currentOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
    return stackId ? `${base}@${stackId}` : base;
}

/** The owner value without its stack id: what releases before stack ids wrote for the same stack name. */
export function ownerWithoutId(owner: string): string {
    const at = owner.lastIndexOf("@");
    return at < 0 ? owner : owner.slice(0, at);
}

/**
 * Whether `o` carries the id-less owner value of `owner`'s stack name: made by this stack before it
 * had an id, or by another stack of the same name (another backend). Never proof of ownership.
 */
export function hasIdLessOwner(o: Pick<LiveObjectMeta, "metadata">, owner: string): boolean {
    const base = ownerWithoutId(owner);
    return base !== owner && o.metadata.annotations?.[OWNER_ANNOTATION] === base;
}

/** Whether `o` carries `owner`'s annotation: the only proof that this very stack created it. */
export function isOwnedBy(o: Pick<LiveObjectMeta, "metadata">, owner: string): boolean {
    return o.metadata.annotations?.[OWNER_ANNOTATION] === owner;
}

/** A Kubernetes object a program would create. */
export interface ObjectRef {
    apiVersion: string;
    kind: string;
    /** Absent for cluster-scoped objects (or when the program leaves it to the provider's default). */
    namespace?: string;
    name: string;
    /** The type of the nearest component it was constructed in (`mesh-ratelimit:index:Redis`), if any. */
    component?: string;
    /** The Pulumi resource name. */
    resourceName: string;
}

/** An object as `kubectl get -o json --show-managed-fields` returns it (the fields read here). */
export interface LiveObjectMeta {
    apiVersion?: string;
    kind: string;
    metadata: {
        name: string;
        namespace?: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
        managedFields?: { manager?: string }[];
    };
}

export function objectId(r: { kind: string; namespace?: string; name: string }): string {
    return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}

/** `apps/v1` and `Deployment` of a resource type token such as `kubernetes:apps/v1:Deployment` (`v1` for core). */
export function apiOfType(type: string): { apiVersion: string; kind: string } | undefined {
    const m = /^kubernetes:([^:]+):([^:]+)$/.exec(type);
    if (!m || m[2] === "Provider" || m[1]!.startsWith("yaml") || m[1]!.startsWith("helm")) return undefined;
    const [group, version] = m[1]!.split("/");
    return { apiVersion: group === "core" ? version! : `${group}/${version}`, kind: m[2]! };
}

/** What a recorded object is in the cluster. */
export interface OwnershipVerdict {
    ref: ObjectRef;
    state: "absent" | "ours" | "foreign";
    /** For a foreign object: the owner annotation it carries (another stack's), if any. */
    otherOwner?: string;
    /** For a foreign object: its field managers and labels, for the message. */
    managers?: string[];
    labels?: Record<string, string>;
}

/** Two recorded objects with one kind, namespace and name (two components of one program). */
export interface DuplicateObject {
    id: string;
    resources: string[];
}

function sameObject(a: { kind: string; namespace?: string; name: string }, b: { kind: string; namespace?: string; name: string }): boolean {
    return a.kind === b.kind && a.name === b.name && (a.namespace ?? "") === (b.namespace ?? "");
}

/**
 * The decision for every recorded object: absent (the stack creates it), ours (it carries this
 * stack's owner annotation: an earlier `pulumi up` of this very stack created it) or foreign
 * (anything else: a user's object, another stack's, an older release's without the annotation).
 */
export function classifyObjects(planned: ObjectRef[], live: LiveObjectMeta[], owner: string): OwnershipVerdict[] {
    return planned.map((ref) => {
        const o = live.find((l) => sameObject({ kind: l.kind, namespace: l.metadata.namespace, name: l.metadata.name }, ref));
        if (!o) return { ref, state: "absent" };
        if (isOwnedBy(o, owner)) return { ref, state: "ours" };
        const theirs = o.metadata.annotations?.[OWNER_ANNOTATION];
        const managers = [...new Set((o.metadata.managedFields ?? []).map((f) => f.manager ?? "").filter((m) => m))].sort();
        return { ref, state: "foreign", ...(theirs !== undefined ? { otherOwner: theirs } : {}), managers, labels: o.metadata.labels ?? {} };
    });
}

/** Objects recorded more than once (same kind, namespace and name), with the Pulumi resources that would write them. */
export function duplicateObjects(planned: ObjectRef[]): DuplicateObject[] {
    const byId = new Map<string, ObjectRef[]>();
    for (const r of planned) byId.set(objectId(r), [...(byId.get(objectId(r)) ?? []), r]);
    return [...byId.entries()]
        .filter(([, rs]) => rs.length > 1)
        .map(([id, rs]) => ({ id, resources: rs.map((r) => `${r.resourceName} (${r.component ?? "no component"})`) }));
}

/** Who holds a foreign object, in words: its owner annotation, field managers and a few labels. */
export function describeHolder(v: OwnershipVerdict): string {
    const parts: string[] = [];
    parts.push(v.otherOwner !== undefined ? `it belongs to stack ${v.otherOwner} (${OWNER_ANNOTATION})` : `it has no ${OWNER_ANNOTATION} annotation`);
    if (v.managers?.length) parts.push(`field managers: ${v.managers.join(", ")}`);
    const labels = Object.entries(v.labels ?? {});
    if (labels.length)
        parts.push(
            `labels: ${labels
                .slice(0, 4)
                .map(([k, val]) => `${k}=${val}`)
                .join(", ")}${labels.length > 4 ? ", ..." : ""}`,
        );
    return parts.join("; ");
}

/** kubectl's resource argument for an object's kind: `deployment.apps`, `secret` (core), `envoyfilter.networking.istio.io`. */
export function kubectlResource(r: { apiVersion: string; kind: string }): string {
    const group = r.apiVersion.includes("/") ? `.${r.apiVersion.split("/")[0]}` : "";
    return `${r.kind.toLowerCase()}${group}`;
}

/** The kubectl command that lists one object, for messages. */
export function kubectlGetCommand(r: ObjectRef): string {
    return `kubectl get ${kubectlResource(r)} ${r.name}${r.namespace ? ` -n ${r.namespace}` : ""} --show-managed-fields -o yaml`;
}

function componentOf(parent: pulumi.Resource | undefined): string | undefined {
    for (let p: any = parent; p; p = p.__parentResource) {
        const t: unknown = p.__pulumiType;
        if (typeof t === "string" && t !== "pulumi:pulumi:Stack") return t;
    }
    return undefined;
}

/** The Kubernetes object a resource registration would write, or undefined (a component, a provider, another provider's resource, a read). */
export function objectOfRegistration(a: pulumi.ResourceTransformationArgs): ObjectRef | undefined {
    const api = apiOfType(a.type);
    if (!api || a.opts.id !== undefined) return undefined;
    const props = a.props as any;
    const meta = props.metadata ?? {};
    const component = componentOf(a.opts.parent);
    return {
        apiVersion: typeof props.apiVersion === "string" ? props.apiVersion : api.apiVersion,
        kind: typeof props.kind === "string" ? props.kind : api.kind,
        ...(typeof meta.namespace === "string" ? { namespace: meta.namespace } : {}),
        name: typeof meta.name === "string" ? meta.name : `(not known before deployment: ${a.name})`,
        ...(component ? { component } : {}),
        resourceName: a.name,
    };
}

/**
 * The transformation that marks every Kubernetes object with `owner` (`OWNER_ANNOTATION`): pass it
 * in a component's options (`transformations: [ownerTransformation(owner)]`, which reaches every
 * child) or register it for the whole stack.
 */
export function ownerTransformation(owner: string = currentStackOwner()): pulumi.ResourceTransformation {
    return (a) => {
        if (!objectOfRegistration(a)) return undefined;
        const props = a.props as any;
        const meta = props.metadata ?? {};
        const annotations = pulumi.output(meta.annotations ?? {}).apply((an: Record<string, string>) => ({ ...an, [OWNER_ANNOTATION]: owner }));
        return { props: { ...props, metadata: { ...meta, annotations } }, opts: a.opts };
    };
}

/** Marks the in-memory monitor of `plannedObjects` (tests that watch every monitor tell it apart). */
export const PLANNING_MONITOR = Symbol.for("mesh-ratelimit.planning-monitor");

/**
 * Every Kubernetes object `build` would create, found by running it once against an in-memory
 * monitor in a Pulumi runtime context of its own: nothing reaches the engine, and the program's own
 * context is untouched. `build` constructs the components with the transformation it is given in
 * their options. Call it before constructing them for real; the objects are the same as long as
 * `build` depends only on its arguments (no cluster lookups inside).
 *
 * It uses the runtime's per-run context and in-memory monitor (`@pulumi/pulumi/runtime/state`,
 * `runtime/mocks`), the ones Pulumi's Automation API and unit-test mocks use; @pulumi/pulumi is
 * pinned and a unit test fails if they change.
 */
export function plannedObjects(build: (record: pulumi.ResourceTransformation) => void): ObjectRef[] {
    const state = require("@pulumi/pulumi/runtime/state") as {
        withLocalStorage<T>(f: () => T): T;
        getStore(): any;
    };
    const { MockMonitor } = require("@pulumi/pulumi/runtime/mocks") as { MockMonitor: new (mocks: pulumi.runtime.Mocks) => unknown };
    const outer = { project: pulumi.getProject(), stack: pulumi.getStack(), organization: currentOrganization() };
    const recorded: ObjectRef[] = [];
    const record: pulumi.ResourceTransformation = (a) => {
        const ref = objectOfRegistration(a);
        if (ref) recorded.push(ref);
        return undefined;
    };
    state.withLocalStorage(() => {
        const store = state.getStore();
        Object.assign(store.settings.options, { ...outer, monitorAddr: "mock", engineAddr: "", dryRun: true });
        const monitor = new MockMonitor({
            newResource: (r) => ({ id: `${r.name}-planned`, state: r.inputs }),
            call: (c) => c.inputs,
        });
        store.settings.monitor = Object.assign(monitor as object, { [PLANNING_MONITOR]: true });
        Object.assign(store, { supportsSecrets: true, supportsResourceReferences: true, supportsDeletedWith: true, supportsAliasSpecs: true });
        build(record);
    });
    return recorded;
}
