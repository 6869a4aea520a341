/**
 * The fields of the typed global rate-limit rules (GlobalRateLimit's and PlatformRateLimit's `rules`,
 * `perPath`): what a rule matches, its limit and the per-path limits, each declared once
 * (lib/field-decl.ts); builders/rule-types-args.generated.ts is generated from these tables. Pure.
 */
import { booleanRule, customRule, defaultsOf, field, nested, oneOfRule, withFallback } from "../../lib/field-decl";
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { methodsProblems } from "./rule-methods";
import { booleanProblems, fieldProblem, wholeNumberProblems } from "../../lib/field-checks";
import { Problem } from "../../lib/problems";
import { DEFAULT_PATH_KEY, LimitUnit, MissingHeader, PathSpellings, ValueCharset } from "../../builders/rule-args";
import { t } from "../../lib/field-types";

/** The most requests per unit the rate-limit service can count: its `requests_per_unit` is a uint32 (envoyproxy/ratelimit config). */
export const MAX_REQUESTS_PER_UNIT = 4_294_967_295;

/** The problem of a limit over the service's uint32, for the field `key` (shared with the stack's limit keys). */
export function overUint32Problem(key: string, value: unknown): Problem {
    return fieldProblem(
        key,
        value,
        `is more than the rate-limit service can count: its requests_per_unit is a 32-bit unsigned number (at most ${MAX_REQUESTS_PER_UNIT}), and a config.yaml with more does not load`,
        (s) => `${s.set(key, String(MAX_REQUESTS_PER_UNIT))}, or the same rate in a shorter unit`,
    );
}

/** A limit's count: a whole number from 1 to what the service counts (uint32). */
export function requestsPerUnitProblems(key: string, value: unknown): Problem[] {
    const whole = wholeNumberProblems(key, value, { min: 1, fallback: 100 });
    return whole.length ? whole : (value as number) > MAX_REQUESTS_PER_UNIT ? [overUint32Problem(key, value)] : [];
}

/** Where a match field's value goes: the rule's rate_limits actions. */
const ACTIONS = { envoy: "the rule's rate_limits actions" } as const;
const SERVICE = { object: "the rate-limit service's config.yaml descriptor" } as const;

/** The fields of `LimitArgs`, the limit every rule, named path and `eachPath` has. */
export const LIMIT_FIELDS = {
    requestsPerUnit: field<number>({
        doc: "Requests allowed per `unit`.",
        type: t.number(),
        required: true,
        rule: customRule<number>(`a whole number from 1 to ${MAX_REQUESTS_PER_UNIT}`, (p, v) => requestsPerUnitProblems(p, v)),
        goesTo: { object: "the rate-limit service's config.yaml `requests_per_unit`" },
    }),
    unit: field<LimitUnit>({
        doc: "Time unit of the limit.",
        type: t.enum(LimitUnit, "LimitUnit"),
        required: true,
        rule: withFallback(oneOfRule(LimitUnit, "LimitUnit"), LimitUnit.Minute),
        goesTo: { object: "the rate-limit service's config.yaml `unit`" },
    }),
    shadow: field({
        doc: "Observe only: counted (the excess in the service's `shadow_mode` statistic), never refused.",
        type: t.boolean(),
        default: false,
        rule: booleanRule(),
        goesTo: { object: "the rate-limit service's config.yaml `shadow_mode`" },
    }),
};

/** The checks of a rule's fields together, each named by the fields it judges (bound to its code in rule-checks.ts, rule-field-checks.ts, gateway-target.ts). */
export const RULE_CHECKS = {
    path: crossCheck("rule path", ["exact", "prefix", "regex", "spellings"], "exactly one of exact, prefix, regex; spellings only with exact or prefix"),
    header: crossCheck(
        "rule header",
        ["name", "value", "invert", "perValue", "valueCharset", "whenMissing"],
        "name not :path; invert only with value; perValue not with value; charset and whenMissing only with perValue",
    ),
    query: crossCheck(
        "rule query",
        ["name", "value", "perValue", "valueCharset", "whenMissing"],
        "a non-empty name and value; perValue not with value; charset and whenMissing only with perValue",
    ),
    name: crossCheck("rule name", ["name"], "a descriptor value, unique among the rules"),
    eviction: crossCheck("accepted eviction risk", ["acceptEvictionRisk"], "only on a rule with a counter per value"),
    virtualHost: crossCheck("route virtual host", ["virtualHost"], "one of gateway.virtualHosts"),
    perPath: crossCheck("per-path limits", ["descriptorKey", "path"], "a descriptor key; each path exact and listed once"),
};

