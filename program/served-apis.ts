/**
 * Checks, before anything is created, that the cluster serves every API version the chosen profile
 * uses (the `seed` profile's extensions/v1beta1 Ingress is gone since Kubernetes 1.22).
 */
import { Problem } from "../lib/problems";
import { StackSettings } from "../mesh/settings-types";

/**
 * An API version the stack would create objects of, with what to say when the cluster lacks it: the
 * config key to name, its value, and the fix. A version needed for several kinds lists them all in
 * `what`, and its fix says what to do for each.
 */
export interface RequiredApi {
    apiVersion: string;
    what: string;
    key: string;
    value: string;
    fix: string;
    /** The whole problem text, when the default ("the cluster does not serve <version> (<what>)") says too little. */
    problem?: string;
}

/** An Istio CRD version: without it, Istio (its CRDs) is missing. */
function istioApi(s: StackSettings, apiVersion: string, what: string): RequiredApi {
    return {
        apiVersion,
        what,
        key: "meshNamespace",
        value: s.mesh.namespace,
        fix: "install Istio (its CRDs) in the cluster first",
    };
}

/** The managed API's Ingress, in the version of the profile. */
function ingressApis(s: StackSettings): RequiredApi[] {
    if (!s.managedApi) return [];
    return [
        s.apiProfile === "seed"
            ? {
                  apiVersion: "extensions/v1beta1",
                  what: "Ingress as the seed profile specifies it",
                  key: "apiProfile",
                  value: s.apiProfile,
                  problem: "the cluster does not serve extensions/v1beta1, which the seed profile's Ingress uses (removed in Kubernetes 1.22)",
                  fix: "pulumi config set apiProfile current   (networking.k8s.io/v1 Ingress), or pulumi config set managedApi false",
              }
            : {
                  apiVersion: "networking.k8s.io/v1",
                  what: "Ingress",
                  key: "apiProfile",
                  value: s.apiProfile,
                  fix: "use a cluster that serves it, or change apiProfile",
              },
    ];
}

/**
 * PeerAuthentication: the stack's workload-level policies (both profiles), or the mesh-wide one
 * (current profile; the seed profile's mesh-wide form is the mesh ConfigMap's authPolicy).
 */
function peerAuthenticationApis(s: StackSettings): RequiredApi[] {
    if (!(s.mesh.mutualTls && (s.mesh.mutualTlsScope === "workloads" || s.apiProfile === "current"))) return [];
    return [
        {
            ...istioApi(s, "security.istio.io/v1", "PeerAuthentication"),
            ...(s.mesh.mutualTlsScope === "workloads"
                ? { key: "mutualTls", value: "true", fix: "use Istio 1.22 or later, or pulumi config set mutualTls false" }
                : {}),
        },
    ];
}

/** components/service/access-policies.ts: AuthorizationPolicy security.istio.io/v1 (Istio 1.22 and later), NetworkPolicy networking.k8s.io/v1. */
function accessPolicyApis(s: StackSettings): RequiredApi[] {
    if (!s.access.enabled) return [];
    const off = "pulumi config set accessPolicies false   (no AuthorizationPolicy or NetworkPolicy is created)";
    // Istio 1.22 needs Kubernetes 1.27 or later, which no longer serves the seed profile's Ingress: there, only turning the policies off helps.
    const newerIstio = s.apiProfile === "seed" && s.managedApi ? "" : "use Istio 1.22 or later, or ";
    return [
        {
            apiVersion: "security.istio.io/v1",
            what: "AuthorizationPolicy",
            key: "accessPolicies",
            value: String(s.access.enabled),
            fix: `${newerIstio}${off}`,
        },
        {
            apiVersion: "networking.k8s.io/v1",
            what: "NetworkPolicy",
            key: "accessPolicies",
            value: String(s.access.enabled),
            fix: `use a cluster that serves it, or ${off}`,
        },
    ];
}

/** components/service/ratelimit-monitoring.ts: the alert rules are a PrometheusRule of the Prometheus operator. */
function monitoringApis(s: StackSettings): RequiredApi[] {
    if (!s.monitoring.alerts) return [];
    return [
        {
            apiVersion: "monitoring.coreos.com/v1",
            what: "PrometheusRule (the Prometheus operator's CRDs)",
            key: "monitoringAlerts",
            value: "true",
            fix: "install the Prometheus operator (its CRDs) first, or pulumi config set monitoringAlerts false   (the dashboard does not need it)",
        },
    ];
}

/** One entry per version: the first requirement names its key; every kind and its fix are listed. */
function mergeByVersion(req: RequiredApi[]): RequiredApi[] {
    const merged: RequiredApi[] = [];
    for (const r of req) {
        const first = merged.find((q) => q.apiVersion === r.apiVersion);
        if (!first) merged.push({ ...r });
        else {
            first.what = `${first.what}, ${r.what}`;
            if (r.fix !== first.fix) first.fix = `${first.fix}; for the ${r.what}: ${r.fix}`;
        }
    }
    return merged;
}

export function requiredApiVersions(s: StackSettings): RequiredApi[] {
    return mergeByVersion([
        istioApi(s, "networking.istio.io/v1alpha3", "EnvoyFilter (Istio's CRDs)"),
        istioApi(s, "networking.istio.io/v1beta1", "Gateway and VirtualService (Istio's CRDs)"),
        ...ingressApis(s),
        ...peerAuthenticationApis(s),
        ...accessPolicyApis(s),
        ...monitoringApis(s),
    ]);
}

/** Problems for every required API version missing from `served` (the output of `kubectl api-versions`). */
export function missingApis(s: StackSettings, served: Set<string>): Problem[] {
    return requiredApiVersions(s)
        .filter((r) => !served.has(r.apiVersion))
        .map((r) => ({ key: r.key, value: r.value, problem: r.problem ?? `the cluster does not serve ${r.apiVersion} (${r.what})`, fix: r.fix }));
}
