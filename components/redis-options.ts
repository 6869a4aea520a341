/**
 * GlobalRateLimit's typed Redis choice (deploy one, or use an existing Redis, Sentinel or Cluster),
 * checked, and its mapping to and from the connection the service's environment is built from
 * (builders/redis-connection.ts).
 */
import { DEFAULTS } from "./defaults";
import { dnsProblem } from "./arg-checks";
import { Problem } from "../lib/problems";
import { DEFAULT_REDIS_MAXMEMORY, redisMaxMemoryProblem } from "../builders/failure-bounds";
import {
    RedisConnection,
    RedisModeName,
    SECRET_DATA_KEY_PROBLEM,
    SENTINEL_MASTER_PROBLEM,
    SecretKey,
    cleanSentinelMaster,
    isHostPort,
    isSecretDataKey,
} from "../builders/redis-connection";

/** A key of a Kubernetes Secret. */
export interface SecretKeyArgs {
    /** The Secret's name. */
    name: string;
    /** The key inside it. Defaults to `password`. */
    key?: string;
}

/** Redis for the counters. */
export interface RedisOptionsArgs {
    /** Deploy one, or use an existing Redis, Sentinel or Cluster. Defaults to `RedisModeName.InCluster`. */
    mode?: RedisModeName;
    /** Image of the Redis the component deploys (in-cluster only). Defaults to `docker.io/library/redis:7.0.15-alpine`. */
    image?: string;
    /**
     * `maxmemory` of the Redis the component deploys (in-cluster only), with eviction policy
     * `volatile-ttl` (only counters, which all expire, are evicted). At most `192mb` (75 % of the
     * container's 256Mi limit). Defaults to `160mb`.
     */
    maxMemory?: string;
    /** `host:port` of the existing Redis, of the Sentinels, or of the Cluster's seed nodes. Defaults to none (in-cluster). */
    addresses?: string[];
    /** Sentinel: the master's name as the Sentinels know it. */
    sentinelMaster?: string;
    /**
     * Secret (in the service's namespace) with the Redis password. For an existing Redis: its
     * password; defaults to none (no AUTH). For the Redis the component deploys (`InCluster`): a
     * Secret you manage (created before `pulumi up`, never changed or deleted by the component),
     * which that Redis requires and the service sends; defaults to a password the component
     * generates (Pulumi's Random provider) and keeps in a Secret of its own.
     */
    passwordSecret?: SecretKeyArgs;
    /** Sentinel: Secret with the Sentinels' own password. Defaults to none. */
    sentinelPasswordSecret?: SecretKeyArgs;
    /** Connect with TLS. Defaults to `false`. */
    tls?: boolean;
    /** Secret whose `ca.crt` verifies the server (TLS). Defaults to the system roots. */
    tlsCaSecret?: string;
}

/** The typed Redis choice → the connection the service environment is built from (builders/redis-connection.ts). */
export function redisConnectionOf(r: RedisOptionsArgs, problems: Problem[]): RedisConnection {
    const mode = r.mode ?? RedisModeName.InCluster;
    const knownMode = (Object.values(RedisModeName) as string[]).includes(mode);
    if (!knownMode) {
        problems.push({
            key: "redis.mode",
            value: mode,
            problem: `must be one of ${Object.values(RedisModeName).join(", ")}`,
            fix: "use RedisModeName.InCluster",
        });
    }
    const addresses: string[] = Array.isArray(r.addresses) ? r.addresses : [];
    if (!knownMode) {
        // The other Redis checks depend on the mode; they would only add noise to the mode's problem.
    } else if (mode === RedisModeName.InCluster) {
        inClusterRedisProblems(r, problems);
    } else {
        existingRedisProblems(r, mode, addresses, problems);
    }
    return {
        mode: mode as RedisModeName,
        addresses,
        ...(r.sentinelMaster !== undefined ? { sentinelMaster: r.sentinelMaster } : {}),
        ...(r.passwordSecret ? { password: secretKeyOf(r.passwordSecret, "redis.passwordSecret", problems) } : {}),
        ...(r.sentinelPasswordSecret ? { sentinelPassword: secretKeyOf(r.sentinelPasswordSecret, "redis.sentinelPasswordSecret", problems) } : {}),
        tls: r.tls ?? DEFAULTS.redisTls,
        ...(r.tlsCaSecret !== undefined ? { tlsCaSecret: r.tlsCaSecret } : {}),
    };
}

/** A Secret's key, checked (a DNS subdomain name, a valid data key; the key defaults to `password`). */
function secretKeyOf(k: SecretKeyArgs, field: string, problems: Problem[]): SecretKey {
    problems.push(...dnsProblem(`${field}.name`, k.name, "subdomain"));
    const secretKey = k.key ?? DEFAULTS.redisPasswordSecretKey;
    if (!isSecretDataKey(secretKey)) {
        problems.push({ key: `${field}.key`, value: k.key, problem: SECRET_DATA_KEY_PROBLEM, fix: 'use e.g. "password"' });
    }
    return { name: k.name, key: secretKey };
}

