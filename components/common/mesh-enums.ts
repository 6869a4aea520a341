/**
 * Typed forms of the stack config values that are one of a few words or JSON, for the
 * MeshRateLimit component's arguments (mesh/mesh-ratelimit-args.generated.ts). `HttpRouteArgs` and `DescriptorArgs`
 * are generated (components/common/mesh-route-args.generated.ts, from components/rules/mesh-route-fields.ts) and exported again here.
 */
import { LimitArgs } from "../../builders/rule-args";
import { DescriptorArgs, HttpRouteArgs } from "./mesh-route-args.generated";

export { DescriptorArgs, HttpRouteArgs };

/** Preset of the specification (docs/specification.md, "The two variants"). */
export const StackVariant = {
    A: "A",
    B: "B",
} as const;
export type StackVariant = (typeof StackVariant)[keyof typeof StackVariant];

/** Which API versions the stack creates: today's, or exactly the specification's. */
export const ApiProfileName = {
    Current: "current",
    Seed: "seed",
} as const;
export type ApiProfileName = (typeof ApiProfileName)[keyof typeof ApiProfileName];

/** Where the local bucket sits: the whole filter, or per route of the inbound virtual host. */
export const LocalPlacementMode = {
    AllRoutes: "all-routes",
    SingleRoute: "single-route",
} as const;
export type LocalPlacementMode = (typeof LocalPlacementMode)[keyof typeof LocalPlacementMode];

/** Whether the stack deploys bookinfo or puts its limits on a bookinfo that already runs. */
export const BookinfoMode = {
    /** The stack deploys the sample (Deployments, Services, ServiceAccounts, Gateway, VirtualService). */
    Deploy: "deploy",
    /** Bookinfo already runs in the workload namespace (Istio's own sample): the stack deploys only the limits. */
    Existing: "existing",
} as const;
export type BookinfoMode = (typeof BookinfoMode)[keyof typeof BookinfoMode];

/** How the managed-API Service port is named. */
export const EspPortModeName = {
    Http: "http",
    Tcp: "tcp",
} as const;
export type EspPortModeName = (typeof EspPortModeName)[keyof typeof EspPortModeName];

/** Which virtual hosts of the gateway the global limits apply to. */
export const VirtualHostScope = {
    /** Only the stack's own Gateway's virtual hosts, and the rate-limit filter only on its port. */
    GatewayHosts: "gateway-hosts",
    /** Spec 2.4 literally: every virtual host of the gateway (other teams' too) and every listener. */
    All: "all",
} as const;
export type VirtualHostScope = (typeof VirtualHostScope)[keyof typeof VirtualHostScope];

/** Which VirtualServices the bookinfo Gateway admits (the namespace part of its server hosts). */
export const GatewayHostScope = {
    /** Only VirtualServices of bookinfo's own namespace (server hosts `<namespace>/<host>`): no other namespace can bind a host of its own to the Gateway. */
    OwnNamespace: "own-namespace",
    /** Spec 2.5 literally (server hosts as given, `*`): a VirtualService of any namespace binds, and each host of its own gets a virtual host without the stack's limits. */
    AnyNamespace: "any-namespace",
} as const;
export type GatewayHostScope = (typeof GatewayHostScope)[keyof typeof GatewayHostScope];

/** Where the stack's EnvoyFilters live. */
export const FilterNamespaces = {
    /** The gateway filters in the gateway's namespace, the local bucket in the workload's. */
    Own: "own",
    /** Spec 2.2 literally: all in Istio's root namespace (they reach matching pods of every namespace). */
    Root: "root",
} as const;
export type FilterNamespaces = (typeof FilterNamespaces)[keyof typeof FilterNamespaces];

/** How far mutual TLS reaches. */
export const MutualTlsScope = {
    /** STRICT for the stack's own pods only (a PeerAuthentication with a selector in each of its namespaces). */
    Workloads: "workloads",
    /** Spec 2.10 literally: the whole mesh (PeerAuthentication `default` in the root namespace, or the mesh ConfigMap's `authPolicy`). */
    Mesh: "mesh",
} as const;
export type MutualTlsScope = (typeof MutualTlsScope)[keyof typeof MutualTlsScope];

/** How the mesh carries the workloads' traffic: Istio's sidecars, or ambient mode (ztunnel for mutual TLS, waypoints for L7). */
export const MeshMode = {
    /** A sidecar in every pod (`sidecar.istio.io/inject`): the local bucket sits on the workload's sidecar. */
    Sidecar: "sidecar",
    /** Ambient mode (`istio.io/dataplane-mode: ambient`): no sidecars; the ingress is a Gateway API Gateway. */
    Ambient: "ambient",
} as const;
export type MeshMode = (typeof MeshMode)[keyof typeof MeshMode];

/** A descriptor's limit, as GlobalRateLimit's rules and per-path limits take it. */
export function descriptorLimit(d: DescriptorArgs): LimitArgs {
    const { key: _key, value: _value, ...limit } = d;
    return limit;
}
