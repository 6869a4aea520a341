/**
 * Pure builder of envoyproxy/ratelimit's `config.yaml` (spec 2.1) from the validated settings.
 */
import { stringify } from "yaml";
import { DescriptorLimit, StackSettings } from "./settings";

export const CONFIG_FILE_KEY = "config.yaml";

export interface RateLimitServiceConfig {
    domain: string;
    descriptors: { key: string; value?: string; rate_limit: { unit: string; requests_per_unit: number } }[];
}

export function rateLimitServiceConfig(s: StackSettings): RateLimitServiceConfig {
    return {
        domain: s.global.domain,
        descriptors: s.global.descriptors.map((d: DescriptorLimit) => ({
            key: d.key,
            ...(d.value !== undefined ? { value: d.value } : {}),
            rate_limit: { unit: d.unit, requests_per_unit: d.requestsPerUnit },
        })),
    };
}

/** The text of the ConfigMap's `config.yaml` entry. */
export function rateLimitConfigYaml(s: StackSettings): string {
    return stringify(rateLimitServiceConfig(s), { lineWidth: 0 });
}
