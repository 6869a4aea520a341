/**
 * GlobalRateLimit's typed Redis choice (deploy one, or use an existing Redis, Sentinel or Cluster),
 * checked, and its mapping to and from the connection the service's environment is built from
 * (builders/redis-connection.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import { DEFAULTS } from "./defaults";
import { isDnsName, suggestedDnsName } from "../lib/dns-names";
import { Problem } from "../lib/problems";
import { FixStyle } from "../lib/fix-style";
import { fieldProblem, oneOfProblems } from "../lib/field-checks";
import { planned } from "./arg-checks";
import { DEFAULT_REDIS_MAXMEMORY, REDIS_MAXMEMORY_SHARE, REDIS_MEMORY_LIMIT, REDIS_MEMORY_LIMIT_BYTES, redisMemoryBytes } from "../builders/failure-bounds";
import { RedisConnection, RedisModeName, SecretKey, isHostPort } from "../builders/redis-connection";

/** Why a `maxmemory` value is refused, or undefined when it is accepted. */
export function redisMaxMemoryProblem(text: unknown): string | undefined {
    const bytes = redisMemoryBytes(text);
    const max = Math.floor(REDIS_MEMORY_LIMIT_BYTES * REDIS_MAXMEMORY_SHARE);
    if (bytes === undefined) return "must be a Redis memory size such as 160mb, 100000kb or 1gb (a whole number with an optional k, kb, m, mb, g or gb)";
    if (bytes < 1024 * 1024) return "must be at least 1mb (Redis needs room for the counters of one window)";
    if (bytes > max)
        return `must be at most ${max / (1024 * 1024)}mb: ${REDIS_MAXMEMORY_SHARE * 100} % of the container's memory limit ${REDIS_MEMORY_LIMIT}, so Redis evicts counters before the kernel kills it`;
    return undefined;
}

/** Whether `k` can be a key of a Secret's data (Kubernetes: letters, digits, '-', '_', '.'). */
function isSecretDataKey(k: unknown): k is string {
    return typeof k === "string" && /^[-._a-zA-Z0-9]+$/.test(k);
}
const SECRET_DATA_KEY_PROBLEM = "must be a Secret data key (letters, digits, '-', '_', '.')";

const SENTINEL_MASTER_PROBLEM = "must not contain commas or spaces (the service splits REDIS_URL on commas)";
/** A Sentinel master name without commas or white space: the name itself when it has none, else the suggested fix. */
function cleanSentinelMaster(master: string): string {
    return master.replace(/[,\s]+/g, "") || "mymaster";
}

/** A key of a Kubernetes Secret. */
export interface SecretKeyArgs {
    /** The Secret's name; an output accepted (e.g. the name of a Secret the same program creates), checked when known. */
    name: pulumi.Input<string>;
    /** The key inside it. Defaults to `password`. */
    key?: string;
}

/** Redis for the counters. */
export interface RedisOptionsArgs {
    /** Deploy one, or use an existing Redis, Sentinel or Cluster. Defaults to `RedisModeName.InCluster`. */
    mode?: RedisModeName;
    /** Image of the Redis the component deploys (in-cluster only); an output accepted. Defaults to `docker.io/library/redis:7.0.15-alpine`. */
    image?: pulumi.Input<string>;
    /**
     * `maxmemory` of the Redis the component deploys (in-cluster only). A store that holds a
     * per-value counter evicts the least used counters first (`allkeys-lfu`); one of fixed counters
     * only, those closest to expiry (`volatile-ttl`). At most `192mb` (75 % of the container's
     * 256Mi limit). Defaults to `160mb` (a store of per-value counters: what
     * `perValueStore.newValuesPerSecond` needs, when given).
     */
    maxMemory?: string;
    /**
     * `host:port` of the existing Redis, of the Sentinels, or of the Cluster's seed nodes. Each an
     * output accepted (e.g. a managed Redis's endpoint), checked when known; the list itself is
     * plain (its length decides the mode's checks). Defaults to none (in-cluster).
     */
    addresses?: pulumi.Input<string>[];
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
    /** Secret whose `ca.crt` verifies the server (TLS); an output accepted, checked when known. Defaults to the system roots. */
    tlsCaSecret?: pulumi.Input<string>;
}

