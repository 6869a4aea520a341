/**
 * The fields of a rule's `cost`, each declared once (lib/field-decl.ts);
 * builders/request-cost-arg-types.generated.ts is generated from this table (`npm run gen`).
 * request-cost-checks.ts runs the rules and `resolveRequestCost` fills `missingCost` from here; which
 * kind of cost is given, and `maxCost` against its siblings, stay checked there. Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { ArgInterface, customRule, field } from "../../lib/field-decl";
import { MAX_COST } from "../../builders/request-cost-args";
import { Problem } from "../../lib/problems";
import { t } from "../../lib/field-types";

/** A header name the cost can be read from: lower case token characters, no pseudo-header (`:path` is no number). */
const COST_HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/** A whole cost from 0 to `MAX_COST`; the fix suggests `example`. */
function wholeCostRule(example: string) {
    return customRule<number>(`a whole number from 0 to ${MAX_COST}`, (key, v): Problem[] =>
        Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_COST
            ? []
            : [
                  {
                      key,
                      value: v,
                      problem: `must be a whole number from 0 to ${MAX_COST} (the most Envoy adds for one request)`,
                      fix: `set ${key} to e.g. ${example}`,
                  },
              ],
    );
}

/** A header name in lower case; the fix suggests `example`. */
function headerNameRule(example: string) {
    return customRule<string>("a header name in lower case, not a pseudo-header", (key, v): Problem[] => {
        if (typeof v === "string" && COST_HEADER_NAME.test(v)) return [];
        const lower = typeof v === "string" ? v.trim().toLowerCase() : "";
        return [
            {
                key,
                value: v,
                problem: "must be a header name in lower case (letters, digits and !#$%&'*+.^_`|~-), not a pseudo-header",
                fix: COST_HEADER_NAME.test(lower) ? `use "${lower}"` : `set ${key} to e.g. "${example}"`,
            },
        ];
    });
}

/** What a response without the cost header costs (`missingCost`'s default with `responseHeader`). */
export const RESPONSE_MISSING_COST = 0;

/** A cost's fields judged with the others, and with its rule's counter (request-cost-checks.ts). */
export const REQUEST_COST_CHECKS = {
    maxCost: crossCheck("request cost bound", ["maxCost"], "with requestHeader only, and not under missingCost"),
    sharedBudget: crossCheck("shared budget risk", ["acceptSharedBudgetRisk"], "with responseHeader only, on a rule whose counter every client shares"),
};

/** The fields of `RequestCostArgs`. */
export const REQUEST_COST_FIELDS = {
    fixed: field<number>({
        doc: "Every request the rule covers costs this much, e.g. `5` (0 to 1,000,000,000; 0 checks the budget without taking from it).",
        type: t.number(),
        rule: wholeCostRule("5"),
        goesTo: { envoy: "the descriptor's hits_addend number" },
    }),
    requestHeader: field<string>({
        doc:
            "The cost is the value of this request header (lower case), e.g. `x-cost`: a whole number of at most 9 digits. A request without " +
            "it, or with any other value, costs `missingCost`. Whoever sets the header chooses the cost: use it only for a header that the " +
            "gateway or an earlier proxy sets, or strips from clients.",
        type: t.string(),
        rule: headerNameRule("x-cost"),
        goesTo: { envoy: "the descriptor's hits_addend format (%REQ(<header>)%)" },
    }),
    responseHeader: field<string>({
        doc:
            "The cost is the value of this response header (lower case) that the backend sets, e.g. `x-tokens-used`, counted when the " +
            "response is done. The request itself is let through while the budget is not yet over (checked without taking from it), so the " +
            "request that goes over the budget is served and the next ones are refused. A response without the header costs `missingCost`; " +
            "a value that is not a number from 0 to 1,000,000,000 is not counted.",
        type: t.string(),
        rule: headerNameRule("x-tokens-used"),
        goesTo: { envoy: "a header-to-metadata rule and the response's hits_addend" },
    }),
    missingCost: field({
        doc:
            "With `requestHeader` or `responseHeader`: the cost of a request (or response) without the header (and, for `requestHeader`, " +
            "with a value that is not a whole number of at most 9 digits).",
        type: t.number(),
        default: 1,
        defaultNote:
            ` for \`requestHeader\` (leaving the header out never makes a request free) and \`${RESPONSE_MISSING_COST}\` for ` +
            "`responseHeader` (a response without it, a refusal included, costs nothing)",
        rule: wholeCostRule("1"),
        goesTo: { envoy: "the hits_addend of a request (or response) without the header" },
    }),
    maxCost: field<number>({
        doc:
            "With `requestHeader`: the most one request costs, e.g. `10`; a larger number in the header costs `maxCost` (Envoy sends it in a " +
            "form of its own, so the value never reaches the shared counter). Without it one request can spend a whole budget, everyone's " +
            "when the rule's counter is shared: the cost is added even when the request is refused. Not with `responseHeader` (count that " +
            "cost per client instead: `perClientAddress` or a per-value header). Whole number from 1 to 999,999,999.",
        type: t.number(),
        defaultNote: "none (up to 999,999,999)",
        rule: checkedWith(REQUEST_COST_CHECKS.maxCost, "a whole number from 1 to 999999999"),
        goesTo: { envoy: "the largest hits_addend a request header gives" },
    }),
    acceptSharedBudgetRisk: field({
        doc:
            "With `responseHeader` on a rule whose counter every client shares (no `perClientAddress`, per-value header or query, or " +
            "`identity`): such a rule is refused at preview, since one response with a large number spends the budget of every client " +
            "for the rest of the window (docs/security.md). `true` accepts that risk for this rule (for a backend whose number no client " +
            "can make large). A request-header cost on a shared counter needs `maxCost` instead.",
        type: t.boolean(),
        default: false,
        rule: checkedWith<boolean>(REQUEST_COST_CHECKS.sharedBudget, "true or false"),
        goesTo: { object: "the preview's shared-budget check" },
    }),
};

/** The interface generated from this table (builders/request-cost-arg-types.generated.ts). */
export const REQUEST_COST_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "RequestCostArgs",
        doc:
            "How much one request takes from a rule's budget (its limit then counts cost units, not requests). Exactly one of `fixed`, " +
            "`requestHeader`, `responseHeader`.",
        fields: REQUEST_COST_FIELDS,
    },
];
