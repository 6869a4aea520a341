/**
 * Typed global rate-limit rules → every Envoy `rate_limits` action and every entry of the
 * rate-limit service's `config.yaml`, from one statement, so the gateway and the service can never
 * disagree (the way Envoy Gateway's BackendTrafficPolicy and Kuadrant's RateLimitPolicy work).
 *
 * Pure: no Pulumi runtime, no I/O, no checks. `buildGlobalLimits` takes the plan of
 * components/global-ratelimit/limits-plan.ts (the rules checked there, each problem under its field path).
 *
 * How each rule becomes a descriptor (one `rate_limits` entry per rule, so a rule that yields
 * nothing drops only its own descriptor, never another rule's):
 * 1. The first action names the rule: `header_value_match` (key `ruleKey`, value = the rule's
 *    name) over every condition of the rule (the path, the method, the query parameter, the header
 *    value or presence: builders/request-match.ts), or, when the
 *    rule has no condition, `generic_key` with the same key and value. A request that fails a
 *    condition sends nothing for that rule.
 * 2. `header.perValue`: `request_headers` (descriptor key = the header name): each distinct value
 *    its own counter. A request without the header (`skip_if_absent`) sends the rule's descriptor
 *    alone, which the config counts on the rule's own node: one shared counter at the same limit
 *    (`whenMissing` SharedCounter, the default), or a limit of 0 (Refuse); with Ignore the request
 *    sends nothing for the rule. `header.invert` counts the requests whose header is not `value`,
 *    a missing header included.
 * 2b. `query.perValue`: `query_parameters` (key `query_value`): each distinct decoded value its own
 *    counter, a request without the parameter handled as `whenMissing` says (as for a header).
 * 2c. The untrusted-value guard of both: the value entry applies only to a value the service can
 *    read and no other reader sees differently (valid UTF-8; a header given once, without a comma;
 *    a parameter given once, without `;`, `+` or a percent-encoded byte above 0x7F:
 *    builders/request-match.ts). Every other request
 *    sends, in an entry of its own, the rule's name and `untrusted_value=shared`, which the config
 *    counts on one counter at the rule's limit (0 with Refuse, per client with `perClientAddress`).
 *    So a value the service would refuse never reaches it (one such value fails the whole call, and
 *    a gateway failing open then lets the request through every limit of the call), and a client
 *    cannot mint counters by hiding its real value.
 * 3. `perClientAddress`: `remote_address` (key `remote_address`): each client address its own
 *    counter (the address Envoy trusts: the downstream peer, or the X-Forwarded-For entry chosen by
 *    Istio's `numTrustedProxies`).
 * 3b. `identity`: the verified token's issuer and claim, read from the JWT filter's dynamic
 *    metadata (builders/identity.ts), and the per-client fallback or refusal of a request without one.
 * 4. `clientCidr` (builders/client-cidr.ts): `masked_remote_address` (key `masked_remote_address`,
 *    the client's network at the CIDR's length, e.g. `10.0.0.0/8`), one `rate_limits` entry per
 *    distinct prefix length; the config has one child per CIDR (the limit on it, or with `perAddress`
 *    on a `remote_address` child under it). Addresses outside every CIDR match no entry.
 * The config nests one level per action and puts the limit (and `shadow_mode`) on the last one.
 * A rule's `rateLimitHeaders` becomes its entries' `x_ratelimit_option` (OFF hides the rule from the
 * X-RateLimit headers the filter builds; DRAFT_VERSION_03 shows it where the filter's are off).
 *
 * Paths are matched WITHOUT the query string (`:path` carries it): an exact or prefix path in
 * every spelling a backend routes to the same handler (builders/path-spellings.ts: letter case,
 * `%XX` escapes, repeated and trailing slashes, `;` parameters, a `.` suffix), or with
 * `spellings: PathSpellings.Exact` exact `/p` as `(?:/p)(?:\?.*)?` and prefix `/p` as
 * `/p(?:[/?].*)?` (Envoy Gateway's form; a prefix ending in `/` is followed by anything); a regex
 * `r` as `(?:r)(?:\?.*)?`. With `PathKeyMode.Literal` the path is matched as written (query
 * included), as the specification's tables do.
 */