/** The typed Redis choice → the connection the service environment is built from (builders/redis-connection.ts). */
export function redisConnectionOf(r: RedisOptionsArgs, problems: Problem[]): RedisConnection {
    const mode = r.mode ?? RedisModeName.InCluster;
    if (!(Object.values(RedisModeName) as string[]).includes(mode)) {
        // The other Redis checks depend on the mode; they would only add noise to the mode's problem.
        problems.push(...oneOfProblems("redis.mode", mode, Object.values(RedisModeName), RedisModeName.InCluster));
    } else {
        problems.push(...deployedRedisProblems(r, mode));
        problems.push(
            ...redisOptionsProblems(r).map((p) => ({
                key: p.key,
                value: p.value,
                problem: p.problem,
                fix: p.fix(REDIS_ARGS_FIX),
                fixWith: (s: FixStyle) => p.fix({ set: (f, v) => s.set(f, v), rm: (f) => s.rm(f) }),
            })),
        );
    }
    const secretKey = (k: SecretKeyArgs): SecretKey => ({ name: planned(k.name), key: k.key ?? DEFAULTS.redisPasswordSecretKey });
    return {
        mode: mode as RedisModeName,
        addresses: Array.isArray(r.addresses) ? r.addresses.map(planned) : [],
        ...(r.sentinelMaster !== undefined ? { sentinelMaster: r.sentinelMaster } : {}),
        ...(r.passwordSecret ? { password: secretKey(r.passwordSecret) } : {}),
        ...(r.sentinelPasswordSecret ? { sentinelPassword: secretKey(r.sentinelPasswordSecret) } : {}),
        tls: r.tls ?? DEFAULTS.redisTls,
        ...(r.tlsCaSecret !== undefined ? { tlsCaSecret: planned(r.tlsCaSecret) } : {}),
    };
}

/** The options of the Redis the component deploys: a valid maxMemory in-cluster, neither option for an existing Redis. */
function deployedRedisProblems(r: RedisOptionsArgs, mode: RedisModeName): Problem[] {
    if (mode === RedisModeName.InCluster) {
        const p = r.maxMemory === undefined ? undefined : redisMaxMemoryProblem(r.maxMemory);
        return p ? [fieldProblem("redis.maxMemory", r.maxMemory, p, (s) => s.set("redis.maxMemory", DEFAULT_REDIS_MAXMEMORY))] : [];
    }
    const problems: Problem[] = [];
    if (r.image !== undefined)
        problems.push({ key: "redis.image", value: r.image, problem: "has no effect: no Redis is deployed for an existing one", fix: "remove redis.image" });
    if (r.maxMemory !== undefined)
        problems.push({
            key: "redis.maxMemory",
            value: r.maxMemory,
            problem: "has no effect: no Redis is deployed for an existing one (set maxmemory on that Redis)",
            fix: "remove redis.maxMemory",
        });
    return problems;
}

/**
 * How a Redis rule's fix names a change to one field (`redis.addresses`, ...): phrased for
 * GlobalRateLimit's arguments here, for the stack's config keys by mesh/redis-settings.ts.
 * Values are given as text (a list comma-separated, a boolean `true`).
 */
export interface RedisFieldFix {
    set(field: string, value: string): string;
    rm(field: string): string;
}

/** One problem of the Redis choice: its fix phrased through a `RedisFieldFix`. */
export interface RedisProblem {
    /** The field path, e.g. `redis.addresses` or `redis.passwordSecret.key`. */
    key: string;
    value: unknown;
    problem: string;
    fix: (f: RedisFieldFix) => string;
}

/** GlobalRateLimit's phrasing of a Redis fix. */
export const REDIS_ARGS_FIX: RedisFieldFix = {
    set: (field, value) =>
        `set ${field} to ${field === "redis.addresses" ? JSON.stringify(value.split(",")) : field === "redis.tls" ? value : JSON.stringify(value)}`,
    rm: (field) => `remove ${field}`,
};

