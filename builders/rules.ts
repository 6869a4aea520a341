/**
 * Typed global rate-limit rules → every Envoy `rate_limits` action and every entry of the
 * rate-limit service's `config.yaml`, from one statement, so the gateway and the service can never
 * disagree (the way Envoy Gateway's BackendTrafficPolicy and Kuadrant's RateLimitPolicy work).
 *
 * Pure: no Pulumi runtime, no I/O. `compileGlobalLimits` validates and compiles; a problem names the
 * field path (`rules[2].path.prefix`), the value and the fix.
 *
 * How each rule becomes a descriptor (one `rate_limits` entry per rule, so a rule that yields
 * nothing drops only its own descriptor, never another rule's):
 * 1. The first action names the rule: `header_value_match` (key `ruleKey`, value = the rule's
 *    name) over every condition of the rule (the path, the header value or presence), or, when the
 *    rule has no condition, `generic_key` with the same key and value. A request that fails a
 *    condition sends nothing for that rule.
 * 2. `header.perValue`: `request_headers` (descriptor key = the header name): each distinct value
 *    its own counter. A request without the header (`skip_if_absent`) sends the rule's descriptor
 *    alone, which the config counts on the rule's own node: one shared counter at the same limit
 *    (`whenMissing` SharedCounter, the default), or a limit of 0 (Refuse); with Ignore the request
 *    sends nothing for the rule. `header.invert` counts the requests whose header is not `value`,
 *    a missing header included.
 * 3. `perClientAddress`: `remote_address` (key `remote_address`): each client address its own
 *    counter (the address Envoy trusts: the downstream peer, or the X-Forwarded-For entry chosen by
 *    Istio's `numTrustedProxies`).
 * 4. `clientCidr` (builders/client-cidr.ts): `masked_remote_address` (key `masked_remote_address`,
 *    the client's network at the CIDR's length, e.g. `10.0.0.0/8`), one `rate_limits` entry per
 *    distinct prefix length; the config has one child per CIDR (the limit on it, or with `perAddress`
 *    on a `remote_address` child under it). Addresses outside every CIDR match no entry.
 * The config nests one level per action and puts the limit (and `shadow_mode`) on the last one.
 *
 * Paths are matched WITHOUT the query string (`:path` carries it): exact `/p` and regex `r` become
 * `(?:/p)(?:\?.*)?` / `(?:r)(?:\?.*)?`, prefix `/p` becomes `/p(?:[/?].*)?` (Envoy Gateway's form;
 * a prefix ending in `/` is followed by anything). With `PathKeyMode.Literal` the path is matched
 * as written (query included), as the specification's tables do.
 */
import { ClientCidrArgs, MASKED_REMOTE_ADDRESS_KEY, checkClientCidr, cidrsOf, maskedRemoteAddressActions } from "./client-cidr";
import { UNSENDABLE_PATH, compileFullMatch, pathAsSent } from "../lib/formats";
import { Problem } from "../lib/problems";

/** Time unit of a limit (envoyproxy/ratelimit's units). */
export const LimitUnit = {
    Second: "second",
    Minute: "minute",
    Hour: "hour",
    Day: "day",
} as const;
export type LimitUnit = (typeof LimitUnit)[keyof typeof LimitUnit];

/** Seconds in one window of each limit unit (the service's fixed windows). */
export const LIMIT_UNIT_SECONDS: Readonly<Record<LimitUnit, number>> = { second: 1, minute: 60, hour: 3600, day: 86400 };

/** What a request's path is counted by. */
export const PathKeyMode = {
    /** The path without its query string (CEL `request.url_path`); route limits include the virtual host's. */
    UrlPath: "url-path",
    /** `:path` as written, query included; a route's own limits replace the virtual host's (the specification's tables). */
    Literal: "literal",
} as const;
export type PathKeyMode = (typeof PathKeyMode)[keyof typeof PathKeyMode];

