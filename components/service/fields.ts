/**
 * The plain fields of GlobalRateLimit's rate-limit service (`service.<name>`) and of its per-value
 * store (`perValueStore.<name>`), each declared once (lib/field-decl.ts): documentation, default,
 * rule, where it goes, the stack's key. The service's tuning options are the ones it reads as
 * environment variables as they are, and `prometheus` and `shadowMode` (which switch several:
 * ratelimit-service.ts, safe-rollout.ts). The argument interfaces are generated from these
 * (`npm run gen`). Pure.
 */
import { ErrorStatus } from "../../builders/filter-choices";
import { MAX_COUNTED_PATH_BYTES } from "../../builders/counter-stores";
import { booleanRule, customRule, dnsNameRule, field, goDurationRule, nested, oneOfRule, protoDurationRule, wholeNumberRule } from "../../lib/field-decl";
import { t } from "../../lib/field-types";

/** `LOG_LEVEL` of the rate-limit service. */
export const ServiceLogLevel = {
    Debug: "debug",
    Info: "info",
    Warn: "warn",
    Error: "error",
} as const;
export type ServiceLogLevel = (typeof ServiceLogLevel)[keyof typeof ServiceLogLevel];

/** The rate-limit service's image, `image`'s default (a plain value: the field also takes an output). */
export const SERVICE_IMAGE = "docker.io/envoyproxy/ratelimit:3fb70258";

