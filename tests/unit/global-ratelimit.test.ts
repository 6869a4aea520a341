/**
 * GlobalRateLimit's arguments (components/global-ratelimit.ts), check by check: planGlobalRateLimit
 * and its helpers. Each case starts from valid arguments, changes one thing and compares the WHOLE
 * problem list (field, value, problem, fix). Expected values are written from the doc comments and
 * config-schema.ts defaults, not read from the code; everything is computed inside each `it`
 * (Stryker's per-test coverage). LocalRateLimit's: local-ratelimit.test.ts; MeshRateLimit's typed
 * arguments: mesh-args.test.ts.
 */
import { expect } from "chai";
import { Problem } from "../../lib/problems";
import { parse } from "yaml";
import { CONFIG_KEYS, configDefault } from "../../mesh/config-schema";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit-args";
import { planGlobalRateLimit } from "../../components/global-ratelimit-plan";
import { RedisModeName } from "../../builders/redis-connection";
import { ServiceLogLevel } from "../../components/service-settings";
import { dnsProblem, portProblem, selectorProblems, argsError } from "../../components/arg-checks";
import { redisOptionsOf } from "../../components/redis-options";
import { LocalRateLimit } from "../../components/local-ratelimit";
import { FilterLayout, RATELIMIT_FILTER } from "../../builders/envoy-filters";
import { LimitUnit, PathKeyMode } from "../../builders/rule-args";
import { resolveSettings } from "../../mesh/settings";
import { InputError } from "../../lib/problems";

const M = LimitUnit.Minute;
const LABEL = "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')";
const SUBDOMAIN = "must be a Kubernetes DNS-1123 subdomain (lower-case letters, digits, '-', '.')";
const PORT = "must be a port number from 1 to 65535";
const SELECTOR_EMPTY = "must name at least one pod label";
const SELECTOR_EMPTY_FIX = 'give e.g. { istio: "ingressgateway" }';
const LABEL_BAD = "is not a valid label key and value";
const LABEL_BAD_FIX = "use Kubernetes label syntax (letters, digits, '-', '_', '.')";
const EXISTING_ONLY = "applies only to an existing Redis (mode external, sentinel or cluster)";
const ADDRESSES_FIX = 'set redis.addresses to ["redis.cache.svc.cluster.local:6379"]';
const SENTINEL_MASTER_REQUIRED = "is required with mode sentinel: the name the Sentinels monitor the master under (`sentinel monitor <name> ...`)";
const SECRET_NAME = "must be the name of a Secret in the service's namespace (a DNS-1123 subdomain)";
const PRINCIPAL = "must be an Istio principal '<trust domain>/ns/<namespace>/sa/<service account>' (no spiffe:// prefix)";
const DEFAULT_PRINCIPAL_FIX = 'use "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"';
const TIMEOUT = "must be a protobuf duration of at least 0.001s (seconds with an 's' suffix)";
const TIMEOUT_FIX = 'use e.g. "10s" or "0.5s"';
const VHOST = "must be Istio's virtual host name <host>:<port> (host '*', '*.<domain>' or a DNS name; the port of the Gateway server)";
const VHOST_FIX = 'use e.g. "shop.example.com:80" (Istio silently ignores a patch that names no virtual host)';
const VHOSTS_REQUIRED = "must name the gateway's virtual hosts to limit: without them the limits would reach every host on the gateway, other teams' included";
const VHOSTS_REQUIRED_FIX =
    'give e.g. ["shop.example.com:80"] (Istio\'s <host>:<port> for each host of your Gateway server), or set gateway.allVirtualHosts: true for a gateway you have to yourself';
const GATEWAY_FIX = 'give { selector: { istio: "ingressgateway" }, virtualHosts: ["shop.example.com:80"] }';
const WINDOW = "must be a Go duration such as '0', '150us' or '2ms'";
const SECRET_KEY = "must be a Secret data key (letters, digits, '-', '_', '.')";

/** Valid GlobalRateLimit arguments, with one change. */
const G = (change: Record<string, unknown> = {}): GlobalRateLimitArgs =>
    ({
        domain: "shop",
        gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"] },
        rules: [{ name: "all", requestsPerUnit: 10, unit: M }],
        ...change,
    }) as GlobalRateLimitArgs;
