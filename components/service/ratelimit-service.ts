/**
 * The envoyproxy/ratelimit service (global limits): its ConfigMap, Deployment and Service.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { createHash } from "crypto";
import { ratelimitServiceAccount } from "./access-policies";
import { SKIP_AWAIT, meshEnrolment, awaitAnnotations, serviceAccountManifest, stackLabels } from "../../lib/common";
import { RATELIMIT_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from "../../lib/pod-security";
import { CONFIG_FILE_KEY } from "../../builders/ratelimit-config";
import { redisConnectionEnv, redisTlsVolumes } from "../../builders/redis-connection";
import { METRICS_PORT, prometheusScrapeAnnotations, shadowModeEnv } from "./safe-rollout";
import { ServiceSettings } from "./settings";
import { tuningEnv } from "./fields";

/** Where the service reads its config: $RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config/*.yaml. */
export const RUNTIME_ROOT = "/data";
export const RUNTIME_SUBDIRECTORY = "ratelimit";
export const CONFIG_MOUNT_PATH = `${RUNTIME_ROOT}/${RUNTIME_SUBDIRECTORY}/config`;
/** Pod-template annotation carrying the config digest: a config change rolls the pods. */
export const CONFIG_DIGEST_ANNOTATION = "mesh-ratelimit/config-sha256";

/** Where the service's JSON API and debug server listen: the pod's loopback only. */
export const LOOPBACK = "127.0.0.1";
/** The gRPC health service name the service reports under (NOT_SERVING without config or a live Redis connection). */
export const GRPC_HEALTH_SERVICE = "ratelimit";

export interface EnvVar {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef: { name: string; key: string } };
}

/**
 * The container environment. Pure, exported for the tests and the conformance harness, which runs
 * the real service with exactly this environment.
 */
export function ratelimitEnv(s: Pick<ServiceSettings, "ratelimit" | "redis">, redisAddress: string): EnvVar[] {
    const r = s.ratelimit;
    return [
        { name: "LOG_LEVEL", value: r.logLevel },
        { name: "LOG_FORMAT", value: "json" },
        // The default is a unix socket; Redis is a TCP Service here.
        { name: "REDIS_SOCKET_TYPE", value: "tcp" },
        // REDIS_TYPE, REDIS_URL, REDIS_AUTH and TLS/Sentinel variables of the chosen Redis (redisAddress: the deployed one's).
        ...redisConnectionEnv(s.redis, redisAddress),
        // Bounds opening a connection to Redis (derived from the gateway's timeout, half of it, at most
        // 1 s; builders/failure-bounds.ts). In this service version it does not bound a command on an
        // open connection: a Redis that hangs is bounded only by the gateway's own timeout.
        { name: "REDIS_TIMEOUT", value: r.redisTimeout },
        // /healthcheck fails while the service has no live Redis connection: readiness then takes the
        // pod out of the gateway's endpoints (liveness does not look at Redis).
        { name: "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION", value: "true" },
        // A counter lives its window plus a random 0 to this many seconds (the service's default 300
        // whatever the window): a tenth of the shortest window of this config (builders/failure-bounds.ts).
        { name: "EXPIRATION_JITTER_MAX_SECONDS", value: String(r.expirationJitterSeconds) },
        // REDIS_POOL_SIZE, REDIS_PIPELINE_WINDOW, REDIS_PIPELINE_LIMIT, LOCAL_CACHE_SIZE_IN_BYTES (service-settings.ts).
        ...tuningEnv(r),
        // The default (true) makes the service retry a statsd sink that does not exist and flood its log.
        { name: "USE_STATSD", value: "false" },
        // Without statsd this version logs every decision's stats (~200 B a line) unless stats are
        // off or go to Prometheus (measured in docs/proof/rls.md).
        ...(r.prometheus
            ? [
                  { name: "USE_PROMETHEUS", value: "true" },
                  { name: "PROMETHEUS_ADDR", value: `:${METRICS_PORT}` },
              ]
            : [{ name: "DISABLE_STATS", value: "true" }]),
        { name: "RUNTIME_ROOT", value: RUNTIME_ROOT },
        { name: "RUNTIME_SUBDIRECTORY", value: RUNTIME_SUBDIRECTORY },
        // ConfigMap volumes swap a `..data` symlink: watch the config dir itself and skip dot files.
        { name: "RUNTIME_WATCH_ROOT", value: "false" },
        { name: "RUNTIME_IGNOREDOTFILES", value: "true" },
        // Only the gRPC API the gateway calls listens on the pod's address. The JSON API (PORT) and
        // the debug server (DEBUG_PORT: config dump, pprof) listen on the pod's loopback only:
        // nothing else in the mesh can reach them, whatever the policies say.
        { name: "HOST", value: LOOPBACK },
        { name: "PORT", value: String(r.httpPort) },
        { name: "GRPC_PORT", value: String(r.grpcPort) },
        { name: "DEBUG_HOST", value: LOOPBACK },
        { name: "DEBUG_PORT", value: String(r.debugPort) },
        ...shadowModeEnv(s),
    ];
}