export const SERVICE_FIELDS = {
    name: field({
        doc: "Name of its Service and Deployment (the gateway's cluster name is derived from it). Plain, not an output: it names the objects.",
        type: t.string(),
        default: "ratelimit",
        rule: dnsNameRule("label"),
        goesTo: { object: "Service and Deployment name; the filter's cluster_name" },
        stackKey: "ratelimitServiceName",
        stackGroup: "service",
    }),
    configName: field({
        doc: "Name of its ConfigMap.",
        type: t.string(),
        default: "ratelimit-config",
        rule: dnsNameRule("subdomain"),
        goesTo: { object: "ConfigMap name" },
        stackKey: "configName",
        stackGroup: "names",
    }),
    grpcPort: field({
        doc: "gRPC port.",
        type: t.number(),
        default: 8081,
        rule: wholeNumberRule({ min: 1, max: 65535 }),
        goesTo: { env: "GRPC_PORT" },
        stackKey: "ratelimitGrpcPort",
        stackGroup: "service",
    }),
    image: field({
        doc: "The envoyproxy/ratelimit image (tagged by commit; matches the build the tests run); an output accepted (e.g. chosen by another stack).",
        type: t.input(t.string()),
        default: SERVICE_IMAGE,
        rule: customRule<string>("an image reference", (path, value, fallback) =>
            typeof value === "string" && value.trim() ? [] : [{ key: path, value, problem: "must be an image reference", fix: `omit it for ${fallback}` }],
        ),
        goesTo: { object: "the Deployment's container image" },
        stackKey: "ratelimitImage",
        stackGroup: "service",
    }),
    replicas: field({
        doc: "Replicas (they share Redis, so limits stay exact).",
        type: t.number(),
        default: 2,
        rule: wholeNumberRule({ min: 1, max: 100 }),
        goesTo: { object: "the Deployment's replicas" },
        stackKey: "ratelimitReplicas",
        stackGroup: "service",
    }),
    logLevel: field<ServiceLogLevel>({
        doc: "Log level.",
        type: t.enum(ServiceLogLevel, "ServiceLogLevel"),
        default: ServiceLogLevel.Warn,
        rule: oneOfRule(ServiceLogLevel, "ServiceLogLevel", { defaultFirst: true }),
        goesTo: { env: "LOG_LEVEL" },
        stackKey: "ratelimitLogLevel",
        stackGroup: "service",
    }),
    redisPoolSize: field({
        doc: "`REDIS_POOL_SIZE`: connections per service process.",
        type: t.number(),
        default: 10,
        rule: wholeNumberRule({ min: 1, max: 10_000 }),
        goesTo: { env: "REDIS_POOL_SIZE" },
        stackKey: "redisPoolSize",
        stackGroup: "service",
    }),
    redisPipelineWindow: field({
        doc:
            "`REDIS_PIPELINE_WINDOW` (Go duration, e.g. `150us`; `0` flushes every write at once). The pinned service applies it to Redis Cluster " +
            "only (`redis.mode` `cluster`; set with another mode it is refused): its single and Sentinel clients already send each request's " +
            "commands as one pipeline. At low load it delays each call by up to the window.",
        type: t.string(),
        default: "0",
        rule: goDurationRule(),
        goesTo: { env: "REDIS_PIPELINE_WINDOW" },
        stackKey: "redisPipelineWindow",
        stackGroup: "service",
    }),
    redisPipelineLimit: field({
        doc: "`REDIS_PIPELINE_LIMIT`: has no effect in the pinned service (radix v4 ignores it); kept for older images.",
        type: t.number(),
        default: 0,
        rule: wholeNumberRule({ min: 0 }),
        goesTo: { env: "REDIS_PIPELINE_LIMIT" },
        stackKey: "redisPipelineLimit",
        stackGroup: "service",
    }),
    localCacheSizeInBytes: field({
        doc:
            "`LOCAL_CACHE_SIZE_IN_BYTES`: cache of over-limit keys per process (0 disables). 1 MiB answers repeat over-limit requests without " +
            "Redis until the window ends: −28 % service CPU and −53 % Redis CPU per decision in the benchmark, limits still exact (docs/proof/rls.md). " +
            "Unset, a service whose store holds per-value counters gets one sized from that store (4 × its counters per cache segment, 1 to 64 MiB), " +
            "so that a flood of over-limit keys does not make it forget a spent key (docs/security.md).",
        type: t.number(),
        default: 1048576,
        rule: wholeNumberRule({ min: 0 }),
        goesTo: { env: "LOCAL_CACHE_SIZE_IN_BYTES" },
        stackKey: "localCacheSizeInBytes",
        stackGroup: "service",
    }),
    stopCountingWhenOverLimit: field({
        doc:
            "`STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`: a request that one of its limits refuses is not counted against the others it was asked about in " +
            "the same call, so a client over its own limit (a per-client rule) cannot use up a limit it shares with everyone (a path's limit). Costs " +
            "the service one more Redis read per call. Calls are per filter: with `counterStore` split the per-value rules are asked in a call of their own.",
        type: t.boolean(),
        default: false,
        defaultNote: " (the service's own)",
        rule: booleanRule(),
        goesTo: { env: "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT" },
        stackKey: "stopCountingWhenOverLimit",
        stackGroup: "service",
    }),
    prometheus: field({
        doc:
            "Serve the service's counters for Prometheus on port 9090 at `/metrics` (`USE_PROMETHEUS`) and mark the pods a scrape target " +
            "(`prometheus.io/scrape`, `/port`, `/path` annotations; with a sidecar Istio's metrics merging serves them on 15020). `false` sets " +
            "`DISABLE_STATS=true`: with statsd off, this service version otherwise writes one log line per decision.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "USE_PROMETHEUS or DISABLE_STATS, the scrape annotations (ratelimit-service.ts)" },
        stackKey: "ratelimitPrometheus",
        stackGroup: "service",
    }),
    shadowMode: field({
        doc:
            "Global shadow mode (`SHADOW_MODE`), an observe-only rollout: every request is still counted and an over-limit one is reported (its " +
            "descriptor status says OVER_LIMIT, counter `global_shadow_mode`), but nothing is refused. Deploy new limits this way first, watch the " +
            "counters, then set `false`.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "SHADOW_MODE, no pre-limit, no rate-limit headers (safe-rollout.ts)" },
        stackKey: "shadowMode",
        stackGroup: "service",
    }),
};

/** The service's tuning options: the fields after its objects' names and sizes, in the table's order. */
export const TUNING_KEYS = [
    "redisPoolSize",
    "redisPipelineWindow",
    "redisPipelineLimit",
    "localCacheSizeInBytes",
    "stopCountingWhenOverLimit",
    "prometheus",
    "shadowMode",
] as const;

/** The tuning options with their defaults filled in. */
export type ServiceTuning = { [K in (typeof TUNING_KEYS)[number]]: NonNullable<(typeof SERVICE_FIELDS)[K]["default"]> };

/** The tuning options: each given one, else its declared default. */
export function tuningOf(svc: Partial<ServiceTuning>): ServiceTuning {
    return Object.fromEntries(TUNING_KEYS.map((k) => [k, svc[k] ?? SERVICE_FIELDS[k].default])) as ServiceTuning;
}

