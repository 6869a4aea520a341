/**
 * What the GlobalRateLimits of one program hold: the gateway listeners their shared-layout filters
 * go on, and the objects they write under fixed names. A second instance claiming either is refused
 * at construction (the two would read each other's descriptors, or overwrite each other's objects).
 */
import * as pulumi from "@pulumi/pulumi";
import { deploysRedis } from "../../builders/redis-connection";

import { ServiceSettings } from "../service/settings";

/** Which GlobalRateLimit of this program holds each gateway listener (program, stack and key → component name). */
const LISTENERS = new Map<string, string>();

/** The name of another GlobalRateLimit of this program already on one of these listeners, or undefined. Exported for testing. */
export function claimListeners(component: string, keys: readonly string[], scope: string = `${pulumi.getProject()}/${pulumi.getStack()}`): string | undefined {
    const taken = keys.map((k) => LISTENERS.get(`${scope}|${k}`)).find((holder) => holder !== undefined && holder !== component);
    if (taken !== undefined) return taken;
    for (const k of keys) LISTENERS.set(`${scope}|${k}`, component);
    return undefined;
}

/** The objects a GlobalRateLimit writes under names its arguments fix, as claim keys and in words. */
export function ownNamedObjects(services: ServiceSettings[]): { keys: string[]; names: string } {
    const named = services.flatMap((service) => {
        const r = service.ratelimit;
        return [
            `Service/Deployment ${r.serviceName}`,
            `ConfigMap ${r.configName}`,
            ...(deploysRedis(service.redis) ? [`Deployment/Service ${r.redisName}`] : []),
        ];
    });
    const ns = services[0]!.ratelimit.namespace;
    return { keys: named.map((n) => `${ns}|${n}`), names: named.join(", ") };
}
