/**
 * The choices a rule's fields take (a limit's unit and its window in seconds, the path key, what a
 * per-value rule does without its value, which characters a value may hold): const enums Pulumi's
 * schema analyzer reads as enums. Their own file: the generated rule types and builders/rule-args.ts
 * both import them. Pure.
 */

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

/** Which spellings of its path a path rule (`exact`, `prefix`) counts. */
export const PathSpellings = {
    /**
     * Every spelling the gateway passes on that common backends route to the same handler: any ASCII
     * letter case, `;` parameters after a segment, repeated or trailing slashes, a `.` suffix, each
     * character literal or percent-encoded.
     */
    Equivalent: "equivalent",
    /** The path as written only (after the gateway's own normalization): `/LOGIN` is not `/login`. */
    Exact: "exact",
} as const;
export type PathSpellings = (typeof PathSpellings)[keyof typeof PathSpellings];
