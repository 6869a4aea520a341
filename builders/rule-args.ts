/**
 * The typed global rate-limit rules: what a rule matches (path, header, client address, CIDR,
 * route), its limit and unit, and the per-path limits. Types and const enums only; Pulumi's schema
 * analyzer reads the enums as enums.
 */
import { ClientCidrArgs } from "./client-cidr";
import { IdentityArgs, ResolvedIdentity } from "./identity-args";
import { RequestCostArgs, ResolvedRequestCost } from "./request-cost-args";
import { ClientPrefixArgs } from "./client-prefix-args";

/** Time unit of a limit (envoyproxy/ratelimit's units). */
export const LimitUnit = {
    Second: "second",
    Minute: "minute",
    Hour: "hour",
    Day: "day",
    /** 7 days (604,800 s), windows aligned to the Unix epoch (they start on a Thursday, 00:00 UTC). */
    Week: "week",
    /** 30 days (2,592,000 s), windows aligned to the Unix epoch: not a calendar month. */
    Month: "month",
    /** 365 days (31,536,000 s), windows aligned to the Unix epoch: not a calendar year (leap days drift it). */
    Year: "year",
} as const;
export type LimitUnit = (typeof LimitUnit)[keyof typeof LimitUnit];

/** Seconds in one window of each limit unit (the service's fixed windows). */
export const LIMIT_UNIT_SECONDS: Readonly<Record<LimitUnit, number>> = {
    second: 1,
    minute: 60,
    hour: 3600,
    day: 86400,
    week: 604_800,
    month: 2_592_000,
    year: 31_536_000,
};

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

/** Which characters a per-value header or query value may hold to get a counter of its own. */
export const ValueCharset = {
    /** Any Unicode text the service can read (valid UTF-8), without control characters (U+0000-U+001F, U+007F-U+009F). */
    Utf8: "utf-8",
    /** Printable ASCII only (U+0020-U+007E), for credential-like keys (API keys, tokens): any other value goes to the guard. */
    PrintableAscii: "printable-ascii",
} as const;
export type ValueCharset = (typeof ValueCharset)[keyof typeof ValueCharset];

/**
 * The longest per-value header or query value that gets a counter of its own, in bytes as the
 * request carries it (a query value percent-encoded); longer ones go to the rule's guard counter.
 * Bytes, not characters: they bound the service's counter key exactly, and RE2 counts a byte with
 * one instruction (a character of any script takes some twenty).
 */
export const MAX_VALUE_BYTES = 256;

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
     * `false`. Only a value the service can read and no reader sees differently is sent: valid
     * UTF-8, given once and without a comma, at most 256 bytes, without control characters
     * (and only printable ASCII with `valueCharset: ValueCharset.PrintableAscii`); and only when the
     * request carries no spelling of the name with `_` for `-` (`x_api_key` for `x-api-key`: CGI,
     * WSGI and nginx read both as one name). Every other request counts on the rule's guard
     * counter, kept per client (`clientPrefix`), at the rule's limit (none with
     * `whenMissing: MissingHeader.Refuse`). The name may hold at most 4 hyphens.
     */
    perValue?: boolean;
    /** With `perValue`: the characters a value may hold to get its own counter. Defaults to `ValueCharset.Utf8`. */
    valueCharset?: ValueCharset;
    /**
     * With `perValue`: what happens to a request without the header. Defaults to
     * `MissingHeader.SharedCounter` (one counter per client for all of them, at the same limit), so
     * leaving the header out never escapes the limit.
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
     * percent-decoded name is exactly `name`, its value percent-decoded (`+` kept as `+`). A value
     * gets its own counter when it is given once, under exactly that name, its decoded text valid
     * UTF-8 (`caf%C3%A9` is `café`) without control characters, at most 256 bytes as written
     * (`%C3%A9` is 6; characters other than printable ASCII percent-encoded), and (with `valueCharset: ValueCharset.PrintableAscii`)
     * printable ASCII. Every other request counts on the rule's guard counter, kept per client
     * (`clientPrefix`), at the rule's limit (none with `whenMissing: MissingHeader.Refuse`):
     * the parameter given twice in any spelling (`?key=new&KEY=mine`, `?key=new;key=mine`), under
     * another spelling only (`?KEY=mine`), a value holding `;`, an encoded `&` or `;`, or an encoded
     * space `%20` (a form reader takes a literal `+` for a space: `+` is sent as written, so `%20`
     * would be a second counter for the same value). So a client cannot mint fresh counters by
     * putting a new value where the application does not read it.
     */
    perValue?: boolean;
    /** With `perValue`: the characters a (decoded) value may hold to get its own counter. Defaults to `ValueCharset.Utf8`. */
    valueCharset?: ValueCharset;
    /**
     * With `perValue`: what happens to a request without the parameter (in any spelling of its name).
     * Defaults to `MissingHeader.SharedCounter`: one counter per client for all of them, at the rule's limit.
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
    /**
     * One counter per verified identity: the gateway verifies the request's JSON Web Token (an Istio
     * `RequestAuthentication` on its pods, rendered by the component) and the rule counts by the
     * token's claim, read from what the token check wrote (no header a client could send), e.g.
     * `{ jwt: { issuer, jwksUri, claim: "sub" } }`. A request without a verified token is counted
     * per client or refused (`missing`). Not with `header.perValue`, `query.perValue`,
     * `perClientAddress` or `clientCidr`. Defaults to none.
     */
    identity?: IdentityArgs;
    /** One counter per client: per address prefix (`clientPrefix`: /32 for IPv4, /64 for IPv6 by default). Defaults to `false` (one counter for all clients). */
    perClientAddress?: boolean;
    /** Only clients whose address is inside a CIDR: one counter per CIDR, or per address within it (`perAddress`). Defaults to every client. */
    clientCidr?: ClientCidrArgs;
    /** Only requests on this route (the rule sits on the route). Defaults to every route of `gateway.virtualHosts`. */
    route?: RouteRefArgs;
    /** Requests allowed per `unit` (per counter); with `cost`, the budget per `unit` in cost units. */
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
    /**
     * What one request takes from the budget: a fixed number, a request header's value, or a
     * response header's value counted when the response is done (builders/request-cost-args.ts).
     * Needs `FilterLayout.PerInstance` (Envoy reads a cost only from a filter's own descriptors).
     * Defaults to 1 per request.
     */
    cost?: RequestCostArgs;
    /**
     * A per-value rule on a value any client writes (`header.perValue`, `query.perValue`) with a
     * window of an hour or longer is refused at preview unless its store is sized for it
     * (`perValueStore.newValuesPerSecond` or a `maxMemory`): a flood of new values can make the
     * store evict a counter and so give its budget back (docs/security.md). `true` accepts that
     * risk for this rule (the preview still prints what a reset costs an attacker). Only on a
     * per-value rule. Defaults to `false`.
     */
    acceptEvictionRisk?: boolean;
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