/** Internal: built by the GlobalRateLimit component from its own arguments. */
export interface RateLimitServiceArgs {
    /** The service part of the settings (names, ports, image, tuning), its Redis and whether to await rollouts. */
    settings: Pick<ServiceSettings, "ratelimit" | "redis" | "awaitRollout" | "ambient">;
    /** The text of `config.yaml` (builders/ratelimit-config.ts, from the compiled rules). */
    configYaml: string;
    /** `host:port` of the deployed Redis (unused when `settings.redis` names an existing one). */
    redisAddress: string;
}

export class RateLimitService extends pulumi.ComponentResource {
    public readonly configMap: k8s.core.v1.ConfigMap;
    public readonly deployment: k8s.apps.v1.Deployment;
    public readonly service: k8s.core.v1.Service;
    /** Keeps at least replicas - 1 pods up through voluntary disruptions (node drains). */
    public readonly disruptionBudget: k8s.policy.v1.PodDisruptionBudget;
    /** `host:port` of the gRPC API the gateway calls. */
    public readonly grpcAddress: string;

    constructor(name: string, args: RateLimitServiceArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:RateLimitService", name, {}, opts);
        const s = args.settings;
        const r = s.ratelimit;
        const labels = stackLabels("ratelimit", { app: r.serviceName });
        const configText = args.configYaml;

        this.configMap = new k8s.core.v1.ConfigMap(
            `${name}-config`,
            { metadata: { name: r.configName, namespace: r.namespace, labels }, data: { [CONFIG_FILE_KEY]: configText } },
            { parent: this },
        );

        // Its own identity: the only one Redis admits (components/service/access-policies.ts).
        const account = new k8s.core.v1.ServiceAccount(`${name}-sa`, serviceAccountManifest(ratelimitServiceAccount(s), r.namespace, "ratelimit"), {
            parent: this,
        });

        this.deployment = new k8s.apps.v1.Deployment(
            name,
            {
                metadata: { name: r.serviceName, namespace: r.namespace, labels, annotations: awaitAnnotations(s) },
                spec: ratelimitDeploymentSpec(s, labels, configText, args.redisAddress),
            },
            { parent: this, dependsOn: [this.configMap, account] },
        );

        this.service = new k8s.core.v1.Service(
            name,
            { metadata: { name: r.serviceName, namespace: r.namespace, labels, annotations: SKIP_AWAIT }, spec: ratelimitServiceSpec(r) },
            { parent: this },
        );

        this.disruptionBudget = new k8s.policy.v1.PodDisruptionBudget(
            name,
            {
                metadata: { name: r.serviceName, namespace: r.namespace, labels },
                // maxUnavailable (not minAvailable): with one replica a drain can still proceed.
                spec: { maxUnavailable: 1, selector: { matchLabels: { app: r.serviceName } } },
            },
            { parent: this },
        );

        this.grpcAddress = `${r.serviceName}.${r.namespace}.svc.cluster.local:${r.grpcPort}`;
        this.registerOutputs({ grpcAddress: this.grpcAddress });
    }
}

