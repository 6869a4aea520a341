/**
 * The rules' argument interfaces as tables of declarations (rule-fields.ts), in the order
 * builders/rule-types-args.generated.ts states them, and what that generated file imports. Data only.
 */
import { ArgInterface } from "../../lib/field-decl";
import {
    HEADER_MATCH_FIELDS,
    LIMIT_FIELDS,
    PATH_LIMIT_FIELDS,
    PATH_MATCH_FIELDS,
    PER_PATH_FIELDS,
    QUERY_MATCH_FIELDS,
    ROUTE_REF_FIELDS,
    RULE_FIELDS,
} from "./rule-fields";

/** The imports of the generated builders/rule-types-args.generated.ts. */
export const RULE_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = {
    "./client-cidr-args.generated": ["ClientCidrArgs"],
    "./identity-arg-types.generated": ["IdentityArgs"],
    "./request-cost-arg-types.generated": ["RequestCostArgs"],
    "./rule-choices": ["LimitUnit", "MissingHeader", "PathSpellings", "ValueCharset"],
};

/** The interfaces generated from these tables (builders/rule-types-args.generated.ts). */
export const RULE_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "PathMatchArgs", doc: "Which paths a rule applies to: exactly one of `exact`, `prefix`, `regex`, and its spellings.", fields: PATH_MATCH_FIELDS },
    {
        name: "HeaderMatchArgs",
        doc: "A request header a rule applies to. Without `value` or `perValue` the rule applies when the header is present.",
        fields: HEADER_MATCH_FIELDS,
    },
    {
        name: "QueryMatchArgs",
        doc:
            "A query parameter a rule applies to, matched in the request's `:path` as a client may write it: each character of the name and " +
            "value literal or percent-encoded in either case (`%74ier`, `fr%65e`), a space as `+` or `%20`, a `+` as `+` or `%2B` (form " +
            "decoding and plain percent decoding disagree on `+`: both readings count). The parameter may appear anywhere in the query, and " +
            "when it is repeated (`?tier=gold&tier=free`) the rule applies if any occurrence matches, so a client cannot hide a value behind " +
            "another one. Without `value` the rule applies when the parameter is present.",
        fields: QUERY_MATCH_FIELDS,
    },
    { name: "RouteRefArgs", doc: "A route of the gateway's route configuration (a VirtualService `http[].name`).", fields: ROUTE_REF_FIELDS },
    { name: "RateLimitRuleArgs", doc: "One global limit: what to count and how much.", fields: RULE_FIELDS },
    { name: "LimitArgs", doc: "A limit without a match.", fields: LIMIT_FIELDS },
    { name: "PathLimitArgs", doc: "A limit on one exact path, counted per path (see `PerPathLimitsArgs`).", fields: PATH_LIMIT_FIELDS },
    {
        name: "PerPathLimitsArgs",
        doc:
            "Every path its own counter: the gateway sends the request's path (without query, or `:path` with `PathKeyMode.Literal`) under " +
            "`descriptorKey`; `paths` set limits for named paths, `eachPath` for every other path.",
        fields: PER_PATH_FIELDS,
    },
];
