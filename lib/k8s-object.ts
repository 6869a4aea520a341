/**
 * A Kubernetes object as plain JSON: what the offline render returns (render/render.ts) and what the
 * gateway model reads (gateway-model/). Pure, no imports.
 */
export interface K8sObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
    /** Every other field (`spec`, `data`, ...): untyped JSON, read by path. */
    [field: string]: any;
}

/** A Kubernetes NetworkPolicy as plain JSON. */
export interface NetworkPolicyObject extends K8sObject {
    apiVersion: "networking.k8s.io/v1";
    kind: "NetworkPolicy";
}

/** An Istio security policy (an AuthorizationPolicy, a RequestAuthentication) as plain JSON. */
export interface IstioSecurityObject extends K8sObject {
    apiVersion: "security.istio.io/v1";
    kind: "AuthorizationPolicy" | "RequestAuthentication";
}

/** A policy a component creates beside its workloads: who may call them, whose tokens the gateway checks. */
export type PolicyObject = NetworkPolicyObject | IstioSecurityObject;
