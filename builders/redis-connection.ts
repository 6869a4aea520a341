/**
 * Which Redis the rate-limit service counts in, from stack config, and the service environment
 * that connects to it. Pure: no Pulumi runtime, no I/O.
 *
 * - `in-cluster` (default): the single Redis this stack deploys (components/redis.ts).
 * - `external`: one Redis that already exists (`host:port`), optionally with a password Secret and TLS.
 * - `sentinel`: Redis Sentinel; the service asks the Sentinels for the master of `redisSentinelMaster`.
 * - `cluster`: Redis Cluster; the service discovers the slots from the seed nodes.
 *
 * The variables are those of the pinned envoyproxy/ratelimit
 * (https://github.com/envoyproxy/ratelimit/blob/3fb702589d36/src/settings/settings.go,
 * src/redis/driver_impl.go): `REDIS_TYPE` `SINGLE`/`SENTINEL`/`CLUSTER`; `REDIS_URL` is `host:port`,
 * `<master name>,<sentinel host:port>,...` or `<seed host:port>,...`; `REDIS_AUTH` the password of
 * the Redis servers (`user:password` works too), `REDIS_SENTINEL_AUTH` that of the Sentinels;
 * `REDIS_TLS` and `REDIS_TLS_CACERT` (a PEM file) for TLS.
 */
import { isDnsName, suggestedDnsName } from "../lib/dns-names";
import type { Fix } from "../lib/fix-style";

/** Which Redis the service counts in. */
export const RedisModeName = {
    /** A single Redis deployed by the component (password generated, kept in Secret `redis-auth`). */
    InCluster: "in-cluster",
    /** One Redis that already exists (`addresses`: one `host:port`). */
    External: "external",
    /** Redis Sentinel (`addresses`: the Sentinels; `sentinelMaster`: the master's name). */
    Sentinel: "sentinel",
    /** Redis Cluster (`addresses`: seed nodes). */
    Cluster: "cluster",
} as const;
export type RedisModeName = (typeof RedisModeName)[keyof typeof RedisModeName];
export const REDIS_MODES: readonly RedisModeName[] = Object.values(RedisModeName);

/** A key of a Kubernetes Secret in the rate-limit service's namespace. */
export interface SecretKey {
    name: string;
    key: string;
}

export interface RedisConnection {
    mode: RedisModeName;
    /** `host:port` addresses: the one Redis (external), the Sentinels, or the Cluster's seed nodes. Empty for in-cluster. */
    addresses: string[];
    /** Sentinel only: the master's name as the Sentinels know it. */
    sentinelMaster?: string;
    /**
     * Password of the Redis servers. In-cluster: a Secret the user manages, which the deployed Redis
     * and the service both read; absent, the stack generates one (components/redis.ts).
     */
    password?: SecretKey;
    /** Sentinel only: password of the Sentinels themselves. */
    sentinelPassword?: SecretKey;
    tls: boolean;
    /** Secret whose `ca.crt` verifies the server's certificate (otherwise the system roots). */
    tlsCaSecret?: string;
}

/** Key of the CA certificate in `redisTlsCaSecret` (the `kubernetes.io/tls` and cert-manager convention). */
export const TLS_CA_KEY = "ca.crt";
/** Where the CA Secret is mounted in the service container. */
/** Whether `k` can be a key of a Secret's data (Kubernetes: letters, digits, '-', '_', '.'). */
export function isSecretDataKey(k: unknown): k is string {
    return typeof k === "string" && /^[-._a-zA-Z0-9]+$/.test(k);
}
export const SECRET_DATA_KEY_PROBLEM = "must be a Secret data key (letters, digits, '-', '_', '.')";

export const SENTINEL_MASTER_PROBLEM = "must not contain commas or spaces (the service splits REDIS_URL on commas)";
/** A Sentinel master name without commas or white space: the name itself when it has none, else the suggested fix. */
export function cleanSentinelMaster(master: string): string {
    return master.replace(/[,\s]+/g, "") || "mymaster";
}

export const TLS_CA_DIR = "/etc/ratelimit/redis-tls";
export const TLS_CA_VOLUME = "redis-tls-ca";

/** What resolveSettings' reader offers (mesh/settings.ts). */
export interface ConfigReader {
    given(key: string): string | undefined;
    str(key: string): string;
    bool(key: string): boolean;
    oneOf<T extends string>(key: string, allowed: readonly T[]): T;
    fail(key: string, value: string | undefined, text: string, fix: Fix): void;
}

const HOST = /^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

/** Whether `s` is `host:port` (DNS name, IPv4 or `[IPv6]`, port 1-65535). Exported for testing. */
export function isHostPort(s: string): boolean {
    const i = s.lastIndexOf(":");
    if (i <= 0) return false;
    const host = s.slice(0, i);
    const port = s.slice(i + 1);
    return HOST.test(host) && /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535;
}

/**
 * Keys that only mean something for a Redis the stack does not deploy. (`redisPasswordSecret` is
 * not one: with the in-cluster Redis it names a Secret the user manages, instead of a generated
 * password.)
 */