/**
 * The Redis connection's checks, each rule once with one message: GlobalRateLimit runs them on its
 * `redis` argument, the stack's config on the `redis` its keys map to (mesh/redis-settings.ts). A
 * mode that is not one of RedisModeName is the caller's problem (nothing else is checked then).
 */
export function redisOptionsProblems(r: RedisOptionsArgs): RedisProblem[] {
    const mode = r.mode ?? RedisModeName.InCluster;
    const problems: RedisProblem[] = [];
    if (mode === RedisModeName.InCluster) problems.push(...existingOnlyProblems(r));
    else problems.push(...addressProblems(r.addresses, mode));
    problems.push(...sentinelProblems(r, mode));
    if (mode !== RedisModeName.InCluster) problems.push(...tlsCaProblems(r));
    if (r.passwordSecret) problems.push(...secretKeyProblems(r.passwordSecret, "redis.passwordSecret"));
    if (r.sentinelPasswordSecret) problems.push(...secretKeyProblems(r.sentinelPasswordSecret, "redis.sentinelPasswordSecret"));
    return problems;
}

/** The Redis the component deploys: none of the fields of an existing Redis (`tls: false`, the default spelled out, is accepted). */
function existingOnlyProblems(r: RedisOptionsArgs): RedisProblem[] {
    // passwordSecret is allowed: the deployed Redis then uses the user's Secret instead of a generated password.
    return (["addresses", "tls", "tlsCaSecret"] as const)
        .filter((f) => r[f] !== undefined && !(f === "tls" && r.tls === false))
        .map((f) => {
            const several = f === "addresses" && (Array.isArray(r.addresses) ? r.addresses.length > 1 : String(r.addresses).includes(","));
            return {
                key: `redis.${f}`,
                value: r[f],
                problem: "applies only to an existing Redis (mode external, sentinel or cluster)",
                fix: (x: RedisFieldFix) => `${x.rm(`redis.${f}`)}, or ${x.set("redis.mode", several ? "cluster" : "external")}`,
            };
        });
}

const ADDRESS_EXAMPLES: Readonly<Record<string, [string, string]>> = {
    external: ["the Redis's host:port", "redis.cache.svc.cluster.local:6379"],
    sentinel: ["the Sentinels' host:port", "sentinel-0.redis:26379,sentinel-1.redis:26379,sentinel-2.redis:26379"],
    cluster: ["some of the Cluster's nodes (host:port)", "redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379"],
};

/** An existing Redis: a list of host:port, as many as the mode takes, none twice. */
function addressProblems(given: unknown, mode: RedisModeName): RedisProblem[] {
    const key = "redis.addresses";
    const [what, example] = ADDRESS_EXAMPLES[mode];
    if (given !== undefined && !Array.isArray(given))
        return [{ key, value: given, problem: "must be a list of host:port", fix: (x) => x.set(key, ADDRESS_EXAMPLES.external[1]) }];
    const addresses: unknown[] = given ?? [];
    if (addresses.length === 0)
        return [{ key, value: addresses, problem: `is required with mode ${mode}: ${what}`, fix: (x) => `${x.set(key, example)}, or ${x.rm("redis.mode")}` }];
    const problems: RedisProblem[] = [];
    const ok = (a: unknown): a is string => typeof a === "string" && isHostPort(a);
    const bad = addresses.filter((a) => !ok(a));
    if (bad.length) {
        const port = mode === RedisModeName.Sentinel ? 26379 : 6379;
        const fixed = addresses.map((a) => (ok(a) ? a : `${String(a).replace(/:.*$/, "") || "redis"}:${port}`)).join(",");
        problems.push({ key, value: given, problem: `has address(es) that are not host:port: ${bad.join(", ")}`, fix: (x) => x.set(key, fixed) });
    }
    if (mode === RedisModeName.External && addresses.length > 1) {
        problems.push({
            key,
            value: given,
            problem:
                "names several servers, but mode external is one Redis; several addresses are the Sentinels of a Sentinel setup or the nodes of a Redis Cluster",
            fix: (x) =>
                `${x.set("redis.mode", "cluster")}, or ${x.set("redis.mode", "sentinel")} with the master's name, or ${x.set(key, String(addresses[0]))}`,
        });
    }
    if (new Set(addresses).size !== addresses.length)
        problems.push({ key, value: given, problem: "names an address twice", fix: (x) => x.set(key, [...new Set(addresses)].join(",")) });
    return problems;
}