import { MASKED_REMOTE_ADDRESS_KEY, cidrsOf, maskedRemoteAddressActions } from "./client-cidr";
import {
    CLIENT_KEY,
    MISSING_VALUE_KEY,
    MISSING_VALUE_VALUE,
    MissingHeader,
    PathKeyMode,
    PathMatchArgs,
    PathSpellings,
    QUERY_VALUE_KEY,
    REMOTE_ADDRESS_KEY,
    ResolvedLimit,
    ResolvedPerPath,
    ResolvedRule,
    UNTRUSTED_VALUE_KEY,
    UNTRUSTED_VALUE_VALUE,
} from "./rule-args";
import { costEntries } from "./request-cost";
import { exactSpellingsRegex, prefixSpellingsRegex } from "./path-spellings";
import { identityActions, identityConfig } from "./identity";
import { RateLimitEntry, RoutePatch } from "./rate-limit-entries";

import {
    ambiguousQueryRegex,
    escapeRe2,
    headerAbsent,
    headerValueRegex,
    LONG_HEADER_VALUE_REGEX,
    longQueryValueRegex,
    methodCondition,
    pathCondition,
    queryCondition,
    queryPresentRegex,
    trustedQueryValueRegex,
    underscoreVariants,
} from "./request-match";
import { HeaderMatcher, RateLimitAction } from "./envoy-types";
import { ConfigDescriptor, PlannedDescriptor, PlannedLimit, configDescriptorsOf } from "./ratelimit-config";

/** The node type of the service's config and of its planned tree, declared once in ratelimit-config.ts (re-exported for its users in components/). */
export type { ConfigDescriptor, PlannedDescriptor };

export interface CompiledLimits {
    /** `rate_limits` on the gateway's virtual host(s). */
    vhostRateLimits: RateLimitEntry[];
    /** `rate_limits` on named routes (with `vh_rate_limits: INCLUDE` in url-path mode). */
    routePatches: RoutePatch[];
    /** The service's descriptor tree as planned, each limit typed: what the pre-limit and the monitoring read. */
    plannedDescriptors: PlannedDescriptor[];
    /** The `descriptors` of the service's config.yaml: `plannedDescriptors` serialised (`configDescriptorsOf`). */
    configDescriptors: ConfigDescriptor[];
}

export const EXPR_DESCRIPTOR_EXTENSION = "envoy.rate_limit_descriptors.expr";
export const EXPR_DESCRIPTOR_TYPE = "type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor";
/** CEL attribute: the request path without its query string (`request.path` keeps the query). */
export const URL_PATH_EXPRESSION = "request.url_path";

export { escapeRe2, QUERY_VALUE_KEY, REMOTE_ADDRESS_KEY, UNTRUSTED_VALUE_KEY, UNTRUSTED_VALUE_VALUE };

/** The `:path` regex of a path match (query tolerant in url-path mode). Exported for testing. */
export function pathRegex(m: PathMatchArgs, mode: PathKeyMode): string {
    const literal = mode === PathKeyMode.Literal;
    if (!literal && m.regex === undefined && m.spellings !== PathSpellings.Exact) {
        return m.exact !== undefined ? exactSpellingsRegex(m.exact) : prefixSpellingsRegex(m.prefix!);
    }
    if (m.exact !== undefined) return literal ? escapeRe2(m.exact) : `(?:${escapeRe2(m.exact)})(?:\\?.*)?`;
    if (m.prefix !== undefined) {
        const p = escapeRe2(m.prefix);
        return m.prefix.endsWith("/") ? `${p}.*` : literal ? `${p}(?:/.*)?` : `${p}(?:[/?].*)?`;
    }
    return literal ? m.regex! : `(?:${m.regex})(?:\\?.*)?`;
}

/** The action sending the request's path as `key` (the per-path counters). */
export function pathDescriptorAction(mode: PathKeyMode, key: string): RateLimitAction {
    if (mode === PathKeyMode.Literal) return { request_headers: { header_name: ":path", descriptor_key: key } };
    return { extension: { name: EXPR_DESCRIPTOR_EXTENSION, typed_config: { "@type": EXPR_DESCRIPTOR_TYPE, descriptor_key: key, text: URL_PATH_EXPRESSION } } };
}

