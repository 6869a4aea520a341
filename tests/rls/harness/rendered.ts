/**
 * Reads what the stack renders for the rate-limit service: the Deployment's container (env,
 * command, probes, config mount) and the ConfigMap's `config.yaml`. Nothing is hard-coded here:
 * the container is found by its RUNTIME_ROOT env, the ConfigMap through the mounted volume.
 */
import type { K8sObject } from "../../../lib/k8s-object";

export interface EnvVar {
    name: string;
    value?: string;
    valueFrom?: any;
}

export interface RenderedRatelimit {
    deployment: K8sObject;
    container: any;
    env: EnvVar[];
    configMap: K8sObject;
    configYaml: string;
    /** Directory the ConfigMap is mounted at. */
    mountPath: string;
    /** Directory the service reads (from its RUNTIME_* env). */
    configDir: string;
    readinessProbe?: any;
    livenessProbe?: any;
    startupProbe?: any;
    initContainers: any[];
    replicas: number;
    /** The named container ports, e.g. http → 8080. */
    ports: Record<string, number>;
}

function envValue(env: EnvVar[], name: string): string | undefined {
    return env.find((e) => e.name === name)?.value;
}

/** Every rate-limit service the stack renders (a container with RUNTIME_ROOT), by Deployment name. */
function serviceContainers(objects: K8sObject[]): { d: K8sObject; c: any }[] {
    return objects
        .filter((o) => o.kind === "Deployment")
        .flatMap((d) => (d.spec?.template?.spec?.containers ?? []).map((c: any) => ({ d, c })))
        .filter(({ c }) => (c.env ?? []).some((e: EnvVar) => e.name === "RUNTIME_ROOT"));
}

/** Every rendered rate-limit service: the fixed counters' first, then (counterStore split) the per-value one. */
export function renderedRatelimits(objects: K8sObject[]): RenderedRatelimit[] {
    const names = serviceContainers(objects)
        .map(({ d }) => String(d.metadata.name))
        .sort((a, b) => a.length - b.length);
    return names.map((n) => renderedRatelimit(objects, n));
}

/**
 * The rendered rate-limit service named `name`; without a name, the only one, or the fixed
 * counters' (the shortest name: the per-value one is `<name>-per-value`). Throws with a message
 * naming the stack bug when the rendered Deployment is inconsistent.
 */
export function renderedRatelimit(objects: K8sObject[], name?: string): RenderedRatelimit {
    const all = serviceContainers(objects);
    if (!all.length) throw new Error("expected a container with RUNTIME_ROOT in its env (the rate-limit service), found none");
    const candidates =
        name !== undefined
            ? all.filter(({ d }) => d.metadata.name === name)
            : [[...all].sort((a, b) => a.d.metadata.name.length - b.d.metadata.name.length)[0]!];
    if (candidates.length !== 1) throw new Error(`expected one rate-limit service named ${name}, found ${candidates.length}`);
    const { d: deployment, c: container } = candidates[0]!;
    const env: EnvVar[] = container.env ?? [];
    const root = envValue(env, "RUNTIME_ROOT");
    const sub = envValue(env, "RUNTIME_SUBDIRECTORY") ?? "";
    const app = envValue(env, "RUNTIME_APPDIRECTORY") ?? "config";
    const configDir = [root, sub, app].filter(Boolean).join("/").replace(/\/+/g, "/");

    const podSpec = deployment.spec.template.spec;
    const mounts: any[] = container.volumeMounts ?? [];
    const volumes: any[] = podSpec.volumes ?? [];
    const mount = mounts.find((m) => volumes.find((v) => v.name === m.name)?.configMap);
    if (!mount) throw new Error(`container ${container.name} mounts no ConfigMap volume`);
    if (mount.subPath) throw new Error(`the config volume uses subPath ${mount.subPath}: a subPath mount never sees ConfigMap updates`);
    const cmName = volumes.find((v) => v.name === mount.name).configMap.name;
    const ns = deployment.metadata.namespace ?? "default";
    const configMap = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === cmName && (o.metadata.namespace ?? "default") === ns);
    if (!configMap) throw new Error(`the Deployment mounts ConfigMap ${ns}/${cmName}, which the stack does not render`);
    const files = Object.keys(configMap.data ?? {});
    const yamlFiles = files.filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"));
    if (yamlFiles.length !== 1) throw new Error(`ConfigMap ${cmName} should hold one YAML file, has: ${files.join(", ")}`);

    const ports: Record<string, number> = {};
    for (const p of container.ports ?? []) if (p.name) ports[p.name] = p.containerPort;
    return {
        deployment,
        container,
        env,
        configMap,
        configYaml: configMap.data[yamlFiles[0]],
        mountPath: mount.mountPath.replace(/\/+$/, ""),
        configDir,
        readinessProbe: container.readinessProbe,
        livenessProbe: container.livenessProbe,
        startupProbe: container.startupProbe,
        initContainers: podSpec.initContainers ?? [],
        replicas: deployment.spec.replicas ?? 1,
        ports,
    };
}

