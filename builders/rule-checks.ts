/**
 * The checks of the typed rules: each field path (`rules[2].path.prefix`), the value and the fix,
 * for the limit, the path, the name, the header, the client and the per-path limits. Pure; collects
 * problems, throws nothing.
 */
import { UNSENDABLE_PATH, compileFullMatch, pathAsSent } from "../lib/formats";
import { Problem } from "../lib/problems";
import { booleanProblems, fieldProblem, oneOfProblems, wholeNumberProblems } from "../lib/field-checks";
import { MASKED_REMOTE_ADDRESS_KEY } from "./client-cidr";
import { checkClientCidr } from "./client-cidr-checks";
import { MAX_HEADER_HYPHENS, METHOD_TOKEN, normalizedMethods } from "./request-match";
import { checkRequestCost } from "./request-cost-checks";
import { checkIdentity } from "./identity-checks";

import {
    DEFAULT_CLIENT_PREFIX,
    DEFAULT_PATH_KEY,
    LimitUnit,
    MISSING_VALUE_KEY,
    MissingHeader,
    PerPathLimitsArgs,
    RateLimitRuleArgs,
    QUERY_VALUE_KEY,
    REMOTE_ADDRESS_KEY,
    UNTRUSTED_VALUE_KEY,
    ValueCharset,
} from "./rule-args";

