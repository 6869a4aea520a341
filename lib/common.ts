/**
 * Small helpers shared by the components: labels and the rollout-await annotation.
 */

export const PART_OF = "mesh-ratelimit";

/** Labels on every object this stack creates, so `kubectl get -l app.kubernetes.io/part-of=mesh-ratelimit` finds them. */
export function stackLabels(component: string, extra: Record<string, string> = {}): Record<string, string> {
    return { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/component": component, ...extra };
}

/**
 * A workload's own ServiceAccount, its API token not mounted (none of the stack's programs talks to
 * the Kubernetes API). The workload's component creates it before its Deployment.
 */
export function serviceAccountManifest(
    name: string,
    namespace: string,
    component: string,
): {
    apiVersion: "v1";
    kind: "ServiceAccount";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    automountServiceAccountToken: false;
} {
    return { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace, labels: stackLabels(component) }, automountServiceAccountToken: false };
}

/**
 * `pulumi.com/skipAwait` on Deployments when the user opted out of waiting for rollouts (clusters
 * without nodes, GitOps-style applies).
 */
export function awaitAnnotations(s: { awaitRollout: boolean }): Record<string, string> | undefined {
    return s.awaitRollout ? undefined : { "pulumi.com/skipAwait": "true" };
}

/** Pod label that asks Istio's injector for a sidecar regardless of the namespace label. */
export const INJECT_LABEL = { "sidecar.istio.io/inject": "true" };

/**
 * Pod labels that enrol a pod in an ambient mesh (ztunnel carries its traffic with mutual TLS) and
 * keep a sidecar out of it whatever its namespace's injection label says.
 */
export const AMBIENT_LABELS = { "istio.io/dataplane-mode": "ambient", "sidecar.istio.io/inject": "false" };

/**
 * Pod annotation: the application container starts only once its sidecar is ready, so its first
 * connections (the rate-limit service to Redis, at start-up) already go through the mesh.
 */
export const SIDECAR_FIRST_ANNOTATIONS = { "proxy.istio.io/config": '{"holdApplicationUntilProxyStarts":true}' };

/**
 * Objects the stack never waits for:
 * - an Ingress: the provider waits up to 10 minutes for `status.loadBalancer`, which only an
 *   ingress controller that syncs status writes (istiod does only with `ingressService` set);
 * - a Service: its await (endpoints present) took about 10 s each on the e2e cluster and, in the
 *   Redis → rate-limit service → filters chain, added up; the Deployments behind the Services are
 *   awaited for readiness already, which is what the ordering needs.
 */
export const SKIP_AWAIT = { "pulumi.com/skipAwait": "true" };

/**
 * How a pod of the stack joins the mesh: its own sidecar, started before the application (the
 * default), or, on an ambient mesh, enrolment in ztunnel and no sidecar.
 */
export function meshEnrolment(ambient: boolean): { labels: Record<string, string>; annotations: Record<string, string> } {
    return ambient ? { labels: { ...AMBIENT_LABELS }, annotations: {} } : { labels: { ...INJECT_LABEL }, annotations: { ...SIDECAR_FIRST_ANNOTATIONS } };
}
