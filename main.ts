/**
 * mesh-ratelimit: the Pulumi program (Pulumi.yaml `main`). Reads stack config, validates it, builds the
 * stack. The package's entry is index.ts; this file is not part of the package.
 * docs/configuration.md lists every config key.
 */
import * as pulumi from "@pulumi/pulumi";
import { providerTarget } from "./cluster/kube-target";
import { programLookups } from "./cluster/program-lookups";
import { buildProgram } from "./program/program";

// The cluster the Kubernetes provider deploys to (kubernetes:kubeconfig, kubernetes:context,
// kubernetes:cluster, else KUBECONFIG): every preflight check asks that cluster.
const target = providerTarget(pulumi.runtime.allConfig());
const cluster = programLookups(target, (m) => void pulumi.log.warn(m), pulumi.RunError);
let built: ReturnType<typeof buildProgram>;
try {
    built = buildProgram(pulumi.runtime.allConfig(), { ...cluster.options, missingStackId: "refuse", kubeContext: target.context });
} finally {
    cluster.close();
}
const { settings, stack } = built;

export const variant = settings.variant;
export const apiProfile = settings.apiProfile;
export const domain = settings.global.domain;
/** Paths to try through the ingress gateway. */
export const gatewayPaths = stack.gatewayPaths;
/** gRPC address of the rate-limit service (what the gateway filter calls). */
export const rateLimitService = stack.rateLimitService;
export const limits = stack.limits;
export const managedApiPath = settings.managedApi?.ingressPath;
