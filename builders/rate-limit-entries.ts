/**
 * The entries of an Envoy `rate_limits` list (a virtual host's or a route's) and a route's patch of
 * them: the shapes every gateway builder writes, named once. Types only.
 */
import { RateLimitEntry } from "./envoy-types";

export type { RateLimitEntry };

export interface RoutePatch {
    /** `""`: any virtual host. */
    virtualHost: string;
    route: string;
    rateLimits: RateLimitEntry[];
}
