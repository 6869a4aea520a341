/**
 * The program body, shared by `main.ts` (the Pulumi program) and the offline renderer:
 * config → validated settings → preflight against the cluster → components.
 */
import * as pulumi from "@pulumi/pulumi";
import { MeshRateLimitArgs } from "../mesh/mesh-ratelimit-args.generated";
import { MeshRateLimit } from "../mesh/mesh-ratelimit";
import { MeshRateLimitPlan } from "../mesh/mesh-plan";
import { planOfConfig } from "./config-args";
import { ingressClassKept, peerAuthenticationOnDestroy } from "./kept-on-destroy";
import { LiveObject, SharedObjectRef, SharedObjectsPlan, ownershipProblems, ownershipSummary, planSharedObjects, sharedObjectRefs } from "./preflight";
import { MeshReachQuery, MeshReachState, meshReachQuery, planMeshReach } from "./mesh-reach";
import { Problem, isStackConfigError } from "../lib/problems";
import { StackSettings } from "../mesh/settings-types";
import { configError } from "./config-problems";
import { istioVersionMessages } from "./istio-range";
import { hideSecretValues, rawConfigFromAll } from "./stack-config";
import { RENDER_STACK_ID, stackIdProblem } from "./stack-identity";
import {
    LiveObjectMeta,
    ObjectRef,
    classifyObjects,
    currentStackOwner,
    duplicateObjects,
    ownerTransformation,
    plannedObjects,
} from "../components/common/ownership";

export interface ProgramOptions {
    /** Extra checks against the live cluster (skipped by the offline renderer and unit tests). */
    checkCluster?: (s: StackSettings) => Problem[];
    /**
     * Which of the fixed-name objects outside the stack's namespaces (preflight.ts) already exist.
     * Absent (offline render, unit tests): the cluster lacks all of them.
     */
    lookupShared?: (refs: SharedObjectRef[]) => LiveObject[];
    /**
     * The Ingresses (`<namespace>/<name>`) of every namespace that use an IngressClass of this name.
     * Absent (offline render, unit tests): none.
     */
    lookupIngressClassUsers?: (className: string) => string[];
    /** The namespaces of every pod with an Istio sidecar (`istio-proxy`). Absent (offline render, unit tests): none. */
    lookupMeshNamespaces?: () => string[];
    /**
     * The gateway pods of every namespace and the root namespace's PeerAuthentications
     * (preflight.ts, planMeshReach). Absent (offline render, unit tests): not checked.
     */
    lookupMeshReach?: (q: MeshReachQuery) => MeshReachState;
    /** Where the preflight's decisions are reported (default: `pulumi.log.info`, shown by `pulumi preview`). */
    report?: (message: string) => void;
    /** Where the preflight's warnings go (default: `pulumi.log.warn`). */
    warn?: (message: string) => void;
    /** Where each per-value rule's figures go, one line per rule (default: `pulumi.log.info`; the render prints them after its table). */
    figures?: (line: string) => void;
    /** The image tags of istiod in the mesh namespace (program/istio-range.ts). Absent (offline render, unit tests): not checked. */
    lookupIstioTags?: (meshNamespace: string) => string[];
    /**
     * Every object the stack would create, as it exists in the cluster (preflight.ts
     * ownershipProblems). Absent (offline render, unit tests): the cluster lacks all of them.
     */
    lookupObjects?: (refs: ObjectRef[]) => LiveObjectMeta[];
    /** The stack's owner value (default: `<organization>/<project>/<stack>@<stackId>` of the running stack). */
    owner?: string;
    /**
     * Without the `stackId` config key: `refuse` (the Pulumi program: stop before anything is
     * registered, with a fresh id in the fix) or `render` (the default: the offline render and unit
     * tests write the fixed RENDER_STACK_ID). An invalid id is refused either way.
     */
    missingStackId?: "refuse" | "render";
    kubeContext?: string;
    /** Whether a config key (`project:key`) holds a secret (default: the Pulumi runtime's own record). */
    isSecret?: (fullKey: string) => boolean;
}

/**
 * The Pulumi runtime's record of which config keys are secret. Marked internal in @pulumi/pulumi
 * (3.248.0, pinned; tests/unit/config-errors.test.ts fails if it disappears); without it every
 * value is treated as secret, so none is ever printed.
 */