const EXISTING_ONLY = ["redisAddress", "redisTls", "redisTlsCaSecret"] as const;

/**
 * Reads and checks the Redis keys; every bad combination is a config problem. `pipelineWindow` is
 * `redisPipelineWindow` as read (the pinned service applies it to Redis Cluster only).
 */
export function readRedisConnection(r: ConfigReader, pipelineWindow: string): RedisConnection {
    const mode = r.oneOf<RedisModeName>("redisMode", REDIS_MODES);
    const addressText = r.given("redisAddress");
    const addresses = (addressText ?? "")
        .split(",")
        .map((a) => a.trim())
        .filter(Boolean);
    const master = r.given("redisSentinelMaster");
    const secret = r.given("redisPasswordSecret");
    const secretKey = r.str("redisPasswordSecretKey");
    const sentinelSecret = r.given("redisSentinelPasswordSecret");
    const tls = r.bool("redisTls");
    const caSecret = r.given("redisTlsCaSecret");

    checkRedisAddressKeys(r, mode, addressText, addresses);
    checkSentinelKeys(r, mode, master);
    checkRedisSecretKeys(r, { secret, secretKey, sentinelSecret, tls, caSecret });
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

/** In-cluster: no key of an existing Redis; otherwise `redisAddress` is required, each entry host:port, as many as the mode takes, none twice. */
function checkRedisAddressKeys(r: ConfigReader, mode: RedisModeName, addressText: string | undefined, addresses: string[]): void {
    if (mode === "in-cluster") {
        for (const k of EXISTING_ONLY) {
            const v = r.given(k);
            if (v !== undefined && !(k === "redisTls" && v === "false")) {
                r.fail(
                    k,
                    v,
                    "applies only to a Redis the stack does not deploy (redisMode external, sentinel or cluster); the in-cluster Redis has no TLS",
                    (s) => `${s.rm(k)}, or ${s.set("redisMode", k === "redisAddress" && v.includes(",") ? "cluster" : "external")}`,
                );
            }
        }
    } else if (addresses.length === 0) {
        const example =
            mode === "external"
                ? "redis.cache.svc.cluster.local:6379"
                : mode === "sentinel"
                  ? "sentinel-0.redis:26379,sentinel-1.redis:26379,sentinel-2.redis:26379"
                  : "redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379";
        r.fail(
            "redisAddress",
            addressText,
            `is required with redisMode ${mode}: ${mode === "external" ? "the Redis's host:port" : mode === "sentinel" ? "the Sentinels' host:port, comma-separated" : "some of the Cluster's nodes (host:port, comma-separated)"}`,
            (s) => `${s.set("redisAddress", example)}, or ${s.rm("redisMode")}`,
        );
    } else {
        const bad = addresses.filter((a) => !isHostPort(a));
        if (bad.length) {
            r.fail("redisAddress", addressText, `has address(es) that are not host:port: ${bad.join(", ")}`, (s) =>
                s.set(
                    "redisAddress",
                    addresses.map((a) => (isHostPort(a) ? a : `${a.replace(/:.*$/, "") || "redis"}:${mode === "sentinel" ? 26379 : 6379}`)).join(","),
                ),
            );
        }
        if (mode === "external" && addresses.length > 1) {
            r.fail(
                "redisAddress",
                addressText,
                "names several servers, but redisMode external is one Redis; several addresses are the Sentinels of a Sentinel setup or the nodes of a Redis Cluster",
                (s) =>
                    `${s.set("redisMode", "cluster")}, or ${s.set("redisMode", "sentinel")} with redisSentinelMaster, or ${s.set("redisAddress", addresses[0])}`,
            );
        }
        if (new Set(addresses).size !== addresses.length) {
            r.fail("redisAddress", addressText, "names an address twice", (s) => s.set("redisAddress", [...new Set(addresses)].join(",")));
        }
    }
}

/** Sentinel: `redisSentinelMaster` is required and clean; any other mode: no Sentinel key. */
function checkSentinelKeys(r: ConfigReader, mode: RedisModeName, master: string | undefined): void {
    if (mode === "sentinel") {
        if (master === undefined) {
            r.fail(
                "redisSentinelMaster",
                undefined,
                "is required with redisMode sentinel: the name the Sentinels monitor the master under (`sentinel monitor <name> ...`)",
                (s) => s.set("redisSentinelMaster", "mymaster"),
            );
        } else if (cleanSentinelMaster(master) !== master) {
            r.fail("redisSentinelMaster", master, SENTINEL_MASTER_PROBLEM, (s) => s.set("redisSentinelMaster", cleanSentinelMaster(master)));
        }
    } else {
        for (const k of ["redisSentinelMaster", "redisSentinelPasswordSecret"]) {
            if (r.given(k) !== undefined)
                r.fail(k, r.given(k), `applies only to redisMode sentinel (redisMode is ${mode})`, (s) => `${s.rm(k)}, or ${s.set("redisMode", "sentinel")}`);
        }
    }
}

/** The Secrets' names, the password key (only with a password Secret, a valid data key) and the CA Secret (only with TLS). */
function checkRedisSecretKeys(r: ConfigReader, c: { secret?: string; secretKey: string; sentinelSecret?: string; tls: boolean; caSecret?: string }): void {
    for (const k of ["redisPasswordSecret", "redisSentinelPasswordSecret", "redisTlsCaSecret"]) {
        const v = r.given(k);
        if (v !== undefined && !isDnsName(v, "subdomain")) {
            r.fail(k, v, "must be the name of a Secret in ratelimitNamespace (a DNS-1123 subdomain)", (s) => s.set(k, suggestedDnsName(v, "subdomain")));
        }
    }
    if (r.given("redisPasswordSecretKey") !== undefined && c.secret === undefined && c.sentinelSecret === undefined) {
        r.fail(
            "redisPasswordSecretKey",
            r.given("redisPasswordSecretKey"),
            "names a key of redisPasswordSecret, which is not set",
            (s) => `${s.set("redisPasswordSecret", "<secret name>")}, or ${s.rm("redisPasswordSecretKey")}`,
        );
    }
    if (!isSecretDataKey(c.secretKey)) {
        r.fail("redisPasswordSecretKey", c.secretKey, SECRET_DATA_KEY_PROBLEM, (s) => s.set("redisPasswordSecretKey", "password"));
    }
    if (c.caSecret !== undefined && !c.tls) {
        r.fail("redisTlsCaSecret", c.caSecret, "is only read with redisTls true", (s) => `${s.set("redisTls", "true")}, or ${s.rm("redisTlsCaSecret")}`);
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

export interface RedisEnvVar {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: SecretKey };
}

/** `REDIS_TYPE` of a mode. */
export function redisType(mode: RedisModeName): "SINGLE" | "SENTINEL" | "CLUSTER" {
    return mode === "sentinel" ? "SENTINEL" : mode === "cluster" ? "CLUSTER" : "SINGLE";
}

/** `REDIS_URL` of a connection; `inClusterAddress` is the deployed Redis's `host:port`. */
export function redisUrl(c: RedisConnection, inClusterAddress: string): string {
    if (c.mode === "in-cluster") return inClusterAddress;
    if (c.mode === "sentinel") return [c.sentinelMaster ?? "", ...c.addresses].join(",");
    return c.addresses.join(",");
}

/**
 * The service's Redis variables for a connection. `inClusterAuth` is the deployed Redis's generated
 * password Secret (used in mode in-cluster when the connection names no Secret of its own).
 */
export function redisConnectionEnv(c: RedisConnection, inClusterAddress: string, inClusterAuth: SecretKey): RedisEnvVar[] {
    const auth = c.mode === "in-cluster" ? (c.password ?? inClusterAuth) : c.password;
    return [
        { name: "REDIS_TYPE", value: redisType(c.mode) },
        { name: "REDIS_URL", value: redisUrl(c, inClusterAddress) },
        ...(auth ? [{ name: "REDIS_AUTH", valueFrom: { secretKeyRef: auth } }] : []),
        ...(c.sentinelPassword ? [{ name: "REDIS_SENTINEL_AUTH", valueFrom: { secretKeyRef: c.sentinelPassword } }] : []),
        ...(c.tls ? [{ name: "REDIS_TLS", value: "true" }] : []),
        ...(c.tls && c.tlsCaSecret ? [{ name: "REDIS_TLS_CACERT", value: `${TLS_CA_DIR}/${TLS_CA_KEY}` }] : []),
    ];
}

/** Replaces the Redis variables of a rendered environment by those of `c` (same position, extras after REDIS_URL). */
export function withRedisConnection<E extends { name: string }>(
    env: E[],
    c: RedisConnection,
    inClusterAddress: string,
    inClusterAuth: SecretKey,
): (E | RedisEnvVar)[] {
    const ours = new Set(["REDIS_TYPE", "REDIS_URL", "REDIS_AUTH", "REDIS_SENTINEL_AUTH", "REDIS_TLS", "REDIS_TLS_CACERT"]);
    const at = env.findIndex((e) => ours.has(e.name));
    const rest = env.filter((e) => !ours.has(e.name));
    const insertAt = at < 0 ? rest.length : env.slice(0, at).filter((e) => !ours.has(e.name)).length;
    return [...rest.slice(0, insertAt), ...redisConnectionEnv(c, inClusterAddress, inClusterAuth), ...rest.slice(insertAt)];
}

/** The CA Secret's volume and mount for the service container (none without `redisTlsCaSecret`). */
export function redisTlsVolumes(c: RedisConnection): { volumes: any[]; volumeMounts: any[] } {
    if (!c.tls || !c.tlsCaSecret) return { volumes: [], volumeMounts: [] };
    return {
        volumes: [{ name: TLS_CA_VOLUME, secret: { secretName: c.tlsCaSecret, items: [{ key: TLS_CA_KEY, path: TLS_CA_KEY }] } }],
        volumeMounts: [{ name: TLS_CA_VOLUME, mountPath: TLS_CA_DIR, readOnly: true }],
    };
}

/** Whether the stack deploys its own Redis (Deployment, Service, password Secret). */
export function deploysRedis(c: RedisConnection): boolean {
    return c.mode === "in-cluster";
}
