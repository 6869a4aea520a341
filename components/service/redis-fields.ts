/**
 * The fields of GlobalRateLimit's `redis` (and a Redis Secret's), each declared once
 * (lib/field-decl.ts): documentation, default, rule, where it goes, the stack's key. A rule that
 * depends on the mode (which fields an existing Redis takes, how many addresses) stays with the
 * mode's checks (redis-options.ts) and is stated here in words. components/service/redis-options-args.generated.ts
 * is generated from these tables (`npm run gen`). Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { REDIS_MAXMEMORY_SHARE, REDIS_MEMORY_LIMIT, REDIS_MEMORY_LIMIT_BYTES, redisMemoryBytes } from "../../builders/failure-bounds";
import { REDIS_SECRET_KEY, RedisModeName } from "../../builders/redis-connection";
import { ArgInterface, customRule, field, nested, oneOfRule } from "../../lib/field-decl";
import { fieldProblem } from "../../lib/field-checks";
import { t } from "../../lib/field-types";

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
export function isSecretDataKey(k: unknown): k is string {
    return typeof k === "string" && /^[-._a-zA-Z0-9]+$/.test(k);
}

/** Redis's fields judged together (redis-options.ts): what each mode takes, and a Secret's name (known only once an output is) with its key. */
export const REDIS_CHECKS = {
    mode: crossCheck(
        "redis mode",
        ["image", "addresses", "sentinelMaster", "tls", "tlsCaSecret"],
        "image only in-cluster; one address with external, any number with sentinel or cluster, none in-cluster; sentinelMaster with sentinel only; tls only with an existing Redis, tlsCaSecret only with tls",
    ),
    secret: crossCheck("secret reference", ["name", "key"], "a Secret's name, checked when known, and a data key"),
};

/** A key of a Kubernetes Secret: `redis.passwordSecret`, `redis.sentinelPasswordSecret`. */
export const SECRET_KEY_FIELDS = {
    name: field({
        doc: "The Secret's name; an output accepted (e.g. the name of a Secret the same program creates), checked when known.",
        type: t.input(t.string()),
        required: true,
        rule: checkedWith(REDIS_CHECKS.secret, "the name of a Secret in the service's namespace (a DNS-1123 subdomain)"),
        goesTo: { env: "REDIS_AUTH (REDIS_SENTINEL_AUTH) secretKeyRef.name" },
    }),
    key: field({
        doc: "The key inside it.",
        type: t.string(),
        default: REDIS_SECRET_KEY,
        rule: checkedWith<string>(REDIS_CHECKS.secret, "a Secret data key (letters, digits, '-', '_', '.')"),
        goesTo: { env: "REDIS_AUTH (REDIS_SENTINEL_AUTH) secretKeyRef.key" },
    }),
};

/** The image of the Redis the component deploys, `image`'s default (a plain value: the field also takes an output). */
export const REDIS_IMAGE = "docker.io/library/redis:7.0.15-alpine";