/** A planned node's limit: the resolved limit's own fields (a rule's others left out). */
export function limitOf(l: ResolvedLimit): PlannedLimit {
    return { requests: l.requests, unit: l.unit, seconds: l.seconds, shadow: l.shadow };
}

/** The client prefix lengths in force (`clientPrefix` with its defaults: components/global-ratelimit/limits-plan.ts `resolveClientPrefix`). */
export interface ClientPrefix {
    v4: number;
    v6: number;
}

/** The action keying a request by its client: the trusted address's leading `prefix` bits (`masked_remote_address`). */
export function clientAction(prefix: ClientPrefix): RateLimitAction {
    return { masked_remote_address: { v4_prefix_mask_len: prefix.v4, v6_prefix_mask_len: prefix.v6 } };
}

/** The `rate_limits` entries of a rule: its value's (or its own), its fallbacks', or with `clientCidr` one per distinct prefix length. */
export function ruleEntries(r: ResolvedRule, mode: PathKeyMode, key: string, headersOn: boolean, prefix: ClientPrefix): RateLimitEntry[] {
    // Written only where the rule differs from its filter: an entry's own option would also switch
    // the headers on for the gateway's pre-limit (a local rate-limit filter reading the same entries).
    const shown = r.rateLimitHeaders;
    const headers = shown === headersOn ? {} : { x_ratelimit_option: shown ? ("DRAFT_VERSION_03" as const) : ("OFF" as const) };
    if (r.clientCidr) {
        const tail = r.clientCidr.perAddress ? [clientAction(prefix)] : [];
        return maskedRemoteAddressActions(r.clientCidr).map((masked) => ({ actions: [nameAction(r, mode, key), masked, ...tail], ...headers }));
    }
    if (r.identity) return identityActions(r.identity, clientAction(prefix)).map((tail) => ({ actions: [nameAction(r, mode, key), ...tail], ...headers }));
    const client = r.perClientAddress ? [clientAction(prefix)] : [];
    const ways = perValueWays(r);
    if (!ways) return [{ actions: [nameAction(r, mode, key), ...client], ...headers }];
    const refusing = missingOf(r) === MissingHeader.Refuse;
    // The fallbacks' counters are per client (none needed where they refuse everyone).
    const fallbackClient = refusing ? [] : [clientAction(prefix)];
    const untrusted = { generic_key: { descriptor_key: UNTRUSTED_VALUE_KEY, descriptor_value: UNTRUSTED_VALUE_VALUE } };
    const missing = { generic_key: { descriptor_key: MISSING_VALUE_KEY, descriptor_value: MISSING_VALUE_VALUE } };
    const entries: RateLimitAction[][] = [
        [nameAction(r, mode, key, ways.trusted), ways.value, ...client],
        ...ways.untrusted.map((w) => [nameAction(r, mode, key, w), untrusted, ...fallbackClient]),
        ...(ways.variantGuard ? [[nameAction(r, mode, key), ways.variantGuard, ...fallbackClient]] : []),
        ...(missingOf(r) === MissingHeader.Ignore ? [] : [[nameAction(r, mode, key, ways.missing), missing, ...fallbackClient]]),
    ];
    return entries.map((actions) => ({ actions, ...headers }));
}

/** The first action of a rule's entries: its name, when every condition (and each of `extra`) holds. */
function nameAction(r: ResolvedRule, mode: PathKeyMode, key: string, extra: HeaderMatcher[] = []): RateLimitAction {
    const conditions: HeaderMatcher[] = [];
    if (r.path) conditions.push({ name: ":path", safe_regex_match: { google_re2: {}, regex: pathRegex(r.path, mode) } });
    if (r.methods?.length) conditions.push(methodCondition(r.methods));
    if (r.query && !r.query.perValue) conditions.push(queryCondition(r.query));
    if (r.header && r.header.value !== undefined) {
        conditions.push({
            name: r.header.name,
            string_match: { exact: r.header.value },
            // A missing header is compared as "": inverted, it counts too.
            ...(r.header.invert ? { invert_match: true, treat_missing_header_as_empty: true } : {}),
        });
    } else if (r.header && !r.header.perValue) conditions.push({ name: r.header.name, present_match: true });
    conditions.push(...extra);
    return conditions.length
        ? { header_value_match: { descriptor_key: key, descriptor_value: r.name, headers: conditions } }
        : { generic_key: { descriptor_key: key, descriptor_value: r.name } };
}