/** The fields of `PathMatchArgs`: exactly one of exact, prefix, regex (`RULE_CHECKS.path`). */
export const PATH_MATCH_FIELDS = {
    exact: field<string>({
        doc: "The whole path, e.g. `/login` (the query string is ignored).",
        type: t.string(),
        rule: checkedWith(RULE_CHECKS.path, "a path"),
        goesTo: ACTIONS,
    }),
    prefix: field<string>({
        doc: "A path prefix, e.g. `/api` (matches `/api`, `/api/...` and `/api?...`, not `/apiv2`).",
        type: t.string(),
        rule: checkedWith(RULE_CHECKS.path, "a path"),
        goesTo: ACTIONS,
    }),
    regex: field<string>({
        doc: "An RE2 regular expression matched against the whole path without its query, e.g. `/items/[0-9]+`.",
        type: t.string(),
        rule: checkedWith(RULE_CHECKS.path, "an RE2 expression"),
        goesTo: ACTIONS,
    }),
    spellings: field<PathSpellings>({
        doc:
            "Which spellings of `exact` or `prefix` the rule counts. `PathSpellings.Equivalent` counts every spelling the gateway passes " +
            "on that common backends (Express, Spring/Tomcat, Django, Rails, Go, ASP.NET) route to the same handler: any ASCII letter " +
            "case (`/LOGIN`), `;` parameters after a segment (`/login;jsessionid=x`), repeated or trailing slashes (`//login`, " +
            "`/login/`), a `.` suffix (`/login.`, `/login.json`), and each character literal or percent-encoded in either hex case " +
            "(`/logi%6E`). `PathSpellings.Exact` counts the path as written only (after the gateway's own normalization), so `/LOGIN` " +
            "escapes a `/login` limit. Not with `regex` (a regex matches as written: write the spellings into it).",
        type: t.enum(PathSpellings, "PathSpellings"),
        default: PathSpellings.Equivalent,
        rule: checkedWith(RULE_CHECKS.path, oneOfRule(PathSpellings, "PathSpellings")),
        goesTo: ACTIONS,
    }),
};

/** `whenMissing` and `valueCharset` of a per-value header or parameter, `doc`s given. */
function perValueFields(check: typeof RULE_CHECKS.header, charsetDoc: string, missingDoc: string, missingNote: string) {
    return {
        valueCharset: field<ValueCharset>({
            doc: charsetDoc,
            type: t.enum(ValueCharset, "ValueCharset"),
            default: ValueCharset.Utf8,
            rule: checkedWith(check, oneOfRule(ValueCharset, "ValueCharset")),
            goesTo: ACTIONS,
        }),
        whenMissing: field<MissingHeader>({
            doc: missingDoc,
            type: t.enum(MissingHeader, "MissingHeader"),
            default: MissingHeader.SharedCounter,
            defaultNote: missingNote,
            rule: checkedWith(check, oneOfRule(MissingHeader, "MissingHeader")),
            goesTo: ACTIONS,
        }),
    };
}