/** Sentinel: `sentinelMaster` required and clean; any other mode: no Sentinel field (reported once). */
function sentinelProblems(r: RedisOptionsArgs, mode: RedisModeName): RedisProblem[] {
    const key = "redis.sentinelMaster";
    const master = r.sentinelMaster;
    if (mode === RedisModeName.Sentinel && !master) {
        return [
            {
                key,
                value: master,
                problem: "is required with mode sentinel: the name the Sentinels monitor the master under (`sentinel monitor <name> ...`)",
                fix: (x) => x.set(key, "mymaster"),
            },
        ];
    }
    if (mode === RedisModeName.Sentinel && cleanSentinelMaster(String(master)) !== String(master))
        return [{ key, value: master, problem: SENTINEL_MASTER_PROBLEM, fix: (x) => x.set(key, cleanSentinelMaster(String(master))) }];
    const given = (["sentinelMaster", "sentinelPasswordSecret"] as const).filter((f) => r[f] !== undefined);
    if (mode === RedisModeName.Sentinel || !given.length) return [];
    return [
        {
            key: `redis.${given[0]}`,
            value: r[given[0]],
            problem: `applies only to mode sentinel (the mode is ${mode})`,
            fix: (x) => `${given.map((f) => x.rm(`redis.${f}`)).join(" and ")}, or ${x.set("redis.mode", "sentinel")}`,
        },
    ];
}

/** The CA Secret: only with TLS, and the name of a Secret. */
function tlsCaProblems(r: RedisOptionsArgs): RedisProblem[] {
    if (r.tlsCaSecret === undefined) return [];
    const key = "redis.tlsCaSecret";
    return [
        ...(!r.tls
            ? [
                  {
                      key,
                      value: r.tlsCaSecret,
                      problem: "is only read with tls true",
                      fix: (x: RedisFieldFix) => `${x.set("redis.tls", "true")}, or ${x.rm(key)}`,
                  },
              ]
            : []),
        ...secretNameProblems(key, r.tlsCaSecret),
    ];
}

/** The name of a Secret in the service's namespace. */
function secretNameProblems(key: string, name: unknown): RedisProblem[] {
    if (isDnsName(name, "subdomain")) return [];
    return [
        {
            key,
            value: name,
            problem: "must be the name of a Secret in the service's namespace (a DNS-1123 subdomain)",
            fix: (x) => x.set(key, suggestedDnsName(name, "subdomain")),
        },
    ];
}

/** A Secret's key: its name, and a valid data key (defaults to `password`). */
function secretKeyProblems(k: SecretKeyArgs, field: string): RedisProblem[] {
    const problems = secretNameProblems(`${field}.name`, k.name);
    if (!isSecretDataKey(k.key ?? DEFAULTS.redisPasswordSecretKey))
        problems.push({
            key: `${field}.key`,
            value: k.key,
            problem: SECRET_DATA_KEY_PROBLEM,
            fix: (x) => x.set(`${field}.key`, DEFAULTS.redisPasswordSecretKey),
        });
    return problems;
}

/** The typed Redis choice of a connection read from stack config (the inverse of the above). */
export function redisOptionsOf(c: RedisConnection, image: string, maxMemory: string): RedisOptionsArgs {
    if (c.mode === "in-cluster") return { image, maxMemory, ...(c.password ? { passwordSecret: c.password } : {}) };
    return {
        mode: c.mode,
        addresses: [...c.addresses],
        ...(c.sentinelMaster !== undefined ? { sentinelMaster: c.sentinelMaster } : {}),
        ...(c.password ? { passwordSecret: c.password } : {}),
        ...(c.sentinelPassword ? { sentinelPasswordSecret: c.sentinelPassword } : {}),
        ...(c.tls ? { tls: true } : {}),
        ...(c.tlsCaSecret !== undefined ? { tlsCaSecret: c.tlsCaSecret } : {}),
    };
}
