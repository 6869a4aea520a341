/**
 * The checks of the typed rules: each field path (`rules[2].path.prefix`), the value and the fix,
 * for the limit, the path, the name, the client prefix and the per-path limits, and a whole rule
 * (its request fields in rule-field-checks.ts). Pure; collects problems, throws nothing.
 */
import { bindCrossCheck } from "../../lib/cross-checks";
import { UNSENDABLE_PATH, compileFullMatch, pathAsSent } from "../../lib/formats";
import { Problem } from "../../lib/problems";
import { fieldProblem } from "../../lib/field-checks";
import { FieldDecl, fieldProblems, givenProblems, withDefaults } from "../../lib/field-decl";
import {
    HEADER_MATCH_DEFAULTS,
    LIMIT_FIELDS,
    MAX_REQUESTS_PER_UNIT,
    PATH_MATCH_FIELDS,
    PER_PATH_DEFAULTS,
    QUERY_MATCH_DEFAULTS,
    RULE_FIELDS,
    overUint32Problem,
    requestsPerUnitProblems,
    ROUTE_REF_FIELDS,
    RULE_CHECKS,
} from "./rule-fields";
import { CLIENT_PREFIX_FIELDS, DEFAULT_CLIENT_PREFIX } from "./client-prefix-fields";
import { MAX_SPELLED_PATH } from "../../builders/path-spellings";
import { checkRequestCost, checkSharedCost, resolveRequestCost } from "./request-cost-checks";
import { checkIdentity, resolveIdentity } from "./identity-checks";
import { checkHeaderNameAndValue, checkHeaderOptions, checkOnePerValueField, checkRuleClient, checkRuleMethods, checkRuleQuery } from "./rule-field-checks";
import {
    LIMIT_UNIT_SECONDS,
    LimitArgs,
    LimitUnit,
    MissingHeader,
    PathLimitArgs,
    PathSpellings,
    PerPathLimitsArgs,
    RateLimitRuleArgs,
    ResolvedLimit,
    ResolvedPathLimit,
    ResolvedRule,
    ValueCharset,
} from "../../builders/rule-args";

export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const UNITS = Object.values(LimitUnit) as string[];

export { MAX_REQUESTS_PER_UNIT, overUint32Problem, requestsPerUnitProblems };

/** A limit: `requestsPerUnit`, `unit` and `shadow` (of a rule, a named path or every other path). */
export function checkLimit(field: string, l: any, problems: Problem[]): void {
    for (const [k, d] of Object.entries(LIMIT_FIELDS)) problems.push(...fieldProblems(d, `${field}.${k}`, l?.[k]));
}

/** A checked limit resolved: the one place its `requestsPerUnit` is read and its window converted to seconds. */
export function resolveLimit(l: LimitArgs): ResolvedLimit {
    return { requests: l.requestsPerUnit, unit: l.unit, seconds: LIMIT_UNIT_SECONDS[l.unit], shadow: withDefaults(LIMIT_FIELDS, l).shadow };
}

/**
 * A checked rule with its limit, `identity`, `cost`, a header's or parameter's `whenMissing`
 * and `valueCharset` (their declared defaults, rule-fields.ts), `rateLimitHeaders` (the filter's `headersOn`; `false` for a
 * shadow rule) and a route's `virtualHost` (`""`: every virtual host) resolved; its other fields as given.
 */
export function resolveRule(r: RateLimitRuleArgs, headersOn: boolean): ResolvedRule {
    const { requestsPerUnit: _requests, unit: _unit, shadow: _shadow, identity, cost, header, query, rateLimitHeaders, route, ...match } = r;
    return {
        ...match,
        ...(route ? { route: { name: route.name, virtualHost: route.virtualHost ?? "" } } : {}),
        rateLimitHeaders: rateLimitHeaders ?? (r.shadow === true ? false : headersOn),
        ...(header ? { header: { ...header, ...perValueDefaults(header, HEADER_MATCH_DEFAULTS) } } : {}),
        ...(query ? { query: { ...query, ...perValueDefaults(query, QUERY_MATCH_DEFAULTS) } } : {}),
        ...(identity ? { identity: resolveIdentity(identity) } : {}),
        ...(cost ? { cost: resolveRequestCost(cost) } : {}),
        ...resolveLimit(r),
    };
}

/** The per-value fields of a header or query parameter, with their declared defaults (read only with `perValue`). */
type PerValueFields = { whenMissing: MissingHeader; valueCharset: ValueCharset };

/** A header's or query parameter's per-value fields, each given or its declared default (`defaults`). */
function perValueDefaults(f: Partial<PerValueFields>, defaults: PerValueFields): PerValueFields {
    return { whenMissing: f.whenMissing ?? defaults.whenMissing, valueCharset: f.valueCharset ?? defaults.valueCharset };
}

/** A checked named path with its limit resolved. */
export function resolvePathLimit(p: PathLimitArgs): ResolvedPathLimit {
    return { path: p.path, ...resolveLimit(p) };
}

/** What a rule is, as a fix shows it. */
export const RULE_SHAPE = "{ name, requestsPerUnit, unit, ... }";

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
        checkSpelledLength(`${at}.path.${kinds[0]}`, path, problems);
    }
    checkSpellings(at, path, kinds, problems);
}

