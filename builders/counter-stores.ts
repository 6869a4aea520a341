/**
 * Two counter stores: the limits a flood cannot touch apart from the ones it can.
 *
 * A counter is *fixed* when the configuration bounds how many of them exist: a named path, a rule
 * without a per-value split (a path, a header value or presence, a CIDR, a route). A counter is
 * *per-value* when a client creates one by sending a new value: the per-path catch-all
 * (`perPath.eachPath`), `header.perValue`, `query.perValue`, `perClientAddress`, `clientCidr.perAddress`, `identity`. In one Redis,
 * a flood of new per-value counters fills memory and Redis evicts live fixed counters with them (the
 * fixed limit is reset); in one service, the flood's calls slow the fixed decisions too.
 *
 * `splitLimits` gives each kind its own descriptors, so each can go to a service and a Redis of its
 * own, while the gateway still calls at most one of the two for a request that matches only one
 * kind (the default stack's traffic): a named path or a fixed path rule sends its descriptor to the
 * fixed side only, and the per-path catch-all carries, in front of the path, an entry that is
 * present only when the request's path matches none of them (`header_value_match` with
 * `expect_match: false`), so those requests send nothing to the per-value side.
 *
 * Which fixed rules the catch-all leaves out: only those that would refuse a request before the
 * catch-all could (non-shadow, a path as their only condition, a window at least as long and a
 * limit no higher): a path's own count in a window never exceeds the rule's count over all its
 * paths in the enclosing window, so every decision stays what it was with one store. A rule on a
 * route is left out on that route only.
 *
 * Pure: no Pulumi runtime, no I/O.
 */
import { costEntries } from "./request-cost";
import {
    ClientPrefix,
    CompiledLimits,
    ConfigDescriptor,
    EXPR_DESCRIPTOR_EXTENSION,
    EXPR_DESCRIPTOR_TYPE,
    GlobalLimitsPlan,
    clientAction,
    limitOf,
    pathDescriptorAction,
    pathRegex,
    ruleConfig,
    ruleEntries,
} from "./rules";
import { RateLimitEntry, RoutePatch } from "./rate-limit-entries";
import { CLIENT_KEY, LIMIT_UNIT_SECONDS, GlobalLimitsInput, PathKeyMode, RateLimitRuleArgs, ResolvedLimit, ResolvedPathLimit, ResolvedRule } from "./rule-args";
import { RateLimitAction } from "./envoy-types";
import { PlannedDescriptor, configDescriptorsOf } from "./ratelimit-config";

/** Where the counters live. */
export const CounterStore = {
    /**
     * Fixed counters in one service and Redis, per-value counters in another service and Redis
     * (`<service>-per-value`, `redis-per-value`): no flood of new keys can evict, reset or slow a
     * fixed limit.
     */
    Split: "split",
    /** The specification's layout: one service, one Redis, one config for every counter. A flood of new paths can evict a live fixed counter. */
    Single: "single",
} as const;
export type CounterStore = (typeof CounterStore)[keyof typeof CounterStore];

/**
 * The key of the entry that puts a path under the per-path catch-all (its value is
 * `OTHER_PATHS_VALUE`): present only when the path matches no fixed path the catch-all leaves out.
 */
export const OTHER_PATHS_KEY = "other_paths";
export const OTHER_PATHS_VALUE = "each";

/**
 * The longest path (bytes, without its query) the per-path catch-all counts on its own. A longer
 * path is counted under one shared counter, `LONG_PATH_VALUE`, at the catch-all's limit: no
 * client gets a new Redis key per request by sending ever longer paths, and a key stays below about
 * 1.2 kB, so the per-value store's `maxmemory` bounds the number of counters too. No route of a
 * real site needs a path that long; Envoy itself accepts up to its header size limit (60 KiB).
 */