/** The environment variables of the tuning options the service reads as they are, in the table's order. */
export function tuningEnv(t: ServiceTuning): { name: string; value: string }[] {
    return TUNING_KEYS.flatMap((k) => {
        const goesTo = SERVICE_FIELDS[k].goesTo;
        return "env" in goesTo ? [{ name: goesTo.env, value: String(t[k]) }] : [];
    });
}

export const PER_VALUE_FIELDS = {
    redis: nested({
        doc:
            "Redis of the per-value counters: never the fixed counters' Redis. Full, the Redis the component deploys evicts the least frequently " +
            "used counter (`allkeys-lfu`, every access counted, no decay): a flood of new values can make a counter used as rarely as the flood's " +
            "own (once) start again, never one used more often, and no call fails because it is full. Its `maxMemory` defaults to what " +
            "`newValuesPerSecond` needs, else to `160mb`. Defaults to one deployed by the component (`redis-per-value`).",
        type: t.ref("RedisOptionsArgs"),
    }),
    failureModeDeny: field({
        doc:
            "When the per-value service cannot answer (down, or slower than `timeout`): `false` lets the request through uncounted by the per-value rules, " +
            "`true` refuses it (`statusOnError`, else 500). The fixed limits keep `failureModeDeny`. A rule that must fail closed goes in an instance " +
            "with `true`. A boolean.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { envoy: "the per-value ratelimit filter's failure_mode_deny" },
        stackKey: "perValueFailureModeDeny",
        stackGroup: "limits",
    }),
    statusOnError: field<ErrorStatus>({
        doc: "The status of a request the per-value filter refuses because its service could not answer (Envoy's `status_on_error`). Only with `failureModeDeny: true`.",
        type: t.enum(ErrorStatus, "ErrorStatus"),
        defaultNote: "GlobalRateLimit's `statusOnError` (else Envoy's 500)",
        rule: oneOfRule(ErrorStatus, "ErrorStatus", { suggest: ErrorStatus.ServiceUnavailable }),
        goesTo: { envoy: "the per-value ratelimit filter's status_on_error" },
        stackKey: "perValueStatusOnError",
        stackGroup: "limits",
    }),
    timeout: field({
        doc:
            "Timeout of the gateway's call to the per-value service (protobuf duration), apart from the fixed filter's `timeout`. The filter fails " +
            "open, so a call slower than this lets its request through uncounted: under a flood aimed at the service its calls took up to 325 ms " +
            "(p99.9 150-224 ms), and 0.1 s let 1.2 % through uncounted, 1 s none (docs/proof/benchmarks.md). A hung service costs a request at most this long.",
        type: t.string(),
        // About 3 × the slowest call measured under a flood aimed at the service (325 ms): no call outlasts it.
        default: "1s",
        rule: protoDurationRule(0.001),
        goesTo: { envoy: "the per-value ratelimit filter's timeout" },
        stackKey: "perValueTimeout",
        stackGroup: "limits",
    }),
    newValuesPerSecond: field({
        doc:
            "How many new per-value counters a second (new paths, header or query values, client addresses, all rules together) the store must hold " +
            "for their whole life (the longest window of the per-value rules plus the service's expiry jitter) without evicting any: its `maxmemory` " +
            "is sized from it (reported as the `perValueMaxMemory` output). `0`: not sized from a rate (`redis.maxMemory`, else `160mb`; the rate it " +
            "holds is reported).",
        type: t.number(),
        default: 0,
        rule: wholeNumberRule({ min: 0, max: 1_000_000 }),
        goesTo: { object: "the per-value Redis's maxmemory" },
        stackKey: "perValueNewValuesPerSecond",
        stackGroup: "limits",
    }),
    longestValueBytes: field({
        doc: "The longest value (bytes) a per-value counter is keyed by, for the sizing: a path over 1,024 bytes shares one counter. Between 1 and 1024.",
        type: t.number(),
        // The longest path counted on its own (header and query values are shorter).
        default: MAX_COUNTED_PATH_BYTES,
        rule: wholeNumberRule({ min: 1, max: MAX_COUNTED_PATH_BYTES }),
        goesTo: { object: "the per-value Redis's maxmemory" },
    }),
};