/** The fields of `HeaderMatchArgs`. */
export const HEADER_MATCH_FIELDS = {
    name: field<string>({
        doc: "Header name in lower case, e.g. `x-api-key`.",
        type: t.string(),
        required: true,
        rule: checkedWith(RULE_CHECKS.header, "a header name"),
        goesTo: ACTIONS,
    }),
    value: field<string>({
        doc: "Applies only to requests whose header has exactly this value (all of them share one counter).",
        type: t.string(),
        rule: checkedWith(RULE_CHECKS.header, "a header value"),
        goesTo: ACTIONS,
    }),
    invert: field({
        doc:
            "With `value`: applies to the requests whose header does NOT have that value, requests without the header included (Envoy's " +
            "`invert_match` with `treat_missing_header_as_empty`).",
        type: t.boolean(),
        default: false,
        rule: checkedWith(RULE_CHECKS.header, booleanRule()),
        goesTo: { envoy: "the header matcher's invert_match" },
    }),
    perValue: field({
        doc:
            "Each distinct value of the header gets its own counter (e.g. one per API key). Only a value the service can read and no " +
            "reader sees differently is sent: valid UTF-8, given once and without a comma, at most 256 bytes, without control characters " +
            "(and only printable ASCII with `valueCharset: ValueCharset.PrintableAscii`); and only when the request carries no spelling of " +
            "the name with `_` for `-` (`x_api_key` for `x-api-key`: CGI, WSGI and nginx read both as one name). Every other request counts " +
            "on the rule's guard counter, kept per client (`clientPrefix`), at the rule's limit (none with `whenMissing: " +
            "MissingHeader.Refuse`). The name may hold at most 4 hyphens.",
        type: t.boolean(),
        default: false,
        rule: checkedWith(RULE_CHECKS.header, "true or false"),
        goesTo: ACTIONS,
    }),
    ...perValueFields(
        RULE_CHECKS.header,
        "With `perValue`: the characters a value may hold to get its own counter.",
        "With `perValue`: what happens to a request without the header.",
        " (one counter per client for all of them, at the same limit), so leaving the header out never escapes the limit",
    ),
};

/** The fields of `QueryMatchArgs`. */
export const QUERY_MATCH_FIELDS = {
    name: field<string>({
        doc: "The parameter's name as the application reads it (decoded), e.g. `tier`.",
        type: t.string(),
        required: true,
        rule: checkedWith(RULE_CHECKS.query, "a parameter name"),
        goesTo: ACTIONS,
    }),
    value: field<string>({
        doc: "Applies only when the parameter has exactly this (decoded) value, e.g. `free`.",
        type: t.string(),
        defaultNote: "any value (presence)",
        rule: checkedWith(RULE_CHECKS.query, "a parameter value"),
        goesTo: ACTIONS,
    }),
    perValue: field({
        doc:
            "Each distinct (decoded) value of the parameter gets its own counter, e.g. one per `api_key`. The gateway reads the parameter " +
            "as Envoy does: the first occurrence whose percent-decoded name is exactly `name`, its value percent-decoded (`+` kept as `+`). " +
            "A value gets its own counter when it is given once, under exactly that name, its decoded text valid UTF-8 (`caf%C3%A9` is " +
            "`café`) without control characters, at most 256 bytes as written (`%C3%A9` is 6; characters other than printable ASCII " +
            "percent-encoded), and (with `valueCharset: ValueCharset.PrintableAscii`) printable ASCII. Every other request counts on the " +
            "rule's guard counter, kept per client (`clientPrefix`), at the rule's limit (none with `whenMissing: MissingHeader.Refuse`): " +
            "the parameter given twice in any spelling (`?key=new&KEY=mine`, `?key=new;key=mine`), under another spelling only " +
            "(`?KEY=mine`), a value holding `;`, an encoded `&` or `;`, or an encoded space `%20` (a form reader takes a literal `+` for a " +
            "space: `+` is sent as written, so `%20` would be a second counter for the same value). So a client cannot mint fresh counters " +
            "by putting a new value where the application does not read it.",
        type: t.boolean(),
        default: false,
        rule: checkedWith<boolean>(RULE_CHECKS.query, "true or false"),
        goesTo: ACTIONS,
    }),
    ...perValueFields(
        RULE_CHECKS.query,
        "With `perValue`: the characters a (decoded) value may hold to get its own counter.",
        "With `perValue`: what happens to a request without the parameter (in any spelling of its name).",
        ": one counter per client for all of them, at the rule's limit",
    ),
};

