/**
 * GlobalRateLimit's own argument checks (components/global-ratelimit/checks.ts, the gateway target,
 * the rules' scope, the namespace, the timeout, the service's options): each case starts from valid
 * arguments, changes one thing and compares the WHOLE problem list (field, value, problem, fix).
 * Expected values are written from the doc comments and config-schema.ts defaults, not read from
 * the code; everything is computed inside each `it` (Stryker's per-test coverage).
 */
import { expect } from "chai";
import { RedisModeName } from "../../builders/redis-connection";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { ServiceLogLevel } from "../../components/service/settings";
import { Problem } from "../../lib/problems";
import {
    G,
    GATEWAY_FIX,
    GW,
    LABEL,
    LABEL_BAD,
    LABEL_BAD_FIX,
    M,
    PORT,
    SELECTOR_EMPTY,
    SELECTOR_EMPTY_FIX,
    SUBDOMAIN,
    SVC,
    PORT_RANGE,
    VHOST,
    VHOST_FIX,
    VHOSTS_REQUIRED,
    VHOSTS_REQUIRED_FIX,
    WINDOW,
} from "./global-ratelimit-fixtures";

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
            [
                {
                    key: "domain",
                    value: "shop limits",
                    problem: "must be non-empty and use only letters, digits, '_', '.', '-'",
                    fix: 'set domain to "shop-limits"',
                },
            ],
        ],
        [
            "a domain with surrounding spaces: the fix trims them",
            G({ domain: " shop " }),
            [{ key: "domain", value: " shop ", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'set domain to "shop"' }],
        ],
        [
            "a domain with a run of bad characters: one '-'",
            G({ domain: "shop  &  limits" }),
            [
                {
                    key: "domain",
                    value: "shop  &  limits",
                    problem: "must be non-empty and use only letters, digits, '_', '.', '-'",
                    fix: 'set domain to "shop-limits"',
                },
            ],
        ],
        [
            "no domain",
            G({ domain: undefined }),
            [{ key: "domain", value: undefined, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'set domain to "my-gateway"' }],
        ],
        [
            "an empty domain",
            G({ domain: "" }),
            [{ key: "domain", value: "", problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'set domain to "my-gateway"' }],
        ],
        [
            "a domain that is not a string: a name of its own",
            G({ domain: 7 }),
            [{ key: "domain", value: 7, problem: "must be non-empty and use only letters, digits, '_', '.', '-'", fix: 'set domain to "my-gateway"' }],
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
        ["listenerPorts given (a Gateway port the gateway's Service maps to another pod port)", GW({ listenerPorts: [8080] }), []],
        ["listenerPorts: a bad port", GW({ listenerPorts: [0] }), [{ key: "gateway.listenerPorts[0]", value: 0, problem: PORT_RANGE, fix: "use e.g. 8081" }]],
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
                    problem: "must be true or false",
                    fix: "set failureModeDeny to true",
                },
            ],
        ],

        // namespace (DNS label, 63) and the fixes dnsProblem suggests
        ["namespace of 63 characters", G({ namespace: "a".repeat(63) }), []],
        [
            "namespace of 64 characters: the fix is cut to 63",
            G({ namespace: "a".repeat(64) }),
            [{ key: "namespace", value: "a".repeat(64), problem: LABEL, fix: `set namespace to "${"a".repeat(63)}"` }],
        ],
        [
            "namespace too long: the cut fix does not end in '-'",
            G({ namespace: `${"a".repeat(62)}-bc` }),
            [{ key: "namespace", value: `${"a".repeat(62)}-bc`, problem: LABEL, fix: `set namespace to "${"a".repeat(62)}"` }],
        ],
        [
            "namespace with capitals and '_'",
            G({ namespace: "Shop_Limits" }),
            [{ key: "namespace", value: "Shop_Limits", problem: LABEL, fix: 'set namespace to "shop-limits"' }],
        ],
        [
            "namespace with a dot (a label has none): the fix has none either",
            G({ namespace: "shop.limits" }),
            [{ key: "namespace", value: "shop.limits", problem: LABEL, fix: 'set namespace to "shop-limits"' }],
        ],
        [
            "namespace with leading and trailing '-'",
            G({ namespace: "-shop-" }),
            [{ key: "namespace", value: "-shop-", problem: LABEL, fix: 'set namespace to "shop"' }],
        ],
        ['namespace empty: the fix is "name"', G({ namespace: "" }), [{ key: "namespace", value: "", problem: LABEL, fix: 'set namespace to "name"' }]],

        // timeout
        ["timeout 0.001s", G({ timeout: "0.001s" }), []],
        ["timeout with 9 decimals", G({ timeout: "1.123456789s" }), []],
        [
            "timeout 0.0009s",
            G({ timeout: "0.0009s" }),
            [{ key: "timeout", value: "0.0009s", problem: "must be at least 0.001s", fix: 'set timeout to "0.001s"' }],
        ],
        ["timeout 0s", G({ timeout: "0s" }), [{ key: "timeout", value: "0s", problem: "must be at least 0.001s", fix: 'set timeout to "0.001s"' }]],

        // service
        [
            "service.name not a DNS label",
            SVC({ name: "Rate Limit" }),
            [{ key: "service.name", value: "Rate Limit", problem: LABEL, fix: 'set service.name to "rate-limit"' }],
        ],
        [
            "service.name with a dot",
            SVC({ name: "ratelimit.v2" }),
            [{ key: "service.name", value: "ratelimit.v2", problem: LABEL, fix: 'set service.name to "ratelimit-v2"' }],
        ],
        ["service.configName with dots", SVC({ configName: "ratelimit.config" }), []],
        ["service.configName of 253 characters", SVC({ configName: "a".repeat(253) }), []],
        [
            "service.configName of 254 characters: the fix is cut to 253",
            SVC({ configName: "a".repeat(254) }),
            [{ key: "service.configName", value: "a".repeat(254), problem: SUBDOMAIN, fix: `set service.configName to "${"a".repeat(253)}"` }],
        ],
        [
            "service.configName not a DNS subdomain",
            SVC({ configName: "RateLimit Config" }),
            [{ key: "service.configName", value: "RateLimit Config", problem: SUBDOMAIN, fix: 'set service.configName to "ratelimit-config"' }],
        ],
        [
            "service.configName with an empty part",
            SVC({ configName: "Rate..Limit." }),
            [{ key: "service.configName", value: "Rate..Limit.", problem: SUBDOMAIN, fix: 'set service.configName to "rate.limit"' }],
        ],
        ["service.grpcPort 1", SVC({ grpcPort: 1 }), []],
        ["service.grpcPort 65535", SVC({ grpcPort: 65535 }), []],
        ["service.grpcPort 0", SVC({ grpcPort: 0 }), [{ key: "service.grpcPort", value: 0, problem: PORT, fix: "set service.grpcPort to 1" }]],
        ["service.grpcPort 65536", SVC({ grpcPort: 65536 }), [{ key: "service.grpcPort", value: 65536, problem: PORT, fix: "set service.grpcPort to 65535" }]],
        [
            "service.grpcPort 8080 (the service's HTTP port)",
            SVC({ grpcPort: 8080 }),
            [
                {
                    key: "service.grpcPort",
                    value: 8080,
                    problem: "collides with the service's HTTP (8080) or debug (6070) port",
                    fix: "set service.grpcPort to 8081",
                },
            ],
        ],
        [
            "service.grpcPort 6070 (the service's debug port)",
            SVC({ grpcPort: 6070 }),
            [
                {
                    key: "service.grpcPort",
                    value: 6070,
                    problem: "collides with the service's HTTP (8080) or debug (6070) port",
                    fix: "set service.grpcPort to 8081",
                },
            ],
        ],
        ["service.replicas 1", SVC({ replicas: 1 }), []],
        ["service.replicas 100", SVC({ replicas: 100 }), []],
        [
            "service.replicas 0",
            SVC({ replicas: 0 }),
            [{ key: "service.replicas", value: 0, problem: "must be between 1 and 100", fix: "set service.replicas to 1" }],
        ],
        [
            "service.replicas 101",
            SVC({ replicas: 101 }),
            [{ key: "service.replicas", value: 101, problem: "must be between 1 and 100", fix: "set service.replicas to 100" }],
        ],
        ...Object.values(ServiceLogLevel).map((l): [string, GlobalRateLimitArgs, Problem[]] => [`service.logLevel ${l}`, SVC({ logLevel: l }), []]),
        ["service.redisPoolSize 1", SVC({ redisPoolSize: 1 }), []],
        ["service.redisPoolSize 10000", SVC({ redisPoolSize: 10_000 }), []],
        [
            "service.redisPoolSize 0",
            SVC({ redisPoolSize: 0 }),
            [{ key: "service.redisPoolSize", value: 0, problem: "must be between 1 and 10000", fix: "set service.redisPoolSize to 1" }],
        ],
        [
            "service.redisPoolSize 10001",
            SVC({ redisPoolSize: 10_001 }),
            [{ key: "service.redisPoolSize", value: 10_001, problem: "must be between 1 and 10000", fix: "set service.redisPoolSize to 10000" }],
        ],
        ["service.redisPipelineLimit 0", SVC({ redisPipelineLimit: 0 }), []],
        ["service.redisPipelineLimit the largest safe integer", SVC({ redisPipelineLimit: Number.MAX_SAFE_INTEGER }), []],
        [
            "service.redisPipelineLimit -1",
            SVC({ redisPipelineLimit: -1 }),
            [{ key: "service.redisPipelineLimit", value: -1, problem: "must be at least 0", fix: "set service.redisPipelineLimit to 0" }],
        ],
        ["service.localCacheSizeInBytes 0", SVC({ localCacheSizeInBytes: 0 }), []],
        [
            "service.localCacheSizeInBytes -1",
            SVC({ localCacheSizeInBytes: -1 }),
            [{ key: "service.localCacheSizeInBytes", value: -1, problem: "must be at least 0", fix: "set service.localCacheSizeInBytes to 0" }],
        ],
        ...["0", "150us", "2ms", "1µs", "1h2m3.5s"].map((w): [string, GlobalRateLimitArgs, Problem[]] => [
            `service.redisPipelineWindow ${w} (a Redis Cluster, the one Redis the pinned service applies it to)`,
            G({ service: { redisPipelineWindow: w }, redis: { mode: RedisModeName.Cluster, addresses: ["r-0:6379", "r-1:6379", "r-2:6379"] } }),
            [],
        ]),
        ...["1 ms", "5", "", "1d", "ms", "0s0"].map((w): [string, GlobalRateLimitArgs, Problem[]] => [
            `service.redisPipelineWindow ${JSON.stringify(w)}`,
            G({ service: { redisPipelineWindow: w }, redis: { mode: RedisModeName.Cluster, addresses: ["r-0:6379", "r-1:6379", "r-2:6379"] } }),
            [
                {
                    key: "service.redisPipelineWindow",
                    value: w,
                    problem: WINDOW,
                    fix: w === "1 ms" ? 'set service.redisPipelineWindow to "1ms"' : "set service.redisPipelineWindow to 0",
                },
            ],
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
    ];
    for (const [name, args, want] of cases) {
        it(name, () => {
            expect(planGlobalRateLimit(args).problems.map(({ fixWith: _f, ...p }) => p)).to.deep.equal(want);
        });
    }
});
