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

/** What `pulumi destroy` does with the mesh-wide PeerAuthentication the stack registers, and the message that says it. */
export interface OnDestroy {
    keep: boolean;
    message: string;
}

/**
 * When the stack registers the mesh-wide PeerAuthentication `default`: kept on destroy when sidecars
 * run outside the stack's namespaces (they are STRICT through it now, and would silently drop to
 * PERMISSIVE), deleted with the stack when none do; the message says which. Undefined when the
 * stack does not register it or the sidecars were not looked up.
 */
export function peerAuthenticationOnDestroy(s: StackSettings, shared: SharedObjectsPlan, meshNamespaces: (() => string[]) | undefined): OnDestroy | undefined {
    if (!shared.peerAuthentication || !meshNamespaces) return undefined;
    const own = new Set(stackNamespaces(s));
    const sidecars = [...new Set(meshNamespaces())].sort();
    const others = sidecars.filter((ns) => !own.has(ns));
    const name = `PeerAuthentication ${s.mesh.namespace}/default`;
    const later = "Workloads that join later are seen by the next pulumi up: run one before destroy";
    if (others.length)
        return {
            keep: true,
            message: `${name}: workloads outside the stack's namespaces run under it (sidecars in ${fewOf(others)}); ${LEFT}, so their mutual TLS does not silently drop to PERMISSIVE. ${later}`,
        };
    const where = sidecars.length ? `sidecars only in the stack's own namespaces: ${fewOf(sidecars)}` : "no sidecars in the cluster";
    return {
        keep: false,
        message: `${name}: no workload outside the stack's namespaces runs under it (${where}); pulumi destroy will delete it with the stack. ${later}`,
    };
}

/** The message saying that `pulumi destroy` will leave the mesh-wide PeerAuthentication, when it will; undefined otherwise. */
export function peerAuthenticationKept(s: StackSettings, shared: SharedObjectsPlan, meshNamespaces: (() => string[]) | undefined): string | undefined {
    const d = peerAuthenticationOnDestroy(s, shared, meshNamespaces);
    return d?.keep ? d.message : undefined;
}
