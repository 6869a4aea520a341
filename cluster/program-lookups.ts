/**
 * The preflight's questions to the cluster, wired for the Pulumi program (main.ts): every lookup of
 * cluster/cluster-lookup.ts with kubectl's flags for the cluster the Kubernetes provider deploys to
 * (cluster/kube-target.ts), and what the program does when kubectl cannot answer (a warning and the
 * check skipped, or, for the ownership lookup, a stop: going on could take someone else's objects).
 */
import {
    lookupIngressClassUsers,
    lookupIstiodTags,
    lookupMeshNamespaces,
    lookupMeshReach,
    lookupObjects,
    lookupServedApiVersions,
    lookupSharedObjects,
} from "./cluster-lookup";
import { ClusterTarget, describeTarget, openKubectlTarget } from "./kube-target";
import { LiveObjectMeta, ObjectRef } from "../components/common/ownership";
import { LiveObject, SharedObjectRef, refName } from "../program/preflight";
import { MeshReachQuery, MeshReachState } from "../program/mesh-reach";
import { OVERRIDES_NOT_CHECKED } from "../program/platform-overrides";
import { ProgramOptions } from "../program/program";
import { missingApis } from "../program/served-apis";
import { StackSettings } from "../mesh/settings-types";
import { Problem } from "../lib/problems";

/** What every lookup needs: kubectl's flags, where they point (for messages), how to warn and to stop. */
interface Kube {
    target: ClusterTarget;
    flags: readonly string[];
    where: string;
    warn: (message: string) => void;
    RunError: new (message: string) => Error;
}

/**
 * The seed profile's mesh-wide mutual TLS edits the mesh ConfigMap from a dynamic provider that runs
 * kubectl with the ambient kubeconfig and `kubernetes:context` only (components/mesh-mtls/component.ts): with
 * the kubeconfig given as `kubernetes:kubeconfig`, that edit could reach another cluster. Refused.
 */
export function seedEditProblems(s: StackSettings, target: ClusterTarget): Problem[] {
    if (target.kubeconfig === undefined || s.apiProfile !== "seed" || !s.mesh.mutualTls || s.mesh.mutualTlsScope !== "mesh") return [];
    return [
        {
            key: "mutualTlsScope",
            value: "mesh",
            problem:
                "with apiProfile seed, mesh-wide mutual TLS is an edit of the mesh ConfigMap made with kubectl, which reads KUBECONFIG and kubernetes:context, not kubernetes:kubeconfig: the edit could reach another cluster than the one the provider deploys to",
            fix: "give the kubeconfig as a file through KUBECONFIG (and kubernetes:context) instead of kubernetes:kubeconfig, or pulumi config set mutualTlsScope workloads, or pulumi config set apiProfile current",
        },
    ];
}

/** Asks the cluster which API versions it serves; skipped with a warning when kubectl cannot reach it. */
function checkCluster(k: Kube, s: StackSettings) {
    const seed = seedEditProblems(s, k.target);
    if (seed.length) return seed;
    try {
        return missingApis(s, lookupServedApiVersions(k.flags));
    } catch (e: any) {
        k.warn(`could not list the cluster's API versions with kubectl (${firstLine(e)}); skipping the served-API check`);
        return [];
    }
}

/** The first line of a failed kubectl call's stderr (or of the error). */
function firstLine(e: any): string {
    return String(e.stderr || e.message)
        .trim()
        .split("\n")[0];
}

/**
 * Reads the fixed-name objects outside the stack's namespaces (IngressClass, PeerAuthentication
 * `default`, the EnvoyFilters in the mesh namespace) so the program can decide, before anything is
 * created, to create, leave or refuse each one (program/preflight.ts).
 */
function lookupShared(k: Kube, refs: SharedObjectRef[]): LiveObject[] {
    try {
        return lookupSharedObjects(refs, k.flags);
    } catch (e: any) {
        k.warn(
            `could not look up ${refs.map(refName).join(", ")} with kubectl (${firstLine(e)}); assuming the cluster lacks them: if one exists, pulumi up stops with AlreadyExists when it reaches it`,
        );
        return [];
    }
}

