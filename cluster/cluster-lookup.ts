/**
 * The kubectl side of the preflight (program/preflight.ts holds the decisions): reads the fixed-name objects
 * the stack would create outside its own namespaces. Every call takes kubectl's global `flags`
 * (`--kubeconfig`, `--context`, `--cluster`: cluster/kube-target.ts), so it asks the cluster the
 * Kubernetes provider deploys to.
 */
import { execFileSync } from "child_process";
import { LiveObject, SharedObjectRef } from "../program/preflight";
import { MeshReachQuery, MeshReachState } from "../program/mesh-reach";
import { LiveObjectMeta, ObjectRef, kubectlResource } from "../components/common/ownership";

function kubectlGet(args: string[], flags: readonly string[]): LiveObject[] {
    const out = execFileSync("kubectl", [...flags, "get", ...args, "--ignore-not-found", "--show-managed-fields", "-o", "json"], {
        encoding: "utf8",
        timeout: 20_000,
        stdio: ["ignore", "pipe", "pipe"],
    });
    if (!out.trim()) return [];
    const doc = JSON.parse(out);
    // One name asked: the object itself; several: a List of those found.
    return doc.kind === "List" ? (doc.items ?? []) : [doc];
}

/** The objects named `<resource>/<name>` that exist: one kubectl call per namespace ("" for cluster-scoped ones). Throws when kubectl fails. */
function getNamed(named: { namespace?: string; arg: string }[], flags: readonly string[]): LiveObject[] {
    const groups = new Map<string, Set<string>>();
    for (const { namespace, arg } of named) groups.set(namespace ?? "", (groups.get(namespace ?? "") ?? new Set()).add(arg));
    return [...groups].flatMap(([ns, args]) => kubectlGet([...(ns ? ["-n", ns] : []), ...args], flags));
}

/** The objects among `refs` that exist. Throws when kubectl fails (the caller decides what that means). */
export function lookupSharedObjects(refs: SharedObjectRef[], flags: readonly string[]): LiveObject[] {
    return getNamed(
        refs.map((r) => ({ namespace: r.namespace, arg: `${r.resource}/${r.name}` })),
        flags,
    );
}

/** Every object among `refs` that exists, with its annotations, labels and field managers. Throws when kubectl fails. */
export function lookupObjects(refs: ObjectRef[], flags: readonly string[]): LiveObjectMeta[] {
    return getNamed(
        refs.map((r) => ({ namespace: r.namespace, arg: `${kubectlResource(r)}/${r.name}` })),
        flags,
    );
}

/**
 * The reach checks' answer: pods with the gateway's label in every namespace, the
 * PeerAuthentications of Istio's root namespace, and the EnvoyFilters of the gateway's namespace and
 * the root namespace. Throws when kubectl fails.
 */
export function lookupMeshReach(q: MeshReachQuery, flags: readonly string[]): MeshReachState {
    return {
        gatewayPods: kubectlGet(["pods", "--all-namespaces", "-l", q.gatewaySelector], flags),
        peerAuthentications: kubectlGet(["peerauthentications.security.istio.io", "-n", q.meshNamespace], flags),
        // Other rate-limit filters on the gateway's listener (program/preflight.ts classifyNeighbours);
        // absent (not checked) when the cluster does not serve EnvoyFilters.
        ...envoyFiltersOf(q.envoyFilterNamespaces, flags),
        ...routingOf(flags),
    };
}

/** The Istio Gateways and VirtualServices of every namespace; absent (not checked) when the cluster does not serve them. */
function routingOf(flags: readonly string[]): { gateways?: LiveObject[]; virtualServices?: LiveObject[] } {
    try {
        return {
            gateways: kubectlGet(["gateways.networking.istio.io", "--all-namespaces"], flags),
            virtualServices: kubectlGet(["virtualservices.networking.istio.io", "--all-namespaces"], flags),
        };
    } catch {
        return {};
    }
}

function envoyFiltersOf(namespaces: string[], flags: readonly string[]): { envoyFilters?: LiveObject[] } {
    try {
        return { envoyFilters: namespaces.flatMap((ns) => kubectlGet(["envoyfilters.networking.istio.io", "-n", ns], flags)) };
    } catch {
        return {};
    }
}

/**
 * `<namespace>/<name>` of every Ingress that uses IngressClass `className` (`spec.ingressClassName`,
 * or the older `kubernetes.io/ingress.class` annotation). Throws when kubectl fails.
 */
export function lookupIngressClassUsers(className: string, flags: readonly string[]): string[] {
    return kubectlGet(["ingresses.networking.k8s.io", "--all-namespaces"], flags)
        .filter((i: any) => i.spec?.ingressClassName === className || i.metadata.annotations?.["kubernetes.io/ingress.class"] === className)
        .map((i) => `${i.metadata.namespace}/${i.metadata.name}`)
        .sort();
}

/** The namespaces of every pod with an Istio sidecar (a container named `istio-proxy`). Throws when kubectl fails. */
export function lookupMeshNamespaces(flags: readonly string[]): string[] {
    const pods = kubectlGet(["pods", "--all-namespaces"], flags) as any[];
    return [
        ...new Set(pods.filter((p) => (p.spec?.containers ?? []).some((c: any) => c.name === "istio-proxy")).map((p) => String(p.metadata.namespace))),
    ].sort();
}

/** The `group/version`s the cluster serves (`kubectl api-versions`). Throws when kubectl fails. */
export function lookupServedApiVersions(flags: readonly string[]): Set<string> {
    const out = execFileSync("kubectl", [...flags, "api-versions"], {
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

/** The image tags of the istiod containers (`discovery`) in the mesh namespace. Throws when kubectl fails. */
export function lookupIstiodTags(meshNamespace: string, flags: readonly string[]): string[] {
    const deployments = kubectlGet(["deployments", "-n", meshNamespace, "-l", "app=istiod"], flags) as any[];
    return deployments
        .flatMap((d) => d.spec?.template?.spec?.containers ?? [])
        .filter((c: any) => c.name === "discovery" && typeof c.image === "string")
        .map((c: any) => String(c.image).split("@")[0]!.split("/").pop()!.split(":")[1] ?? "")
        .filter(Boolean);
}