/** The fields of `RedisOptionsArgs`, in the interface's order. */
export const REDIS_FIELDS = {
    mode: field<RedisModeName>({
        doc:
            "Which Redis counts: `RedisModeName.InCluster` (one Redis the component deploys, its password generated unless `passwordSecret` " +
            "names a Secret), `RedisModeName.External` (one existing Redis at `addresses`), `RedisModeName.Sentinel` (Redis Sentinel: " +
            "`addresses` lists the Sentinels, `sentinelMaster` names the master) or `RedisModeName.Cluster` (Redis Cluster: `addresses` lists " +
            "some nodes). With any but `RedisModeName.InCluster` no Redis is deployed.",
        type: t.enum(RedisModeName, "RedisModeName"),
        default: RedisModeName.InCluster,
        rule: oneOfRule(RedisModeName, "RedisModeName"),
        goesTo: { env: "REDIS_TYPE" },
        stackKey: "redisMode",
        stackGroup: "service",
    }),
    image: field({
        doc: "Image of the Redis the component deploys (in-cluster only); an output accepted.",
        type: t.input(t.string()),
        default: REDIS_IMAGE,
        rule: checkedWith(REDIS_CHECKS.mode, "an image"),
        goesTo: { object: "the Redis Deployment's image" },
        stackKey: "redisImage",
        stackGroup: "service",
    }),
    maxMemory: field({
        doc:
            "`maxmemory` of the Redis the component deploys (in-cluster only). Clients choose the values per-value counters are keyed by, so " +
            "a flood of new values would otherwise grow Redis until it is killed; at the bound Redis evicts counters and keeps answering: a " +
            "store that holds a per-value counter the least used first (`allkeys-lfu`), one of fixed counters only those closest to expiry " +
            "(`volatile-ttl`). At most `192mb` (75 % of the container's 256Mi limit).",
        type: t.string(),
        default: "160mb",
        defaultNote: " (a store of per-value counters: what `perValueStore.newValuesPerSecond` needs, when given)",
        rule: customRule<string>("a Redis memory size from 1mb to 192mb, only with mode in-cluster", (path, value, fallback) => {
            const p = redisMaxMemoryProblem(value);
            return p ? [fieldProblem(path, value, p, (s) => s.set(path, String(fallback)))] : [];
        }),
        goesTo: { object: "the deployed Redis's --maxmemory" },
        stackKey: "redisMaxMemory",
        stackGroup: "service",
    }),
    addresses: field({
        doc:
            "`host:port` of the existing Redis, of the Sentinels, or of the Cluster's seed nodes. Each an output accepted (e.g. a managed Redis's " +
            "endpoint), checked when known; the list itself is plain (its length decides the mode's checks).",
        type: t.list(t.input(t.string())),
        defaultNote: "none (in-cluster)",
        rule: checkedWith(REDIS_CHECKS.mode, "a list of host:port, none twice"),
        goesTo: { env: "REDIS_URL" },
        stackKey: "redisAddress",
        stackGroup: "service",
    }),
    sentinelMaster: field<string>({
        doc: "Sentinel: the master's name as the Sentinels know it.",
        type: t.string(),
        rule: checkedWith(REDIS_CHECKS.mode, "a name without commas or spaces"),
        goesTo: { env: "REDIS_URL's first entry" },
        stackKey: "redisSentinelMaster",
        stackGroup: "service",
    }),
    passwordSecret: nested({
        doc:
            "Secret (in the service's namespace) with the Redis password. For an existing Redis: its password; defaults to none (no AUTH). For " +
            "the Redis the component deploys (`InCluster`): a Secret you manage (created before `pulumi up`, never changed or deleted by the " +
            "component), which that Redis requires and the service sends; defaults to a password the component generates (Pulumi's Random " +
            "provider) and keeps in a Secret of its own.",
        type: t.ref("SecretKeyArgs"),
    }),
    sentinelPasswordSecret: nested({ doc: "Sentinel: Secret with the Sentinels' own password. Defaults to none.", type: t.ref("SecretKeyArgs") }),
    tls: field({
        doc: "Connect with TLS.",
        type: t.boolean(),
        default: false,
        rule: checkedWith<boolean>(REDIS_CHECKS.mode, "true or false"),
        goesTo: { env: "REDIS_TLS" },
        stackKey: "redisTls",
        stackGroup: "service",
    }),
    tlsCaSecret: field({
        doc: "Secret whose `ca.crt` verifies the server (TLS); an output accepted, checked when known.",
        type: t.input(t.string()),
        defaultNote: "the system roots",
        rule: checkedWith(REDIS_CHECKS.mode, "the name of a Secret in the service's namespace (a DNS-1123 subdomain)"),
        goesTo: { env: "REDIS_TLS_CACERT (the Secret mounted)" },
        stackKey: "redisTlsCaSecret",
        stackGroup: "service",
    }),
};

/** The interfaces generated from these tables (components/service/redis-options-args.generated.ts), in the file's order. */
export const REDIS_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "SecretKeyArgs", doc: "A key of a Kubernetes Secret.", fields: SECRET_KEY_FIELDS },
    { name: "RedisOptionsArgs", doc: "Redis for the counters.", fields: REDIS_FIELDS },
];

/** Where the generated interfaces' field types come from. */
export const REDIS_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "@pulumi/pulumi": ["pulumi"],
    "../../builders/redis-connection": ["RedisModeName"],
};
