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
 * workload runs under a ServiceAccount of its own (created here, token not mounted: neither
 * program talks to the Kubernetes API). Pure spec builders, then one small component.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { stackLabels } from "./common";
import { deploysRedis } from "./redis-connection";
import type { StackSettings } from "./settings";

export const REDIS_APP = "redis";
export const REDIS_SERVICE_ACCOUNT = "redis";
export const REDIS_PORT = 6379;
/** The ingress gateway's identity in a default Istio install. */
export const DEFAULT_GATEWAY_PRINCIPAL = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account";

/** `<trust domain>/ns/<namespace>/sa/<name>`, the form AuthorizationPolicy `principals` take. */
const PRINCIPAL = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\/ns\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/sa\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

export interface Principal {
    trustDomain: string;
    namespace: string;
    serviceAccount: string;
}

/** Parses a principal; undefined when it is not of the form above. */
export function parsePrincipal(p: string): Principal | undefined {
    const m = PRINCIPAL.exec(p);
    return m ? { trustDomain: m[1], namespace: m[3], serviceAccount: m[5] } : undefined;
}

export function principalOf(p: Principal): string {
    return `${p.trustDomain}/ns/${p.namespace}/sa/${p.serviceAccount}`;
}

/** What the builders need from the settings. */
export type AccessSettings = Pick<StackSettings, "ratelimit" | "mesh" | "redis" | "access">;

/** ServiceAccount of the rate-limit service's pods (named after its Service). */
export function ratelimitServiceAccount(s: Pick<StackSettings, "ratelimit">): string {
    return s.ratelimit.serviceName;
}

/** The rate-limit service's mesh identity (same trust domain as the gateway's). */
export function ratelimitPrincipal(s: AccessSettings): string {
    const gw = parsePrincipal(s.access.gatewayPrincipal)!;
    return principalOf({ trustDomain: gw.trustDomain, namespace: s.ratelimit.namespace, serviceAccount: ratelimitServiceAccount(s) });
}

export function serviceAccountManifests(s: AccessSettings): any[] {
    const sa = (name: string, component: string) => ({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace: s.ratelimit.namespace, labels: stackLabels(component) },
        automountServiceAccountToken: false,
    });
    return [sa(ratelimitServiceAccount(s), "ratelimit"), ...(deploysRedis(s.redis) ? [sa(REDIS_SERVICE_ACCOUNT, "redis")] : [])];
}

/** Istio AuthorizationPolicies: gateway → rate-limit gRPC port; rate-limit service → Redis. */
export function authorizationPolicyManifests(s: AccessSettings): any[] {
    if (!s.access.enabled) return [];
    const ns = s.ratelimit.namespace;
    const out: any[] = [
        {
            apiVersion: "security.istio.io/v1",
            kind: "AuthorizationPolicy",
            metadata: { name: `${s.ratelimit.serviceName}-from-gateway`, namespace: ns, labels: stackLabels("ratelimit") },
            spec: {
                selector: { matchLabels: { app: s.ratelimit.serviceName } },
                action: "ALLOW",
                rules: [{ from: [{ source: { principals: [s.access.gatewayPrincipal] } }], to: [{ operation: { ports: [String(s.ratelimit.grpcPort)] } }] }],
            },
        },
    ];
    if (deploysRedis(s.redis)) {
        out.push({
            apiVersion: "security.istio.io/v1",
            kind: "AuthorizationPolicy",
            metadata: { name: `${REDIS_APP}-from-ratelimit`, namespace: ns, labels: stackLabels("redis") },
            spec: {
                selector: { matchLabels: { app: REDIS_APP } },
                action: "ALLOW",
                rules: [{ from: [{ source: { principals: [ratelimitPrincipal(s)] } }], to: [{ operation: { ports: [String(REDIS_PORT)] } }] }],
            },
        });
    }
    return out;
}

/**
 * NetworkPolicies (ingress only): the gateway's pods (label `gatewaySelector` in the gateway's
 * namespace) → the rate-limit gRPC port; the rate-limit pods → Redis 6379. With Prometheus on, its
 * metrics port (9090) and Istio's merged-metrics port (15020) stay open to every namespace.
 */
export function networkPolicyManifests(s: AccessSettings): any[] {
    if (!s.access.enabled) return [];
    const ns = s.ratelimit.namespace;
    const gwNs = parsePrincipal(s.access.gatewayPrincipal)!.namespace;
    const sel = s.mesh.gatewaySelector;
    const out: any[] = [
        {
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: `${s.ratelimit.serviceName}-from-gateway`, namespace: ns, labels: stackLabels("ratelimit") },
            spec: {
                podSelector: { matchLabels: { app: s.ratelimit.serviceName } },
                policyTypes: ["Ingress"],
                ingress: [
                    {
                        from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": gwNs } }, podSelector: { matchLabels: { [sel.key]: sel.value } } }],
                        ports: [{ protocol: "TCP", port: s.ratelimit.grpcPort }],
                    },
                    ...(s.ratelimit.prometheus ? [{ from: [{ namespaceSelector: {} }], ports: [{ protocol: "TCP", port: 9090 }, { protocol: "TCP", port: 15020 }] }] : []),
                ],
            },
        },
    ];
    if (deploysRedis(s.redis)) {
        out.push({
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: `${REDIS_APP}-from-ratelimit`, namespace: ns, labels: stackLabels("redis") },
            spec: {
                podSelector: { matchLabels: { app: REDIS_APP } },
                policyTypes: ["Ingress"],
                ingress: [{ from: [{ podSelector: { matchLabels: { app: s.ratelimit.serviceName } } }], ports: [{ protocol: "TCP", port: REDIS_PORT }] }],
            },
        });
    }
    return out;
}

export interface AccessPoliciesArgs {
    settings: AccessSettings;
}

/** Creates the ServiceAccounts and, with `accessPolicies` on, the policies above. */
export class AccessPolicies extends pulumi.ComponentResource {
    constructor(name: string, args: AccessPoliciesArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:AccessPolicies", name, {}, opts);
        const s = args.settings;
        for (const m of serviceAccountManifests(s)) {
            new k8s.core.v1.ServiceAccount(`${name}-sa-${m.metadata.name}`, m, { parent: this });
        }
        for (const m of authorizationPolicyManifests(s)) {
            new k8s.apiextensions.CustomResource(`${name}-${m.metadata.name}`, m, { parent: this });
        }
        for (const m of networkPolicyManifests(s)) {
            new k8s.networking.v1.NetworkPolicy(`${name}-${m.metadata.name}`, m, { parent: this });
        }
        this.registerOutputs({});
    }
}