export const MAX_COUNTED_PATH_BYTES = 1024;
/** The value every path over `MAX_COUNTED_PATH_BYTES` is counted under (no path has it: it has no leading '/'). */
export const LONG_PATH_VALUE = "(path over 1024 bytes)";

/**
 * The CEL expression of the per-value catch-all in url-path mode: the path without its query, or
 * `LONG_PATH_VALUE` when it is longer than `MAX_COUNTED_PATH_BYTES` (CEL's `size` of a string
 * counts code points; Envoy's path is ASCII after percent-encoding, so that is bytes).
 */
export const BOUNDED_URL_PATH_EXPRESSION = `size(request.url_path) <= ${MAX_COUNTED_PATH_BYTES} ? request.url_path : "${LONG_PATH_VALUE}"`;

/**
 * The per-client counter of the paths over `MAX_COUNTED_PATH_BYTES`: the catch-all's second entry
 * sends `long_path` (`LONG_PATH_OVER` for such a path, `LONG_PATH_WITHIN` otherwise, which no
 * config node names) and the client's address prefix, so one client's long paths use up its own
 * counter only; the first entry's `LONG_PATH_VALUE` has a config node without a limit.
 */
export const LONG_PATH_KEY = "long_path";
export const LONG_PATH_OVER = `over-${MAX_COUNTED_PATH_BYTES}-bytes`;
export const LONG_PATH_WITHIN = `within-${MAX_COUNTED_PATH_BYTES}-bytes`;
export const LONG_PATH_EXPRESSION = `size(request.url_path) > ${MAX_COUNTED_PATH_BYTES} ? "${LONG_PATH_OVER}" : "${LONG_PATH_WITHIN}"`;

/** One side's gateway actions and service config. */
export interface SideLimits {
    vhostRateLimits: RateLimitEntry[];
    /**
     * Route entries. On the per-value side each already holds the virtual host's entries it needs
     * (with the route's own exclusions), so it replaces the virtual host's (`vh_rate_limits` OVERRIDE);
     * a route may have none (it then sends nothing to that side).
     */
    routePatches: RoutePatch[];
    /** The side's descriptor tree as planned (what its pre-limit and monitoring read). */
    plannedDescriptors: PlannedDescriptor[];
    /** Its config.yaml descriptors: `plannedDescriptors` serialised. */
    configDescriptors: ConfigDescriptor[];
}

export interface SplitLimits {
    fixed: SideLimits;
    perValue: SideLimits;
}

/** Whether a rule (as given or resolved) makes one counter per value a client sends. */
export function isPerValueRule(r: Pick<RateLimitRuleArgs, "header" | "query" | "perClientAddress" | "clientCidr" | "identity">): boolean {
    return (
        r.header?.perValue === true ||
        r.query?.perValue === true ||
        r.perClientAddress === true ||
        r.clientCidr?.perAddress === true ||
        r.identity !== undefined
    );
}

/** Whether a store holding these limits holds a counter per value a client sends (its Redis must then evict by use). */
export function holdsPerValueCounters(input: Pick<GlobalLimitsInput, "rules" | "perPath">): boolean {
    return (input.rules ?? []).some((r) => r !== null && typeof r === "object" && isPerValueRule(r)) || input.perPath?.eachPath !== undefined;
}

/** Whether the compiled limits have both kinds (only then is a second store of any use). */
export function hasBothKinds(input: GlobalLimitsInput): boolean {
    const rules = input.rules ?? [];
    const fixed = rules.some((r) => !isPerValueRule(r)) || (input.perPath?.paths ?? []).length > 0;
    const perValue = rules.some(isPerValueRule) || input.perPath?.eachPath !== undefined;
    return fixed && perValue;
}

/**
 * The fields a rule limited by its path alone may carry (its name, path, route, options and limit).
 * Any other field given is a condition (`methods`, `query`, `header`, a client) or a `cost`, so the
 * rule may not count, or not refuse, every request of its path: a new matcher is one of them unlisted.
 */