export function isConfigSecret(fullKey: string): boolean {
    const f = (pulumi.runtime as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
    return f ? f(fullKey) : true;
}

/**
 * Validates the whole config, asks the cluster (served APIs, shared objects), throws an `InputError` (stack config)
 * before any resource is registered, then builds the stack.
 */
export function buildProgram(
    allConfig: Record<string, string>,
    opts: ProgramOptions = {},
): { settings: StackSettings; args: MeshRateLimitArgs; plan: MeshRateLimitPlan; stack: MeshRateLimit; shared: SharedObjectsPlan } {
    const { raw, unknown, secretKeys, stackId } = rawConfigFromAll(allConfig, opts.isSecret ?? isConfigSecret);
    const fail = (problems: Problem[]) => configError(hideSecretValues(problems, raw, secretKeys));
    const idProblem = stackId === undefined && opts.missingStackId !== "refuse" ? undefined : stackIdProblem(stackId);
    // Stack config → MeshRateLimit's typed arguments, checked once: the problems are rendered for
    // stack config (keys, `pulumi config` fixes), secret values hidden.
    let plan: MeshRateLimitPlan;
    try {
        plan = planOfConfig(raw, idProblem ? [...unknown, idProblem] : unknown);
    } catch (e) {
        throw isStackConfigError(e) ? fail(e.problems) : e;
    }
    const settings = plan.settings;
    const clusterProblems = opts.checkCluster?.(settings) ?? [];
    if (clusterProblems.length) throw fail(clusterProblems);
    const owner = opts.owner ?? currentStackOwner(stackId?.trim() || RENDER_STACK_ID);
    const shared = planSharedObjects(settings, opts.lookupShared?.(sharedObjectRefs(settings, plan.global)) ?? [], plan.global, owner);
    if (shared.problems.length) throw fail(shared.problems);
    const report = opts.report ?? ((m: string) => void pulumi.log.info(m));
    const reach = opts.lookupMeshReach
        ? planMeshReach(settings, opts.lookupMeshReach(meshReachQuery(settings)), plan.global, owner)
        : { problems: [], messages: [] };
    if (reach.problems.length) throw fail(reach.problems);
    for (const d of shared.decisions) if (d.action !== "create" || opts.lookupShared) report(d.message);
    for (const m of reach.messages) report(m);
    const istio = istioVersionMessages(opts.lookupIstioTags?.(settings.mesh.namespace) ?? []);
    for (const m of istio.notes) report(m);
    for (const m of istio.warnings) (opts.warn ?? ((w: string) => void pulumi.log.warn(w)))(m);
    for (const m of plan.global.perValueFigures.lines) (opts.figures ?? ((l: string) => void pulumi.log.info(l)))(m);
    // What the cluster decided, as the arguments' options; the plan (settings, component plans) stays the one computed above.
    const keepIngressClass = ingressClassKept(settings, shared, opts.lookupIngressClassUsers);
    if (keepIngressClass) report(keepIngressClass);
    const peerAuthentication = peerAuthenticationOnDestroy(settings, shared, opts.lookupMeshNamespaces);
    if (peerAuthentication) report(peerAuthentication.message);
    plan = plan.withOptions({
        kubeContext: opts.kubeContext,
        createIngressClass: shared.ingressClass,
        keepIngressClassOnDestroy: keepIngressClass !== undefined,
        createPeerAuthentication: shared.peerAuthentication,
        keepPeerAuthenticationOnDestroy: peerAuthentication?.keep === true,
    });
    // Every object the stack would create, found by constructing it once against an in-memory
    // monitor, is looked up before anything is registered: a refusal registers nothing
    // (components/common/ownership.ts). The real construction marks each object with the stack's owner.
    const planned = plannedObjects((record) => new MeshRateLimit("mesh-ratelimit", plan.args, { plan, transformations: [record] }));
    const verdicts = classifyObjects(planned, opts.lookupObjects?.(planned) ?? [], owner);
    const owned = ownershipProblems(verdicts, duplicateObjects(planned), owner);
    if (owned.length) throw fail(owned);
    if (opts.lookupObjects) report(ownershipSummary(verdicts));
    const stack = new MeshRateLimit("mesh-ratelimit", plan.args, { plan, transformations: [ownerTransformation(owner)] });
    return { settings, args: plan.args, plan, stack, shared };
}
