/**
 * Small helpers shared by the components: labels and the rollout-await annotation.
 */
import { StackSettings } from "./settings";

export const PART_OF = "mesh-ratelimit";

/** Labels on every object this stack creates, so `kubectl get -l app.kubernetes.io/part-of=mesh-ratelimit` finds them. */
export function stackLabels(component: string, extra: Record<string, string> = {}): Record<string, string> {
    return { "app.kubernetes.io/part-of": PART_OF, "app.kubernetes.io/component": component, ...extra };
}

/** `pulumi.com/skipAwait` when the user opted out of waiting for rollouts (clusters without nodes, GitOps). */
export function awaitAnnotations(s: StackSettings): Record<string, string> | undefined {
    return s.awaitRollout ? undefined : { "pulumi.com/skipAwait": "true" };
}

/** Pod label that asks Istio's injector for a sidecar regardless of the namespace label. */
export const INJECT_LABEL = { "sidecar.istio.io/inject": "true" };