/** The Deployment's spec: its pods, with their own sidecar started first, spread over nodes, under Pod Security `restricted`. */
function ratelimitDeploymentSpec(
    s: RateLimitServiceArgs["settings"],
    labels: Record<string, string>,
    configText: string,
    redisAddress: string,
): k8s.types.input.apps.v1.DeploymentSpec {
    const r = s.ratelimit;
    return {
        replicas: r.replicas,
        selector: { matchLabels: { app: r.serviceName } },
        template: {
            metadata: {
                // Its own sidecar, started first: the gateway's calls arrive over mutual TLS (so the
                // AuthorizationPolicy can check the caller) and Redis is reached through the mesh.
                labels: { ...labels, ...meshEnrolment(s.ambient === true).labels },
                annotations: {
                    ...meshEnrolment(s.ambient === true).annotations,
                    [CONFIG_DIGEST_ANNOTATION]: createHash("sha256").update(configText).digest("hex"),
                    ...prometheusScrapeAnnotations(s),
                },
            },
            spec: {
                // Pod Security `restricted` (the image's user is root; the binary needs none).
                securityContext: restrictedPodSecurityContext(RATELIMIT_UID),
                serviceAccountName: ratelimitServiceAccount(s),
                // Replicas on different nodes where there are several (soft: one node still schedules all).
                topologySpreadConstraints: [
                    {
                        maxSkew: 1,
                        topologyKey: "kubernetes.io/hostname",
                        whenUnsatisfiable: "ScheduleAnyway",
                        labelSelector: { matchLabels: { app: r.serviceName } },
                    },
                ],
                containers: [ratelimitContainer(s, redisAddress)],
                volumes: [{ name: "config", configMap: { name: r.configName } }, ...redisTlsVolumes(s.redis).volumes],
            },
        },
    };
}

/** The service's container: its environment, ports, probes, config mount and bounds. */
function ratelimitContainer(s: RateLimitServiceArgs["settings"], redisAddress: string): k8s.types.input.core.v1.Container {
    const r = s.ratelimit;
    return {
        name: "ratelimit",
        image: r.image,
        command: ["/bin/ratelimit"],
        env: ratelimitEnv(s, redisAddress),
        ports: [{ name: "grpc", containerPort: r.grpcPort }, ...(r.prometheus ? [{ name: "http-metrics", containerPort: METRICS_PORT }] : [])],
        // The service opens no port until Redis answers; give it up to 5 minutes
        // before liveness may restart it.
        startupProbe: { tcpSocket: { port: r.grpcPort }, periodSeconds: 5, failureThreshold: 60 },
        // Ready (in the gateway's endpoints) only while it has its config and a live Redis
        // connection (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION above): the gRPC health service reports
        // the same state as /healthcheck, which listens on loopback only.
        readinessProbe: { grpc: { port: r.grpcPort, service: GRPC_HEALTH_SERVICE }, periodSeconds: 5, failureThreshold: 2 },
        // Restarted only when the process stops serving gRPC, never because Redis is down
        // (a restart cannot fix Redis, and the service exits at start without it).
        livenessProbe: { tcpSocket: { port: r.grpcPort }, periodSeconds: 10, failureThreshold: 6 },
        // Whole-directory mount (no subPath) so ConfigMap updates reach the running process.
        volumeMounts: [{ name: "config", mountPath: CONFIG_MOUNT_PATH, readOnly: true }, ...redisTlsVolumes(s.redis).volumeMounts],
        // Ephemeral storage: it writes no file; the bound covers its container log.
        resources: {
            requests: { cpu: "100m", memory: "64Mi", "ephemeral-storage": "32Mi" },
            limits: { cpu: "1", memory: "256Mi", "ephemeral-storage": "256Mi" },
        },
        // It writes no file: the config is a read-only mount.
        securityContext: restrictedContainerSecurityContext(true),
    };
}

/** The Service's spec: the gRPC port only (the gateway's calls; Prometheus scrapes the pods themselves). */
function ratelimitServiceSpec(r: RateLimitServiceArgs["settings"]["ratelimit"]): k8s.types.input.core.v1.ServiceSpec {
    return {
        selector: { app: r.serviceName },
        // Named grpc so Istio speaks HTTP/2 to it.
        ports: [{ name: "grpc", port: r.grpcPort, targetPort: r.grpcPort, protocol: "TCP", appProtocol: "grpc" }],
    };
}