const PATH_ONLY_FIELDS: ReadonlySet<keyof ResolvedRule> = new Set<keyof ResolvedRule>([
    "name",
    "path",
    "route",
    "rateLimitHeaders",
    "acceptEvictionRisk",
    "requests",
    "unit",
    "seconds",
    "shadow",
]);

/** A fixed rule the catch-all may leave out: it refuses first, on every request to every path it matches. */
function refusesBeforeCatchAll(r: ResolvedRule, each: ResolvedLimit): boolean {
    const given = (Object.keys(r) as (keyof ResolvedRule)[]).filter((k) => r[k] !== undefined && r[k] !== false);
    const pathOnly = r.path !== undefined && given.every((k) => PATH_ONLY_FIELDS.has(k));
    return pathOnly && !r.shadow && r.seconds >= each.seconds && r.requests <= each.requests;
}

/**
 * The catch-all's entries: the path, behind the "matches none of `excluded`" entry when the config
 * has that level (`scoped`; a `generic_key` where nothing is left out on this virtual host or route);
 * in url-path mode a second entry, the same way, with the long-path marker and the client.
 */
function catchAllEntries(excluded: string[], scoped: boolean, mode: PathKeyMode, pathKey: string, prefix: ClientPrefix): RateLimitEntry[] {
    const head: RateLimitAction[] = !scoped
        ? []
        : !excluded.length
          ? [{ generic_key: { descriptor_key: OTHER_PATHS_KEY, descriptor_value: OTHER_PATHS_VALUE } }]
          : [
                {
                    header_value_match: {
                        descriptor_key: OTHER_PATHS_KEY,
                        descriptor_value: OTHER_PATHS_VALUE,
                        expect_match: false,
                        headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: excluded.map((r) => `(?:${r})`).join("|") } }],
                    },
                },
            ];
    const entries = [{ actions: [...head, boundedPathAction(mode, pathKey)] }];
    if (mode === PathKeyMode.Literal) return entries;
    const long = {
        extension: {
            name: EXPR_DESCRIPTOR_EXTENSION,
            typed_config: { "@type": EXPR_DESCRIPTOR_TYPE, descriptor_key: LONG_PATH_KEY, text: LONG_PATH_EXPRESSION },
        },
    };
    return [...entries, { actions: [...head, long, clientAction(prefix)] }];
}

/** The catch-all's config: each path its counter, none for `LONG_PATH_VALUE`, long paths per client (url-path mode). */
function catchAllConfig(each: ResolvedLimit, mode: PathKeyMode, pathKey: string): PlannedDescriptor[] {
    if (mode === PathKeyMode.Literal) return [{ key: pathKey, limit: limitOf(each) }];
    return [
        { key: pathKey, limit: limitOf(each) },
        { key: pathKey, value: LONG_PATH_VALUE },
        { key: LONG_PATH_KEY, value: LONG_PATH_OVER, descriptors: [{ key: CLIENT_KEY, limit: limitOf(each) }] },
    ];
}

/**
 * The catch-all's path action: in url-path mode the path bounded to `MAX_COUNTED_PATH_BYTES`
 * (longer paths share one counter); `literal` keeps the specification's `:path` as sent.
 */
function boundedPathAction(mode: PathKeyMode, pathKey: string): RateLimitAction {
    const action = pathDescriptorAction(mode, pathKey);
    if (!action.extension) return action;
    return { extension: { ...action.extension, typed_config: { ...action.extension.typed_config, text: BOUNDED_URL_PATH_EXPRESSION } } };
}

/** How the rules are read: the path mode, the descriptor keys, the client prefix, the filter's headers and the catch-all (its limit and key). */
interface SplitContext {
    mode: PathKeyMode;
    ruleKey: string;
    prefix: ClientPrefix;
    headersOn: boolean;
    catchAll?: { each: ResolvedLimit; pathKey: string };
}