export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const HEADER_NAME = /^(:authority|:method|:scheme|[a-z0-9!#$%&'*+.^_`|~-]+)$/;
export const UNITS = Object.values(LimitUnit) as string[];

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

/** A limit's `requestsPerUnit`: a whole number from 1 to what the service counts (uint32). */
export function requestsPerUnitProblems(key: string, value: unknown): Problem[] {
    const whole = wholeNumberProblems(key, value, { min: 1, fallback: 100 });
    return whole.length ? whole : (value as number) > MAX_REQUESTS_PER_UNIT ? [overUint32Problem(key, value)] : [];
}

/** A limit: `requestsPerUnit`, `unit` and `shadow` (of a rule, a named path or every other path). */
export function checkLimit(field: string, l: any, problems: Problem[]): void {
    problems.push(...requestsPerUnitProblems(`${field}.requestsPerUnit`, l?.requestsPerUnit));
    problems.push(...oneOfProblems(`${field}.unit`, l?.unit, UNITS, LimitUnit.Minute));
    if (l?.shadow !== undefined) problems.push(...booleanProblems(`${field}.shadow`, l.shadow, false));
}

export function checkPath(field: string, p: unknown, problems: Problem[]): void {
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
export function checkRuleName(at: string, r: any, i: number, names: Set<string>, problems: Problem[]): void {
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
export function checkRulePath(at: string, path: any, problems: Problem[]): void {
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
    const invertProblems = h?.invert === undefined ? [] : booleanProblems(`${at}.header.invert`, h.invert, false);
    problems.push(...invertProblems);
    if (invertProblems.length === 0 && h?.invert && h?.value === undefined) {
        problems.push({
            key: `${at}.header.invert`,
            value: true,
            problem: "needs header.value (it counts the requests whose header is not that value)",
            fix: "give header.value, or remove invert",
        });
    }
    const missingProblems = whenMissingProblems(`${at}.header.whenMissing`, h?.whenMissing);
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

/** `whenMissing` (of `header` or `query`): one of MissingHeader's values, when given. */
function whenMissingProblems(key: string, value: unknown): Problem[] {
    return value === undefined ? [] : oneOfProblems(key, value, Object.values(MissingHeader), MissingHeader.SharedCounter);
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

/** `clientPrefix`: whole prefix lengths, IPv4 0-32 and IPv6 0-128. */
export function checkClientPrefix(p: any, problems: Problem[]): void {
    if (p === undefined) return;
    if (typeof p !== "object" || p === null || Array.isArray(p)) {
        problems.push(
            fieldProblem("clientPrefix", p, "must be { v4?, v6? } (prefix lengths)", (s) =>
                s.set("clientPrefix", `{ v4: ${DEFAULT_CLIENT_PREFIX.v4}, v6: ${DEFAULT_CLIENT_PREFIX.v6} }`),
            ),
        );
        return;
    }
    // A prefix length: the leading bits of a client address that make one client.
    for (const [f, max] of [
        ["v4", 32],
        ["v6", 128],
    ] as const) {
        if (p[f] !== undefined) problems.push(...wholeNumberProblems(`clientPrefix.${f}`, p[f], { min: 0, max, fallback: DEFAULT_CLIENT_PREFIX[f] }));
    }
}

/** `methods`: a non-empty list of HTTP method tokens, each once whatever its case. */
export function checkRuleMethods(at: string, methods: unknown, problems: Problem[]): void {
    if (!Array.isArray(methods) || methods.length === 0) {
        problems.push(
            fieldProblem(
                `${at}.methods`,
                methods,
                "must be a non-empty list of HTTP methods",
                (s) => `${s.set(`${at}.methods`, '["POST"]')}, or remove it (every method)`,
            ),
        );
        return;
    }
    methods.forEach((m, j) => {
        if (typeof m !== "string" || !METHOD_TOKEN.test(m)) {
            const fixed = typeof m === "string" ? m.trim().toUpperCase() : "";
            problems.push(
                fieldProblem(
                    `${at}.methods[${j}]`,
                    m,
                    "must be an HTTP method, e.g. GET or POST (letters, digits and the token characters of RFC 9110)",
                    (s) => (METHOD_TOKEN.test(fixed) ? s.set(`${at}.methods[${j}]`, fixed) : `remove it, or ${s.set(`${at}.methods[${j}]`, "GET")}`),
                ),
            );
        }
    });
    const strings = methods.filter((m): m is string => typeof m === "string");
    if (normalizedMethods(strings).length !== strings.length) {
        problems.push(
            fieldProblem(`${at}.methods`, methods, "lists a method twice (methods are matched without regard to case)", (s) =>
                s.set(`${at}.methods`, JSON.stringify(normalizedMethods(strings))),
            ),
        );
    }
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
    const missingProblems = whenMissingProblems(`${at}.query.whenMissing`, q.whenMissing);
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
    if (r.perClientAddress !== undefined) problems.push(...booleanProblems(`${at}.perClientAddress`, r.perClientAddress, false));
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

/** Checks rule `i` (every problem, field paths under `rules[i]`); true when it has none. */
export function validateRule(r: any, i: number, names: Set<string>, problems: Problem[]): boolean {
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
    if (r.methods !== undefined) checkRuleMethods(at, r.methods, problems);
    if (r.query !== undefined) checkRuleQuery(at, r.query, problems);
    checkOnePerValueField(at, r, problems);
    if (r.rateLimitHeaders !== undefined) problems.push(...booleanProblems(`${at}.rateLimitHeaders`, r.rateLimitHeaders, false));
    if (r.acceptEvictionRisk !== undefined) checkAcceptEvictionRisk(at, r, problems);
    checkRuleClient(at, r, problems);
    if (r.identity !== undefined) checkIdentity(at, r, problems);
    if (r.route !== undefined && (typeof r.route?.name !== "string" || r.route.name === "")) {
        problems.push({
            key: `${at}.route.name`,
            value: r.route?.name,
            problem: "must name a route (VirtualService http[].name)",
            fix: "set route.name to the route's name, or remove route",
        });
    }
    if (r.cost !== undefined) checkRequestCost(`${at}.cost`, r.cost, problems);
    checkLimit(at, r, problems);
    return problems.length === before;
}

/** The per-path limits: a valid descriptor key, each path once and checked, at least one limit. */
export function checkPerPath(perPath: PerPathLimitsArgs, pathKey: string, problems: Problem[]): void {
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

/** `acceptEvictionRisk`: a boolean, on a rule with a counter per value only (elsewhere it would say nothing). */
function checkAcceptEvictionRisk(at: string, r: RateLimitRuleArgs, problems: Problem[]): void {
    const bad = booleanProblems(`${at}.acceptEvictionRisk`, r.acceptEvictionRisk, true);
    problems.push(...bad);
    const perValue = r.header?.perValue === true || r.query?.perValue === true || r.perClientAddress === true || r.clientCidr?.perAddress === true;
    if (!bad.length && !perValue)
        problems.push(
            fieldProblem(
                `${at}.acceptEvictionRisk`,
                r.acceptEvictionRisk,
                "has no effect on a rule without a counter per value (header.perValue, query.perValue, perClientAddress, clientCidr.perAddress)",
                (f) => f.rm(`${at}.acceptEvictionRisk`),
            ),
        );
}
