/**
 * mesh-ratelimit: the Pulumi program (Pulumi.yaml `main`). Reads stack config, validates it, builds the
 * stack. The package's entry is index.ts; this file is not part of the package.
 * docs/configuration.md lists every config key.
 */
import * as pulumi from "@pulumi/pulumi";
import {
    lookupIngressClassUsers,
    lookupIstiodTags,
    lookupMeshNamespaces,
    lookupMeshReach,
    lookupObjects,
    lookupServedApiVersions,
    lookupSharedObjects,
} from "./cluster/cluster-lookup";
import { LiveObjectMeta, ObjectRef } from "./components/ownership";
import { LiveObject, SharedObjectRef, refName } from "./program/preflight";
import { MeshReachQuery, MeshReachState } from "./program/mesh-reach";
import { buildProgram } from "./program/program";
import { missingApis } from "./program/served-apis";
import { StackSettings } from "./mesh/settings-types";

const kubeContext = new pulumi.Config("kubernetes").get("context");

/** Asks the cluster which API versions it serves; skipped with a warning when kubectl cannot reach it. */
function checkCluster(s: StackSettings) {
    try {
        return missingApis(s, lookupServedApiVersions(kubeContext));
    } catch (e: any) {
        pulumi.log.warn(`could not list the cluster's API versions with kubectl (${firstLine(e)}); skipping the served-API check`);
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
function lookupShared(refs: SharedObjectRef[]): LiveObject[] {
    try {
        return lookupSharedObjects(refs, kubeContext);
    } catch (e: any) {
        pulumi.log.warn(
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
function meshReach(q: MeshReachQuery): MeshReachState {
    try {
        return lookupMeshReach(q, kubeContext);
    } catch (e: any) {
        pulumi.log.warn(
            `could not list the pods labelled ${q.gatewaySelector} or the PeerAuthentications of ${q.meshNamespace} with kubectl (${firstLine(e)}); skipping the check that the gateway filters reach only the stack's gateway`,
        );
        return { gatewayPods: [], peerAuthentications: [] };
    }
}

/**
 * Looks up every object the stack would create, so the program can refuse, before anything is
 * created, any that exists and is not this stack's (program/preflight.ts ownershipProblems). When
 * kubectl cannot answer, the program stops: going on could take someone else's objects.
 */
function objectsOf(refs: ObjectRef[]): LiveObjectMeta[] {
    try {
        return lookupObjects(refs, kubeContext);
    } catch (e: any) {
        throw new pulumi.RunError(
            `could not look up the ${refs.length} objects the stack would create with kubectl (${firstLine(e)}); the stack creates nothing it has not checked. Make kubectl reach the cluster Pulumi deploys to (KUBECONFIG, kubernetes:context) and run again`,
        );
    }
}

/** The Ingresses that use the IngressClass the stack creates: with any, destroy leaves the class (program/program.ts). */
function ingressClassUsers(className: string): string[] {
    try {
        return lookupIngressClassUsers(className, kubeContext);
    } catch (e: any) {
        pulumi.log.warn(`could not list the Ingresses with kubectl (${firstLine(e)}); pulumi destroy will delete IngressClass ${className} with the stack`);
        return [];
    }
}

/** The namespaces whose pods run a sidecar: with any outside the stack's, destroy leaves a mesh-wide PeerAuthentication it created. */
function meshNamespaces(): string[] {
    try {
        return lookupMeshNamespaces(kubeContext);
    } catch (e: any) {
        pulumi.log.warn(`could not list the pods with kubectl (${firstLine(e)}); pulumi destroy will delete a mesh-wide PeerAuthentication the stack created`);
        return [];
    }
}

/** The istiod versions of the mesh, so preview can say when one is outside the proven range (program/istio-range.ts). */
function istioTags(meshNamespace: string): string[] {
    try {
        return lookupIstiodTags(meshNamespace, kubeContext);
    } catch (e: any) {
        pulumi.log.warn(`could not list istiod in ${meshNamespace} with kubectl (${firstLine(e)}); the Istio version is not checked against the proven range`);
        return [];
    }
}

const { settings, stack } = buildProgram(pulumi.runtime.allConfig(), {
    lookupIngressClassUsers: ingressClassUsers,
    lookupMeshNamespaces: meshNamespaces,
    checkCluster,
    lookupShared,
    lookupMeshReach: meshReach,
    lookupObjects: objectsOf,
    lookupIstioTags: istioTags,
    kubeContext,
});

export const variant = settings.variant;
export const apiProfile = settings.apiProfile;
export const domain = settings.global.domain;
/** Paths to try through the ingress gateway. */
export const gatewayPaths = stack.gatewayPaths;
/** gRPC address of the rate-limit service (what the gateway filter calls). */
export const rateLimitService = stack.rateLimitService;
export const limits = stack.limits;
export const managedApiPath = settings.managedApi?.ingressPath;