/**
 * Reads the pods with the gateway's label in every namespace and the PeerAuthentications of Istio's
 * root namespace, so the program can refuse a gateway selector that reaches other teams' gateways
 * and see the mesh-wide mutual TLS policies (program/preflight.ts, planMeshReach).
 */
function meshReach(k: Kube, q: MeshReachQuery): MeshReachState {
    try {
        return lookupMeshReach(q, k.flags);
    } catch (e: any) {
        k.warn(
            `could not list the pods labelled ${q.gatewaySelector} or the PeerAuthentications of ${q.meshNamespace} with kubectl (${firstLine(e)}); skipping the check that the gateway filters reach only the stack's gateway`,
        );
        k.warn(OVERRIDES_NOT_CHECKED);
        return { gatewayPods: [], peerAuthentications: [] };
    }
}

/**
 * Looks up every object the stack would create, so the program can refuse, before anything is
 * created, any that exists and is not this stack's (program/preflight.ts ownershipProblems). When
 * kubectl cannot answer, the program stops: going on could take someone else's objects.
 */
function objectsOf(k: Kube, refs: ObjectRef[]): LiveObjectMeta[] {
    try {
        return lookupObjects(refs, k.flags);
    } catch (e: any) {
        throw new k.RunError(
            `could not look up the ${refs.length} objects the stack would create with kubectl (${firstLine(e)}); the stack creates nothing it has not checked. kubectl asked ${k.where}; make that reach the cluster (KUBECONFIG, kubernetes:kubeconfig, kubernetes:context) and run again`,
        );
    }
}

/** The Ingresses that use the IngressClass the stack creates: with any, destroy leaves the class (program/program.ts). */
function ingressClassUsers(k: Kube, className: string): string[] {
    try {
        return lookupIngressClassUsers(className, k.flags);
    } catch (e: any) {
        k.warn(`could not list the Ingresses with kubectl (${firstLine(e)}); pulumi destroy will delete IngressClass ${className} with the stack`);
        return [];
    }
}

/** The namespaces whose pods run a sidecar: with any outside the stack's, destroy leaves a mesh-wide PeerAuthentication it created. */
function meshNamespaces(k: Kube): string[] {
    try {
        return lookupMeshNamespaces(k.flags);
    } catch (e: any) {
        k.warn(`could not list the pods with kubectl (${firstLine(e)}); pulumi destroy will delete a mesh-wide PeerAuthentication the stack created`);
        return [];
    }
}

/** The istiod versions of the mesh, so preview can say when one is outside the proven range (program/istio-range.ts). */
function istioTags(k: Kube, meshNamespace: string): string[] {
    try {
        return lookupIstiodTags(meshNamespace, k.flags);
    } catch (e: any) {
        k.warn(`could not list istiod in ${meshNamespace} with kubectl (${firstLine(e)}); the Istio version is not checked against the proven range`);
        return [];
    }
}

/** The program's cluster lookups against `target`, and `close()`, which removes a temp kubeconfig: call it once the program is built. */
export function programLookups(
    target: ClusterTarget,
    warn: (message: string) => void,
    RunError: new (message: string) => Error = Error,
): { options: ProgramOptions; close: () => void } {
    const t = openKubectlTarget(target);
    const k: Kube = { target, flags: t.flags, where: describeTarget(target), warn, RunError };
    return {
        options: {
            checkCluster: (s) => checkCluster(k, s),
            lookupShared: (refs) => lookupShared(k, refs),
            lookupMeshReach: (q) => meshReach(k, q),
            lookupObjects: (refs) => objectsOf(k, refs),
            lookupIngressClassUsers: (name) => ingressClassUsers(k, name),
            lookupMeshNamespaces: () => meshNamespaces(k),
            lookupIstioTags: (ns) => istioTags(k, ns),
        },
        close: () => t.close(),
    };
}
