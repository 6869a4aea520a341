/**
 * The typed global rate-limit rules: what a rule matches (path, header, client address, CIDR,
 * route), its limit and unit, and the per-path limits. Types and const enums only; Pulumi's schema
 * analyzer reads the enums as enums. The argument interfaces are generated (builders/rule-types-args.generated.ts,
 * from components/rules/rule-fields.ts) and exported again here.
 */
import { ResolvedIdentity } from "./identity-args";
import { ResolvedRequestCost } from "./request-cost-args";
import { ClientPrefixArgs } from "./client-prefix-args.generated";
import {
    HeaderMatchArgs,
    LimitArgs,
    PathLimitArgs,
    PathMatchArgs,
    PerPathLimitsArgs,
    QueryMatchArgs,
    RateLimitRuleArgs,
    RouteRefArgs,
} from "./rule-types-args.generated";
import { LIMIT_UNIT_SECONDS, LimitUnit, MissingHeader, PathKeyMode, PathSpellings, ValueCharset } from "./rule-choices";

export { LIMIT_UNIT_SECONDS, LimitUnit, MissingHeader, PathKeyMode, PathSpellings, ValueCharset };

/**
 * The longest per-value header or query value that gets a counter of its own, in bytes as the
 * request carries it (a query value percent-encoded); longer ones go to the rule's guard counter.
 * Bytes, not characters: they bound the service's counter key exactly, and RE2 counts a byte with
 * one instruction (a character of any script takes some twenty).
 */
export const MAX_VALUE_BYTES = 256;

/**
 * A limit as every builder reads it, resolved once from the user's limit (components/rules/rule-checks.ts
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