/** What the rules leave for the per-value routes: the routes they name, the fixed side's exclusions per route, the per-value entries per route. */
interface RouteSplit {
    routes: { virtualHost: string; route: string }[];
    routeExcluded: Map<string, string[]>;
    perValueRouteRules: Map<string, RateLimitEntry[]>;
}

const routeKey = (vh: string, route: string) => `${vh}\u0000${route}`;

/** Splits valid limits (every check passed: components/global-ratelimit/limits-plan.ts) into their fixed and per-value sides. */
export function splitLimits(plan: GlobalLimitsPlan): SplitLimits {
    const c: SplitContext = {
        mode: plan.mode,
        ruleKey: plan.ruleKey,
        prefix: plan.prefix,
        headersOn: plan.headersOn,
        ...(plan.perPath?.eachPath ? { catchAll: { each: plan.perPath.eachPath, pathKey: plan.perPath.key } } : {}),
    };
    const named = plan.perPath?.paths ?? [];
    const fixed: SideLimits = { vhostRateLimits: [], routePatches: [], plannedDescriptors: [], configDescriptors: [] };
    const perValue: SideLimits = { vhostRateLimits: [], routePatches: [], plannedDescriptors: [], configDescriptors: [] };
    if (plan.perPath) addNamedPaths(named, plan.perPath.key, c.mode, fixed);
    const vhostExcluded = named.map((p) => pathRegex({ exact: p.path }, c.mode));
    const split = addRules(plan.rules, c, { fixed, perValue }, vhostExcluded);
    const perValueVhostRules = [...perValue.vhostRateLimits];
    const scoped = vhostExcluded.length > 0 || split.routeExcluded.size > 0;
    if (c.catchAll) {
        perValue.vhostRateLimits = [...catchAllEntries(vhostExcluded, scoped, c.mode, c.catchAll.pathKey, c.prefix), ...perValueVhostRules];
        const config = catchAllConfig(c.catchAll.each, c.mode, c.catchAll.pathKey);
        perValue.plannedDescriptors.push(...(scoped ? [{ key: OTHER_PATHS_KEY, value: OTHER_PATHS_VALUE, descriptors: config }] : config));
    }
    // Every route a rule names gets the per-value entries it must send (the fixed side keeps
    // Envoy's include of the virtual host's): its own, then (url-path) the virtual host's with the
    // route's exclusions added; in literal mode a route's own replace the virtual host's.
    for (const { virtualHost, route } of split.routes) {
        const k = routeKey(virtualHost, route);
        const own = split.perValueRouteRules.get(k) ?? [];
        const fromVhost =
            c.mode === PathKeyMode.Literal
                ? []
                : [
                      ...(c.catchAll
                          ? catchAllEntries([...vhostExcluded, ...(split.routeExcluded.get(k) ?? [])], scoped, c.mode, c.catchAll.pathKey, c.prefix)
                          : []),
                      ...perValueVhostRules,
                  ];
        perValue.routePatches.push({ virtualHost, route, rateLimits: [...own, ...fromVhost] });
    }
    for (const side of [fixed, perValue]) side.configDescriptors = configDescriptorsOf(side.plannedDescriptors);
    return { fixed, perValue };
}

/** Named paths: one fixed descriptor each, the same one the catch-all's action sent for them. */
function addNamedPaths(named: ResolvedPathLimit[], pathKey: string, mode: PathKeyMode, fixed: SideLimits): void {
    for (const p of named) {
        fixed.vhostRateLimits.push({
            actions: [
                {
                    header_value_match: {
                        descriptor_key: pathKey,
                        descriptor_value: p.path,
                        headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: pathRegex({ exact: p.path }, mode) } }],
                    },
                },
            ],
        });
        fixed.plannedDescriptors.push({ key: pathKey, value: p.path, limit: limitOf(p) });
    }
}

/**
 * Each rule onto its side: its config descriptor, its entries on the virtual host or its route
 * (the per-value side's route entries held back for `splitLimits` to complete), and the fixed
 * rules that refuse before the catch-all added to `vhostExcluded` or their route's exclusions.
 */