/** Which paths a rule applies to: exactly one of `exact`, `prefix`, `regex`. */
export interface PathMatchArgs {
    /** The whole path, e.g. `/login` (the query string is ignored). */
    exact?: string;
    /** A path prefix, e.g. `/api` (matches `/api`, `/api/...` and `/api?...`, not `/apiv2`). */
    prefix?: string;
    /** An RE2 regular expression matched against the whole path without its query, e.g. `/items/[0-9]+`. */
    regex?: string;
}

/** What a per-value header rule does with a request that lacks the header. */
export const MissingHeader = {
    /** Every request without the header counts against one shared counter, at the rule's limit. */
    SharedCounter: "shared-counter",
    /** Every request without the header is refused (429): the rule's counter allows none. */
    Refuse: "refuse",
    /** Requests without the header are not counted by this rule (a client escapes it by leaving the header out). */
    Ignore: "ignore",
} as const;
export type MissingHeader = (typeof MissingHeader)[keyof typeof MissingHeader];

/** A request header a rule applies to. Without `value` or `perValue` the rule applies when the header is present. */
export interface HeaderMatchArgs {
    /** Header name in lower case, e.g. `x-api-key`. */
    name: string;
    /** Applies only to requests whose header has exactly this value (all of them share one counter). */
    value?: string;
    /**
     * With `value`: applies to the requests whose header does NOT have that value, requests without
     * the header included (Envoy's `invert_match` with `treat_missing_header_as_empty`). Defaults to `false`.
     */
    invert?: boolean;
    /** Each distinct value of the header gets its own counter (e.g. one per API key). Defaults to `false`. */
    perValue?: boolean;
    /**
     * With `perValue`: what happens to a request without the header. Defaults to
     * `MissingHeader.SharedCounter` (one counter for all of them, at the same limit), so leaving the
     * header out never escapes the limit.
     */
    whenMissing?: MissingHeader;
}

/** A route of the gateway's route configuration (a VirtualService `http[].name`). */
export interface RouteRefArgs {
    /** The route's name (VirtualService `http[].name`). */
    name: string;
    /** Istio's virtual host name `<host>:<port>`; one of `gateway.virtualHosts`. Defaults to each of them (every virtual host only with `gateway.allVirtualHosts`). */
    virtualHost?: string;
}

/** One global limit: what to count and how much. */
export interface RateLimitRuleArgs {
    /** Unique name; also the descriptor value the rule sends. Letters, digits, `_`, `.`, `-`. */
    name: string;
    /** Only requests whose path matches. Defaults to every path. */
    path?: PathMatchArgs;
    /** Requests with this header value or presence, all but one value (`invert`), or one counter per value (header-less requests per `whenMissing`). Defaults to none. */
    header?: HeaderMatchArgs;
    /** One counter per client address. Defaults to `false` (one counter for all clients). */
    perClientAddress?: boolean;
    /** Only clients whose address is inside a CIDR: one counter per CIDR, or per address within it (`perAddress`). Defaults to every client. */
    clientCidr?: ClientCidrArgs;
    /** Only requests on this route (the rule sits on the route). Defaults to every route of `gateway.virtualHosts`. */
    route?: RouteRefArgs;
    /** Requests allowed per `unit` (per counter). */
    requestsPerUnit: number;
    /** Time unit of the limit. */
    unit: LimitUnit;
    /** Observe only: counted (the excess in the service's `shadow_mode` statistic), never refused. Defaults to `false`. */
    shadow?: boolean;
}

/** A limit without a match. */
export interface LimitArgs {
    /** Requests allowed per `unit`. */
    requestsPerUnit: number;
    /** Time unit of the limit. */
    unit: LimitUnit;
    /** Observe only: counted (the excess in the service's `shadow_mode` statistic), never refused. Defaults to `false`. */
    shadow?: boolean;
}

