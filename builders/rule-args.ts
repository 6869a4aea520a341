/**
 * The typed global rate-limit rules: what a rule matches (path, header, client address, CIDR,
 * route), its limit and unit, and the per-path limits. Types and const enums only; Pulumi's schema
 * analyzer reads the enums as enums. The argument interfaces are generated (builders/rule-types-args.ts,
 * from components/rule-fields.ts) and exported again here.
 */
import { ResolvedIdentity } from "./identity-args";
import { ResolvedRequestCost } from "./request-cost-args";
import { ClientPrefixArgs } from "./client-prefix-args";
import {
    HeaderMatchArgs,
    LimitArgs,
    PathLimitArgs,
    PathMatchArgs,
    PerPathLimitsArgs,
    QueryMatchArgs,
    RateLimitRuleArgs,
    RouteRefArgs,
} from "./rule-types-args";

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

export { ClientPrefixArgs, HeaderMatchArgs, LimitArgs, PathLimitArgs, PathMatchArgs, PerPathLimitsArgs, QueryMatchArgs, RateLimitRuleArgs, RouteRefArgs };

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
