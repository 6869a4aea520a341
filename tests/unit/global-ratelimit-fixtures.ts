/** Shared inputs of GlobalRateLimit's argument tests: valid arguments with one change, and the problem texts they expect (written here, not read from the code). */
import { RedisModeName } from "../../builders/redis-connection";
import { LimitUnit } from "../../builders/rule-args";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";

export const M = LimitUnit.Minute;
export const LABEL = "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')";
export const SUBDOMAIN = "must be a Kubernetes DNS-1123 subdomain (lower-case letters, digits, '-', '.')";
export const PORT = "must be between 1 and 65535";
/** What LocalRateLimit and the gateway target say of a port (GlobalRateLimit's service port reads as a whole number in a range). */
export const PORT_RANGE = "must be a port number from 1 to 65535";
export const SELECTOR_EMPTY = "must name at least one pod label";
export const SELECTOR_EMPTY_FIX = 'give e.g. { istio: "ingressgateway" }';
export const LABEL_BAD = "is not a valid label key and value";
export const LABEL_BAD_FIX = "use Kubernetes label syntax (letters, digits, '-', '_', '.')";
export const EXISTING_ONLY = "applies only to an existing Redis (mode external, sentinel or cluster)";
export const ADDRESSES_FIX = 'set redis.addresses to ["redis.cache.svc.cluster.local:6379"]';
export const SENTINEL_MASTER_REQUIRED = "is required with mode sentinel: the name the Sentinels monitor the master under (`sentinel monitor <name> ...`)";
export const SECRET_NAME = "must be the name of a Secret in the service's namespace (a DNS-1123 subdomain)";
export const PRINCIPAL = "must be an Istio principal '<trust domain>/ns/<namespace>/sa/<service account>' (no spiffe:// prefix)";
export const DEFAULT_PRINCIPAL_FIX = 'set accessPolicy.gatewayPrincipal to "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"';
export const TIMEOUT = "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')";
export const WHOLE = "must be a whole number";
export const VHOST = "must be Istio's virtual host name <host>:<port> (host '*', '*.<domain>' or a DNS name; the port of the Gateway server)";
export const VHOST_FIX = 'use e.g. "shop.example.com:80" (Istio silently ignores a patch that names no virtual host)';
export const VHOSTS_REQUIRED =
    "must name the gateway's virtual hosts to limit: without them the limits would reach every host on the gateway, other teams' included";
export const VHOSTS_REQUIRED_FIX =
    'give e.g. ["shop.example.com:80"] (Istio\'s <host>:<port> for each host of your Gateway server), or set gateway.allVirtualHosts: true for a gateway you have to yourself';
export const GATEWAY_FIX = 'give { selector: { istio: "ingressgateway" }, virtualHosts: ["shop.example.com:80"] }';
export const WINDOW = "must be a Go duration such as '0', '150us' or '2ms'";
export const SECRET_KEY = "must be a Secret data key (letters, digits, '-', '_', '.')";

/** Valid GlobalRateLimit arguments, with one change. */
export const G = (change: Record<string, unknown> = {}): GlobalRateLimitArgs =>
    ({
        domain: "shop",
        gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"] },
        rules: [{ name: "all", requestsPerUnit: 10, unit: M }],
        ...change,
    }) as GlobalRateLimitArgs;
export const GW = (gateway: Record<string, unknown>) =>
    G({ gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"], ...gateway } });
export const SVC = (service: Record<string, unknown>) => G({ service });
export const REDIS = (redis: Record<string, unknown>) => G({ redis });
export const EXT = (redis: Record<string, unknown>) => REDIS({ mode: RedisModeName.External, addresses: ["redis.cache:6379"], ...redis });