/**
 * A limit as every builder reads it, resolved once from the user's limit (components/rule-checks.ts
 * `resolveLimit`, after its checks): how many requests (or, with a rule's `cost`, cost units) each
 * counter allows per window, the unit and its window in seconds, and whether it only observes.
 */
export interface ResolvedLimit {
    /** Requests (cost units with a rule's `cost`) allowed per window; the service's `requests_per_unit`. */
    readonly requests: number;
    readonly unit: LimitUnit;
    /** The window of `unit` in seconds (`LIMIT_UNIT_SECONDS`). */
    readonly seconds: number;
    /** Counted, never refused (the service's `shadow_mode`). */
    readonly shadow: boolean;
}

/**
 * A checked rule as the builders read it: its match fields as given, its limit a `ResolvedLimit`,
 * its `identity` and `cost` resolved, its header's or parameter's `whenMissing` and `valueCharset` filled in
 * (read only with `perValue`), whether its headers are shown, and its route's virtual host.
 */
export type ResolvedRule = Omit<RateLimitRuleArgs, keyof LimitArgs | "identity" | "cost" | "header" | "query" | "rateLimitHeaders" | "route"> &
    ResolvedLimit & {
        /** The rule's route; `virtualHost` `""` (every virtual host) when not given. */
        readonly route?: { readonly name: string; readonly virtualHost: string };
        /** The rule's limit shows in the X-RateLimit headers and `RateLimit-Policy`: its own `rateLimitHeaders`, else the filter's (a shadow rule: hidden). */
        readonly rateLimitHeaders: boolean;
        readonly header?: Readonly<HeaderMatchArgs> & { readonly whenMissing: MissingHeader; readonly valueCharset: ValueCharset };
        readonly query?: Readonly<QueryMatchArgs> & { readonly whenMissing: MissingHeader; readonly valueCharset: ValueCharset };
        readonly identity?: ResolvedIdentity;
        readonly cost?: ResolvedRequestCost;
    };

/** A checked named path with its limit resolved. */
export type ResolvedPathLimit = ResolvedLimit & { readonly path: string };

/** The checked per-path limits: the descriptor key the paths are sent under, the named paths' limits and every other path's. */
export interface ResolvedPerPath {
    key: string;
    paths: ResolvedPathLimit[];
    eachPath?: ResolvedLimit;
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

export { ClientPrefixArgs };

/** Everything the gateway and the service must agree on. */
export interface GlobalLimitsInput {
    rules?: RateLimitRuleArgs[];
    perPath?: PerPathLimitsArgs;
    /** Defaults to `PathKeyMode.UrlPath`. */
    pathKey?: PathKeyMode;
    /** Descriptor key of the rules' first entry. Defaults to `rule`. */
    ruleKey?: string;
    /** Defaults to `{ v4: 32, v6: 64 }`. */
    clientPrefix?: ClientPrefixArgs;
    /** The rate-limit filter adds X-RateLimit headers (a rule's `rateLimitHeaders` is written only where it differs). Defaults to `true`. */
    headersOn?: boolean;
}

/** The descriptor key of a rule's name (`rule=<name>`), unless `ruleKey` says otherwise. */
export const DEFAULT_RULE_KEY = "rule";
/** The descriptor key of Envoy's `remote_address` action (a client's full address; the rules key clients by prefix instead). */
export const REMOTE_ADDRESS_KEY = "remote_address";
/** The descriptor key of Envoy's `masked_remote_address` action: every per-client counter (`<network>/<length>`). */
export const CLIENT_KEY = "masked_remote_address";
/** The descriptor key of a per-value query parameter's value. */
export const QUERY_VALUE_KEY = "query_value";
/** The descriptor entry of the requests whose per-value header or parameter is not sent as a value (one shared counter). */
export const UNTRUSTED_VALUE_KEY = "untrusted_value";
export const UNTRUSTED_VALUE_VALUE = "shared";
/** The descriptor entry of the requests without a per-value rule's header or parameter (`whenMissing: SharedCounter` or `Refuse`). */
export const MISSING_VALUE_KEY = "missing_value";
export const MISSING_VALUE_VALUE = "shared";
/** The descriptor key the per-path limits send the path under (the specification's `PATH`), unless `perPath.descriptorKey` says otherwise. */
export const DEFAULT_PATH_KEY = "PATH";
