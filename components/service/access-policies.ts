/**
 * Least privilege between the stack's workloads: who may talk to the rate-limit service and to Redis.
 *
 * - Only the ingress gateway (its mesh identity, `gatewayPrincipal`) may call the rate-limit
 *   service, and only on its gRPC port: an Istio `AuthorizationPolicy` (ALLOW) on the service's
 *   pods; any other caller, and any other port of the service, gets a denial from its sidecar.
 * - Only the rate-limit service (its own ServiceAccount) may reach Redis, only on 6379.
 * - The same two rules as Kubernetes `NetworkPolicy` objects, for clusters where a pod is outside
 *   the mesh (no sidecar: AuthorizationPolicies do not apply) and as a second layer.
 *
 * Istio identities are SPIFFE names `<trust domain>/ns/<namespace>/sa/<service account>`
 * (https://istio.io/latest/docs/reference/config/security/authorization-policy/#Source), so each
 * workload runs under a ServiceAccount of its own (token not mounted: neither program talks to the
 * Kubernetes API), which the RateLimitService and Redis components create. This file holds the
 * pure policy builders; GlobalRateLimit creates the policies when its `accessPolicy` argument names
 * the gateway's principal.
 */
import { stackLabels } from "../../lib/common";
import { IstioSecurityObject, NetworkPolicyObject, PolicyObject } from "../../lib/k8s-object";
import { REDIS_PORT } from "./redis";
import { deploysRedis } from "../../builders/redis-connection";
import { parsePrincipal, principalOf } from "../../lib/principal";
import type { ServiceSettings } from "./settings";
import { AccessPolicyArgs } from "./access-policy-args.generated";

export { AccessPolicyArgs };

/** What the policy builders need: the service and its Redis, and who may call the service. */
export interface AccessTarget extends Pick<ServiceSettings, "ratelimit" | "redis"> {
    /** The gateway's mesh identity, `<trust domain>/ns/<namespace>/sa/<service account>`. */
    gatewayPrincipal: string;
    /** Labels of the gateway's pods (in the principal's namespace), for the NetworkPolicy. */
    gatewaySelector: Record<string, string>;
}

/** ServiceAccount of the rate-limit service's pods (named after its Service). */
export function ratelimitServiceAccount(s: Pick<ServiceSettings, "ratelimit">): string {
    return s.ratelimit.serviceName;
}

/** The rate-limit service's mesh identity (same trust domain as the gateway's). */
export function ratelimitPrincipal(s: AccessTarget): string {
    const gw = parsePrincipal(s.gatewayPrincipal)!;
    return principalOf({ trustDomain: gw.trustDomain, namespace: s.ratelimit.namespace, serviceAccount: ratelimitServiceAccount(s) });
}

/** Istio AuthorizationPolicies: gateway → rate-limit gRPC port; rate-limit service → Redis. */
export function authorizationPolicyManifests(s: AccessTarget): IstioSecurityObject[] {
    const ns = s.ratelimit.namespace;
    const out: IstioSecurityObject[] = [
        {
            apiVersion: "security.istio.io/v1",
            kind: "AuthorizationPolicy",
            metadata: { name: `${s.ratelimit.serviceName}-from-gateway`, namespace: ns, labels: stackLabels("ratelimit") },
            spec: {
                selector: { matchLabels: { app: s.ratelimit.serviceName } },
                action: "ALLOW",
                rules: [{ from: [{ source: { principals: [s.gatewayPrincipal] } }], to: [{ operation: { ports: [String(s.ratelimit.grpcPort)] } }] }],
            },
        },
    ];
    if (deploysRedis(s.redis)) {
        out.push({
            apiVersion: "security.istio.io/v1",
            kind: "AuthorizationPolicy",
            metadata: { name: `${s.ratelimit.redisName}-from-ratelimit`, namespace: ns, labels: stackLabels("redis") },
            spec: {
                selector: { matchLabels: { app: s.ratelimit.redisName } },
                action: "ALLOW",
                rules: [{ from: [{ source: { principals: [ratelimitPrincipal(s)] } }], to: [{ operation: { ports: [String(REDIS_PORT)] } }] }],
            },
        });
    }
    return out;
}

/** Every access policy of one service: its AuthorizationPolicies and NetworkPolicies. */
export function accessManifests(s: AccessTarget): PolicyObject[] {
    return [...authorizationPolicyManifests(s), ...networkPolicyManifests(s)];
}

/**
 * NetworkPolicies (ingress only): the gateway's pods (label `gatewaySelector` in the gateway's
 * namespace) → the rate-limit gRPC port; the rate-limit pods → Redis 6379. With Prometheus on, its
 * metrics port (9090) and Istio's merged-metrics port (15020) stay open to every namespace.
 */
export function networkPolicyManifests(s: AccessTarget): NetworkPolicyObject[] {
    const ns = s.ratelimit.namespace;
    const gwNs = parsePrincipal(s.gatewayPrincipal)!.namespace;
    const out: NetworkPolicyObject[] = [
        {
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: `${s.ratelimit.serviceName}-from-gateway`, namespace: ns, labels: stackLabels("ratelimit") },
            spec: {
                podSelector: { matchLabels: { app: s.ratelimit.serviceName } },
                policyTypes: ["Ingress"],
                ingress: [
                    {
                        from: [
                            {
                                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": gwNs } },
                                podSelector: { matchLabels: { ...s.gatewaySelector } },
                            },
                        ],
                        ports: [{ protocol: "TCP", port: s.ratelimit.grpcPort }],
                    },
                    ...(s.ratelimit.prometheus
                        ? [
                              {
                                  from: [{ namespaceSelector: {} }],
                                  ports: [
                                      { protocol: "TCP", port: 9090 },
                                      { protocol: "TCP", port: 15020 },
                                  ],
                              },
                          ]
                        : []),
                ],
            },
        },
    ];
    if (deploysRedis(s.redis)) {
        out.push({
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: `${s.ratelimit.redisName}-from-ratelimit`, namespace: ns, labels: stackLabels("redis") },
            spec: {
                podSelector: { matchLabels: { app: s.ratelimit.redisName } },
                policyTypes: ["Ingress"],
                ingress: [{ from: [{ podSelector: { matchLabels: { app: s.ratelimit.serviceName } } }], ports: [{ protocol: "TCP", port: REDIS_PORT }] }],
            },
        });
    }
    return out;
}