/** `path.spellings`: one of its values, only with exact or prefix. */
function checkSpellings(at: string, path: any, kinds: string[], problems: Problem[]): void {
    if (path?.spellings === undefined) return;
    const before = problems.length;
    problems.push(...givenProblems(PATH_MATCH_FIELDS.spellings, `${at}.path.spellings`, path.spellings));
    if (problems.length === before && kinds.includes("regex"))
        problems.push({
            key: `${at}.path.spellings`,
            value: path.spellings,
            problem: "applies to exact and prefix only: a regex is matched as written",
            fix: "remove spellings, and write the spellings the regex should count into it (e.g. [lL][oO][gG][iI][nN] for letter case)",
        });
}

/** Every spelling of a path is one RE2 program of a few instructions per character: a bound keeps it far under Envoy's limit. */
function checkSpelledLength(key: string, path: any, problems: Problem[]): void {
    const p = path.exact ?? path.prefix;
    if (path.spellings === PathSpellings.Exact || typeof p !== "string" || p.length <= MAX_SPELLED_PATH) return;
    problems.push({
        key,
        value: p,
        problem: `is longer than ${MAX_SPELLED_PATH} characters: the matcher of all its spellings would near the RE2 program size the gateway's Envoy accepts`,
        fix: `use a shorter prefix of it, or set spellings: "${PathSpellings.Exact}" (only this spelling is counted)`,
    });
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
    for (const f of ["v4", "v6"] as const) problems.push(...givenProblems(CLIENT_PREFIX_FIELDS[f], `clientPrefix.${f}`, p[f]));
}

/** Checks rule `i` (every problem, field paths under `rules[i]`); true when it has none. */
export function validateRule(r: any, i: number, names: Set<string>, problems: Problem[]): boolean {
    const at = `rules[${i}]`;
    const before = problems.length;
    if (typeof r !== "object" || r === null) {
        problems.push({ key: at, value: r, problem: "must be an object", fix: `give ${RULE_SHAPE}` });
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
    problems.push(...givenProblems(RULE_FIELDS.rateLimitHeaders, `${at}.rateLimitHeaders`, r.rateLimitHeaders));
    if (r.acceptEvictionRisk !== undefined) checkAcceptEvictionRisk(at, r, problems);
    checkRuleClient(at, r, problems);
    if (r.identity !== undefined) checkIdentity(at, r, problems);
    if (r.route !== undefined) problems.push(...fieldProblems(ROUTE_REF_FIELDS.name, `${at}.route.name`, r.route?.name));
    if (r.cost !== undefined) checkRequestCost(`${at}.cost`, r.cost, problems);
    checkLimit(at, r, problems);
    for (const [k, d] of ownRuleFields()) problems.push(...givenProblems(d, `${at}.${k}`, r[k]));
    if (r.cost !== undefined && problems.length === before) checkSharedCost(at, r, problems);
    return problems.length === before;
}

/** The rule's fields that validateRule checks by code of its own, with their siblings; every other field is checked by its declared rule alone. */
export const RULE_FIELDS_CHECKED_WITH_SIBLINGS: ReadonlySet<string> = new Set([
    "name",
    "path",
    "header",
    "methods",
    "query",
    "identity",
    "perClientAddress",
    "clientCidr",
    "route",
    "requestsPerUnit",
    "unit",
    "shadow",
    "rateLimitHeaders",
    "cost",
    "acceptEvictionRisk",
]);

/** The declared rule fields checked by their own rule (a field added to RULE_FIELDS is checked here with no other change). */
export function ownRuleFields(table: Readonly<Record<string, object>> = RULE_FIELDS): [string, FieldDecl<unknown>][] {
    return Object.entries(table).filter((e): e is [string, FieldDecl<unknown>] => !RULE_FIELDS_CHECKED_WITH_SIBLINGS.has(e[0]) && "rule" in e[1]);
}

/** The per-path limits: a valid descriptor key, each path once and checked, at least one limit. */
export function checkPerPath(perPath: PerPathLimitsArgs, pathKey: string, problems: Problem[]): void {
    if (typeof pathKey !== "string" || !NAME.test(pathKey)) {
        problems.push({
            key: "perPath.descriptorKey",
            value: pathKey,
            problem: "must be a non-empty descriptor key",
            fix: `use "${PER_PATH_DEFAULTS.descriptorKey}"`,
        });
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
    const bad = givenProblems(RULE_FIELDS.acceptEvictionRisk, `${at}.acceptEvictionRisk`, r.acceptEvictionRisk);
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

/** The rules' cross-field checks whose code is here (rule-fields.ts RULE_CHECKS). */
bindCrossCheck(RULE_CHECKS.path, "rule-checks.ts checkRulePath", checkRulePath);
bindCrossCheck(RULE_CHECKS.name, "rule-checks.ts checkRuleName", checkRuleName);
bindCrossCheck(RULE_CHECKS.eviction, "rule-checks.ts checkAcceptEvictionRisk", checkAcceptEvictionRisk);
bindCrossCheck(RULE_CHECKS.perPath, "rule-checks.ts checkPerPath", checkPerPath);