/** A route's name: given, a non-empty text. */
const ROUTE_NAME_RULE = customRule<string>("a route's name", (p, v) =>
    typeof v === "string" && v !== ""
        ? []
        : [{ key: p, value: v, problem: "must name a route (VirtualService http[].name)", fix: "set route.name to the route's name, or remove route" }],
);

/** The fields of `RouteRefArgs`. */
export const ROUTE_REF_FIELDS = {
    name: field<string>({
        doc: "The route's name (VirtualService `http[].name`).",
        type: t.string(),
        required: true,
        rule: ROUTE_NAME_RULE,
        goesTo: { envoy: "the route whose rate_limits the rule sits in" },
    }),
    virtualHost: field<string>({
        doc: "Istio's virtual host name `<host>:<port>`; one of `gateway.virtualHosts`.",
        type: t.string(),
        defaultNote: "each of them (every virtual host only with `gateway.allVirtualHosts`)",
        rule: checkedWith(RULE_CHECKS.virtualHost, "a virtual host `<host>:<port>`"),
        goesTo: { envoy: "the virtual host of the route" },
    }),
};

/** The match fields of `RateLimitRuleArgs` (before its limit). */
const RULE_MATCH_FIELDS = {
    name: field<string>({
        doc: "Unique name; also the descriptor value the rule sends. Letters, digits, `_`, `.`, `-`.",
        type: t.string(),
        required: true,
        rule: checkedWith(RULE_CHECKS.name, "letters, digits, `_`, `.`, `-`"),
        goesTo: { envoy: "the rule's descriptor value" },
    }),
    path: nested({ doc: "Only requests whose path matches. Defaults to every path.", type: t.ref("PathMatchArgs") }),
    header: nested({
        doc:
            "Requests with this header value or presence, all but one value (`invert`), or one counter per value (header-less requests per " +
            "`whenMissing`). Defaults to none.",
        type: t.ref("HeaderMatchArgs"),
    }),
    methods: field<string[]>({
        doc:
            'Only requests with one of these methods, e.g. `["POST", "PUT"]`. Matched without regard to case (`post` is counted as ' +
            "`POST`: HTTP/1 lets a client send either, and an application that reads it case-insensitively must not let `post` escape a " +
            "`POST` limit).",
        type: t.list(t.string()),
        defaultNote: "every method",
        rule: customRule<string[]>("a non-empty list of HTTP methods, each once", (p, v) => methodsProblems(p, v)),
        goesTo: ACTIONS,
    }),
    query: nested({
        doc: "Only requests whose query has this parameter (or this value of it), or one counter per value of it (`perValue`). Defaults to none.",
        type: t.ref("QueryMatchArgs"),
    }),
    identity: nested({
        doc:
            "One counter per verified identity: the gateway verifies the request's JSON Web Token (an Istio `RequestAuthentication` on its " +
            "pods, rendered by the component) and the rule counts by the token's claim, read from what the token check wrote (no header a " +
            'client could send), e.g. `{ jwt: { issuer, jwksUri, claim: "sub" } }`. A request without a verified token is counted per ' +
            "client or refused (`missing`). Not with `header.perValue`, `query.perValue`, `perClientAddress` or `clientCidr`. Defaults to none.",
        type: t.ref("IdentityArgs"),
    }),
    perClientAddress: field({
        doc: "One counter per client: per address prefix (`clientPrefix`: /32 for IPv4, /64 for IPv6 by default).",
        type: t.boolean(),
        default: false,
        defaultNote: " (one counter for all clients)",
        rule: booleanRule(),
        goesTo: { envoy: "the rule's masked_remote_address action" },
    }),
    clientCidr: nested({
        doc: "Only clients whose address is inside a CIDR: one counter per CIDR, or per address within it (`perAddress`). Defaults to every client.",
        type: t.ref("ClientCidrArgs"),
    }),
    route: nested({
        doc: "Only requests on this route (the rule sits on the route). Defaults to every route of `gateway.virtualHosts`.",
        type: t.ref("RouteRefArgs"),
    }),
};

