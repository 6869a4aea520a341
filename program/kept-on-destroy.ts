/**
 * Cluster-wide objects the stack created that others came to rely on: `pulumi destroy` runs no
 * program, so whether it leaves them is decided at each `pulumi up` (Pulumi's `retainOnDelete`) from
 * what the cluster holds then, and said at preview. An object that gains users after the last `up`
 * is seen by the next one.
 */
import { SharedObjectsPlan } from "./preflight";
import { StackSettings } from "../mesh/settings-types";
import { stackNamespaces } from "../mesh/mesh-plan";

/** Up to five names, then "...". */
function fewOf(names: string[]): string {
    return `${names.slice(0, 5).join(", ")}${names.length > 5 ? ", ..." : ""}`;
}

const LEFT = "pulumi destroy will leave it in place (retained)";

/**
 * When the stack registers the IngressClass and other Ingresses (not the stack's own) use it, the
 * message saying that `pulumi destroy` will leave it; undefined otherwise.
 */
export function ingressClassKept(s: StackSettings, shared: SharedObjectsPlan, usersOf: ((className: string) => string[]) | undefined): string | undefined {
    if (!shared.ingressClass || !s.managedApi || !usersOf) return undefined;
    const own = `${s.managedApi.namespace}/${s.managedApi.ingressName}`;
    const others = usersOf(s.managedApi.ingressClassName).filter((id) => id !== own);
    if (!others.length) return undefined;
    return `IngressClass ${s.managedApi.ingressClassName}: other Ingresses use it (${fewOf(others)}); ${LEFT}, so their traffic keeps flowing. An Ingress that starts to use it later is seen by the next pulumi up: run one before destroy`;
}

/**
 * When the stack registers the mesh-wide PeerAuthentication `default` and sidecars run outside the
 * stack's namespaces (they are STRICT through it now), the message saying that `pulumi destroy` will
 * leave it; undefined otherwise.
 */
export function peerAuthenticationKept(s: StackSettings, shared: SharedObjectsPlan, meshNamespaces: (() => string[]) | undefined): string | undefined {
    if (!shared.peerAuthentication || !meshNamespaces) return undefined;
    const own = new Set(stackNamespaces(s));
    const others = [...new Set(meshNamespaces())].filter((ns) => !own.has(ns)).sort();
    if (!others.length) return undefined;
    return `PeerAuthentication ${s.mesh.namespace}/default: workloads outside the stack's namespaces run under it (sidecars in ${fewOf(others)}); ${LEFT}, so their mutual TLS does not silently drop to PERMISSIVE. Workloads that join later are seen by the next pulumi up: run one before destroy`;
}
