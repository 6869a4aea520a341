/**
 * Pure builder of envoyproxy/ratelimit's `config.yaml` (spec 2.1): its descriptors come from the
 * compiled rules (builders/rules.ts), the same source as the gateway's actions.
 */
import { stringify } from "yaml";
import { ConfigDescriptor } from "./rules";

export const CONFIG_FILE_KEY = "config.yaml";

export interface RateLimitServiceConfig {
    domain: string;
    descriptors: readonly ConfigDescriptor[];
}

/** The text of a `config.yaml` entry for a domain and its descriptors. */
export function configYaml(domain: string, descriptors: readonly ConfigDescriptor[]): string {
    return stringify({ domain, descriptors } satisfies RateLimitServiceConfig, { lineWidth: 0 });
}