/** The fields of `RateLimitRuleArgs`. */
export const RULE_FIELDS = {
    ...RULE_MATCH_FIELDS,
    requestsPerUnit: field({
        ...LIMIT_FIELDS.requestsPerUnit,
        doc: "Requests allowed per `unit` (per counter); with `cost`, the budget per `unit` in cost units.",
    }),
    unit: LIMIT_FIELDS.unit,
    shadow: LIMIT_FIELDS.shadow,
    rateLimitHeaders: field<boolean>({
        doc:
            "`false` keeps this rule out of the `X-RateLimit-*` response headers and the published `RateLimit-Policy` (a limit that must " +
            "stay hidden, such as a guard against floods); `true` shows it even when the filter's `rateLimitHeaders` is " +
            "`RateLimitHeaders.Off`. Needs the Envoy of Istio 1.30 or later (a rate-limit entry's `x_ratelimit_option`).",
        type: t.boolean(),
        defaultNote:
            "the filter's setting, and to `false` for a `shadow` rule (clients are not told of a limit that never refuses; when it is a " +
            "request's tightest, that response carries no X-RateLimit headers)",
        rule: booleanRule(),
        goesTo: { envoy: "the rate-limit entry's x_ratelimit_option" },
    }),
    cost: nested({
        doc:
            "What one request takes from the budget: a fixed number, a request header's value, or a response header's value counted when " +
            "the response is done (builders/request-cost-args.ts). Needs `FilterLayout.PerInstance` (Envoy reads a cost only from a " +
            "filter's own descriptors). Defaults to 1 per request.",
        type: t.ref("RequestCostArgs"),
    }),
    acceptEvictionRisk: field({
        doc:
            "A per-value rule on a value any client writes (`header.perValue`, `query.perValue`) with a window of an hour or longer is " +
            "refused at preview unless its store is sized for it (`perValueStore.newValuesPerSecond`, which its `maxMemory` must hold; a " +
            "`maxMemory` alone sizes nothing): a flood of new " +
            "values can make the store evict a counter and so give its budget back (docs/security.md). `true` accepts that risk for this " +
            "rule (the preview still prints what a reset costs an attacker). Only on a per-value rule.",
        type: t.boolean(),
        default: false,
        rule: checkedWith(
            RULE_CHECKS.eviction,
            customRule<boolean>("true or false", (p, v) => booleanProblems(p, v, true)),
        ),
        goesTo: { object: "the preview's eviction check" },
    }),
};

/** The fields of `PathLimitArgs`. */
export const PATH_LIMIT_FIELDS = {
    path: field<string>({
        doc: "The exact path without query, e.g. `/productpage`.",
        type: t.string(),
        required: true,
        rule: checkedWith(RULE_CHECKS.perPath, "an exact path"),
        goesTo: SERVICE,
    }),
    ...LIMIT_FIELDS,
    shadow: field({ ...LIMIT_FIELDS.shadow, doc: "Observe only." }),
};

/** The fields of `PerPathLimitsArgs`. */
export const PER_PATH_FIELDS = {
    descriptorKey: field<string>({
        doc: "Descriptor key the path is sent under.",
        type: t.string(),
        default: DEFAULT_PATH_KEY,
        rule: checkedWith(RULE_CHECKS.perPath, "a descriptor key"),
        goesTo: { envoy: "the per-path rate_limits action's descriptor_key" },
    }),
    paths: nested({ doc: "Limits of named paths. Defaults to none.", type: t.list(t.ref("PathLimitArgs")) }),
    eachPath: nested({
        doc: "Limit of every other path, each distinct path counted apart. Defaults to none (other paths unlimited).",
        type: t.ref("LimitArgs"),
    }),
};

/** The declared defaults the resolvers fill in (rule-checks.ts, limits-plan.ts). */
export const LIMIT_DEFAULTS = defaultsOf(LIMIT_FIELDS);
export const HEADER_MATCH_DEFAULTS = defaultsOf(HEADER_MATCH_FIELDS);
export const QUERY_MATCH_DEFAULTS = defaultsOf(QUERY_MATCH_FIELDS);
export const PATH_MATCH_DEFAULTS = defaultsOf(PATH_MATCH_FIELDS);
export const PER_PATH_DEFAULTS = defaultsOf(PER_PATH_FIELDS);