export interface Rewrites {
    redisAddress: string;
    redisPassword: string;
    /** Password of the Sentinels (REDIS_SENTINEL_AUTH), when the rendered env asks for one. */
    sentinelPassword?: string;
    /** Directory standing in for the container's `/`: RUNTIME_ROOT is placed under it. */
    fsRoot: string;
    httpPort: number;
    grpcPort: number;
    debugPort: number;
    /** Loopback port for PROMETHEUS_ADDR when the rendered env serves metrics. */
    metricsPort?: number;
    /** Keep the rendered listen addresses (HOST, GRPC_HOST, DEBUG_HOST) instead of moving them to 127.0.0.1. */
    renderedHosts?: boolean;
}

/**
 * The environment the harness runs the real service with: the rendered env, with only the
 * addresses rewritten to loopback (the listen addresses kept with `renderedHosts`), REDIS_AUTH's secretKeyRef resolved to the test Redis'
 * password, and RUNTIME_ROOT placed under a temporary directory (the container's filesystem).
 * Every rewrite is listed in the returned `rewritten` for the report.
 */
export function serviceEnv(r: RenderedRatelimit, w: Rewrites): { env: Record<string, string>; rewritten: string[] } {
    const env: Record<string, string> = {};
    const rewritten: string[] = [];
    for (const e of r.env) {
        if (e.value !== undefined) {
            env[e.name] = e.value;
        } else if ((e.name === "REDIS_AUTH" || e.name === "REDIS_SENTINEL_AUTH") && e.valueFrom?.secretKeyRef) {
            env[e.name] = e.name === "REDIS_SENTINEL_AUTH" ? (w.sentinelPassword ?? w.redisPassword) : w.redisPassword;
            rewritten.push(`${e.name} (secretKeyRef resolved)`);
        } else {
            throw new Error(`env ${e.name}: valueFrom ${JSON.stringify(e.valueFrom)} cannot be resolved by the harness`);
        }
    }
    const set = (k: string, v: string) => {
        env[k] = v;
        rewritten.push(k);
    };
    set("REDIS_URL", w.redisAddress);
    set("RUNTIME_ROOT", w.fsRoot + (env.RUNTIME_ROOT ?? ""));
    if (!w.renderedHosts) for (const h of ["HOST", "GRPC_HOST", "DEBUG_HOST"]) set(h, "127.0.0.1");
    set("PORT", String(w.httpPort));
    set("GRPC_PORT", String(w.grpcPort));
    set("DEBUG_PORT", String(w.debugPort));
    if (env.PROMETHEUS_ADDR !== undefined && w.metricsPort !== undefined) set("PROMETHEUS_ADDR", `127.0.0.1:${w.metricsPort}`);
    return { env, rewritten };
}

/** What the stack renders for one in-cluster Redis (Deployment `name`): its container's command, arguments and environment. */
export interface RenderedRedis {
    command: string[];
    args: string[];
    env: EnvVar[];
}

/** The rendered Redis Deployment `name` (`redis`, or the per-value counters' `redis-per-value`). */
export function renderedRedis(objects: K8sObject[], name = "redis"): RenderedRedis {
    const d = objects.find((o) => o.kind === "Deployment" && o.metadata.name === name);
    const c = d?.spec?.template?.spec?.containers?.find((x: any) => x.name === "redis");
    if (!c) throw new Error(`the stack renders no Redis Deployment ${name}`);
    return { command: c.command ?? [], args: c.args ?? [], env: c.env ?? [] };
}
