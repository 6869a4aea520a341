/**
 * The stack's Redis keys → the Redis connection. The keys map to GlobalRateLimit's `redis` argument,
 * whose checks (components/redis-options.ts redisOptionsProblems) are the only ones of a Redis
 * choice: each problem is reported under the config key that sets its field (config-schema.ts
 * CONFIG_KEY_OF_FIELD), its fix phrased for the reader's style. Checked here only what the config
 * has and the argument has not: a password key without a password Secret (the config splits the
 * Secret into two keys) and a pipeline window for a mode the service does not apply it to.
 */
import { RedisConnection, RedisModeName, REDIS_MODES } from "../builders/redis-connection";
import { RedisOptionsArgs, redisOptionsProblems } from "../components/redis-options";
import { configKeyOfField } from "./config-schema";
import type { Fix } from "../lib/fix-style";

/** What validateMeshArgs' reader offers (mesh/settings.ts). */
export interface ConfigReader {
    given(key: string): string | undefined;
    str(key: string): string;
    bool(key: string): boolean;
    oneOf<T extends string>(key: string, allowed: readonly T[]): T;
    fail(key: string, value: string | undefined, text: string, fix: Fix): void;
}

/**
 * Reads and checks the Redis keys; every bad combination is a config problem. `pipelineWindow` is
 * `redisPipelineWindow` as read (the pinned service applies it to Redis Cluster only).
 */
export function readRedisConnection(r: ConfigReader, pipelineWindow: string): RedisConnection {
    const mode = r.oneOf<RedisModeName>("redisMode", REDIS_MODES);
    const addresses = (r.given("redisAddress") ?? "")
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean);
    const master = r.given("redisSentinelMaster");
    const secret = r.given("redisPasswordSecret");
    const secretKey = r.str("redisPasswordSecretKey");
    const sentinelSecret = r.given("redisSentinelPasswordSecret");
    const tls = r.bool("redisTls");
    const caSecret = r.given("redisTlsCaSecret");

    const options: RedisOptionsArgs = {
        mode,
        ...(r.given("redisAddress") !== undefined ? { addresses } : {}),
        ...(master !== undefined ? { sentinelMaster: master } : {}),
        ...(secret !== undefined ? { passwordSecret: { name: secret, key: secretKey } } : {}),
        ...(sentinelSecret !== undefined ? { sentinelPasswordSecret: { name: sentinelSecret, key: secretKey } } : {}),
        ...(r.given("redisTls") !== undefined ? { tls } : {}),
        ...(caSecret !== undefined ? { tlsCaSecret: caSecret } : {}),
    };
    const reported = new Set<string>();
    for (const p of redisOptionsProblems(options)) {
        const key = configKeyOfField(p.key);
        // The two Secrets share one config key (redisPasswordSecretKey): its problem once.
        if (reported.has(`${key}\n${p.problem}`)) continue;
        reported.add(`${key}\n${p.problem}`);
        r.fail(key, r.given(key), p.problem, (s) => p.fix({ set: (f, v) => s.set(configKeyOfField(f), v), rm: (f) => s.rm(configKeyOfField(f)) }));
    }
    checkPasswordKey(r, secret ?? sentinelSecret);
    checkPipelineWindow(r, mode, pipelineWindow);

    return {
        mode,
        addresses: mode === "in-cluster" ? [] : addresses,
        sentinelMaster: mode === "sentinel" ? master : undefined,
        password: secret !== undefined ? { name: secret, key: secretKey } : undefined,
        sentinelPassword: mode === "sentinel" && sentinelSecret !== undefined ? { name: sentinelSecret, key: secretKey } : undefined,
        tls,
        tlsCaSecret: tls ? caSecret : undefined,
    };
}

/** `redisPasswordSecretKey` names a key of a Secret: only with one (the argument's key lives inside its Secret). */
function checkPasswordKey(r: ConfigReader, secret: string | undefined): void {
    if (r.given("redisPasswordSecretKey") !== undefined && secret === undefined) {
        r.fail(
            "redisPasswordSecretKey",
            r.given("redisPasswordSecretKey"),
            "names a key of redisPasswordSecret, which is not set",
            (s) => `${s.set("redisPasswordSecret", "<secret name>")}, or ${s.rm("redisPasswordSecretKey")}`,
        );
    }
}

/** A pipeline window set for a mode the pinned service does not apply it to is a problem. */
function checkPipelineWindow(r: ConfigReader, mode: RedisModeName, pipelineWindow: string): void {
    // Without white space, as the fix for a window like "150 us" suggests it: both problems in one round.
    const window = pipelineWindow.replace(/\s+/g, "");
    const windowIsSet = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(window) && /[1-9]/.test(window);
    if (mode !== "cluster" && windowIsSet) {
        r.fail(
            "redisPipelineWindow",
            pipelineWindow,
            `has no effect with redisMode ${mode}: the pinned service applies REDIS_PIPELINE_WINDOW to Redis Cluster only (its single and Sentinel clients pipeline each request's commands already)`,
            (s) => `${s.rm("redisPipelineWindow")}, or ${s.set("redisMode", "cluster")}`,
        );
    }
}
