/** A test's world: one Redis, N real rate-limit processes run with the rendered settings. */
import type { K8sObject } from "../../../lib/k8s-object";
import { explain, Explanation } from "../../../gateway-model/explain";
import { RlsClient, Decision, Descriptor } from "./client";
import { RedisServer } from "./redis";
import { RateLimitProcess } from "./service";
import { renderedRatelimit, RenderedRatelimit } from "./rendered";
import { renderVariant, Variant } from "./stack";

export class World {
    private constructor(
        readonly variant: Variant,
        readonly objects: K8sObject[],
        readonly rendered: RenderedRatelimit,
        readonly redis: RedisServer,
        readonly services: RateLimitProcess[],
        readonly clients: RlsClient[],
    ) {}

    /** `envOverrides`: changes on top of the rendered environment, for a test that says why (the default: none). */
    static async start(
        variant: Variant,
        processes = 1,
        overrides: Record<string, string> = {},
        envOverrides: Record<string, string | null> = {},
    ): Promise<World> {
        const objects = await renderVariant(variant, overrides);
        const rendered = renderedRatelimit(objects);
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
        return new World(variant, objects, rendered, redis, services, clients);
    }

    /** The gateway model's view of a path (named a model in the tests that use it). */
    explain(path: string): Explanation {
        return explain(this.objects, path);
    }

    /**
     * What the gateway would ask for `path` (via the model), sent to the real service through
     * client `i`. Undefined when the model says the gateway sends nothing.
     */
    async send(path: string, i = 0): Promise<Decision | undefined> {
        const x = this.explain(path);
        if (!x.descriptors.length) return undefined;
        const descriptors: Descriptor[] = x.descriptors.map((d) => d.entries);
        return this.clients[i % this.clients.length].shouldRateLimit(x.domain, descriptors);
    }

    async stop(): Promise<void> {
        for (const c of this.clients) c.close();
        await Promise.all(this.services.map((s) => s.stop()));
        await this.redis.stop();
    }
}
