/**
 * Pure builder of envoyproxy/ratelimit's `config.yaml` (spec 2.1): its descriptors are the limits'
 * planned tree (`PlannedDescriptor`, built by builders/rules.ts, identity.ts and counter-stores.ts
 * from the same plan as the gateway's actions) serialised by `configDescriptorsOf`.
 * `ConfigDescriptor` is the one type of a node of that config, written and read (rendered-config.ts);
 * `PlannedDescriptor` the one type of a planned node, which the pre-limit and the monitoring read.
 */
import { stringify } from "yaml";
import { ResolvedLimit } from "./rule-args";

export const CONFIG_FILE_KEY = "config.yaml";

/** A limit as this package writes it: requests per unit. */
export interface WrittenLimit {
    unit: string;
    requests_per_unit: number;
}

/** A limit as the service reads it: the written one, or `unlimited` (which this package never writes, a hand-written config may). */
export type ServiceLimit = WrittenLimit | { unlimited: boolean };

/**
 * The switches of a config.yaml descriptor entry that envoyproxy/ratelimit reads beside its limit:
 * `shadow_mode` (counted, never refused) and `detailed_metric` (the entry's statistics per value).
 * Declared once: the entry's type, the leaf a builder writes (`DescriptorLimit`) and the reader of
 * rendered config (builders/rendered-config.ts) all take them from here.
 */
export const DESCRIPTOR_SWITCHES = ["shadow_mode", "detailed_metric"] as const;
export type DescriptorSwitch = (typeof DESCRIPTOR_SWITCHES)[number];

/** A config.yaml descriptor entry of envoyproxy/ratelimit; `L`: the limits it may hold (the written ones by default). */
export type ConfigDescriptor<L extends ServiceLimit = WrittenLimit> = {
    key: string;
    value?: string;
    rate_limit?: L;
    descriptors?: readonly ConfigDescriptor<L>[];
} & { [S in DescriptorSwitch]?: boolean };

/** What a descriptor's leaf carries besides its key and value: its limit and its switches. */
export type DescriptorLimit = Pick<ConfigDescriptor, "rate_limit" | DescriptorSwitch>;

/** A planned node's limit: a rule's or a path's, resolved once (requests, unit, window, shadow). */
export type PlannedLimit = Pick<ResolvedLimit, "requests" | "unit" | "seconds" | "shadow">;

/**
 * A node of the service's descriptor tree as the limits' plan makes it (builders/rules.ts,
 * identity.ts, counter-stores.ts): its entry and its typed limit. `config.yaml`'s nodes are this
 * tree serialised (`configDescriptorsOf`); the pre-limit (pre-limit.ts) and the monitoring
 * (monitoring.ts) read this tree, never the serialised one.
 */
export interface PlannedDescriptor {
    readonly key: string;
    readonly value?: string;
    /** The counter's limit on this node; none: the node only leads to the ones under it. */
    readonly limit?: PlannedLimit;
    readonly descriptors?: readonly PlannedDescriptor[];
    /** A config.yaml node is not a planned one: one given where the plan's tree is expected fails to compile. */
    readonly rate_limit?: never;
}

/** A planned limit as config.yaml writes it: its `rate_limit` and, observing only, `shadow_mode`. */
export function writtenLimitOf(l: PlannedLimit): DescriptorLimit {
    return { rate_limit: { unit: l.unit, requests_per_unit: l.requests }, ...(l.shadow ? { shadow_mode: true } : {}) };
}

/** The config.yaml nodes of a planned tree: fresh objects at every level (a shared one would be written as a YAML alias). */
export function configDescriptorsOf(planned: readonly PlannedDescriptor[]): ConfigDescriptor[] {
    return planned.map((n) => ({
        key: n.key,
        ...(n.value !== undefined ? { value: n.value } : {}),
        ...(n.limit ? writtenLimitOf(n.limit) : {}),
        ...(n.descriptors ? { descriptors: configDescriptorsOf(n.descriptors) } : {}),
    }));
}

export interface RateLimitServiceConfig<L extends ServiceLimit = WrittenLimit> {
    domain: string;
    descriptors: readonly ConfigDescriptor<L>[];
}

/** The text of a `config.yaml` entry for a domain and its descriptors. */
export function configYaml(domain: string, descriptors: readonly ConfigDescriptor[]): string {
    return stringify({ domain, descriptors } satisfies RateLimitServiceConfig, { lineWidth: 0 });
}
