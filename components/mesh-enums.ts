/**
 * Typed forms of the stack config values that are one of a few words or JSON, for the
 * MeshRateLimit component's arguments (components/mesh-ratelimit-args.ts).
 */
import { LimitUnit } from "./rules";

/** Preset of the specification (docs/specification.md, "The two variants"). */
export enum StackVariant {
    A = "A",
    B = "B",
}

/** Which API versions the stack creates: today's, or exactly the specification's. */
export enum ApiProfileName {
    Current = "current",
    Seed = "seed",
}

/** Where the local bucket sits: the whole filter, or per route of the inbound virtual host. */
export enum LocalPlacementMode {
    AllRoutes = "all-routes",
    SingleRoute = "single-route",
}

/** How the managed-API Service port is named. */
export enum EspPortModeName {
    Http = "http",
    Tcp = "tcp",
}

/** A VirtualService HTTP route of the bookinfo sample. */
export interface HttpRouteArgs {
    /** Route name (a route limit names it). Defaults to none. */
    name?: string;
    /** Exact paths. Defaults to none. */
    exact?: string[];
    /** Path prefixes. Defaults to none. */
    prefix?: string[];
}

/** One entry of the rate-limit service's descriptor list (the `descriptors` key). */
export interface DescriptorArgs {
    /** Descriptor key: `PATH`. */
    key: string;
    /** Value; absent: the catch-all (every distinct value its own counter). */
    value?: string;
    /** Time unit. */
    unit: LimitUnit;
    /** Requests per unit. */
    requestsPerUnit: number;
}