const GW = (gateway: Record<string, unknown>) => G({ gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"], ...gateway } });
const SVC = (service: Record<string, unknown>) => G({ service });
const REDIS = (redis: Record<string, unknown>) => G({ redis });
const EXT = (redis: Record<string, unknown>) => REDIS({ mode: RedisModeName.External, addresses: ["redis.cache:6379"], ...redis });

describe("GlobalRateLimit arguments: every validation problem, exactly (field, value, problem, fix)", () => {
    const cases: [string, GlobalRateLimitArgs, Problem[]][] = [
        ["the valid base arguments", G(), []],

        // rules / perPath
        [
            "an empty rule list and no perPath",
            G({ rules: [] }),
            [{ key: "rules", value: [], problem: "no rule and no perPath: the component would limit nothing", fix: "give at least one rule (or perPath)" }],
        ],
        [
            "no rules at all and no perPath",
            G({ rules: undefined }),
            [
                {
                    key: "rules",
                    value: undefined,
                    problem: "no rule and no perPath: the component would limit nothing",
                    fix: "give at least one rule (or perPath)",
                },
            ],
        ],
        ["perPath without rules: allowed", G({ rules: undefined, perPath: { eachPath: { requestsPerUnit: 5, unit: M } } }), []],
        ["an empty rule list with perPath: allowed", G({ rules: [], perPath: { paths: [{ path: "/a", requestsPerUnit: 5, unit: M }] } }), []],
        [
            "a rule problem is reported (from compileGlobalLimits)",
            G({ rules: [{ name: "a b", requestsPerUnit: 1, unit: M }] }),
            [
                {
                    key: "rules[0].name",
                    value: "a b",
                    problem: "must be a non-empty name of letters, digits, '_', '.', '-' (it is the descriptor value)",
                    fix: 'name it e.g. "rule-0"',
                },
            ],
        ],

        // domain
        ["a domain of letters, digits, '_', '.', '-'", G({ domain: "Shop_v1.limits-2" }), []],
        [
            "a domain with a space: the fix joins the words with '-'",
            G({ domain: "shop limits" }),
            [{ key: "domain", value: "shop limits", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "shop-limits"' }],
        ],
        [
            "a domain with surrounding spaces: the fix trims them",
            G({ domain: " shop " }),
            [{ key: "domain", value: " shop ", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "shop"' }],
        ],
        [
            "a domain with a run of bad characters: one '-'",
            G({ domain: "shop  &  limits" }),
            [{ key: "domain", value: "shop  &  limits", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "shop-limits"' }],
        ],
        [
            "no domain",
            G({ domain: undefined }),
            [{ key: "domain", value: undefined, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "my-gateway"' }],
        ],
        [
            "an empty domain",
            G({ domain: "" }),
            [{ key: "domain", value: "", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "my-gateway"' }],
        ],
        [
            "a domain that is not a string",
            G({ domain: 7 }),
            [{ key: "domain", value: 7, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "7"' }],
        ],

        // gateway
        ["no gateway", G({ gateway: undefined }), [{ key: "gateway", value: undefined, problem: "is required", fix: GATEWAY_FIX }]],
        ["gateway: null", G({ gateway: null }), [{ key: "gateway", value: null, problem: "is required", fix: GATEWAY_FIX }]],
        [
            "gateway: a string",
            G({ gateway: "istio=ingressgateway" }),
            [{ key: "gateway", value: "istio=ingressgateway", problem: "is required", fix: GATEWAY_FIX }],
        ],
        ["gateway.selector: {}", GW({ selector: {} }), [{ key: "gateway.selector", value: {}, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
        ["gateway.selector: null", GW({ selector: null }), [{ key: "gateway.selector", value: null, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
        [
            "gateway.selector missing",
            G({ gateway: { virtualHosts: ["shop.example.com:80"] } }),
            [{ key: "gateway.selector", value: undefined, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }],
        ],
        [
            "gateway.selector: a list",
            GW({ selector: ["app=gw"] }),
            [{ key: "gateway.selector", value: ["app=gw"], problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }],
        ],
        [
            "gateway.selector: a string",
            GW({ selector: "app=gw" }),
            [{ key: "gateway.selector", value: "app=gw", problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }],
        ],
        [
            "a selector with a prefixed key, an empty value and a 63-character value: allowed",
            GW({ selector: { "example.com/app": "gw", tier: "", app: "a".repeat(63) } }),
            [],
        ],
        [
            "a selector key with a space",
            GW({ selector: { "my app": "gw" } }),
            [{ key: "gateway.selector.my app", value: "gw", problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        [
            "a selector value with a space",
            GW({ selector: { app: "shop gw" } }),
            [{ key: "gateway.selector.app", value: "shop gw", problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        [
            "a selector value of 64 characters",
            GW({ selector: { app: "a".repeat(64) } }),
            [{ key: "gateway.selector.app", value: "a".repeat(64), problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        [
            "a selector value that is not a string",
            GW({ selector: { app: 1 } }),
            [{ key: "gateway.selector.app", value: 1, problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        [
            "two bad selector entries beside a good one",
            GW({ selector: { app: "gw", "-x": "1", tier: "-edge" } }),
            [
                { key: "gateway.selector.-x", value: "1", problem: LABEL_BAD, fix: LABEL_BAD_FIX },
                { key: "gateway.selector.tier", value: "-edge", problem: LABEL_BAD, fix: LABEL_BAD_FIX },
            ],
        ],
        ["gateway.namespace given", GW({ namespace: "shop-edge" }), []],
        [
            "gateway.namespace not a DNS label",
            GW({ namespace: "Shop_Edge" }),
            [{ key: "gateway.namespace", value: "Shop_Edge", problem: LABEL, fix: 'use "shop-edge"' }],
        ],
        ["gateway.namespace empty", GW({ namespace: "" }), [{ key: "gateway.namespace", value: "", problem: LABEL, fix: 'use "name"' }]],
        // A Gateway API Gateway, by name, in its own namespace.
        [
            "gatewayApiName with its namespace (no selector)",
            G({ gateway: { gatewayApiName: "shop-gw", namespace: "shop", virtualHosts: ["shop.example.com:80"] } }),
            [],
        ],
        [
            "gatewayApiName without a namespace",
            G({ gateway: { gatewayApiName: "shop-gw", virtualHosts: ["shop.example.com:80"] } }),
            [
                {
                    key: "gateway.namespace",
                    value: undefined,
                    problem: "is required with gateway.gatewayApiName: the filters must live in the Gateway's namespace",
                    fix: 'give the Gateway\'s namespace, e.g. "shop"',
                },
            ],
        ],
        [
            "gatewayApiName and selector both",
            GW({ gatewayApiName: "shop-gw", namespace: "shop" }),
            [
                {
                    key: "gateway.gatewayApiName",
                    value: "shop-gw",
                    problem: "and gateway.selector are both given; the filters target one or the other",
                    fix: "remove gateway.selector (a Gateway API Gateway is targeted by name) or gateway.gatewayApiName",
                },
            ],
        ],
        [
            "gatewayApiName not a DNS name",
            G({ gateway: { gatewayApiName: "Shop GW", namespace: "shop", virtualHosts: ["shop.example.com:80"] } }),
            [{ key: "gateway.gatewayApiName", value: "Shop GW", problem: SUBDOMAIN, fix: 'use "shop-gw"' }],
        ],
        // Virtual hosts: required (the scope), each Istio's <host>:<port>.
        ["virtualHosts of <host>:<port> names", GW({ virtualHosts: ["*:80", "shop.example.com:443", "*.shop.example.com:8080"] }), []],
        [
            "virtualHosts: bad entries, each named",
            GW({ virtualHosts: ["*:80", "*", "a b:80", 8080, "*:80x", ":80", "shop.example.com:0", "Shop.example.com:80"] }),
            [
                {
                    key: "gateway.virtualHosts[1]",
                    value: "*",
                    problem: VHOST,
                    fix: 'use e.g. "*:80" (Istio silently ignores a patch that names no virtual host)',
                },
                { key: "gateway.virtualHosts[2]", value: "a b:80", problem: VHOST, fix: VHOST_FIX },
                { key: "gateway.virtualHosts[3]", value: 8080, problem: VHOST, fix: VHOST_FIX },
                { key: "gateway.virtualHosts[4]", value: "*:80x", problem: VHOST, fix: VHOST_FIX },
                { key: "gateway.virtualHosts[5]", value: ":80", problem: VHOST, fix: VHOST_FIX },
                { key: "gateway.virtualHosts[6]", value: "shop.example.com:0", problem: VHOST, fix: VHOST_FIX },
                { key: "gateway.virtualHosts[7]", value: "Shop.example.com:80", problem: VHOST, fix: VHOST_FIX },
            ],
        ],
        [
            "a host without its port (the issue's shop.example.com)",
            GW({ virtualHosts: ["shop.example.com"] }),
            [
                {
                    key: "gateway.virtualHosts[0]",
                    value: "shop.example.com",
                    problem: VHOST,
                    fix: 'use e.g. "shop.example.com:80" (Istio silently ignores a patch that names no virtual host)',
                },
            ],
        ],
        [
            "a virtual host twice",
            GW({ virtualHosts: ["shop.example.com:80", "shop.example.com:80"] }),
            [{ key: "gateway.virtualHosts[1]", value: "shop.example.com:80", problem: "appears twice", fix: "remove one of the two entries" }],
        ],
        [
            "virtualHosts: null, and not allVirtualHosts",
            GW({ virtualHosts: null }),
            [{ key: "gateway.virtualHosts", value: null, problem: VHOSTS_REQUIRED, fix: VHOSTS_REQUIRED_FIX }],
        ],
        [
            "virtualHosts missing",
            G({ gateway: { selector: { app: "shop-gateway" } } }),
            [{ key: "gateway.virtualHosts", value: undefined, problem: VHOSTS_REQUIRED, fix: VHOSTS_REQUIRED_FIX }],
        ],
        ["virtualHosts: []", GW({ virtualHosts: [] }), [{ key: "gateway.virtualHosts", value: [], problem: VHOSTS_REQUIRED, fix: VHOSTS_REQUIRED_FIX }]],
        [
            "allVirtualHosts: true without virtualHosts (every host of the gateway)",
            G({ gateway: { selector: { app: "shop-gateway" }, allVirtualHosts: true } }),
            [],
        ],
        [
            "allVirtualHosts: a string",
            GW({ allVirtualHosts: "yes" }),
            [
                {
                    key: "gateway.allVirtualHosts",
                    value: "yes",
                    problem: "must be a boolean",
                    fix: "use false (only gateway.virtualHosts) or true (every host of the gateway)",
                },
            ],
        ],
        ["listenerPorts given (a Gateway port the gateway's Service maps to another pod port)", GW({ listenerPorts: [8080] }), []],
        ["listenerPorts: a bad port", GW({ listenerPorts: [0] }), [{ key: "gateway.listenerPorts[0]", value: 0, problem: PORT, fix: "use e.g. 8081" }]],
        [
            "listenerPorts: []",
            GW({ listenerPorts: [] }),
            [
                {
                    key: "gateway.listenerPorts",
                    value: [],
                    problem: "must be a non-empty list of ports",
                    fix: "give e.g. [8080], or omit it for the virtual hosts' ports",
                },
            ],
        ],
        [
            "listenerPorts with allVirtualHosts",
            GW({ listenerPorts: [8080], allVirtualHosts: true }),
            [
                {
                    key: "gateway.listenerPorts",
                    value: [8080],
                    problem: "has no effect with allVirtualHosts (the filter goes on every listener)",
                    fix: "remove gateway.listenerPorts, or allVirtualHosts",
                },
            ],
        ],
        [
            "virtualHosts: one name instead of a list (no TypeError)",
            GW({ virtualHosts: "*:80" }),
            [
                {
                    key: "gateway.virtualHosts",
                    value: "*:80",
                    problem: "must be a list of Istio's virtual host names <host>:<port>",
                    fix: 'give e.g. ["shop.example.com:80"]',
                },
            ],
        ],
        // A route rule's virtual host must be one the arguments vouch for.
        [
            "a route rule on a listed virtual host",
            G({ rules: [{ name: "co", route: { name: "checkout", virtualHost: "shop.example.com:80" }, requestsPerUnit: 1, unit: M }] }),
            [],
        ],
        [
            "a route rule on a virtual host the gateway args do not list",
            G({ rules: [{ name: "co", route: { name: "checkout", virtualHost: "nothere.example.com:80" }, requestsPerUnit: 1, unit: M }] }),
            [
                {
                    key: "rules[0].route.virtualHost",
                    value: "nothere.example.com:80",
                    problem:
                        "is not one of gateway.virtualHosts (shop.example.com:80): Istio would silently ignore the patch, or it would act on a host these arguments do not vouch for",
                    fix: 'use one of "shop.example.com:80", or add it to gateway.virtualHosts',
                },
            ],
        ],
        [
            "a route rule on '*:80' when only shop.example.com:80 is listed",
            G({ rules: [{ name: "co", route: { name: "checkout", virtualHost: "*:80" }, requestsPerUnit: 1, unit: M }] }),
            [
                {
                    key: "rules[0].route.virtualHost",
                    value: "*:80",
                    problem:
                        "is not one of gateway.virtualHosts (shop.example.com:80): Istio would silently ignore the patch, or it would act on a host these arguments do not vouch for",
                    fix: 'use one of "shop.example.com:80", or add it to gateway.virtualHosts',
                },
            ],
        ],

        // failureModeDeny: a boolean
        ["failureModeDeny: false (fail open)", G({ failureModeDeny: false }), []],
        [
            "failureModeDeny: 'yes'",
            G({ failureModeDeny: "yes" }),
            [
                {
                    key: "failureModeDeny",
                    value: "yes",
                    problem: "must be a boolean: true refuses requests (HTTP 500) when the service cannot answer, false lets them through",
                    fix: "use true (fail closed) or false (fail open)",
                },
            ],
        ],

        // namespace (DNS label, 63) and the fixes dnsProblem suggests
        ["namespace of 63 characters", G({ namespace: "a".repeat(63) }), []],
        [
            "namespace of 64 characters: the fix is cut to 63",
            G({ namespace: "a".repeat(64) }),
            [{ key: "namespace", value: "a".repeat(64), problem: LABEL, fix: `use "${"a".repeat(63)}"` }],
        ],
        [
            "namespace too long: the cut fix does not end in '-'",
            G({ namespace: `${"a".repeat(62)}-bc` }),
            [{ key: "namespace", value: `${"a".repeat(62)}-bc`, problem: LABEL, fix: `use "${"a".repeat(62)}"` }],
        ],
        [
            "namespace with capitals and '_'",
            G({ namespace: "Shop_Limits" }),
            [{ key: "namespace", value: "Shop_Limits", problem: LABEL, fix: 'use "shop-limits"' }],
        ],
        [
            "namespace with a dot (a label has none): the fix has none either",
            G({ namespace: "shop.limits" }),
            [{ key: "namespace", value: "shop.limits", problem: LABEL, fix: 'use "shop-limits"' }],
        ],
        ["namespace with leading and trailing '-'", G({ namespace: "-shop-" }), [{ key: "namespace", value: "-shop-", problem: LABEL, fix: 'use "shop"' }]],
        ['namespace empty: the fix is "name"', G({ namespace: "" }), [{ key: "namespace", value: "", problem: LABEL, fix: 'use "name"' }]],

        // timeout
        ["timeout 0.001s", G({ timeout: "0.001s" }), []],
        ["timeout with 9 decimals", G({ timeout: "1.123456789s" }), []],
        ["timeout 0.0009s", G({ timeout: "0.0009s" }), [{ key: "timeout", value: "0.0009s", problem: TIMEOUT, fix: TIMEOUT_FIX }]],
        ["timeout 0s", G({ timeout: "0s" }), [{ key: "timeout", value: "0s", problem: TIMEOUT, fix: TIMEOUT_FIX }]],
        ["timeout without the s", G({ timeout: "10" }), [{ key: "timeout", value: "10", problem: TIMEOUT, fix: TIMEOUT_FIX }]],
        ["timeout in milliseconds", G({ timeout: "500ms" }), [{ key: "timeout", value: "500ms", problem: TIMEOUT, fix: TIMEOUT_FIX }]],
        ["timeout a number", G({ timeout: 10 }), [{ key: "timeout", value: 10, problem: TIMEOUT, fix: TIMEOUT_FIX }]],

        // service
        ["service.name not a DNS label", SVC({ name: "Rate Limit" }), [{ key: "service.name", value: "Rate Limit", problem: LABEL, fix: 'use "rate-limit"' }]],
        ["service.name with a dot", SVC({ name: "ratelimit.v2" }), [{ key: "service.name", value: "ratelimit.v2", problem: LABEL, fix: 'use "ratelimit-v2"' }]],
        ["service.configName with dots", SVC({ configName: "ratelimit.config" }), []],
        ["service.configName of 253 characters", SVC({ configName: "a".repeat(253) }), []],
        [
            "service.configName of 254 characters: the fix is cut to 253",
            SVC({ configName: "a".repeat(254) }),
            [{ key: "service.configName", value: "a".repeat(254), problem: SUBDOMAIN, fix: `use "${"a".repeat(253)}"` }],
        ],
        [
            "service.configName not a DNS subdomain",
            SVC({ configName: "RateLimit Config" }),
            [{ key: "service.configName", value: "RateLimit Config", problem: SUBDOMAIN, fix: 'use "ratelimit-config"' }],
        ],
        [
            "service.configName with an empty part",
            SVC({ configName: "Rate..Limit." }),
            [{ key: "service.configName", value: "Rate..Limit.", problem: SUBDOMAIN, fix: 'use "rate.limit"' }],
        ],
        ["service.grpcPort 1", SVC({ grpcPort: 1 }), []],
        ["service.grpcPort 65535", SVC({ grpcPort: 65535 }), []],
        ["service.grpcPort 0", SVC({ grpcPort: 0 }), [{ key: "service.grpcPort", value: 0, problem: PORT, fix: "use e.g. 8081" }]],
        ["service.grpcPort 65536", SVC({ grpcPort: 65536 }), [{ key: "service.grpcPort", value: 65536, problem: PORT, fix: "use e.g. 8081" }]],
        ["service.grpcPort 8081.5", SVC({ grpcPort: 8081.5 }), [{ key: "service.grpcPort", value: 8081.5, problem: PORT, fix: "use e.g. 8081" }]],
        ["service.grpcPort a string", SVC({ grpcPort: "8081" }), [{ key: "service.grpcPort", value: "8081", problem: PORT, fix: "use e.g. 8081" }]],
        [
            "service.grpcPort 8080 (the service's HTTP port)",
            SVC({ grpcPort: 8080 }),
            [{ key: "service.grpcPort", value: 8080, problem: "collides with the service's HTTP (8080) or debug (6070) port", fix: "use 8081" }],
        ],
        [
            "service.grpcPort 6070 (the service's debug port)",
            SVC({ grpcPort: 6070 }),
            [{ key: "service.grpcPort", value: 6070, problem: "collides with the service's HTTP (8080) or debug (6070) port", fix: "use 8081" }],
        ],
        ["service.replicas 1", SVC({ replicas: 1 }), []],
        ["service.replicas 100", SVC({ replicas: 100 }), []],
        ["service.replicas 0", SVC({ replicas: 0 }), [{ key: "service.replicas", value: 0, problem: "must be a whole number from 1 to 100", fix: "use 2" }]],
        [
            "service.replicas 101",
            SVC({ replicas: 101 }),
            [{ key: "service.replicas", value: 101, problem: "must be a whole number from 1 to 100", fix: "use 2" }],
        ],
        [
            "service.replicas 1.5",
            SVC({ replicas: 1.5 }),
            [{ key: "service.replicas", value: 1.5, problem: "must be a whole number from 1 to 100", fix: "use 2" }],
        ],
        ...Object.values(ServiceLogLevel).map((l): [string, GlobalRateLimitArgs, Problem[]] => [`service.logLevel ${l}`, SVC({ logLevel: l }), []]),
        [
            "service.logLevel unknown",
            SVC({ logLevel: "verbose" }),
            [{ key: "service.logLevel", value: "verbose", problem: "must be one of debug, info, warn, error", fix: "use ServiceLogLevel.Warn" }],
        ],
        ["service.redisPoolSize 1", SVC({ redisPoolSize: 1 }), []],
        ["service.redisPoolSize 10000", SVC({ redisPoolSize: 10_000 }), []],
        [
            "service.redisPoolSize 0",
            SVC({ redisPoolSize: 0 }),
            [{ key: "service.redisPoolSize", value: 0, problem: "must be a whole number from 1 to 10000", fix: "omit it for 10" }],
        ],
        [
            "service.redisPoolSize 10001",
            SVC({ redisPoolSize: 10_001 }),
            [{ key: "service.redisPoolSize", value: 10_001, problem: "must be a whole number from 1 to 10000", fix: "omit it for 10" }],
        ],
        [
            "service.redisPoolSize 2.5",
            SVC({ redisPoolSize: 2.5 }),
            [{ key: "service.redisPoolSize", value: 2.5, problem: "must be a whole number from 1 to 10000", fix: "omit it for 10" }],
        ],
        ["service.redisPipelineLimit 0", SVC({ redisPipelineLimit: 0 }), []],
        ["service.redisPipelineLimit the largest safe integer", SVC({ redisPipelineLimit: Number.MAX_SAFE_INTEGER }), []],
        [
            "service.redisPipelineLimit -1",
            SVC({ redisPipelineLimit: -1 }),
            [{ key: "service.redisPipelineLimit", value: -1, problem: "must be a whole number from 0 up", fix: "omit it for 0" }],
        ],
        [
            "service.redisPipelineLimit 1.5",
            SVC({ redisPipelineLimit: 1.5 }),
            [{ key: "service.redisPipelineLimit", value: 1.5, problem: "must be a whole number from 0 up", fix: "omit it for 0" }],
        ],
        ["service.localCacheSizeInBytes 0", SVC({ localCacheSizeInBytes: 0 }), []],
        [
            "service.localCacheSizeInBytes -1",
            SVC({ localCacheSizeInBytes: -1 }),
            [{ key: "service.localCacheSizeInBytes", value: -1, problem: "must be a whole number from 0 up", fix: "omit it for 1048576" }],
        ],
        [
            "service.localCacheSizeInBytes 2^53 (not a safe integer)",
            SVC({ localCacheSizeInBytes: 2 ** 53 }),
            [{ key: "service.localCacheSizeInBytes", value: 2 ** 53, problem: "must be a whole number from 0 up", fix: "omit it for 1048576" }],
        ],
        [
            "service.localCacheSizeInBytes a string",
            SVC({ localCacheSizeInBytes: "1024" }),
            [{ key: "service.localCacheSizeInBytes", value: "1024", problem: "must be a whole number from 0 up", fix: "omit it for 1048576" }],
        ],
        ...["0", "150us", "2ms", "1µs", "1h2m3.5s"].map((w): [string, GlobalRateLimitArgs, Problem[]] => [
            `service.redisPipelineWindow ${w}`,
            SVC({ redisPipelineWindow: w }),
            [],
        ]),
        ...["1 ms", "5", "", "1d", "ms", "0s0"].map((w): [string, GlobalRateLimitArgs, Problem[]] => [
            `service.redisPipelineWindow ${JSON.stringify(w)}`,
            SVC({ redisPipelineWindow: w }),
            [{ key: "service.redisPipelineWindow", value: w, problem: WINDOW, fix: 'use "0"' }],
        ]),
        ["service.image given", SVC({ image: "registry.example/ratelimit:1" }), []],
        [
            "service.image empty",
            SVC({ image: "" }),
            [{ key: "service.image", value: "", problem: "must be an image reference", fix: "omit it for docker.io/envoyproxy/ratelimit:3fb70258" }],
        ],
        [
            "service.image blank",
            SVC({ image: "  " }),
            [{ key: "service.image", value: "  ", problem: "must be an image reference", fix: "omit it for docker.io/envoyproxy/ratelimit:3fb70258" }],
        ],
        [
            "service.image not a string",
            SVC({ image: 1 }),
            [{ key: "service.image", value: 1, problem: "must be an image reference", fix: "omit it for docker.io/envoyproxy/ratelimit:3fb70258" }],
        ],

        // redis: in-cluster
        ["redis in-cluster, explicit, with an image", REDIS({ mode: RedisModeName.InCluster, image: "redis:7" }), []],
        ["redis in-cluster with a password Secret the user manages", REDIS({ passwordSecret: { name: "my-redis-auth" } }), []],
        ...(["addresses", "sentinelMaster", "sentinelPasswordSecret", "tls", "tlsCaSecret"] as const).map((f): [string, GlobalRateLimitArgs, Problem[]] => {
            const value = {
                addresses: ["redis:6379"],
                sentinelMaster: "mymaster",
                sentinelPasswordSecret: { name: "s-auth" },
                tls: true,
                tlsCaSecret: "ca",
            }[f];
            const sentinel = f === "sentinelMaster" || f === "sentinelPasswordSecret";
            return [
                `redis in-cluster with ${f}`,
                REDIS({ [f]: value }),
                [
                    {
                        key: `redis.${f}`,
                        value,
                        problem: sentinel ? "applies only to mode sentinel (the mode is in-cluster)" : EXISTING_ONLY,
                        fix: `remove redis.${f}, or set redis.mode to "${sentinel ? "sentinel" : "external"}"`,
                    },
                ],
            ];
        }),
        [
            "redis in-cluster with addresses: one string instead of a list",
            REDIS({ addresses: "redis:6379" }),
            [{ key: "redis.addresses", value: "redis:6379", problem: EXISTING_ONLY, fix: 'remove redis.addresses, or set redis.mode to "external"' }],
        ],
        [
            "redis mode unknown",
            REDIS({ mode: "standalone", addresses: ["redis:6379"] }),
            [
                {
                    key: "redis.mode",
                    value: "standalone",
                    problem: "must be one of in-cluster, external, sentinel, cluster",
                    fix: "use RedisModeName.InCluster",
                },
            ],
        ],
        // An unknown mode is the only Redis problem reported (no "needs at least one host:port for mode standalone").
        [
            "redis mode unknown, no addresses",
            REDIS({ mode: "standalone" }),
            [
                {
                    key: "redis.mode",
                    value: "standalone",
                    problem: "must be one of in-cluster, external, sentinel, cluster",
                    fix: "use RedisModeName.InCluster",
                },
            ],
        ],
        // The default spelled out is accepted, as the stack config accepts redisTls=false with an in-cluster Redis.
        ["redis in-cluster with tls: false", REDIS({ tls: false }), []],

        // redis: existing
        [
            "redis external with one address, a password Secret and TLS with a CA",
            EXT({ passwordSecret: { name: "cache-auth", key: "redis_pass.1" }, tls: true, tlsCaSecret: "redis-ca" }),
            [],
        ],
        ["redis external with tls: false", EXT({ tls: false }), []],
        [
            "redis external with an image",
            EXT({ image: "redis:7" }),
            [{ key: "redis.image", value: "redis:7", problem: "has no effect: no Redis is deployed for an existing one", fix: "remove redis.image" }],
        ],
        [
            "redis external without addresses",
            REDIS({ mode: RedisModeName.External }),
            [
                {
                    key: "redis.addresses",
                    value: [],
                    problem: "is required with mode external: the Redis's host:port",
                    fix: 'set redis.addresses to ["redis.cache.svc.cluster.local:6379"], or remove redis.mode',
                },
            ],
        ],
        [
            "redis external with an empty address list",
            REDIS({ mode: RedisModeName.External, addresses: [] }),
            [
                {
                    key: "redis.addresses",
                    value: [],
                    problem: "is required with mode external: the Redis's host:port",
                    fix: 'set redis.addresses to ["redis.cache.svc.cluster.local:6379"], or remove redis.mode',
                },
            ],
        ],
        [
            "redis external with two addresses",
            REDIS({ mode: RedisModeName.External, addresses: ["a:6379", "b:6379"] }),
            [
                {
                    key: "redis.addresses",
                    value: ["a:6379", "b:6379"],
                    problem:
                        "names several servers, but mode external is one Redis; several addresses are the Sentinels of a Sentinel setup or the nodes of a Redis Cluster",
                    fix: 'set redis.mode to "cluster", or set redis.mode to "sentinel" with the master\'s name, or set redis.addresses to ["a:6379"]',
                },
            ],
        ],
        [
            "redis external with one address as a string, not a list (no TypeError)",
            REDIS({ mode: RedisModeName.External, addresses: "redis:6379" }),
            [{ key: "redis.addresses", value: "redis:6379", problem: "must be a list of host:port", fix: ADDRESSES_FIX }],
        ],
        [
            "redis cluster with three seeds, IPv4 and IPv6",
            REDIS({ mode: RedisModeName.Cluster, addresses: ["redis-0.redis:6379", "10.0.0.1:65535", "[::1]:1"] }),
            [],
        ],
        [
            "redis cluster without addresses",
            REDIS({ mode: RedisModeName.Cluster, addresses: [] }),
            [
                {
                    key: "redis.addresses",
                    value: [],
                    problem: "is required with mode cluster: some of the Cluster's nodes (host:port)",
                    fix: 'set redis.addresses to ["redis-0.redis:6379","redis-1.redis:6379","redis-2.redis:6379"], or remove redis.mode',
                },
            ],
        ],
        [
            "redis sentinel without addresses",
            REDIS({ mode: RedisModeName.Sentinel, sentinelMaster: "mymaster" }),
            [
                {
                    key: "redis.addresses",
                    value: [],
                    problem: "is required with mode sentinel: the Sentinels' host:port",
                    fix: 'set redis.addresses to ["sentinel-0.redis:26379","sentinel-1.redis:26379","sentinel-2.redis:26379"], or remove redis.mode',
                },
            ],
        ],
        [
            "redis addresses that are not host:port",
            REDIS({ mode: RedisModeName.Cluster, addresses: ["redis:6379", "redis", "redis:0", "redis:65536", "redis:", 6379, "a b:1"] }),
            [
                {
                    key: "redis.addresses",
                    value: ["redis:6379", "redis", "redis:0", "redis:65536", "redis:", 6379, "a b:1"],
                    problem: "has address(es) that are not host:port: redis, redis:0, redis:65536, redis:, 6379, a b:1",
                    fix: 'set redis.addresses to ["redis:6379","redis:6379","redis:6379","redis:6379","redis:6379","6379:6379","a b:6379"]',
                },
            ],
        ],
        [
            "redis sentinel with addresses, master and the Sentinels' password",
            REDIS({
                mode: RedisModeName.Sentinel,
                addresses: ["s-0:26379", "s-1:26379"],
                sentinelMaster: "mymaster",
                sentinelPasswordSecret: { name: "s-auth" },
            }),
            [],
        ],
        [
            "redis sentinel without a master",
            REDIS({ mode: RedisModeName.Sentinel, addresses: ["s-0:26379"] }),
            [{ key: "redis.sentinelMaster", value: undefined, problem: SENTINEL_MASTER_REQUIRED, fix: 'set redis.sentinelMaster to "mymaster"' }],
        ],
        [
            "redis sentinel with an empty master",
            REDIS({ mode: RedisModeName.Sentinel, addresses: ["s-0:26379"], sentinelMaster: "" }),
            [{ key: "redis.sentinelMaster", value: "", problem: SENTINEL_MASTER_REQUIRED, fix: 'set redis.sentinelMaster to "mymaster"' }],
        ],
        [
            "redis sentinel master with a comma (REDIS_URL is split on commas)",
            REDIS({ mode: RedisModeName.Sentinel, addresses: ["s-0:26379"], sentinelMaster: "my,master" }),
            [
                {
                    key: "redis.sentinelMaster",
                    value: "my,master",
                    problem: "must not contain commas or spaces (the service splits REDIS_URL on commas)",
                    fix: 'set redis.sentinelMaster to "mymaster"',
                },
            ],
        ],
        [
            "redis sentinel master of spaces only",
            REDIS({ mode: RedisModeName.Sentinel, addresses: ["s-0:26379"], sentinelMaster: " " }),
            [
                {
                    key: "redis.sentinelMaster",
                    value: " ",
                    problem: "must not contain commas or spaces (the service splits REDIS_URL on commas)",
                    fix: 'set redis.sentinelMaster to "mymaster"',
                },
            ],
        ],
        [
            "redis sentinelMaster outside mode sentinel",
            EXT({ sentinelMaster: "mymaster" }),
            [
                {
                    key: "redis.sentinelMaster",
                    value: "mymaster",
                    problem: "applies only to mode sentinel (the mode is external)",
                    fix: 'remove redis.sentinelMaster, or set redis.mode to "sentinel"',
                },
            ],
        ],
        [
            "redis sentinelPasswordSecret outside mode sentinel: that field is named",
            REDIS({ mode: RedisModeName.Cluster, addresses: ["r:6379"], sentinelPasswordSecret: { name: "s-auth" } }),
            [
                {
                    key: "redis.sentinelPasswordSecret",
                    value: { name: "s-auth" },
                    problem: "applies only to mode sentinel (the mode is cluster)",
                    fix: 'remove redis.sentinelPasswordSecret, or set redis.mode to "sentinel"',
                },
            ],
        ],
        [
            "redis sentinelMaster and sentinelPasswordSecret outside mode sentinel: reported once",
            EXT({ sentinelMaster: "m", sentinelPasswordSecret: { name: "s-auth" } }),
            [
                {
                    key: "redis.sentinelMaster",
                    value: "m",
                    problem: "applies only to mode sentinel (the mode is external)",
                    fix: 'remove redis.sentinelMaster and remove redis.sentinelPasswordSecret, or set redis.mode to "sentinel"',
                },
            ],
        ],
        [
            "redis tlsCaSecret without tls",
            EXT({ tlsCaSecret: "redis-ca" }),
            [{ key: "redis.tlsCaSecret", value: "redis-ca", problem: "is only read with tls true", fix: "set redis.tls to true, or remove redis.tlsCaSecret" }],
        ],
        [
            "redis tlsCaSecret with tls: false",
            EXT({ tls: false, tlsCaSecret: "redis-ca" }),
            [{ key: "redis.tlsCaSecret", value: "redis-ca", problem: "is only read with tls true", fix: "set redis.tls to true, or remove redis.tlsCaSecret" }],
        ],
        [
            "redis tlsCaSecret not a Secret name",
            EXT({ tls: true, tlsCaSecret: "Redis_CA" }),
            [{ key: "redis.tlsCaSecret", value: "Redis_CA", problem: SECRET_NAME, fix: 'set redis.tlsCaSecret to "redis-ca"' }],
        ],
        [
            "redis password Secret name not a DNS subdomain",
            EXT({ passwordSecret: { name: "My_Secret" } }),
            [{ key: "redis.passwordSecret.name", value: "My_Secret", problem: SECRET_NAME, fix: 'set redis.passwordSecret.name to "my-secret"' }],
        ],
        [
            "redis password Secret without a name",
            EXT({ passwordSecret: {} }),
            [{ key: "redis.passwordSecret.name", value: undefined, problem: SECRET_NAME, fix: 'set redis.passwordSecret.name to "name"' }],
        ],
        [
            "redis password Secret key not a Secret data key",
            EXT({ passwordSecret: { name: "auth", key: "pass word" } }),
            [{ key: "redis.passwordSecret.key", value: "pass word", problem: SECRET_KEY, fix: 'set redis.passwordSecret.key to "password"' }],
        ],
        [
            "redis password Secret key empty",
            EXT({ passwordSecret: { name: "auth", key: "" } }),
            [{ key: "redis.passwordSecret.key", value: "", problem: SECRET_KEY, fix: 'set redis.passwordSecret.key to "password"' }],
        ],
        [
            "redis password Secret key not a string",
            EXT({ passwordSecret: { name: "auth", key: 5 } }),
            [{ key: "redis.passwordSecret.key", value: 5, problem: SECRET_KEY, fix: 'set redis.passwordSecret.key to "password"' }],
        ],
        [
            "redis Sentinels' password Secret with a bad name and key",
            REDIS({ mode: RedisModeName.Sentinel, addresses: ["s:26379"], sentinelMaster: "m", sentinelPasswordSecret: { name: "S", key: "a/b" } }),
            [
                { key: "redis.sentinelPasswordSecret.name", value: "S", problem: SECRET_NAME, fix: 'set redis.sentinelPasswordSecret.name to "s"' },
                { key: "redis.sentinelPasswordSecret.key", value: "a/b", problem: SECRET_KEY, fix: 'set redis.sentinelPasswordSecret.key to "password"' },
            ],
        ],

        // accessPolicy
        ["accessPolicy with a valid principal", G({ accessPolicy: { gatewayPrincipal: "shop.example/ns/shop-edge/sa/shop-gateway" } }), []],
        [
            "accessPolicy: null",
            G({ accessPolicy: null }),
            [{ key: "accessPolicy.gatewayPrincipal", value: undefined, problem: PRINCIPAL, fix: DEFAULT_PRINCIPAL_FIX }],
        ],
        [
            "accessPolicy without a principal",
            G({ accessPolicy: {} }),
            [{ key: "accessPolicy.gatewayPrincipal", value: undefined, problem: PRINCIPAL, fix: DEFAULT_PRINCIPAL_FIX }],
        ],
        [
            "accessPolicy: the principal alone, not in an object",
            G({ accessPolicy: "cluster.local/ns/a/sa/b" }),
            [{ key: "accessPolicy.gatewayPrincipal", value: undefined, problem: PRINCIPAL, fix: DEFAULT_PRINCIPAL_FIX }],
        ],
        [
            "accessPolicy principal with spiffe://: the fix drops it",
            G({ accessPolicy: { gatewayPrincipal: "spiffe://cluster.local/ns/shop/sa/gw" } }),
            [
                {
                    key: "accessPolicy.gatewayPrincipal",
                    value: "spiffe://cluster.local/ns/shop/sa/gw",
                    problem: PRINCIPAL,
                    fix: 'use "cluster.local/ns/shop/sa/gw"',
                },
            ],
        ],
        [
            "accessPolicy principal that is a service account name only: the default gateway's",
            G({ accessPolicy: { gatewayPrincipal: "shop-gateway" } }),
            [{ key: "accessPolicy.gatewayPrincipal", value: "shop-gateway", problem: PRINCIPAL, fix: DEFAULT_PRINCIPAL_FIX }],
        ],
        [
            "accessPolicy principal not a string",
            G({ accessPolicy: { gatewayPrincipal: 1 } }),
            [{ key: "accessPolicy.gatewayPrincipal", value: 1, problem: PRINCIPAL, fix: DEFAULT_PRINCIPAL_FIX }],
        ],

        // filterNamePrefix
        ["filterNamePrefix with a dot", G({ filterNamePrefix: "shop.rl" }), []],
        [
            "filterNamePrefix not a DNS subdomain",
            G({ filterNamePrefix: "Filter_RL" }),
            [{ key: "filterNamePrefix", value: "Filter_RL", problem: SUBDOMAIN, fix: 'use "filter-rl"' }],
        ],
        ["filterNamePrefix empty", G({ filterNamePrefix: "" }), [{ key: "filterNamePrefix", value: "", problem: SUBDOMAIN, fix: 'use "name"' }]],

        // Several at once: every problem, in the order of the arguments.
        [
            "null arguments: rules, domain and gateway",
            null as unknown as GlobalRateLimitArgs,
            [
                {
                    key: "rules",
                    value: undefined,
                    problem: "no rule and no perPath: the component would limit nothing",
                    fix: "give at least one rule (or perPath)",
                },
                { key: "domain", value: undefined, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'use "my-gateway"' },
                { key: "gateway", value: undefined, problem: "is required", fix: GATEWAY_FIX },
            ],
        ],
        [
            "a bad port that is also not 8080/6070 is reported once; a bad replica count beside it",
            SVC({ grpcPort: 0, replicas: 0 }),
            [
                { key: "service.grpcPort", value: 0, problem: PORT, fix: "use e.g. 8081" },
                { key: "service.replicas", value: 0, problem: "must be a whole number from 1 to 100", fix: "use 2" },
            ],
        ],
    ];
    for (const [name, args, want] of cases) {
        it(name, () => {
            expect(planGlobalRateLimit(args).problems).to.deep.equal(want);
        });
    }
});

describe("GlobalRateLimit arguments: the plan (defaults from config-schema.ts, given values passed through)", () => {
    const HTTP_TYPE = "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit";

    it("defaults: the service, its Redis, the filters, the gRPC address; no policies without accessPolicy", () => {
        const plan = planGlobalRateLimit(G());
        expect(plan.problems).to.deep.equal([]);
        expect(plan.service).to.deep.equal({
            awaitRollout: true,
            redis: { mode: "in-cluster", addresses: [], tls: false },
            ratelimit: {
                namespace: "default",
                serviceName: "ratelimit",
                grpcPort: 8081,
                httpPort: 8080,
                debugPort: 6070,
                configName: "ratelimit-config",
                image: "docker.io/envoyproxy/ratelimit:3fb70258",
                replicas: 2,
                logLevel: "warn",
                redisPoolSize: 10,
                redisPipelineWindow: "0",
                redisPipelineLimit: 0,
                localCacheSizeInBytes: 1048576,
                prometheus: false,
                shadowMode: false,
                redisImage: "docker.io/library/redis:7.0.15-alpine",
                redisMaxMemory: "160mb",
                redisName: "redis",
                redisEvictionPolicy: "volatile-ttl",
                // Half the gateway's 10 s timeout, capped at 1 s.
                redisTimeout: "1000ms",
            },
        });
        expect(plan.grpcAddress).to.equal("ratelimit.default.svc.cluster.local:8081");
        expect(plan.policies).to.deep.equal([]);
        // Per-instance layout (the default): named after the service's namespace and name, unique in the cluster.
        expect(plan.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["default-ratelimit", "istio-system"],
            ["default-ratelimit-svc", "istio-system"],
        ]);
        expect(plan.httpFilterNames).to.deep.equal({
            global: "envoy.filters.http.ratelimit/default/ratelimit",
            local: "envoy.filters.http.local_ratelimit/default/ratelimit",
        });
        expect(plan.listenerKeys).to.deep.equal([]);
        // The specification's names with the shared layout.
        const shared = planGlobalRateLimit(G({ filterLayout: FilterLayout.Shared }));
        expect(shared.filters.map((f) => f.name)).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc"]);
        expect(shared.httpFilterNames.global).to.equal(RATELIMIT_FILTER);
        const http = plan.filters[0].spec as any;
        expect(http.workloadSelector).to.deep.equal({ labels: { app: "shop-gateway" } });
        expect(http.configPatches[0].patch.value.typed_config).to.deep.equal({
            "@type": HTTP_TYPE,
            domain: "shop",
            // Per-instance: a stage no hand-written route rate_limits use (0 is the default).
            stage: 10,
            failure_mode_deny: true,
            timeout: "10s",
            rate_limit_service: {
                grpc_service: {
                    envoy_grpc: { cluster_name: "outbound|8081||ratelimit.default.svc.cluster.local", authority: "ratelimit.default.svc.cluster.local" },
                },
                transport_api_version: "V3",
            },
        });
        // Only the virtual hosts the arguments name, never Istio's empty name (every host of the gateway).
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["shop.example.com:80"]);
        expect(parse(plan.configYaml)).to.deep.equal({
            domain: "shop",
            descriptors: [{ key: "rule", value: "all", rate_limit: { unit: "minute", requests_per_unit: 10 } }],
        });
    });

    it("the defaults are config-schema.ts's documented ones", () => {
        const plan = planGlobalRateLimit(G());
        const d = (k: string) => CONFIG_KEYS.find((c) => c.key === k)!.default;
        const r = plan.service.ratelimit;
        expect([
            r.serviceName,
            r.configName,
            String(r.grpcPort),
            String(r.replicas),
            r.logLevel,
            r.image,
            String(r.redisPoolSize),
            r.redisPipelineWindow,
            String(r.redisPipelineLimit),
            String(r.localCacheSizeInBytes),
            String(r.prometheus),
            String(r.shadowMode),
            r.redisImage,
        ]).to.deep.equal(
            [
                "ratelimitServiceName",
                "configName",
                "ratelimitGrpcPort",
                "ratelimitReplicas",
                "ratelimitLogLevel",
                "ratelimitImage",
                "redisPoolSize",
                "redisPipelineWindow",
                "redisPipelineLimit",
                "localCacheSizeInBytes",
                "ratelimitPrometheus",
                "shadowMode",
                "redisImage",
            ].map(d),
        );
        expect(r.namespace).to.equal(d("ratelimitNamespace"));
        expect((plan.filters[0].spec as any).configPatches[0].patch.value.typed_config.timeout).to.equal(d("rateLimitTimeout"));
    });

    it('given values are passed through, falsy ones (0, false, "0") included', () => {
        const plan = planGlobalRateLimit(
            G({
                namespace: "shop",
                timeout: "0.5s",
                failureModeDeny: false,
                awaitRollout: false,
                filterNamePrefix: "shop-rl",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop-edge", virtualHosts: ["*:80", "*:443"] },
                service: {
                    name: "rl",
                    configName: "rl-config",
                    grpcPort: 9001,
                    replicas: 3,
                    logLevel: ServiceLogLevel.Debug,
                    image: "registry.example/ratelimit:1",
                    redisPoolSize: 20,
                    redisPipelineWindow: "150us",
                    redisPipelineLimit: 8,
                    localCacheSizeInBytes: 0,
                    prometheus: true,
                    shadowMode: true,
                },
                redis: { image: "redis:7", maxMemory: "100mb" },
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(plan.service).to.deep.equal({
            awaitRollout: false,
            redis: { mode: "in-cluster", addresses: [], tls: false },
            ratelimit: {
                namespace: "shop",
                serviceName: "rl",
                grpcPort: 9001,
                httpPort: 8080,
                debugPort: 6070,
                configName: "rl-config",
                image: "registry.example/ratelimit:1",
                replicas: 3,
                logLevel: "debug",
                redisPoolSize: 20,
                redisPipelineWindow: "150us",
                redisPipelineLimit: 8,
                localCacheSizeInBytes: 0,
                prometheus: true,
                shadowMode: true,
                redisImage: "redis:7",
                redisMaxMemory: "100mb",
                redisName: "redis",
                redisEvictionPolicy: "volatile-ttl",
                // Half the gateway's 0.5 s timeout.
                redisTimeout: "250ms",
            },
        });
        expect(plan.grpcAddress).to.equal("rl.shop.svc.cluster.local:9001");
        expect(plan.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["shop-rl", "shop-edge"],
            ["shop-rl-svc", "shop-edge"],
        ]);
        const typed = (plan.filters[0].spec as any).configPatches[0].patch.value.typed_config;
        expect([typed.failure_mode_deny, typed.timeout, typed.rate_limit_service.grpc_service.envoy_grpc]).to.deep.equal([
            false,
            "0.5s",
            { cluster_name: "outbound|9001||rl.shop.svc.cluster.local", authority: "rl.shop.svc.cluster.local" },
        ]);
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["*:80", "*:443"]);
    });

    it('the zero-like values pass through where the default is not zero (0 cache, window "0", pipeline limit 0)', () => {
        const r = planGlobalRateLimit(SVC({ localCacheSizeInBytes: 0, redisPipelineWindow: "0", redisPipelineLimit: 0, prometheus: false, shadowMode: false }))
            .service.ratelimit;
        expect([r.localCacheSizeInBytes, r.redisPipelineWindow, r.redisPipelineLimit, r.prometheus, r.shadowMode]).to.deep.equal([0, "0", 0, false, false]);
    });

    it("allVirtualHosts: every virtual host (Istio's empty name) and the HTTP filter on every listener; route rules still name the listed hosts", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["*:8080"], allVirtualHosts: true },
                rules: [
                    { name: "all", requestsPerUnit: 1, unit: M },
                    { name: "api", route: { name: "api" }, requestsPerUnit: 2, unit: M },
                ],
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(
            (plan.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([undefined]);
        expect((plan.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal([""]);
        expect((plan.filters[2].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["*:8080"]);
    });

    it("scoped (the default): the HTTP filter on the virtual hosts' ports only, one patch each; route rules without a virtual host go on each listed one", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80", "shop.example.com:443", "*.shop.example.com:80"] },
                rules: [{ name: "co", route: { name: "checkout" }, requestsPerUnit: 2, unit: M }],
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(
            (plan.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([80, 443]);
        expect(
            (plan.filters[1].spec as any).configPatches.map((p: any) => [p.match.routeConfiguration.vhost.name, p.match.routeConfiguration.vhost.route.name]),
        ).to.deep.equal([
            ["shop.example.com:80", "checkout"],
            ["shop.example.com:443", "checkout"],
            ["*.shop.example.com:80", "checkout"],
        ]);
        for (const f of plan.filters) expect((f.spec as any).priority, f.name).to.equal(10);
        // Virtual hosts named after the Gateway's port 80, listener on the pods' 8080 (a Service mapping 80 to 8080).
        const mapped = planGlobalRateLimit(G({ gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"], listenerPorts: [8080] } }));
        expect(
            (mapped.filters[0].spec as any).configPatches
                .filter((p: any) => p.patch.value.name === "envoy.filters.http.ratelimit/default/ratelimit")
                .map((p: any) => p.match.listener.portNumber),
        ).to.deep.equal([8080]);
        expect((mapped.filters[1].spec as any).configPatches.map((p: any) => p.match.routeConfiguration.vhost.name)).to.deep.equal(["shop.example.com:80"]);
    });

    it("a Gateway API Gateway: the filters target it by name in its namespace (no workload selector); the NetworkPolicy admits its pods by Istio's label", () => {
        const plan = planGlobalRateLimit(
            G({
                gateway: { gatewayApiName: "shop-gw", namespace: "shop", virtualHosts: ["shop.example.com:80"] },
                accessPolicy: { gatewayPrincipal: "cluster.local/ns/shop/sa/shop-gw-istio" },
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        for (const f of plan.filters) {
            expect(f.namespace).to.equal("shop");
            expect((f.spec as any).workloadSelector).to.equal(undefined);
            expect((f.spec as any).targetRefs).to.deep.equal([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "shop-gw" }]);
        }
        const np = plan.policies.find((p) => p.kind === "NetworkPolicy" && p.metadata.name === "ratelimit-from-gateway");
        expect(JSON.stringify(np.spec.ingress)).to.contain('"gateway.networking.k8s.io/gateway-name":"shop-gw"');
    });

    it("filters: <prefix>-svc only with virtual-host limits, <prefix>-svc-api only with route limits", () => {
        const routeOnly = planGlobalRateLimit(G({ rules: [{ name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M }] }));
        expect(routeOnly.problems).to.deep.equal([]);
        expect(routeOnly.filters.map((f) => f.name)).to.deep.equal(["default-ratelimit", "default-ratelimit-svc-api"]);
        const both = planGlobalRateLimit(
            G({
                rules: [
                    { name: "all", requestsPerUnit: 10, unit: M },
                    { name: "api", route: { name: "api", virtualHost: "*:80" }, requestsPerUnit: 1, unit: M },
                ],
                gateway: { selector: { app: "gw" }, namespace: "edge" },
                filterLayout: FilterLayout.Shared,
            }),
        );
        expect(both.filters.map((f) => [f.name, f.namespace])).to.deep.equal([
            ["filter-ratelimit", "edge"],
            ["filter-ratelimit-svc", "edge"],
            ["filter-ratelimit-svc-api", "edge"],
        ]);
        const api = both.filters[2].spec as any;
        expect(api.workloadSelector).to.deep.equal({ labels: { app: "gw" } });
        expect(api.configPatches.map((p: any) => p.match.routeConfiguration.vhost)).to.deep.equal([{ name: "*:80", route: { name: "api", action: "ANY" } }]);
        // url-path (the default) keeps the virtual host's limits on the route; literal replaces them.
        expect(api.configPatches[0].patch.value.typed_per_filter_config["envoy.filters.http.ratelimit"].vh_rate_limits).to.equal("INCLUDE");
        const literal = planGlobalRateLimit(
            G({
                pathKey: PathKeyMode.Literal,
                filterLayout: FilterLayout.Shared,
                rules: [{ name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M }],
            }),
        );
        expect(literal.filters[1].spec.configPatches[0]).to.not.have.nested.property("patch.value.typed_per_filter_config");
        const perPathOnly = planGlobalRateLimit(G({ rules: undefined, perPath: { eachPath: { requestsPerUnit: 5, unit: M } } }));
        expect(perPathOnly.filters.map((f) => f.name)).to.deep.equal(["default-ratelimit", "default-ratelimit-svc"]);
    });

    it("per-instance: the route's RateLimitPerRoute holds its own actions, then the virtual host's (url-path) or its own only (literal); nothing at stage 0", () => {
        const rules = [
            { name: "all", requestsPerUnit: 10, unit: M },
            { name: "api", route: { name: "api" }, requestsPerUnit: 1, unit: M },
        ];
        const NAME = "envoy.filters.http.ratelimit/default/ratelimit";
        const per = (pathKey: PathKeyMode) => {
            const plan = planGlobalRateLimit(G({ rules, pathKey }));
            expect(plan.problems).to.deep.equal([]);
            const vh = (plan.filters[1].spec.configPatches[0] as any).patch.value;
            const route = (plan.filters[2].spec.configPatches[0] as any).patch.value;
            expect(Object.keys(vh)).to.deep.equal(["typed_per_filter_config"]);
            expect(Object.keys(route)).to.deep.equal(["typed_per_filter_config"]);
            return { vh: vh.typed_per_filter_config[NAME], route: route.typed_per_filter_config[NAME] };
        };
        const u = per(PathKeyMode.UrlPath);
        expect(u.vh["@type"]).to.equal("type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute");
        expect([u.vh.domain, u.route.domain]).to.deep.equal(["shop", "shop"]);
        // "all" is a virtual-host rule: one entry; "api" a route rule: one entry, then the virtual host's.
        expect(u.vh.rate_limits).to.have.length(1);
        expect(u.route.rate_limits).to.have.length(2);
        expect(u.route.rate_limits[1]).to.deep.equal(u.vh.rate_limits[0]);
        expect(u.route.rate_limits[0]).to.not.deep.equal(u.vh.rate_limits[0]);
        const l = per(PathKeyMode.Literal);
        expect(l.route.rate_limits).to.have.length(1);
        expect(l.route.rate_limits[0]).to.deep.equal(u.route.rate_limits[0]);
    });

    it('the Redis connection: an existing Redis with its password Secret (key defaults to "password")', () => {
        expect(planGlobalRateLimit(EXT({ passwordSecret: { name: "cache-auth" } })).service.redis).to.deep.equal({
            mode: "external",
            addresses: ["redis.cache:6379"],
            password: { name: "cache-auth", key: "password" },
            tls: false,
        });
    });

    it("the Redis connection: Sentinel with master, both passwords, TLS and CA", () => {
        const plan = planGlobalRateLimit(
            REDIS({
                mode: RedisModeName.Sentinel,
                addresses: ["s-0:26379", "s-1:26379"],
                sentinelMaster: "mymaster",
                passwordSecret: { name: "auth", key: "pw" },
                sentinelPasswordSecret: { name: "s-auth" },
                tls: true,
                tlsCaSecret: "redis-ca",
            }),
        );
        expect(plan.problems).to.deep.equal([]);
        expect(plan.service.redis).to.deep.equal({
            mode: "sentinel",
            addresses: ["s-0:26379", "s-1:26379"],
            sentinelMaster: "mymaster",
            password: { name: "auth", key: "pw" },
            sentinelPassword: { name: "s-auth", key: "password" },
            tls: true,
            tlsCaSecret: "redis-ca",
        });
        // An existing Redis: the Redis image stays the default (nothing is deployed).
        expect(plan.service.ratelimit.redisImage).to.equal("docker.io/library/redis:7.0.15-alpine");
    });

    it("the Redis connection: Cluster seeds, nothing else", () => {
        expect(planGlobalRateLimit(REDIS({ mode: RedisModeName.Cluster, addresses: ["r-0:6379", "r-1:6379"] })).service.redis).to.deep.equal({
            mode: "cluster",
            addresses: ["r-0:6379", "r-1:6379"],
            tls: false,
        });
    });

    it("accessPolicy: the policies of the named principal; none while there is a problem", () => {
        const principal = "shop.example/ns/shop-edge/sa/shop-gateway";
        const plan = planGlobalRateLimit(G({ accessPolicy: { gatewayPrincipal: principal } }));
        expect(plan.policies.map((p) => [p.kind, p.metadata.name, p.metadata.namespace])).to.deep.equal([
            ["AuthorizationPolicy", "ratelimit-from-gateway", "default"],
            ["AuthorizationPolicy", "redis-from-ratelimit", "default"],
            ["NetworkPolicy", "ratelimit-from-gateway", "default"],
            ["NetworkPolicy", "redis-from-ratelimit", "default"],
        ]);
        expect(plan.policies[0].spec.rules[0].from[0].source.principals).to.deep.equal([principal]);
        expect(plan.policies[2].spec.ingress[0].from[0].podSelector.matchLabels).to.deep.equal({ app: "shop-gateway" });
        // An existing Redis: only the service's policies.
        expect(planGlobalRateLimit(EXT({})).policies).to.deep.equal([]);
        expect(planGlobalRateLimit({ ...EXT({}), accessPolicy: { gatewayPrincipal: principal } }).policies.map((p) => [p.kind, p.metadata.name])).to.deep.equal(
            [
                ["AuthorizationPolicy", "ratelimit-from-gateway"],
                ["NetworkPolicy", "ratelimit-from-gateway"],
            ],
        );
        // A problem elsewhere: no policy is computed.
        expect(planGlobalRateLimit(G({ accessPolicy: { gatewayPrincipal: principal }, service: { replicas: 0 } })).policies).to.deep.equal([]);
    });

    it("bad arguments still give a plan (no TypeError): every problem is reported at once", () => {
        const plan = planGlobalRateLimit(G({ gateway: null, domain: undefined, accessPolicy: null }));
        expect(plan.problems.map((p) => p.key)).to.deep.equal(["domain", "gateway", "accessPolicy.gatewayPrincipal"]);
        expect(plan.filters[0].spec.workloadSelector).to.deep.equal({ labels: {} });
        expect(plan.policies).to.deep.equal([]);
    });
});

describe("GlobalRateLimit helpers", () => {
    it("configDefault: a key's documented default; an unknown key is an internal error", () => {
        expect(configDefault("ratelimitGrpcPort")).to.equal("8081");
        expect(configDefault("rateLimitTimeout")).to.equal("10s");
        expect(() => configDefault("nope")).to.throw(Error, "internal: no config key nope");
    });

    it("dnsProblem: label vs subdomain texts and lengths (63, 253), the field and value kept", () => {
        expect(dnsProblem("f", "a".repeat(63), "label")).to.deep.equal([]);
        expect(dnsProblem("f", "a.b", "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a".repeat(253), "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a".repeat(64), "subdomain")).to.deep.equal([]);
        expect(dnsProblem("f", "a.b", "label")).to.deep.equal([{ key: "f", value: "a.b", problem: LABEL, fix: 'use "a-b"' }]);
        expect(dnsProblem("f", "a".repeat(254), "subdomain")).to.deep.equal([
            { key: "f", value: "a".repeat(254), problem: SUBDOMAIN, fix: `use "${"a".repeat(253)}"` },
        ]);
        expect(dnsProblem("f", undefined, "label")).to.deep.equal([{ key: "f", value: undefined, problem: LABEL, fix: 'use "name"' }]);
        expect(dnsProblem("f", null, "subdomain")).to.deep.equal([{ key: "f", value: null, problem: SUBDOMAIN, fix: 'use "name"' }]);
        expect(dnsProblem("f", "--", "label")).to.deep.equal([{ key: "f", value: "--", problem: LABEL, fix: 'use "name"' }]);
        expect(dnsProblem("f", ".Shop_Limits.", "subdomain")).to.deep.equal([
            { key: "f", value: ".Shop_Limits.", problem: SUBDOMAIN, fix: 'use "shop-limits"' },
        ]);
        expect(dnsProblem("f", "a.-b-.c", "subdomain")).to.deep.equal([{ key: "f", value: "a.-b-.c", problem: SUBDOMAIN, fix: 'use "a.b.c"' }]);
        expect(dnsProblem("f", 5, "label")).to.deep.equal([{ key: "f", value: 5, problem: LABEL, fix: 'use "5"' }]);
    });

    it("dnsProblem: every suggested fix is itself valid", () => {
        for (const kind of ["label", "subdomain"] as const) {
            for (const v of [
                "Shop_Limits",
                "a.b",
                "a..b",
                "-a-",
                ".a.",
                "a.-b",
                "A B C",
                "a".repeat(300),
                `${"a".repeat(62)}.b`,
                `${"a".repeat(252)}-.b`,
                "",
                "é",
                undefined,
            ]) {
                const [p] = dnsProblem("f", v, kind);
                if (!p) continue;
                const fixed = /^use "(.*)"$/.exec(p.fix)![1];
                expect(dnsProblem("f", fixed, kind), `${kind} ${String(v)} → ${fixed}`).to.deep.equal([]);
            }
        }
    });

    it("portProblem: 1 to 65535, whole numbers only", () => {
        for (const ok of [1, 80, 65535]) expect(portProblem("p", ok), String(ok)).to.deep.equal([]);
        for (const bad of [0, -1, 65536, 1.5, "80", undefined, null, NaN]) {
            expect(portProblem("p", bad), String(bad)).to.deep.equal([{ key: "p", value: bad, problem: PORT, fix: "use e.g. 8081" }]);
        }
    });

    it("selectorProblems: the field prefix is the caller's", () => {
        expect(selectorProblems("gatewaySelector", { app: "a b" })).to.deep.equal([
            { key: "gatewaySelector.app", value: "a b", problem: LABEL_BAD, fix: LABEL_BAD_FIX },
        ]);
        expect(selectorProblems("s", [])).to.deep.equal([{ key: "s", value: [], problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]);
        expect(selectorProblems("s", { "a.b/c_d.e-f": "X_y.z-1" })).to.deep.equal([]);
    });
});

describe("component arguments: checks a mutation run showed untested (docs/mutation.md)", () => {
    it("a virtual host given as a nested list is refused (its string form would look valid)", () => {
        expect(planGlobalRateLimit(GW({ virtualHosts: [["*:80"]] })).problems).to.deep.equal([
            { key: "gateway.virtualHosts[0]", value: ["*:80"], problem: VHOST, fix: VHOST_FIX },
        ]);
    });

    it("a timeout given as a list is refused (its string form would look valid)", () => {
        expect(planGlobalRateLimit(G({ timeout: ["10s"] })).problems).to.deep.equal([{ key: "timeout", value: ["10s"], problem: TIMEOUT, fix: TIMEOUT_FIX }]);
    });

    it("tls: false spelled out does not excuse another existing-Redis field with the in-cluster Redis", () => {
        expect(planGlobalRateLimit(REDIS({ tls: false, addresses: ["redis:6379"] })).problems).to.deep.equal([
            { key: "redis.addresses", value: ["redis:6379"], problem: EXISTING_ONLY, fix: 'remove redis.addresses, or set redis.mode to "external"' },
        ]);
    });

    it("the typed Redis choice of a Sentinel connection keeps the Sentinels' password Secret", () => {
        const c = {
            mode: "sentinel",
            addresses: ["s-0:26379"],
            sentinelMaster: "mymaster",
            sentinelPassword: { name: "s-auth", key: "pw" },
            tls: false,
        } as const;
        expect(redisOptionsOf(c as any, "redis:7", "160mb")).to.deep.equal({
            mode: "sentinel",
            addresses: ["s-0:26379"],
            sentinelMaster: "mymaster",
            sentinelPasswordSecret: { name: "s-auth", key: "pw" },
        });
    });

    it("bad arguments throw an InputError (component arguments), its message headed by the component and its name", () => {
        const err = argsError("GlobalRateLimit edge", [{ key: "domain", value: "", problem: "p", fix: "f" }]);
        expect(err.name).to.equal("InputError");
        let thrown: Error | undefined;
        try {
            new LocalRateLimit("orders-bucket", { selector: {}, port: 8080, bucket: 10, namespace: "shop" });
        } catch (e) {
            thrown = e as Error;
        }
        expect(thrown?.name).to.equal("InputError");
        expect(thrown?.message).to.match(/^LocalRateLimit orders-bucket: invalid arguments \(1 problem\); nothing was created:/);
        // One error class for both inputs: a component's arguments and the stack's config differ only in subject.
        expect(thrown).to.be.instanceOf(InputError);
        expect((thrown as InputError).subject).to.deep.equal({ kind: "component-args", component: "LocalRateLimit orders-bucket" });
        expect((thrown as InputError).problems.map((p) => p.key)).to.deep.equal(["selector"]);
        let config: unknown;
        try {
            resolveSettings({ localBucket: "0" });
        } catch (e) {
            config = e;
        }
        expect(config).to.be.instanceOf(InputError);
        expect((config as InputError).subject).to.deep.equal({ kind: "stack-config" });
        expect((config as InputError).problems.map((p) => p.key)).to.include("localBucket");
    });
});
