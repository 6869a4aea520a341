/**
 * The kubectl side of the preflight (program/preflight.ts holds the decisions): reads the fixed-name objects
 * the stack would create outside its own namespaces. Uses the ambient kubeconfig (`KUBECONFIG`) and
 * the provider's `kubernetes:context`, as the served-API check does.
 */
import { execFileSync } from "child_process";
import { LiveObject, MeshReachQuery, MeshReachState, SharedObjectRef } from "../program/preflight";
import { LiveObjectMeta, ObjectRef } from "../components/ownership";

function kubectlGet(args: string[], kubeContext: string | undefined): LiveObject[] {
    const out = execFileSync(
        "kubectl",
        [...(kubeContext ? ["--context", kubeContext] : []), "get", ...args, "--ignore-not-found", "--show-managed-fields", "-o", "json"],
        {
            encoding: "utf8",
            timeout: 20_000,
            stdio: ["ignore", "pipe", "pipe"],
        },
    );
    if (!out.trim()) return [];
    const doc = JSON.parse(out);
    // One name asked: the object itself; several: a List of those found.
    return doc.kind === "List" ? (doc.items ?? []) : [doc];
}

/**
 * The objects among `refs` that exist. One kubectl call per namespace (plus one for the
 * cluster-scoped ones). Throws when kubectl fails (the caller decides what that means).
 */
export function lookupSharedObjects(refs: SharedObjectRef[], kubeContext?: string): LiveObject[] {
    const groups = new Map<string, SharedObjectRef[]>();
    for (const r of refs) {
        const k = r.namespace ?? "";
        groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const found: LiveObject[] = [];
    for (const [ns, rs] of groups) {
        const names = rs.map((r) => `${r.resource}/${r.name}`);
        found.push(...kubectlGet([...(ns ? ["-n", ns] : []), ...names], kubeContext));
    }
    return found;
}

/** kubectl's resource argument for an object's kind: `deployment.apps`, `secret` (core), `envoyfilter.networking.istio.io`. */
export function resourceArg(r: { apiVersion: string; kind: string }): string {
    const group = r.apiVersion.includes("/") ? r.apiVersion.split("/")[0] : "";
    return `${r.kind.toLowerCase()}${group ? `.${group}` : ""}`;
}

/**
 * Every object among `refs` that exists, with its annotations, labels and field managers: one kubectl
 * call per namespace (plus one for the cluster-scoped objects). Throws when kubectl fails.
 */
export function lookupObjects(refs: ObjectRef[], kubeContext?: string): LiveObjectMeta[] {
    const groups = new Map<string, string[]>();
    for (const r of refs) {
        const k = r.namespace ?? "";
        groups.set(k, [...new Set([...(groups.get(k) ?? []), `${resourceArg(r)}/${r.name}`])]);
    }
    const found: LiveObjectMeta[] = [];
    for (const [ns, names] of groups) found.push(...kubectlGet([...(ns ? ["-n", ns] : []), ...names], kubeContext));
    return found;
}

/**
 * The reach checks' answer: pods with the gateway's label in every namespace, the
 * PeerAuthentications of Istio's root namespace, and the EnvoyFilters of the gateway's namespace and
 * the root namespace. Throws when kubectl fails.
 */
export function lookupMeshReach(q: MeshReachQuery, kubeContext?: string): MeshReachState {
    return {
        gatewayPods: kubectlGet(["pods", "--all-namespaces", "-l", q.gatewaySelector], kubeContext),
        peerAuthentications: kubectlGet(["peerauthentications.security.istio.io", "-n", q.meshNamespace], kubeContext),
        // Other rate-limit filters on the gateway's listener (program/preflight.ts classifyNeighbours);
        // absent (not checked) when the cluster does not serve EnvoyFilters.
        ...envoyFiltersOf(q.envoyFilterNamespaces, kubeContext),
    };
}

function envoyFiltersOf(namespaces: string[], kubeContext: string | undefined): { envoyFilters?: LiveObject[] } {
    try {
        return { envoyFilters: namespaces.flatMap((ns) => kubectlGet(["envoyfilters.networking.istio.io", "-n", ns], kubeContext)) };
    } catch {
        return {};
    }
}

/** The `group/version`s the cluster serves (`kubectl api-versions`). Throws when kubectl fails. */
export function lookupServedApiVersions(kubeContext?: string): Set<string> {
    const out = execFileSync("kubectl", [...(kubeContext ? ["--context", kubeContext] : []), "api-versions"], {
        encoding: "utf8",
        timeout: 20_000,
        stdio: ["ignore", "pipe", "pipe"],
    });
    return new Set(
        out
            .split("\n")
            .map((l) => l.trim())
            .filter(Boolean),
    );
}