/**
 * How a per-value rule splits its requests, so that each request sends exactly one of its entries:
 * the conditions under which the value is sent (`trusted`, with the `value` action), one list of
 * conditions per way a present value is untrusted, the underscored-name guard (header rules), and
 * the conditions of a request without the field. Undefined for other rules.
 */
function perValueWays(r: ResolvedRule):
    | {
          trusted: HeaderMatcher[];
          value: RateLimitAction;
          untrusted: HeaderMatcher[][];
          variantGuard?: RateLimitAction;
          missing: HeaderMatcher[];
      }
    | undefined {
    if (r.header?.perValue) {
        const name = r.header.name;
        const variants = underscoreVariants(name);
        const noVariant = variants.map(headerAbsent);
        const good = { name, safe_regex_match: { google_re2: {}, regex: headerValueRegex(r.header.valueCharset) } };
        const long = { name, safe_regex_match: { google_re2: {}, regex: LONG_HEADER_VALUE_REGEX } };
        const not = (m: HeaderMatcher): HeaderMatcher => ({ ...m, invert_match: true });
        return {
            trusted: [...noVariant, good, not(long)],
            value: { request_headers: { header_name: name, descriptor_key: name } },
            // A missing header matches no inverted value matcher (Envoy): these hold for a present, untrusted value.
            untrusted: [
                [...noVariant, not(good)],
                [...noVariant, good, long],
            ],
            // Some underscored spelling is present: "every one absent" does not hold.
            variantGuard: variants.length
                ? {
                      header_value_match: {
                          descriptor_key: UNTRUSTED_VALUE_KEY,
                          descriptor_value: UNTRUSTED_VALUE_VALUE,
                          expect_match: false,
                          headers: noVariant,
                      },
                  }
                : undefined,
            missing: [...noVariant, headerAbsent(name)],
        };
    }
    if (r.query?.perValue) {
        const name = r.query.name;
        const ambiguous = ambiguousQueryRegex(name);
        const good = trustedQueryValueRegex(name, r.query.valueCharset);
        const long = longQueryValueRegex(name);
        return {
            trusted: [pathCondition(ambiguous, true), pathCondition(good), pathCondition(long, true)],
            value: { query_parameters: { query_parameter_name: name, descriptor_key: QUERY_VALUE_KEY } },
            untrusted: [
                [pathCondition(ambiguous)],
                [pathCondition(ambiguous, true), pathCondition(queryPresentRegex(name)), pathCondition(good, true)],
                [pathCondition(ambiguous, true), pathCondition(good), pathCondition(long)],
            ],
            missing: [pathCondition(queryPresentRegex(name), true)],
        };
    }
    return undefined;
}

/** The descriptor key of a rule's per-value request field (header or query parameter), if any. */
function perValueKeyOf(r: ResolvedRule): string | undefined {
    return r.header?.perValue ? r.header.name : r.query?.perValue ? QUERY_VALUE_KEY : undefined;
}

/** What a per-value rule does with a request without its header or parameter (`whenMissing`, resolved); undefined for other rules. */
function missingOf(r: ResolvedRule): MissingHeader | undefined {
    return r.header?.perValue ? r.header.whenMissing : r.query?.perValue ? r.query.whenMissing : undefined;
}