/** The Redis the component deploys: a valid maxMemory, and none of the fields of an existing Redis. */
function inClusterRedisProblems(r: RedisOptionsArgs, problems: Problem[]): void {
    if (r.maxMemory !== undefined) {
        const p = redisMaxMemoryProblem(r.maxMemory);
        if (p) problems.push({ key: "redis.maxMemory", value: r.maxMemory, problem: p, fix: `use "${DEFAULT_REDIS_MAXMEMORY}"` });
    }
    // passwordSecret is allowed: the deployed Redis then uses the user's Secret instead of a generated password.
    for (const f of ["addresses", "sentinelMaster", "sentinelPasswordSecret", "tls", "tlsCaSecret"] as const) {
        // `tls: false` is the default spelled out (the stack config accepts redisTls=false too).
        if (r[f] !== undefined && !(f === "tls" && r.tls === false))
            problems.push({
                key: `redis.${f}`,
                value: r[f],
                problem: "applies only to an existing Redis (mode external, sentinel or cluster)",
                fix: `remove redis.${f}, or set redis.mode`,
            });
    }
}

/** An existing Redis: nothing of a deployed one, its addresses, the Sentinel fields only for Sentinel, the CA only with TLS. */
function existingRedisProblems(r: RedisOptionsArgs, mode: RedisModeName, addresses: string[], problems: Problem[]): void {
    if (r.image !== undefined)
        problems.push({
            key: "redis.image",
            value: r.image,
            problem: "has no effect: no Redis is deployed for an existing one",
            fix: "remove redis.image",
        });
    if (r.maxMemory !== undefined)
        problems.push({
            key: "redis.maxMemory",
            value: r.maxMemory,
            problem: "has no effect: no Redis is deployed for an existing one (set maxmemory on that Redis)",
            fix: "remove redis.maxMemory",
        });
    const want = mode === RedisModeName.External ? "exactly one" : "at least one";
    if (r.addresses !== undefined && !Array.isArray(r.addresses)) {
        problems.push({
            key: "redis.addresses",
            value: r.addresses,
            problem: "must be a list of host:port",
            fix: 'give e.g. ["redis.cache.svc.cluster.local:6379"]',
        });
    } else if (mode === RedisModeName.External ? addresses.length !== 1 : addresses.length < 1) {
        problems.push({
            key: "redis.addresses",
            value: addresses,
            problem: `needs ${want} host:port for mode ${mode}`,
            fix: 'give e.g. ["redis.cache.svc.cluster.local:6379"]',
        });
    }
    addresses.forEach((x, i) => {
        if (typeof x !== "string" || !isHostPort(x))
            problems.push({ key: `redis.addresses[${i}]`, value: x, problem: "must be host:port", fix: 'use e.g. "redis.cache.svc.cluster.local:6379"' });
    });
    sentinelProblems(r, mode, problems);
    if (r.tlsCaSecret !== undefined && !r.tls)
        problems.push({
            key: "redis.tlsCaSecret",
            value: r.tlsCaSecret,
            problem: "needs tls: true",
            fix: "set redis.tls to true, or remove redis.tlsCaSecret",
        });
    if (r.tlsCaSecret !== undefined) problems.push(...dnsProblem("redis.tlsCaSecret", r.tlsCaSecret, "subdomain"));
}

/** Sentinel: `sentinelMaster` required and clean; any other mode: no Sentinel field. */
function sentinelProblems(r: RedisOptionsArgs, mode: RedisModeName, problems: Problem[]): void {
    if (mode === RedisModeName.Sentinel && !r.sentinelMaster) {
        problems.push({
            key: "redis.sentinelMaster",
            value: r.sentinelMaster,
            problem: "is required for mode sentinel",
            fix: 'give the master\'s name, e.g. "mymaster"',
        });
    } else if (mode === RedisModeName.Sentinel && cleanSentinelMaster(String(r.sentinelMaster)) !== String(r.sentinelMaster)) {
        problems.push({
            key: "redis.sentinelMaster",
            value: r.sentinelMaster,
            problem: SENTINEL_MASTER_PROBLEM,
            fix: `use "${cleanSentinelMaster(String(r.sentinelMaster))}"`,
        });
    }
    if (mode !== RedisModeName.Sentinel && (r.sentinelMaster !== undefined || r.sentinelPasswordSecret !== undefined)) {
        const f = r.sentinelMaster !== undefined ? "sentinelMaster" : "sentinelPasswordSecret";
        problems.push({
            key: `redis.${f}`,
            value: r[f],
            problem: "applies only to mode sentinel",
            fix: "remove redis.sentinelMaster and redis.sentinelPasswordSecret",
        });
    }
}

/** The typed Redis choice of a connection read from stack config (the inverse of the above). */
export function redisOptionsOf(c: RedisConnection, image: string, maxMemory: string): RedisOptionsArgs {
    if (c.mode === "in-cluster") return { image, maxMemory, ...(c.password ? { passwordSecret: c.password } : {}) };
    return {
        mode: c.mode,
        addresses: c.addresses,
        ...(c.sentinelMaster !== undefined ? { sentinelMaster: c.sentinelMaster } : {}),
        ...(c.password ? { passwordSecret: c.password } : {}),
        ...(c.sentinelPassword ? { sentinelPasswordSecret: c.sentinelPassword } : {}),
        ...(c.tls ? { tls: true } : {}),
        ...(c.tlsCaSecret !== undefined ? { tlsCaSecret: c.tlsCaSecret } : {}),
    };
}
