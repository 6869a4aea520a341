/**
 * What a team's preview says of a platform team's overrides on its gateway (PlatformRateLimit,
 * another stack's): read from the EnvoyFilters the preflight already lists in the gateway's and the
 * root namespace (cluster/cluster-lookup.ts), never written or changed. The overrides apply to every
 * request of the team's hosts on top of its own limits, whatever its rules say, so the preview names
 * them: each rule (its descriptor value) and the EnvoyFilter that holds it. Without a cluster to
 * read, the preview says the overrides were not checked, and goes on.
 *
 * Pure: the cluster's EnvoyFilters come in as a list.
 */
import { namespacedName, field, patchesOf, rateLimitFilterOf, workloadLabelsOf } from "../builders/rendered-config";
import { PLATFORM_FILTER_NAMES, PLATFORM_PATH_KEYS, PLATFORM_RULE_KEYS } from "../builders/platform-filters";
import { LiveObject } from "./preflight";

/** One platform override found on the gateway: the rule names it counts, where it is. */
export interface FoundOverride {
    envoyFilter: string;
    /** The override rules by name, and `each path` for a per-path catch-all. */
    rules: string[];
    failureModeDeny: boolean;
}

/** The platform's overrides filters among the EnvoyFilters that reach the gateway pods on `port`. Exported for testing. */
export function platformOverridesOn(envoyFilters: LiveObject[], podLabels: Record<string, string>[], port: number): FoundOverride[] {
    const out: FoundOverride[] = [];
    for (const f of envoyFilters) {
        const sel = workloadLabelsOf(f);
        if (!podLabels.some((labels) => Object.entries(sel).every(([k, v]) => labels[k] === v))) continue;
        for (const p of patchesOf(f)) {
            const rl = rateLimitFilterOf(p);
            if (!rl || rl.name !== PLATFORM_FILTER_NAMES.overrides) continue;
            if (p.port !== undefined && p.port !== port) continue;
            out.push({ envoyFilter: namespacedName(f), rules: ruleNamesOf(rl.rateLimits), failureModeDeny: rl.failureModeDeny });
        }
    }
    return out;
}

/** The rule names an overrides filter's own rate_limits send (their first generic_key under the overrides' rule key). */
function ruleNamesOf(rateLimits: unknown): string[] {
    const names: string[] = [];
    for (const e of Array.isArray(rateLimits) ? rateLimits : []) {
        for (const a of e?.actions ?? []) {
            const g = field(a, "generic_key");
            const value = field(g, "descriptor_value");
            if (field(g, "descriptor_key") === PLATFORM_RULE_KEYS.overrides && typeof value === "string") names.push(value);
            const ext = field(a?.extension, "typed_config");
            if (
                field(ext, "descriptor_key") === PLATFORM_PATH_KEYS.overrides ||
                field(field(a, "request_headers"), "descriptor_key") === PLATFORM_PATH_KEYS.overrides
            )
                names.push("each path");
        }
    }
    return [...new Set(names)];
}

/** What the preview says without a cluster to read (cluster/program-lookups.ts warns with it). */
export const OVERRIDES_NOT_CHECKED =
    "platform overrides on the gateway: not checked (the cluster's EnvoyFilters could not be read); any that exist apply on top of this stack's limits";

/** The preview's lines: the overrides that will apply to the stack's hosts (none: nothing to say; not read: nothing here). */
export function platformOverridesMessages(envoyFilters: LiveObject[] | undefined, podLabels: Record<string, string>[], port: number): string[] {
    return platformOverridesOn(envoyFilters ?? [], podLabels, port).map(
        (o) =>
            `platform overrides on the gateway's listener ${port} (EnvoyFilter ${o.envoyFilter}): ${o.rules.length ? o.rules.join(", ") : "no rule"} apply to every request of this stack's hosts, on top of its own limits, and no argument of this stack turns them off${o.failureModeDeny ? " (they fail closed: when the platform's service cannot answer, requests are refused)" : ""}`,
    );
}
