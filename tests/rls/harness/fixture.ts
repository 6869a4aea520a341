/**
 * A test's world: the real rate-limit processes run with the rendered settings, each rendered
 * service with a Redis of its own (with counterStore split: the fixed counters' service and the
 * per-value counters' service, as the stack deploys them).
 */
import type { K8sObject } from "../../../lib/k8s-object";
import { explain } from "../../../gateway-model/explain";
import { Explanation } from "../../../gateway-model/model";
import { RlsClient, Decision, Descriptor } from "./client";
import { RedisServer } from "./redis";
import { RateLimitProcess } from "./service";
import { renderedRatelimits, RenderedRatelimit } from "./rendered";
import { renderVariant, Variant } from "./stack";

/** One rendered rate-limit service: its Redis, its processes and a client per process. */
export interface ServiceSide {
    rendered: RenderedRatelimit;
    redis: RedisServer;
    services: RateLimitProcess[];
    clients: RlsClient[];
}

async function startSide(rendered: RenderedRatelimit, processes: number, envOverrides: Record<string, string | null>): Promise<ServiceSide> {
    const redis = await RedisServer.start();
    const services: RateLimitProcess[] = [];
    try {
        for (let i = 0; i < processes; i++) {
            services.push(await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, envOverrides }));
        }
    } catch (e) {
        await Promise.all(services.map((s) => s.stop()));
        await redis.stop();
        throw e;
    }
    const clients = services.map((s) => s.client());
    await Promise.all(clients.map((c) => c.waitForReady()));
    return { rendered, redis, services, clients };
}

async function stopSide(s: ServiceSide): Promise<void> {
    for (const c of s.clients) c.close();
    await Promise.all(s.services.map((p) => p.stop()));
    await s.redis.stop();
}

export class World {
    private constructor(
        readonly variant: Variant,
        readonly objects: K8sObject[],
        /** The fixed counters' service (the only one with counterStore single). */
        readonly rendered: RenderedRatelimit,
        readonly redis: RedisServer,
        readonly services: RateLimitProcess[],
        readonly clients: RlsClient[],
        /** The per-value counters' service, when the stack renders one. */
        readonly perValue?: ServiceSide,
    ) {}

    /** `envOverrides`: changes on top of the rendered environment, for a test that says why (the default: none). */
    static async start(
        variant: Variant,
        processes = 1,
        overrides: Record<string, string> = {},
        envOverrides: Record<string, string | null> = {},
    ): Promise<World> {
        const objects = await renderVariant(variant, overrides);
        const [fixedRendered, perValueRendered] = renderedRatelimits(objects);
        const fixed = await startSide(fixedRendered!, processes, envOverrides);
        let perValue: ServiceSide | undefined;
        try {
            if (perValueRendered) perValue = await startSide(perValueRendered, processes, envOverrides);
        } catch (e) {
            await stopSide(fixed);
            throw e;
        }
        return new World(variant, objects, fixed.rendered, fixed.redis, fixed.services, fixed.clients, perValue);
    }

    /** The gateway model's view of a path (named a model in the tests that use it). */
    explain(path: string): Explanation {
        return explain(this.objects, path);
    }

    /** The side a gateway call goes to: the service named in its cluster (`outbound|<port>||<name>.<ns>...`). */
    sideOf(cluster: string): { clients: RlsClient[] } {
        const name = cluster.split("|")[3]?.split(".")[0];
        if (this.perValue && name === this.perValue.rendered.deployment.metadata.name) return this.perValue;
        return this;
    }

    /**
     * What the gateway would ask for `path` (via the model), sent to the real service(s) through
     * client `i`: one call per rate-limit filter that sends descriptors, each to its own service.
     * Undefined when the model says the gateway sends nothing; with several calls, the decisions
     * are merged as Envoy does (OVER_LIMIT when any call says so).
     */
    async send(path: string, i = 0): Promise<Decision | undefined> {
        const x = this.explain(path);
        if (!x.descriptors.length) return undefined;
        const calls = x.calls.length ? x.calls : [{ service: "", domain: x.domain, descriptors: x.descriptors }];
        const decisions = await Promise.all(
            calls.map((c) => {
                const clients = this.sideOf(c.service).clients;
                const descriptors: Descriptor[] = c.descriptors.map((d) => d.entries);
                return clients[i % clients.length]!.shouldRateLimit(c.domain, descriptors);
            }),
        );
        if (decisions.length === 1) return decisions[0];
        return {
            overallCode: decisions.some((d) => d.overallCode === "OVER_LIMIT") ? "OVER_LIMIT" : "OK",
            statuses: decisions.flatMap((d) => d.statuses),
        };
    }

    async stop(): Promise<void> {
        await stopSide(this);
        if (this.perValue) await stopSide(this.perValue);
    }
}
