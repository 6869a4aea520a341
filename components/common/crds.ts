/**
 * Small typed wrappers over `apiextensions.CustomResource` for the Istio kinds this stack creates,
 * so specs are type-checked and each object is a visible, typed resource (not hidden in a YAML group).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { EnvoyFilterSpec } from "../../builders/envoy-filters";
import { GatewaySpec, VirtualServiceSpec } from "../../builders/istio-types";

interface Meta {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
}

export const ISTIO_NETWORKING_V1ALPHA3 = "networking.istio.io/v1alpha3";
export const ISTIO_NETWORKING_V1BETA1 = "networking.istio.io/v1beta1";
export const ISTIO_SECURITY_V1 = "security.istio.io/v1";

export class EnvoyFilter extends k8s.apiextensions.CustomResource {
    constructor(name: string, args: { metadata: Meta; spec: EnvoyFilterSpec }, opts?: pulumi.CustomResourceOptions) {
        super(name, { apiVersion: ISTIO_NETWORKING_V1ALPHA3, kind: "EnvoyFilter", ...args } as k8s.apiextensions.CustomResourceArgs, opts);
    }
}

export class Gateway extends k8s.apiextensions.CustomResource {
    constructor(name: string, args: { metadata: Meta; spec: GatewaySpec }, opts?: pulumi.CustomResourceOptions) {
        super(name, { apiVersion: ISTIO_NETWORKING_V1BETA1, kind: "Gateway", ...args } as k8s.apiextensions.CustomResourceArgs, opts);
    }
}

/** A Kubernetes Gateway API `Gateway` (gateway.networking.k8s.io/v1): Istio deploys its pods (`gatewayClassName` istio, or istio-waypoint). */
export interface KubernetesGatewaySpec {
    gatewayClassName: string;
    listeners: { name: string; port: number; protocol: "HTTP" | "HBONE"; allowedRoutes?: { namespaces: { from: "Same" | "All" } } }[];
}

export class KubernetesGateway extends k8s.apiextensions.CustomResource {
    constructor(name: string, args: { metadata: Meta; spec: KubernetesGatewaySpec }, opts?: pulumi.CustomResourceOptions) {
        super(name, { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", ...args } as k8s.apiextensions.CustomResourceArgs, opts);
    }
}

export class VirtualService extends k8s.apiextensions.CustomResource {
    constructor(name: string, args: { metadata: Meta; spec: VirtualServiceSpec }, opts?: pulumi.CustomResourceOptions) {
        super(name, { apiVersion: ISTIO_NETWORKING_V1BETA1, kind: "VirtualService", ...args } as k8s.apiextensions.CustomResourceArgs, opts);
    }
}

export interface PeerAuthenticationSpec {
    /** Absent: every workload of the namespace (of the mesh, in the root namespace). */
    selector?: { matchLabels: Record<string, string> };
    mtls: { mode: "STRICT" | "PERMISSIVE" | "DISABLE" };
}

export class PeerAuthentication extends k8s.apiextensions.CustomResource {
    constructor(name: string, args: { metadata: Meta; spec: PeerAuthenticationSpec }, opts?: pulumi.CustomResourceOptions) {
        super(name, { apiVersion: ISTIO_SECURITY_V1, kind: "PeerAuthentication", ...args } as k8s.apiextensions.CustomResourceArgs, opts);
    }
}