function addRules(rules: ResolvedRule[], c: SplitContext, sides: SplitLimits, vhostExcluded: string[]): RouteSplit {
    const { fixed, perValue } = sides;
    const split: RouteSplit = { routes: [], routeExcluded: new Map(), perValueRouteRules: new Map() };
    for (const r of rules) {
        const side = isPerValueRule(r) ? perValue : fixed;
        const entries = costEntries(r.cost, ruleEntries(r, c.mode, c.ruleKey, c.headersOn, c.prefix));
        side.plannedDescriptors.push(ruleConfig(r, c.ruleKey));
        const excluded = c.catchAll && side === fixed && refusesBeforeCatchAll(r, c.catchAll.each) ? pathRegex(r.path!, c.mode) : undefined;
        if (!r.route) {
            side.vhostRateLimits.push(...entries);
            if (excluded) vhostExcluded.push(excluded);
            continue;
        }
        const vh = r.route.virtualHost;
        const k = routeKey(vh, r.route.name);
        if (!split.routes.some((x) => routeKey(x.virtualHost, x.route) === k)) split.routes.push({ virtualHost: vh, route: r.route.name });
        if (side === fixed) {
            let patch = fixed.routePatches.find((p) => routeKey(p.virtualHost, p.route) === k);
            if (!patch) fixed.routePatches.push((patch = { virtualHost: vh, route: r.route.name, rateLimits: [] }));
            patch.rateLimits.push(...entries);
            if (excluded) split.routeExcluded.set(k, [...(split.routeExcluded.get(k) ?? []), excluded]);
        } else {
            split.perValueRouteRules.set(k, [...(split.perValueRouteRules.get(k) ?? []), ...entries]);
        }
    }
    return split;
}

/** One side as the compiled limits a GlobalRateLimit's filters are built from. */
export function sideAsCompiled(side: SideLimits): CompiledLimits {
    return { ...side };
}

/** Each limited entry of a config, with the entries above it (the service's key is made of the chain). */
function limitedChains(descriptors: readonly ConfigDescriptor[], above: readonly ConfigDescriptor[] = []): ConfigDescriptor[][] {
    return descriptors.flatMap((d) => [...(d.rate_limit ? [[...above, d]] : []), ...limitedChains(d.descriptors ?? [], [...above, d])]);
}

/** The windows (seconds) of every limit a config holds. */
export function configWindows(descriptors: readonly ConfigDescriptor[]): number[] {
    return limitedChains(descriptors).map((c) => LIMIT_UNIT_SECONDS[c[c.length - 1]!.rate_limit!.unit as keyof typeof LIMIT_UNIT_SECONDS] ?? 0);
}

/**
 * The longest Redis key the service writes for a config: `<domain>_` then `<key>_<value>_` for each
 * entry of a chain, then the window's start (10 digits); an entry without a value (one counter per
 * value a client sends) counted at `valueBytes`.
 */
/** The longest value Envoy's `masked_remote_address` sends. */
const MASKED_ADDRESS_BYTES = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128".length;

export function longestCounterKeyBytes(domain: string, descriptors: readonly ConfigDescriptor[], valueBytes: number): number {
    const bytes = (s: string) => Buffer.byteLength(s, "utf8");
    // A client's prefix is an address and its length: at most 43 bytes (eight groups of four hex digits, "/128").
    const valueOf = (d: ConfigDescriptor) => (d.value !== undefined ? bytes(d.value) : d.key === CLIENT_KEY ? MASKED_ADDRESS_BYTES : valueBytes);
    const chainBytes = (c: ConfigDescriptor[]) => c.reduce((n, d) => n + bytes(d.key) + 2 + valueOf(d), 0);
    return bytes(domain) + 1 + Math.max(0, ...limitedChains(descriptors).map(chainBytes)) + 10;
}
