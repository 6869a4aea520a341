/**
 * The checks of a rule's request fields: the header, the value charset, the methods, the query
 * parameter, and the client (`perClientAddress`, `clientCidr`), each problem under its field path
 * (`rules[2].header.name`). Pure; collects problems, throws nothing.
 */
import { bindCrossCheck } from "../../lib/cross-checks";
import { Problem } from "../../lib/problems";
import { booleanProblems, fieldProblem, oneOfProblems } from "../../lib/field-checks";
import { MASKED_REMOTE_ADDRESS_KEY } from "../../builders/client-cidr";
import { checkClientCidr } from "./client-cidr-checks";
import { givenProblems } from "../../lib/field-decl";
import { HEADER_MATCH_FIELDS, QUERY_MATCH_FIELDS, RULE_CHECKS, RULE_FIELDS } from "./rule-fields";
import { MAX_HEADER_HYPHENS } from "../../builders/request-match";
import { MISSING_VALUE_KEY, QUERY_VALUE_KEY, REMOTE_ADDRESS_KEY, UNTRUSTED_VALUE_KEY, ValueCharset } from "../../builders/rule-args";

export const HEADER_NAME = /^(:authority|:method|:scheme|[a-z0-9!#$%&'*+.^_`|~-]+)$/;

/** The header's name (not `:path`, a lower-case HTTP header name) and value (non-empty when given). */
export function checkHeaderNameAndValue(at: string, h: any, problems: Problem[]): void {
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
export function checkHeaderOptions(at: string, h: any, problems: Problem[]): void {
    const invertProblems = givenProblems(HEADER_MATCH_FIELDS.invert, `${at}.header.invert`, h?.invert);
    problems.push(...invertProblems);
    if (invertProblems.length === 0 && h?.invert && h?.value === undefined) {
        problems.push({
            key: `${at}.header.invert`,
            value: true,
            problem: "needs header.value (it counts the requests whose header is not that value)",
            fix: "give header.value, or remove invert",
        });
    }
    const missingProblems = givenProblems(HEADER_MATCH_FIELDS.whenMissing, `${at}.header.whenMissing`, h?.whenMissing);
    problems.push(...missingProblems);
    if (missingProblems.length === 0 && h?.whenMissing !== undefined && !h?.perValue) {
        problems.push({
            key: `${at}.header.whenMissing`,
            value: h.whenMissing,
            problem: "applies only with header.perValue",
            fix: "remove whenMissing, or set perValue to true",
        });
    }
    // A per-value header's name is its values' descriptor key, beside the rule's other keys.
    const reserved = [REMOTE_ADDRESS_KEY, MASKED_REMOTE_ADDRESS_KEY, QUERY_VALUE_KEY, UNTRUSTED_VALUE_KEY, MISSING_VALUE_KEY];
    if (h?.perValue === true && reserved.includes(h?.name)) {
        problems.push({
            key: `${at}.header.name`,
            value: h.name,
            problem: `is a descriptor key the rules use themselves (${reserved.join(", ")}): its values would meet those counters`,
            fix: "count the value of another header, e.g. have the application or a filter copy it into x-<name>",
        });
    }
    const hyphens = typeof h?.name === "string" ? h.name.split("-").length - 1 : 0;
    if (h?.perValue === true && hyphens > MAX_HEADER_HYPHENS) {
        problems.push({
            key: `${at}.header.name`,
            value: h.name,
            problem: `has ${hyphens} hyphens, more than ${MAX_HEADER_HYPHENS}: the gateway must see every spelling with '_' for '-' (CGI, WSGI and nginx read them as one name), ${2 ** hyphens - 1} matchers in each of the rule's entries`,
            fix: `count a header whose name has at most ${MAX_HEADER_HYPHENS} hyphens (have the client or a filter in front copy the value into it), or on a gateway you own alone, reject underscored names for every host (connection manager's headers_with_underscores_action: REJECT_REQUEST) and count a shorter alias`,
        });
    }
    checkValueCharset(`${at}.header`, h, problems);
    checkPerValue(at, "header", h, problems);
}

/** `valueCharset` (of `header` or `query`, at `at`): one of the charsets, and only with `perValue`. */
export function checkValueCharset(at: string, f: any, problems: Problem[]): void {
    if (f?.valueCharset === undefined) return;
    const charsetProblems = oneOfProblems(`${at}.valueCharset`, f.valueCharset, Object.values(ValueCharset), ValueCharset.PrintableAscii);
    problems.push(...charsetProblems);
    if (charsetProblems.length === 0 && f.perValue !== true) {
        problems.push(
            fieldProblem(
                `${at}.valueCharset`,
                f.valueCharset,
                "applies only with perValue (it says which values get a counter of their own)",
                (s) => `${s.rm(`${at}.valueCharset`)}, or ${s.set(`${at}.perValue`, "true")}`,
            ),
        );
    }
}

/** `methods`: its declaration's rule (rule-methods.ts). */
export function checkRuleMethods(at: string, methods: unknown, problems: Problem[]): void {
    problems.push(...givenProblems(RULE_FIELDS.methods, `${at}.methods`, methods));
}

/**
 * The longest query name or value a rule takes. Each character becomes several alternatives in the
 * `:path` matchers (every spelling); at this length the largest of them, four-byte characters
 * throughout, has an RE2 program of about 8,300, a quarter of what Istio's Envoy accepts
 * (`re2.max_program_size.error_level` 32,768 in Istio's bootstrap; a larger one fails the whole
 * route configuration).
 */
export const MAX_QUERY_TEXT = 256;

/** `query`: a non-empty parameter name, a non-empty value when given, and its per-value options. */
export function checkRuleQuery(at: string, q: any, problems: Problem[]): void {
    if (typeof q !== "object" || q === null) {
        problems.push(
            fieldProblem(`${at}.query`, q, "must be { name, value?, perValue?, whenMissing? }", (s) => s.set(`${at}.query`, '{ name: "tier", value: "free" }')),
        );
        return;
    }
    if (typeof q.name !== "string" || q.name === "" || /[&;=#?]/.test(q.name)) {
        problems.push(
            fieldProblem(
                `${at}.query.name`,
                q.name,
                "must be a query parameter's name as the application reads it (decoded), without '&', ';', '=', '#' or '?'",
                (s) => s.set(`${at}.query.name`, "tier"),
            ),
        );
    }
    for (const f of ["name", "value"] as const) {
        if (typeof q[f] === "string" && [...q[f]].length > MAX_QUERY_TEXT) {
            problems.push(
                fieldProblem(
                    `${at}.query.${f}`,
                    q[f],
                    `is ${[...q[f]].length} characters long, more than ${MAX_QUERY_TEXT}: the gateway's matchers of every spelling of it would grow past what Envoy accepts`,
                    (s) => `shorten it to ${MAX_QUERY_TEXT} characters or fewer, or ${s.rm(`${at}.query`)}`,
                ),
            );
        }
    }
    if (q.value !== undefined && (typeof q.value !== "string" || q.value === "")) {
        problems.push(
            fieldProblem(
                `${at}.query.value`,
                q.value,
                "must be a non-empty string (the decoded value)",
                (s) => `${s.rm(`${at}.query.value`)} to match on presence, or give the value`,
            ),
        );
    }
    checkQueryPerValue(at, q, problems);
    checkValueCharset(`${at}.query`, q, problems);
}

/** `perValue` of a header or query parameter: a boolean, and not with a fixed `value`. */
function checkPerValue(at: string, field: "header" | "query", f: any, problems: Problem[]): void {
    const perValueProblems = f?.perValue === undefined ? [] : booleanProblems(`${at}.${field}.perValue`, f.perValue, true);
    problems.push(...perValueProblems);
    if (perValueProblems.length === 0 && f?.perValue === true && f?.value !== undefined) {
        problems.push(
            fieldProblem(
                `${at}.${field}.perValue`,
                true,
                `cannot be combined with ${field}.value (one fixed value has one counter)`,
                (s) => `${s.rm(`${at}.${field}.value`)}, or ${s.rm(`${at}.${field}.perValue`)}`,
            ),
        );
    }
}

/** `query.perValue` and `query.whenMissing`, alone and with `value`. */
function checkQueryPerValue(at: string, q: any, problems: Problem[]): void {
    checkPerValue(at, "query", q, problems);
    const missingProblems = givenProblems(QUERY_MATCH_FIELDS.whenMissing, `${at}.query.whenMissing`, q.whenMissing);
    problems.push(...missingProblems);
    if (missingProblems.length === 0 && q.whenMissing !== undefined && q.perValue !== true) {
        problems.push(
            fieldProblem(
                `${at}.query.whenMissing`,
                q.whenMissing,
                "applies only with query.perValue",
                (s) => `${s.rm(`${at}.query.whenMissing`)}, or ${s.set(`${at}.query.perValue`, "true")}`,
            ),
        );
    }
}

/** One per-value request field per rule: a header or a query parameter, not both. */
export function checkOnePerValueField(at: string, r: any, problems: Problem[]): void {
    if (r.header?.perValue === true && r.query?.perValue === true) {
        problems.push({
            key: `${at}.query.perValue`,
            value: true,
            problem: "cannot be combined with header.perValue in one rule (a request lacking one of the two would match no counter of the service)",
            fix: "make two rules: one per header value, one per query value",
        });
    }
}

/** `perClientAddress` and `clientCidr`, and what neither combines with. */
export function checkRuleClient(at: string, r: any, problems: Problem[]): void {
    problems.push(...givenProblems(RULE_FIELDS.perClientAddress, `${at}.perClientAddress`, r.perClientAddress));
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
    for (const f of ["header", "query"] as const) {
        if (r[f]?.perValue === true) {
            problems.push({
                key: `${at}.${f}.perValue`,
                value: true,
                problem: "cannot be combined with clientCidr",
                fix: `make two rules: one per ${f} value, one with clientCidr`,
            });
        }
    }
}

/** The header's and the parameter's cross-field checks (rule-fields.ts RULE_CHECKS). */
bindCrossCheck(RULE_CHECKS.header, "rule-field-checks.ts checkHeaderNameAndValue, checkHeaderOptions", checkHeaderNameAndValue);
bindCrossCheck(RULE_CHECKS.header, "rule-field-checks.ts checkHeaderNameAndValue, checkHeaderOptions", checkHeaderOptions);
bindCrossCheck(RULE_CHECKS.query, "rule-field-checks.ts checkRuleQuery", checkRuleQuery);