/** A limit on one exact path, counted per path (see `PerPathLimitsArgs`). */
export interface PathLimitArgs {
    /** The exact path without query, e.g. `/productpage`. */
    path: string;
    /** Requests allowed per `unit`. */
    requestsPerUnit: number;
    /** Time unit of the limit. */
    unit: LimitUnit;
    /** Observe only. Defaults to `false`. */
    shadow?: boolean;
}

/**
 * Every path its own counter: the gateway sends the request's path (without query, or `:path` with
 * `PathKeyMode.Literal`) under `descriptorKey`; `paths` set limits for named paths, `eachPath` for
 * every other path.
 */
export interface PerPathLimitsArgs {
    /** Descriptor key the path is sent under. Defaults to `PATH`. */
    descriptorKey?: string;
    /** Limits of named paths. Defaults to none. */
    paths?: PathLimitArgs[];
    /** Limit of every other path, each distinct path counted apart. Defaults to none (other paths unlimited). */
    eachPath?: LimitArgs;
}

/** Everything the gateway and the service must agree on. */
export interface GlobalLimitsInput {
    rules?: RateLimitRuleArgs[];
    perPath?: PerPathLimitsArgs;
    /** Defaults to `PathKeyMode.UrlPath`. */
    pathKey?: PathKeyMode;
    /** Descriptor key of the rules' first entry. Defaults to `rule`. */
    ruleKey?: string;
}

/** A config.yaml descriptor entry of envoyproxy/ratelimit. */
export interface ConfigDescriptor {
    key: string;
    value?: string;
    rate_limit?: { unit: string; requests_per_unit: number };
    shadow_mode?: boolean;
    descriptors?: ConfigDescriptor[];
}

export interface RateLimitEntry {
    actions: Record<string, unknown>[];
}

export interface RoutePatch {
    /** `""`: any virtual host. */
    virtualHost: string;
    route: string;
    rateLimits: RateLimitEntry[];
}

export interface CompiledLimits {
    /** `rate_limits` on the gateway's virtual host(s). */
    vhostRateLimits: RateLimitEntry[];
    /** `rate_limits` on named routes (with `vh_rate_limits: INCLUDE` in url-path mode). */
    routePatches: RoutePatch[];
    /** The `descriptors` of the service's config.yaml. */
    configDescriptors: ConfigDescriptor[];
    problems: Problem[];
}

