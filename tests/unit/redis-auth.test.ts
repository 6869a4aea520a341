/**
 * The Redis password as GlobalRateLimit resolves it (builders/redis-connection.ts `RedisAuth`):
 * generated into a Secret the stack creates, a Secret the user gave (its key defaulted), or none;
 * the builders and the Redis component only read it. Expected values are written from the doc comments.
 */
import { expect } from "chai";
import { deployedRedisAuth, redisConnectionEnv } from "../../builders/redis-connection";
import { resolveGlobalRateLimit } from "../../components/global-ratelimit/resolve";
import { EXT, G, M, REDIS } from "./global-ratelimit-fixtures";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";

/** The resolved value of valid arguments. */
function resolved(a: GlobalRateLimitArgs) {
    const { problems, value } = resolveGlobalRateLimit(a);
    expect(problems).to.deep.equal([]);
    return value!;
}

/** A fixed rule and a per-value one: two stores (`CounterStore.Split`), each with its Redis. */
const SPLIT_RULES = [
    { name: "all", requestsPerUnit: 10, unit: M },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 5, unit: M },
];

describe("Redis password resolved once (RedisAuth)", () => {
    it("in-cluster, no Secret given: a generated password in <redis name>-auth under `password`, which the Redis and the service read", () => {
        const redis = resolved(G()).service.redis;
        expect(redis.auth).to.deep.equal({ kind: "generated", secret: { name: "redis-auth", key: "password" } });
        expect(deployedRedisAuth(redis)).to.deep.equal(redis.auth);
        const env = redisConnectionEnv(redis, "redis.default.svc.cluster.local:6379");
        expect(env.find((e) => e.name === "REDIS_AUTH")).to.deep.equal({
            name: "REDIS_AUTH",
            valueFrom: { secretKeyRef: { name: "redis-auth", key: "password" } },
        });
    });

    it("in-cluster with a Secret given: that Secret, its key defaulted to `password` or as given", () => {
        expect(resolved(REDIS({ passwordSecret: { name: "mine" } })).service.redis.auth).to.deep.equal({
            kind: "given",
            secret: { name: "mine", key: "password" },
        });
        const redis = resolved(REDIS({ passwordSecret: { name: "mine", key: "pw" } })).service.redis;
        expect(redis.auth).to.deep.equal({ kind: "given", secret: { name: "mine", key: "pw" } });
        expect(deployedRedisAuth(redis)).to.deep.equal({ kind: "given", secret: { name: "mine", key: "pw" } });
    });

    it("an existing Redis: its Secret when given, else none (no REDIS_AUTH, no Redis deployed)", () => {
        expect(resolved(EXT({ passwordSecret: { name: "cache-auth" } })).service.redis.auth).to.deep.equal({
            kind: "given",
            secret: { name: "cache-auth", key: "password" },
        });
        const redis = resolved(EXT({})).service.redis;
        expect(redis.auth).to.deep.equal({ kind: "none" });
        expect(deployedRedisAuth(redis)).to.equal(undefined);
        expect(redisConnectionEnv(redis, "unused:6379").map((e) => e.name)).to.not.include("REDIS_AUTH");
    });

    it("the per-value Redis: a password of its own (redis-per-value-auth), or the fixed side's given Secret", () => {
        const own = resolved(G({ rules: SPLIT_RULES }));
        expect(own.perValue?.service.redis.auth).to.deep.equal({ kind: "generated", secret: { name: "redis-per-value-auth", key: "password" } });
        const shared = resolved(G({ rules: SPLIT_RULES, redis: { passwordSecret: { name: "mine", key: "pw" } } }));
        expect(shared.perValue?.service.redis.auth).to.deep.equal({ kind: "given", secret: { name: "mine", key: "pw" } });
    });
});
