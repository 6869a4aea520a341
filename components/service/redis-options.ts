/**
 * GlobalRateLimit's typed Redis choice (deploy one, or use an existing Redis, Sentinel or Cluster),
 * checked, and its mapping to and from the connection the service's environment is built from
 * (builders/redis-connection.ts).
 */
import { bindCrossCheck } from "../../lib/cross-checks";
import { isDnsName, suggestedDnsName } from "../../lib/dns-names";
import { Problem } from "../../lib/problems";
import { FixStyle } from "../../lib/fix-style";
import { planned } from "../common/arg-checks";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { REDIS_CHECKS, REDIS_FIELDS, SECRET_KEY_FIELDS, isSecretDataKey, redisMaxMemoryProblem } from "./redis-fields";
import { RedisOptionsArgs, SecretKeyArgs } from "./redis-options-args.generated";
import {
    REDIS_SECRET_KEY,
    RedisAuth,
    RedisConnection,
    RedisModeName,
    ResolvedRedis,
    SecretKey,
    isHostPort,
    redisSecretName,
} from "../../builders/redis-connection";

export { RedisOptionsArgs, SecretKeyArgs, redisMaxMemoryProblem };

const SECRET_DATA_KEY_PROBLEM = "must be a Secret data key (letters, digits, '-', '_', '.')";

const SENTINEL_MASTER_PROBLEM = "must not contain commas or spaces (the service splits REDIS_URL on commas)";
/** A Sentinel master name without commas or white space: the name itself when it has none, else the suggested fix. */
function cleanSentinelMaster(master: string): string {
    return master.replace(/[,\s]+/g, "") || "mymaster";
}

/** The typed Redis choice → the connection the service environment is built from (builders/redis-connection.ts). */
export function redisConnectionOf(r: RedisOptionsArgs, problems: Problem[]): RedisConnection {
    const mode = withDefaults(REDIS_FIELDS, r).mode;
    const modeProblems = givenProblems(REDIS_FIELDS.mode, "redis.mode", mode);
    // The other Redis checks depend on the mode; they would only add noise to the mode's problem.
    if (modeProblems.length) problems.push(...modeProblems);
    else {
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
    const secretKey = (k: SecretKeyArgs): SecretKey => ({ name: planned(k.name), key: withDefaults(SECRET_KEY_FIELDS, k).key });
    return {
        mode: mode as RedisModeName,
        addresses: Array.isArray(r.addresses) ? r.addresses.map(planned) : [],
        ...(r.sentinelMaster !== undefined ? { sentinelMaster: r.sentinelMaster } : {}),
        ...(r.passwordSecret ? { password: secretKey(r.passwordSecret) } : {}),
        ...(r.sentinelPasswordSecret ? { sentinelPassword: secretKey(r.sentinelPasswordSecret) } : {}),
        tls: withDefaults(REDIS_FIELDS, r).tls,
        ...(r.tlsCaSecret !== undefined ? { tlsCaSecret: planned(r.tlsCaSecret) } : {}),
    };
}

/**
 * A checked connection resolved for the Redis named `redisName` (the in-cluster one's name): its
 * password a given Secret, else (in-cluster) one the stack generates into `<redisName>-auth`, else none.
 */
export function resolvedRedisOf(c: RedisConnection, redisName: string): ResolvedRedis {
    const { password, ...rest } = c;
    const auth: RedisAuth = password
        ? { kind: "given", secret: password }
        : c.mode === RedisModeName.InCluster
          ? { kind: "generated", secret: { name: redisSecretName(redisName), key: REDIS_SECRET_KEY } }
          : { kind: "none" };
    return { ...rest, auth };
}

/** The options of the Redis the component deploys: a valid maxMemory in-cluster, neither option for an existing Redis. */
function deployedRedisProblems(r: RedisOptionsArgs, mode: RedisModeName): Problem[] {
    if (mode === RedisModeName.InCluster) {
        return givenProblems(REDIS_FIELDS.maxMemory, "redis.maxMemory", r.maxMemory);
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
    if (!isSecretDataKey(withDefaults(SECRET_KEY_FIELDS, k).key))
        problems.push({
            key: `${field}.key`,
            value: k.key,
            problem: SECRET_DATA_KEY_PROBLEM,
            fix: (x) => x.set(`${field}.key`, SECRET_KEY_FIELDS.key.default),
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

/** Redis's cross-field checks (redis-fields.ts REDIS_CHECKS). */
bindCrossCheck(REDIS_CHECKS.mode, "redis-options.ts redisOptionsProblems", redisOptionsProblems);
bindCrossCheck(REDIS_CHECKS.secret, "redis-options.ts secretKeyProblems", secretKeyProblems);
