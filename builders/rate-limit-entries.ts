/**
 * The entries of an Envoy `rate_limits` list (a virtual host's or a route's) and a route's patch of
 * them: the shapes every gateway builder writes, named once. Types only.
 */
import { RateLimitAction } from "./envoy-types";

export interface RateLimitEntry {
    actions: RateLimitAction[];
    /** Envoy's per-descriptor `x_ratelimit_option`: this entry's statuses in the X-RateLimit headers or not. */
    x_ratelimit_option?: "OFF" | "DRAFT_VERSION_03";
}

export interface RoutePatch {
    /** `""`: any virtual host. */
    virtualHost: string;
    route: string;
    rateLimits: RateLimitEntry[];
}
