/**
 * Which Redis the rate-limit service counts in, and the service environment that connects to it.
 * Pure: no Pulumi runtime, no I/O. The checks of a Redis choice are GlobalRateLimit's
 * (components/redis-options.ts redisOptionsProblems); the stack's config runs them too.
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
    addresses: readonly string[];
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
export const TLS_CA_DIR = "/etc/ratelimit/redis-tls";
export const TLS_CA_VOLUME = "redis-tls-ca";

const HOST = /^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

/** Whether `s` is `host:port` (DNS name, IPv4 or `[IPv6]`, port 1-65535). Exported for testing. */
export function isHostPort(s: string): boolean {
    const i = s.lastIndexOf(":");
    if (i <= 0) return false;
    const host = s.slice(0, i);
    const port = s.slice(i + 1);
    return HOST.test(host) && /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535;
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