/** The service's planned tree of a rule: its name's node, with the value's, the client's and the fallbacks' nodes under it. */
export function ruleConfig(r: ResolvedRule, key: string): PlannedDescriptor {
    const limit = () => ({ limit: limitOf(r) });
    if (r.clientCidr) {
        const perAddress = r.clientCidr.perAddress === true;
        const children = cidrsOf(r.clientCidr).map((c) =>
            perAddress
                ? { key: MASKED_REMOTE_ADDRESS_KEY, value: c.text, descriptors: [{ key: CLIENT_KEY, ...limit() }] }
                : { key: MASKED_REMOTE_ADDRESS_KEY, value: c.text, ...limit() },
        );
        return { key, value: r.name, descriptors: children };
    }
    if (r.identity) return { key, value: r.name, descriptors: identityConfig(r.identity, limit) };
    const perValueKey = perValueKeyOf(r);
    const client = r.perClientAddress ? { key: CLIENT_KEY, ...limit() } : undefined;
    if (perValueKey === undefined) return client ? { key, value: r.name, descriptors: [client] } : { key, value: r.name, ...limit() };
    const valueNode: PlannedDescriptor = client ? { key: perValueKey, descriptors: [client] } : { key: perValueKey, ...limit() };
    const missing = missingOf(r);
    // The fallbacks: one counter per client, or (Refuse) one that allows nothing.
    const fallback = (k: string, v: string): PlannedDescriptor =>
        missing === MissingHeader.Refuse
            ? { key: k, value: v, limit: { ...limitOf(r), requests: 0 } }
            : { key: k, value: v, descriptors: [{ key: CLIENT_KEY, ...limit() }] };
    return {
        key,
        value: r.name,
        descriptors: [
            valueNode,
            fallback(UNTRUSTED_VALUE_KEY, UNTRUSTED_VALUE_VALUE),
            ...(missing === MissingHeader.Ignore ? [] : [fallback(MISSING_VALUE_KEY, MISSING_VALUE_VALUE)]),
        ],
    };
}

/** The checked limits the builder reads (components/global-ratelimit/limits-plan.ts planGlobalLimits): valid rules, limits resolved, defaults filled in. */
export interface GlobalLimitsPlan {
    mode: PathKeyMode;
    ruleKey: string;
    rules: ResolvedRule[];
    /** The per-path limits under their descriptor key; undefined without `perPath`. */
    perPath?: ResolvedPerPath;
    prefix: ClientPrefix;
    /** The filter adds X-RateLimit headers. */
    headersOn: boolean;
}

/** The gateway's `rate_limits` and the service's descriptors of planned limits (pure: the plan was checked). */
export function buildGlobalLimits(plan: GlobalLimitsPlan): CompiledLimits {
    const { mode, ruleKey, rules, perPath, prefix, headersOn } = plan;
    const { vhostRateLimits, routePatches } = gatewayRateLimits(rules, mode, ruleKey, perPath?.key, headersOn, prefix);
    const plannedDescriptors: PlannedDescriptor[] = [
        ...(perPath?.paths ?? []).map((p) => ({ key: perPath!.key, value: p.path, limit: limitOf(p) })),
        ...rules.map((r) => ruleConfig(r, ruleKey)),
        ...(perPath?.eachPath ? [{ key: perPath.key, limit: limitOf(perPath.eachPath) }] : []),
    ];
    return { vhostRateLimits, routePatches, plannedDescriptors, configDescriptors: configDescriptorsOf(plannedDescriptors) };
}

/**
 * The gateway's `rate_limits`: the per-path action first (when `pathKey` is given: there are
 * per-path limits), then each rule's entries on the virtual host, or on its named route.
 */
function gatewayRateLimits(
    valid: ResolvedRule[],
    mode: PathKeyMode,
    ruleKey: string,
    pathKey: string | undefined,
    headersOn: boolean,
    prefix: ClientPrefix,
): Pick<CompiledLimits, "vhostRateLimits" | "routePatches"> {
    const vhostRateLimits: RateLimitEntry[] = [];
    const routePatches: RoutePatch[] = [];
    if (pathKey !== undefined) vhostRateLimits.push({ actions: [pathDescriptorAction(mode, pathKey)] });
    for (const r of valid) {
        const entries = costEntries(r.cost, ruleEntries(r, mode, ruleKey, headersOn, prefix));
        if (!r.route) {
            vhostRateLimits.push(...entries);
            continue;
        }
        const vh = r.route.virtualHost;
        let patch = routePatches.find((p) => p.virtualHost === vh && p.route === r.route!.name);
        if (!patch) routePatches.push((patch = { virtualHost: vh, route: r.route.name, rateLimits: [] }));
        patch.rateLimits.push(...entries);
    }
    return { vhostRateLimits, routePatches };
}
