/**
 * GlobalRateLimit's `redis` argument (components/service/redis-options.ts): in-cluster, external,
 * Sentinel and Cluster, each case one change from valid arguments, the WHOLE problem list compared.
 * Expected values are written here, not read from the code.
 */
import { expect } from "chai";
import { RedisModeName } from "../../builders/redis-connection";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { Problem } from "../../lib/problems";
import {
    ADDRESSES_FIX,
    DEFAULT_PRINCIPAL_FIX,
    EXISTING_ONLY,
    EXT,
    G,
    GATEWAY_FIX,
    PRINCIPAL,
    REDIS,
    SECRET_KEY,
    SECRET_NAME,
    SENTINEL_MASTER_REQUIRED,
    SUBDOMAIN,
    SVC,
} from "./global-ratelimit-fixtures";

describe("GlobalRateLimit's redis argument (components/service/redis-options.ts): every validation problem, exactly (field, value, problem, fix)", () => {
    const cases: [string, GlobalRateLimitArgs, Problem[]][] = [
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
                    problem: "must be one of 'in-cluster', 'external', 'sentinel', 'cluster'",
                    fix: 'set redis.mode to "in-cluster"',
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
                    problem: "must be one of 'in-cluster', 'external', 'sentinel', 'cluster'",
                    fix: 'set redis.mode to "in-cluster"',
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
                    fix: 'set accessPolicy.gatewayPrincipal to "cluster.local/ns/shop/sa/gw"',
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
                {
                    key: "domain",
                    value: undefined,
                    problem: "must be non-empty and use only letters, digits, '_', '.', '-'",
                    fix: 'set domain to "my-gateway"',
                },
                { key: "gateway", value: undefined, problem: "is required", fix: GATEWAY_FIX },
            ],
        ],
        [
            "a bad port that is also not 8080/6070 is reported once; a bad replica count beside it",
            SVC({ grpcPort: 0, replicas: 0 }),
            [
                { key: "service.grpcPort", value: 0, problem: "must be between 1 and 65535", fix: "set service.grpcPort to 1" },
                { key: "service.replicas", value: 0, problem: "must be between 1 and 100", fix: "set service.replicas to 1" },
            ],
        ],
    ];
    for (const [name, args, want] of cases) {
        it(name, () => {
            expect(planGlobalRateLimit(args).problems.map(({ fixWith: _f, ...p }) => p)).to.deep.equal(want);
        });
    }
});
