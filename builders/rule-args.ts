/**
 * The typed global rate-limit rules: what a rule matches (path, header, client address, CIDR,
 * route), its limit and unit, and the per-path limits. Types and const enums only; Pulumi's schema
 * analyzer reads the enums as enums.
 */
import { ClientCidrArgs } from "./client-cidr";

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

/** What a per-value header (or query parameter) rule does with a request that lacks the header (or parameter). */
export const MissingHeader = {
    /** Every request without the header (parameter) counts against one shared counter, at the rule's limit. */
    SharedCounter: "shared-counter",
    /** Every request without the header (parameter) is refused (429): the rule's counter allows none. */
    Refuse: "refuse",
    /** Requests without the header (parameter) are not counted by this rule (a client escapes it by leaving it out). */
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
    /**
     * Each distinct value of the header gets its own counter (e.g. one per API key). Defaults to
     * `false`. A value that is not valid UTF-8 is never sent to the rate-limit service (it would
     * refuse the whole call): such requests share one counter at the rule's limit (none with
     * `whenMissing: MissingHeader.Refuse`).
     */
    perValue?: boolean;
    /**
     * With `perValue`: what happens to a request without the header. Defaults to
     * `MissingHeader.SharedCounter` (one counter for all of them, at the same limit), so leaving the
     * header out never escapes the limit.
     */
    whenMissing?: MissingHeader;
}

/**
 * A query parameter a rule applies to, matched in the request's `:path` as a client may write it:
 * each character of the name and value literal or percent-encoded in either case (`%74ier`,
 * `fr%65e`), a space as `+` or `%20`, a `+` as `+` or `%2B` (form decoding and plain percent
 * decoding disagree on `+`: both readings count). The parameter may appear anywhere in the query,
 * and when it is repeated
 * (`?tier=gold&tier=free`) the rule applies if any occurrence matches, so a client cannot hide a
 * value behind another one. Without `value` the rule applies when the parameter is present.
 */
export interface QueryMatchArgs {
    /** The parameter's name as the application reads it (decoded), e.g. `tier`. */
    name: string;
    /** Applies only when the parameter has exactly this (decoded) value, e.g. `free`. Defaults to any value (presence). */
    value?: string;
    /**
     * Each distinct (decoded) value of the parameter gets its own counter, e.g. one per `api_key`.
     * Defaults to `false`. The gateway reads the parameter as Envoy does: the first occurrence whose
     * percent-decoded name is exactly `name`, its value percent-decoded (`+` kept as `+`). A request
     * another reader could see differently counts against ONE shared counter at the rule's limit
     * (none with `whenMissing: MissingHeader.Refuse`), never against a counter of its own: the
     * parameter given twice in any spelling (`?key=new&KEY=mine`, `?key=new;key=mine`), or a value
     * holding `;` or a literal `+` (`?key=mine;x=1`, `?key=a+b`: write `%2B` for a plus, `%20` for a
     * space). So a client cannot mint fresh counters by putting a new value where the application
     * does not read it. So does a value with a percent-encoded byte above 0x7F (`%FF`, `%C3%A9`):
     * decoded it may not be valid UTF-8, which the rate-limit service refuses for the whole call.
     */
    perValue?: boolean;
    /**
     * With `perValue`: what happens to a request without the parameter (under that exact name).
     * Defaults to `MissingHeader.SharedCounter`: one counter for all of them, at the rule's limit.
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
    /**
     * Only requests with one of these methods, e.g. `["POST", "PUT"]`. Matched without regard to
     * case (`post` is counted as `POST`: HTTP/1 lets a client send either, and an application that
     * reads it case-insensitively must not let `post` escape a `POST` limit). Defaults to every method.
     */
    methods?: string[];
    /** Only requests whose query has this parameter (or this value of it), or one counter per value of it (`perValue`). Defaults to none. */
    query?: QueryMatchArgs;
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
    /**
     * `false` keeps this rule out of the `X-RateLimit-*` response headers and the published
     * `RateLimit-Policy` (a limit that must stay hidden, such as a guard against floods); `true`
     * shows it even when the filter's `rateLimitHeaders` is `RateLimitHeaders.Off`. Defaults to
     * the filter's setting, and to `false` for a `shadow` rule (clients are not told of a limit
     * that never refuses; when it is a request's tightest, that response carries no X-RateLimit
     * headers). Needs the Envoy of Istio 1.30 or later (a rate-limit entry's `x_ratelimit_option`).
     */
    rateLimitHeaders?: boolean;
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
    /** The rate-limit filter adds X-RateLimit headers (a rule's `rateLimitHeaders` is written only where it differs). Defaults to `true`. */
    headersOn?: boolean;
}

/** The descriptor key of a rule's name (`rule=<name>`), unless `ruleKey` says otherwise. */
export const DEFAULT_RULE_KEY = "rule";
/** The descriptor key of a client address (`perClientAddress`, `clientCidr.perAddress`). */
export const REMOTE_ADDRESS_KEY = "remote_address";
/** The descriptor key of a per-value query parameter's value. */
export const QUERY_VALUE_KEY = "query_value";
/** The descriptor entry of the requests whose per-value header or parameter is not sent as a value (one shared counter). */
export const UNTRUSTED_VALUE_KEY = "untrusted_value";
export const UNTRUSTED_VALUE_VALUE = "shared";
/** The descriptor key the per-path limits send the path under (the specification's `PATH`), unless `perPath.descriptorKey` says otherwise. */
export const DEFAULT_PATH_KEY = "PATH";
