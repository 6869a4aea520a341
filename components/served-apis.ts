/**
 * Checks, before anything is created, that the cluster serves every API version the chosen profile
 * uses (the `seed` profile's extensions/v1beta1 Ingress is gone since Kubernetes 1.22).
 */
import { ConfigProblem, StackSettings } from "./settings";

/** An API version the stack would create objects of; `key`/`fix` name the config that needs it when that is not the default. */
export interface RequiredApi {
    apiVersion: string;
    what: string;
    key?: string;
    fix?: string;
}

export function requiredApiVersions(s: StackSettings): RequiredApi[] {
    const req: RequiredApi[] = [
        { apiVersion: "networking.istio.io/v1alpha3", what: "EnvoyFilter (Istio's CRDs)" },
        { apiVersion: "networking.istio.io/v1beta1", what: "Gateway and VirtualService (Istio's CRDs)" },
    ];
    if (s.managedApi) {
        req.push(s.apiProfile === "seed" ? { apiVersion: "extensions/v1beta1", what: "Ingress as the seed profile specifies it" } : { apiVersion: "networking.k8s.io/v1", what: "Ingress" });
    }
    if (s.mesh.mutualTls && s.apiProfile === "current") req.push({ apiVersion: "security.istio.io/v1", what: "PeerAuthentication" });
    if (s.access.enabled) {
        // components/access-policies.ts: AuthorizationPolicy security.istio.io/v1 (Istio 1.22 and later), NetworkPolicy networking.k8s.io/v1.
        const off = "pulumi config set accessPolicies false   (no AuthorizationPolicy or NetworkPolicy is created)";
        req.push(
            { apiVersion: "security.istio.io/v1", what: "AuthorizationPolicy", key: "accessPolicies", fix: `use Istio 1.22 or later, or ${off}` },
            { apiVersion: "networking.k8s.io/v1", what: "NetworkPolicy", key: "accessPolicies", fix: `use a cluster that serves it, or ${off}` },
        );
    }
    // One entry per version: the first requirement of a version keeps its key and fix, the others add their kind.
    const merged: RequiredApi[] = [];
    for (const r of req) {
        const first = merged.find((q) => q.apiVersion === r.apiVersion);
        if (first) first.what = `${first.what}, ${r.what}`;
        else merged.push({ ...r });
    }
    return merged;
}

/** Problems for every required API version missing from `served` (the output of `kubectl api-versions`). */
export function missingApis(s: StackSettings, served: Set<string>): ConfigProblem[] {
    return requiredApiVersions(s)
        .filter((r) => !served.has(r.apiVersion))
        .map((r) =>
            r.apiVersion === "extensions/v1beta1"
                ? {
                      key: "apiProfile",
                      value: s.apiProfile,
                      problem: "the cluster does not serve extensions/v1beta1, which the seed profile's Ingress uses (removed in Kubernetes 1.22)",
                      fix: "pulumi config set apiProfile current   (networking.k8s.io/v1 Ingress), or pulumi config set managedApi false",
                  }
                : r.key !== undefined
                  ? { key: r.key, value: "true", problem: `the cluster does not serve ${r.apiVersion} (${r.what})`, fix: r.fix! }
                  : {
                      key: r.apiVersion.includes("istio") ? "meshNamespace" : "apiProfile",
                      value: r.apiVersion.includes("istio") ? s.mesh.namespace : s.apiProfile,
                      problem: `the cluster does not serve ${r.apiVersion} (${r.what})`,
                      fix: r.apiVersion.includes("istio") ? "install Istio (its CRDs) in the cluster first" : "use a cluster that serves it, or change apiProfile",
                  },
        );
}
