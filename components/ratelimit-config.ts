/**
 * Pure builder of envoyproxy/ratelimit's `config.yaml` (spec 2.1): its descriptors come from the
 * compiled rules (components/rules.ts), the same source as the gateway's actions.
 */
import { stringify } from "yaml";
import { ConfigDescriptor, compileGlobalLimits, formatRuleProblems } from "./rules";
import { StackSettings } from "./settings";
import { globalLimitsFromSettings } from "./spec-limits";

export const CONFIG_FILE_KEY = "config.yaml";

export interface RateLimitServiceConfig {
    domain: string;
    descriptors: ConfigDescriptor[];
}

/** The text of a `config.yaml` entry for a domain and its descriptors. */
export function configYaml(domain: string, descriptors: ConfigDescriptor[]): string {
    return stringify({ domain, descriptors } satisfies RateLimitServiceConfig, { lineWidth: 0 });
}

export function rateLimitServiceConfig(s: StackSettings): RateLimitServiceConfig {
    const c = compileGlobalLimits(globalLimitsFromSettings(s));
    if (c.problems.length) throw new Error(formatRuleProblems("limits of the stack settings", c.problems));
    return { domain: s.global.domain, descriptors: c.configDescriptors };
}

/** The text of the ConfigMap's `config.yaml` entry. */
export function rateLimitConfigYaml(s: StackSettings): string {
    const c = rateLimitServiceConfig(s);
    return configYaml(c.domain, c.descriptors);
}