export const DEFAULT_RULE_KEY = "rule";
export const DEFAULT_PATH_KEY = "PATH";
export const REMOTE_ADDRESS_KEY = "remote_address";
export const EXPR_DESCRIPTOR_EXTENSION = "envoy.rate_limit_descriptors.expr";
export const EXPR_DESCRIPTOR_TYPE = "type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor";
/** CEL attribute: the request path without its query string (`request.path` keeps the query). */
export const URL_PATH_EXPRESSION = "request.url_path";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const HEADER_NAME = /^(:authority|:method|:scheme|[a-z0-9!#$%&'*+.^_`|~-]+)$/;
const UNITS = Object.values(LimitUnit) as string[];

/** RE2-escapes a literal. Exported for testing. */
export function escapeRe2(s: string): string {
    return s.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/** The `:path` regex of a path match (query tolerant in url-path mode). Exported for testing. */
export function pathRegex(m: PathMatchArgs, mode: PathKeyMode = PathKeyMode.UrlPath): string {
    const literal = mode === PathKeyMode.Literal;
    if (m.exact !== undefined) return literal ? escapeRe2(m.exact) : `(?:${escapeRe2(m.exact)})(?:\\?.*)?`;
    if (m.prefix !== undefined) {
        const p = escapeRe2(m.prefix);
        return m.prefix.endsWith("/") ? `${p}.*` : literal ? `${p}(?:/.*)?` : `${p}(?:[/?].*)?`;
    }
    return literal ? m.regex! : `(?:${m.regex})(?:\\?.*)?`;
}

/** The action sending the request's path as `key` (the per-path counters). */
export function pathDescriptorAction(mode: PathKeyMode, key: string = DEFAULT_PATH_KEY): Record<string, unknown> {
    if (mode === PathKeyMode.Literal) return { request_headers: { header_name: ":path", descriptor_key: key } };
    return { extension: { name: EXPR_DESCRIPTOR_EXTENSION, typed_config: { "@type": EXPR_DESCRIPTOR_TYPE, descriptor_key: key, text: URL_PATH_EXPRESSION } } };
}

export function limitOf(l: { requestsPerUnit: number; unit: LimitUnit; shadow?: boolean }): Pick<ConfigDescriptor, "rate_limit" | "shadow_mode"> {
    return { rate_limit: { unit: l.unit, requests_per_unit: l.requestsPerUnit }, ...(l.shadow ? { shadow_mode: true } : {}) };
}

/** The most requests per unit the rate-limit service can count: its `requests_per_unit` is a uint32 (envoyproxy/ratelimit config). */
export const MAX_REQUESTS_PER_UNIT = 4_294_967_295;

/** The problem of a limit over the service's uint32, for the field `key` (shared with the stack's limit keys). */
export function overUint32Problem(key: string, value: number): Problem {
    return {
        key,
        value,
        problem: `is more than the rate-limit service can count: its requests_per_unit is a 32-bit unsigned number (at most ${MAX_REQUESTS_PER_UNIT}), and a config.yaml with more does not load`,
        fix: `give at most ${MAX_REQUESTS_PER_UNIT}, or the same rate in a shorter unit`,
    };
}

function checkLimit(field: string, l: any, problems: Problem[]): void {
    if (!Number.isSafeInteger(l?.requestsPerUnit) || l.requestsPerUnit < 1) {
        problems.push({
            key: `${field}.requestsPerUnit`,
            value: l?.requestsPerUnit,
            problem: "must be a whole number of at least 1",
            fix: "set requestsPerUnit to e.g. 100",
        });
    } else if (l.requestsPerUnit > MAX_REQUESTS_PER_UNIT) problems.push(overUint32Problem(`${field}.requestsPerUnit`, l.requestsPerUnit));
    if (!UNITS.includes(l?.unit)) {
        problems.push({
            key: `${field}.unit`,
            value: l?.unit,
            problem: `must be one of ${UNITS.join(", ")}`,
            fix: 'use LimitUnit.Minute ("minute") or another LimitUnit',
        });
    }
    if (l?.shadow !== undefined && typeof l.shadow !== "boolean") {
        problems.push({ key: `${field}.shadow`, value: l.shadow, problem: "must be true or false", fix: "set shadow to true (observe only) or false" });
    }
}

function checkPath(field: string, p: unknown, problems: Problem[]): void {
    if (typeof p !== "string" || !p.startsWith("/") || /[\s?#]/.test(p)) {
        problems.push({
            key: field,
            value: p,
            problem: "must be a path starting with '/', without spaces, query or fragment",
            fix: `use e.g. "/${
                String(p ?? "")
                    .replace(/^\/*/, "")
                    .split(/[?#\s]/)[0]
            }"`,
        });
    } else if (pathAsSent(p) !== p) problems.push({ key: field, value: p, problem: UNSENDABLE_PATH, fix: `use "${pathAsSent(p)}"` });
}

/** The rule's name: a valid descriptor value, not used by another rule (`names` collects them). */
function checkRuleName(at: string, r: any, i: number, names: Set<string>, problems: Problem[]): void {
    if (typeof r.name !== "string" || !NAME.test(r.name)) {
        problems.push({
            key: `${at}.name`,
            value: r.name,
            problem: "must be a non-empty name of letters, digits, '_', '.', '-' (it is the descriptor value)",
            fix: `name it e.g. "rule-${i}"`,
        });
    } else if (names.has(r.name)) {
        problems.push({
            key: `${at}.name`,
            value: r.name,
            problem: "is used by another rule; the service would merge their counters",
            fix: "give every rule a distinct name",
        });
    } else names.add(r.name);
}

/** The rule's `path`: exactly one of exact, prefix, regex, and that one valid. */
function checkRulePath(at: string, path: any, problems: Problem[]): void {
    const kinds = ["exact", "prefix", "regex"].filter((k) => path?.[k] !== undefined);
    if (kinds.length !== 1) {
        problems.push({
            key: `${at}.path`,
            value: path,
            problem: `needs exactly one of exact, prefix, regex (has ${kinds.length ? kinds.join(", ") : "none"})`,
            fix: "keep one of them",
        });
    } else if (kinds[0] === "regex") {
        try {
            if (typeof path.regex !== "string" || path.regex === "") throw new Error("empty");
            compileFullMatch(path.regex);
        } catch (e) {
            problems.push({
                key: `${at}.path.regex`,
                value: path.regex,
                problem: `is not a valid RE2 regular expression (${(e as Error).message})`,
                fix: 'write an RE2 expression matching the whole path, e.g. "/items/[0-9]+"',
            });
        }
    } else {
        checkPath(`${at}.path.${kinds[0]}`, path[kinds[0]], problems);
    }
}

/** The header's name (not `:path`, a lower-case HTTP header name) and value (non-empty when given). */
function checkHeaderNameAndValue(at: string, h: any, problems: Problem[]): void {
    if (h?.name === ":path") {
        problems.push({
            key: `${at}.header.name`,
            value: h.name,
            problem: "':path' carries the query string",
            fix: "match the path with the rule's `path` field instead",
        });
    } else if (typeof h?.name !== "string" || !HEADER_NAME.test(h.name)) {
        const fixed = typeof h?.name === "string" ? h.name.toLowerCase().trim() : "x-api-key";
        problems.push({
            key: `${at}.header.name`,
            value: h?.name,
            problem: "must be a lower-case HTTP header name",
            fix: `use "${HEADER_NAME.test(fixed) ? fixed : "x-api-key"}"`,
        });
    }
    if (h?.value !== undefined && (typeof h.value !== "string" || h.value === "")) {
        problems.push({
            key: `${at}.header.value`,
            value: h.value,
            problem: "must be a non-empty string",
            fix: "omit value to match on presence, or give the exact value",
        });
    }
}

/** The header's `invert`, `whenMissing` and `perValue`, alone and with each other and `value`. */
function checkHeaderOptions(at: string, h: any, problems: Problem[]): void {
    if (h?.invert !== undefined && typeof h.invert !== "boolean") {
        problems.push({ key: `${at}.header.invert`, value: h.invert, problem: "must be true or false", fix: "set invert to true or false" });
    } else if (h?.invert && h?.value === undefined) {
        problems.push({
            key: `${at}.header.invert`,
            value: true,
            problem: "needs header.value (it counts the requests whose header is not that value)",
            fix: "give header.value, or remove invert",
        });
    }
    if (h?.whenMissing !== undefined && !(Object.values(MissingHeader) as string[]).includes(h.whenMissing)) {
        problems.push({
            key: `${at}.header.whenMissing`,
            value: h.whenMissing,
            problem: `must be one of ${Object.values(MissingHeader).join(", ")}`,
            fix: "use MissingHeader.SharedCounter",
        });
    } else if (h?.whenMissing !== undefined && !h?.perValue) {
        problems.push({
            key: `${at}.header.whenMissing`,
            value: h.whenMissing,
            problem: "applies only with header.perValue",
            fix: "remove whenMissing, or set perValue to true",
        });
    }
    if (h?.value !== undefined && h?.perValue) {
        problems.push({
            key: `${at}.header.perValue`,
            value: true,
            problem: "cannot be combined with header.value (one fixed value has one counter)",
            fix: "remove value, or set perValue to false",
        });
    }
}

/** `perClientAddress` and `clientCidr`, and what neither combines with. */
function checkRuleClient(at: string, r: any, problems: Problem[]): void {
    if (r.perClientAddress !== undefined && typeof r.perClientAddress !== "boolean") {
        problems.push({
            key: `${at}.perClientAddress`,
            value: r.perClientAddress,
            problem: "must be true or false",
            fix: "set perClientAddress to true or false",
        });
    }
    if (r.clientCidr === undefined) return;
    checkClientCidr(`${at}.clientCidr`, r.clientCidr, problems);
    if (r.perClientAddress === true) {
        problems.push({
            key: `${at}.perClientAddress`,
            value: true,
            problem: "cannot be combined with clientCidr",
            fix: "remove perClientAddress and set clientCidr.perAddress: true (one counter per address within the CIDRs)",
        });
    }
    if (r.header?.perValue === true) {
        problems.push({
            key: `${at}.header.perValue`,
            value: true,
            problem: "cannot be combined with clientCidr",
            fix: "make two rules: one per header value, one with clientCidr",
        });
    }
}

/** Checks rule `i` (every problem, field paths under `rules[i]`); true when it has none. */
function validateRule(r: any, i: number, names: Set<string>, problems: Problem[]): boolean {
    const at = `rules[${i}]`;
    const before = problems.length;
    if (typeof r !== "object" || r === null) {
        problems.push({ key: at, value: r, problem: "must be an object", fix: "give { name, requestsPerUnit, unit, ... }" });
        return false;
    }
    checkRuleName(at, r, i, names, problems);
    if (r.path !== undefined) checkRulePath(at, r.path, problems);
    if (r.header !== undefined) {
        checkHeaderNameAndValue(at, r.header, problems);
        checkHeaderOptions(at, r.header, problems);
    }
    checkRuleClient(at, r, problems);
    if (r.route !== undefined && (typeof r.route?.name !== "string" || r.route.name === "")) {
        problems.push({
            key: `${at}.route.name`,
            value: r.route?.name,
            problem: "must name a route (VirtualService http[].name)",
            fix: "set route.name to the route's name, or remove route",
        });
    }
    checkLimit(at, r, problems);
    return problems.length === before;
}

/** The `rate_limits` entries of a rule: one, or with `clientCidr` one per distinct prefix length. */
export function ruleEntries(r: RateLimitRuleArgs, mode: PathKeyMode, key: string): RateLimitEntry[] {
    const actions = ruleActions(r, mode, key);
    if (!r.clientCidr) return [{ actions }];
    const tail = r.clientCidr.perAddress ? [{ remote_address: {} }] : [];
    return maskedRemoteAddressActions(r.clientCidr).map((masked) => ({ actions: [...actions, masked, ...tail] }));
}

function ruleActions(r: RateLimitRuleArgs, mode: PathKeyMode, key: string): Record<string, unknown>[] {
    const conditions: Record<string, unknown>[] = [];
    if (r.path) conditions.push({ name: ":path", safe_regex_match: { google_re2: {}, regex: pathRegex(r.path, mode) } });
    if (r.header && r.header.value !== undefined) {
        conditions.push({
            name: r.header.name,
            string_match: { exact: r.header.value },
            // A missing header is compared as "": inverted, it counts too.
            ...(r.header.invert ? { invert_match: true, treat_missing_header_as_empty: true } : {}),
        });
    } else if (r.header && !r.header.perValue) conditions.push({ name: r.header.name, present_match: true });
    const actions: Record<string, unknown>[] = [
        conditions.length
            ? { header_value_match: { descriptor_key: key, descriptor_value: r.name, headers: conditions } }
            : { generic_key: { descriptor_key: key, descriptor_value: r.name } },
    ];
    if (r.header?.perValue) {
        // Without the header, the entry is left out (skip_if_absent) and the request still sends the
        // rule's descriptor, which the config counts in the rule's own (shared or refusing) counter.
        const counted = missingOf(r) !== MissingHeader.Ignore;
        actions.push({ request_headers: { header_name: r.header.name, descriptor_key: r.header.name, ...(counted ? { skip_if_absent: true } : {}) } });
    }
    if (r.perClientAddress) actions.push({ remote_address: {} });
    return actions;
}

function missingOf(r: RateLimitRuleArgs): MissingHeader {
    return r.header?.whenMissing ?? MissingHeader.SharedCounter;
}

export function ruleConfig(r: RateLimitRuleArgs, key: string): ConfigDescriptor {
    if (r.clientCidr) {
        const perAddress = r.clientCidr.perAddress === true;
        const children = cidrsOf(r.clientCidr).map((c) =>
            perAddress
                ? { key: MASKED_REMOTE_ADDRESS_KEY, value: c.text, descriptors: [{ key: REMOTE_ADDRESS_KEY, ...limitOf(r) }] }
                : { key: MASKED_REMOTE_ADDRESS_KEY, value: c.text, ...limitOf(r) },
        );
        return { key, value: r.name, descriptors: children };
    }
    const keys = [...(r.header?.perValue ? [r.header.name] : []), ...(r.perClientAddress ? [REMOTE_ADDRESS_KEY] : [])];
    let leaf: ConfigDescriptor | undefined;
    for (const k of [...keys].reverse()) leaf = leaf ? { key: k, descriptors: [leaf] } : { key: k, ...limitOf(r) };
    if (!leaf) return { key, value: r.name, ...limitOf(r) };
    const missing = r.header?.perValue ? missingOf(r) : MissingHeader.Ignore;
    if (missing === MissingHeader.Ignore) return { key, value: r.name, descriptors: [leaf] };
    // A request without the header sends the rule's entry (and its client address) only: the counter
    // for all of them sits on the rule's node (or beside the header's, per client address).
    const missingLimit = missing === MissingHeader.Refuse ? { ...limitOf(r), rate_limit: { unit: r.unit, requests_per_unit: 0 } } : limitOf(r);
    if (r.perClientAddress) return { key, value: r.name, descriptors: [leaf, { key: REMOTE_ADDRESS_KEY, ...missingLimit }] };
    return { key, value: r.name, ...missingLimit, descriptors: [leaf] };
}

/** Validates and compiles the limits. Problems are returned, never thrown. */
export function compileGlobalLimits(input: GlobalLimitsInput): CompiledLimits {
    const problems: Problem[] = [];
    const mode = input.pathKey ?? PathKeyMode.UrlPath;
    if (!(Object.values(PathKeyMode) as string[]).includes(mode)) {
        problems.push({
            key: "pathKey",
            value: mode,
            problem: `must be one of ${Object.values(PathKeyMode).join(", ")}`,
            fix: 'use PathKeyMode.UrlPath ("url-path")',
        });
    }
    const ruleKey = input.ruleKey ?? DEFAULT_RULE_KEY;
    if (typeof ruleKey !== "string" || !NAME.test(ruleKey)) {
        problems.push({
            key: "ruleKey",
            value: ruleKey,
            problem: "must be a non-empty descriptor key of letters, digits, '_', '.', '-'",
            fix: `use "${DEFAULT_RULE_KEY}"`,
        });
    }
    const rules = input.rules ?? [];
    if (!Array.isArray(rules))
        problems.push({ key: "rules", value: rules, problem: "must be a list of rules", fix: "give [] or a list of { name, requestsPerUnit, unit, ... }" });
    const names = new Set<string>();
    const valid = (Array.isArray(rules) ? rules : []).filter((r, i) => validateRule(r, i, names, problems));

    const perPath = input.perPath;
    const pathKey = perPath?.descriptorKey ?? DEFAULT_PATH_KEY;
    if (perPath) checkPerPath(perPath, pathKey, problems);
    if (perPath && pathKey === ruleKey) {
        // Rule names cannot start with '/', paths always do: the values never collide, but the
        // per-path catch-all would also count a rule's descriptor value. Keep them apart unless needed.
        for (const r of valid)
            if (r.header?.perValue || r.perClientAddress || r.clientCidr) {
                problems.push({
                    key: "ruleKey",
                    value: ruleKey,
                    problem: `equals perPath.descriptorKey, so rule '${r.name}' (nested descriptors) would share the key with the per-path counters`,
                    fix: `use a different ruleKey, e.g. "${DEFAULT_RULE_KEY}"`,
                });
                break;
            }
    }

    const { vhostRateLimits, routePatches } = gatewayRateLimits(valid, mode, ruleKey, perPath ? pathKey : undefined);
    const configDescriptors: ConfigDescriptor[] = [
        // A null entry is a problem above; it must not crash the compile (every problem is reported at once).
        ...(perPath?.paths ?? []).filter((p) => typeof p === "object" && p !== null).map((p) => ({ key: pathKey, value: p.path, ...limitOf(p) })),
        ...valid.map((r) => ruleConfig(r, ruleKey)),
        ...(perPath?.eachPath ? [{ key: pathKey, ...limitOf(perPath.eachPath) }] : []),
    ];
    return { vhostRateLimits, routePatches, configDescriptors, problems };
}

/** The per-path limits: a valid descriptor key, each path once and checked, at least one limit. */
function checkPerPath(perPath: PerPathLimitsArgs, pathKey: string, problems: Problem[]): void {
    if (typeof pathKey !== "string" || !NAME.test(pathKey)) {
        problems.push({ key: "perPath.descriptorKey", value: pathKey, problem: "must be a non-empty descriptor key", fix: `use "${DEFAULT_PATH_KEY}"` });
    }
    const seen = new Set<string>();
    (perPath.paths ?? []).forEach((p, i) => {
        checkPath(`perPath.paths[${i}].path`, p?.path, problems);
        if (seen.has(p?.path))
            problems.push({
                key: `perPath.paths[${i}].path`,
                value: p.path,
                problem: "appears twice; the service rejects duplicate descriptors",
                fix: "remove one of the two entries",
            });
        seen.add(p?.path);
        checkLimit(`perPath.paths[${i}]`, p, problems);
    });
    if (perPath.eachPath) checkLimit("perPath.eachPath", perPath.eachPath, problems);
    if (!perPath.eachPath && !(perPath.paths ?? []).length) {
        problems.push({
            key: "perPath",
            value: perPath,
            problem: "limits nothing (no paths and no eachPath)",
            fix: "give paths and/or eachPath, or remove perPath",
        });
    }
}

/**
 * The gateway's `rate_limits`: the per-path action first (when `pathKey` is given: there are
 * per-path limits), then each rule's entries on the virtual host, or on its named route.
 */
function gatewayRateLimits(
    valid: RateLimitRuleArgs[],
    mode: PathKeyMode,
    ruleKey: string,
    pathKey: string | undefined,
): Pick<CompiledLimits, "vhostRateLimits" | "routePatches"> {
    const vhostRateLimits: RateLimitEntry[] = [];
    const routePatches: RoutePatch[] = [];
    if (pathKey !== undefined) vhostRateLimits.push({ actions: [pathDescriptorAction(mode, pathKey)] });
    for (const r of valid) {
        const entries = ruleEntries(r, mode, ruleKey);
        if (!r.route) {
            vhostRateLimits.push(...entries);
            continue;
        }
        const vh = r.route.virtualHost ?? "";
        let patch = routePatches.find((p) => p.virtualHost === vh && p.route === r.route!.name);
        if (!patch) routePatches.push((patch = { virtualHost: vh, route: r.route.name, rateLimits: [] }));
        patch.rateLimits.push(...entries);
    }
    return { vhostRateLimits, routePatches };
}
