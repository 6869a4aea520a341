/**
 * The plan of the typed limits: every check of the rules, the per-path limits, the keys and the
 * client prefix (each problem under its field path, `rules[2].path.prefix`, with the value and the
 * fix), then what the builders read: the valid rules, every limit resolved (rule-checks.ts
 * `resolveLimit`), and the keys with their defaults filled in.
 * `buildGlobalLimits` (rules.ts) takes only this plan and checks nothing. Pure.
 */
import { checkIssuersAgree } from "../rules/identity-checks";
import { Problem } from "../../lib/problems";
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { GLOBAL_ARGS_FIELDS, GLOBAL_FIELDS } from "./fields";
import { DEFAULT_CLIENT_PREFIX } from "../rules/client-prefix-fields";
import { ClientPrefixArgs, DEFAULT_RULE_KEY, GlobalLimitsInput, RateLimitRuleArgs } from "../../builders/rule-args";
import { PER_PATH_FIELDS } from "../rules/rule-fields";
import { RULE_SHAPE, checkClientPrefix, checkPerPath, resolveLimit, resolvePathLimit, resolveRule, validateRule } from "../rules/rule-checks";
import { ClientPrefix, CompiledLimits, GlobalLimitsPlan, buildGlobalLimits } from "../../builders/rules";

/** The declarations of the limits' own keys (GlobalRateLimit's), by their names in `GlobalLimitsInput`. */
const LIMITS_KEY_FIELDS = { pathKey: GLOBAL_FIELDS.pathKey, ruleKey: GLOBAL_ARGS_FIELDS.ruleKey };

/** Limits checked and planned: the plan, every problem, and the rules that passed their checks as given (what their dashboard rows say of them). */
export interface PlannedLimits {
    plan: GlobalLimitsPlan;
    problems: Problem[];
    checkedRules: RateLimitRuleArgs[];
}

/** Checks the limits (every problem at once) and plans the valid ones. */
export function planGlobalLimits(input: GlobalLimitsInput): PlannedLimits {
    const problems: Problem[] = [];
    const { pathKey: mode, ruleKey } = withDefaults(LIMITS_KEY_FIELDS, input);
    problems.push(...givenProblems(GLOBAL_FIELDS.pathKey, "pathKey", mode));
    problems.push(...givenProblems(GLOBAL_ARGS_FIELDS.ruleKey, "ruleKey", ruleKey));
    const rules = input.rules ?? [];
    if (!Array.isArray(rules)) problems.push({ key: "rules", value: rules, problem: "must be a list of rules", fix: `give [] or a list of ${RULE_SHAPE}` });
    const names = new Set<string>();
    const valid = (Array.isArray(rules) ? rules : []).filter((r, i) => validateRule(r, i, names, problems));
    if (Array.isArray(rules)) checkIssuersAgree(rules, problems);
    const perPath = input.perPath;
    const pathKey = withDefaults(PER_PATH_FIELDS, perPath).descriptorKey;
    if (perPath) checkPerPath(perPath, pathKey, problems);
    // Rule names cannot start with '/', paths always do: the values never collide, but the per-path
    // catch-all would also count a rule's descriptor value. Keep them apart unless needed.
    const nested = valid.find((r) => r.header?.perValue || r.query?.perValue || r.perClientAddress || r.clientCidr || r.identity);
    if (perPath && pathKey === ruleKey && nested) {
        problems.push({
            key: "ruleKey",
            value: ruleKey,
            problem: `equals perPath.descriptorKey, so rule '${nested.name}' (nested descriptors) would share the key with the per-path counters`,
            fix: `use a different ruleKey, e.g. "${DEFAULT_RULE_KEY}"`,
        });
    }
    checkClientPrefix(input.clientPrefix, problems);
    return { plan: resolvedPlan(input, valid), problems, checkedRules: valid };
}

/**
 * Limits whose checks found no problem, resolved as the builders read them without checking again
 * (a caller holding only the arguments: the per-value split, figures and policy header). `headersOn`,
 * the filter's headers, is required: a rule's own `rateLimitHeaders` is written only where it differs.
 */
export function resolveCheckedLimits(input: GlobalLimitsInput & { headersOn: boolean }): GlobalLimitsPlan {
    return resolvedPlan(input, input.rules ?? []);
}

/** The plan of `rules` (those that passed their checks) and the rest of `input`: every limit resolved, every default filled in. */
function resolvedPlan(input: GlobalLimitsInput, rules: RateLimitRuleArgs[]): GlobalLimitsPlan {
    const perPath = input.perPath;
    const headersOn = input.headersOn !== false;
    const keys = withDefaults(LIMITS_KEY_FIELDS, input);
    return {
        mode: keys.pathKey,
        ruleKey: keys.ruleKey,
        rules: rules.map((r) => resolveRule(r, headersOn)),
        // A null entry is a problem of the checks; it must not crash the build (every problem is reported at once).
        perPath: perPath
            ? {
                  key: withDefaults(PER_PATH_FIELDS, perPath).descriptorKey,
                  paths: (perPath.paths ?? []).filter((p) => typeof p === "object" && p !== null).map(resolvePathLimit),
                  ...(perPath.eachPath ? { eachPath: resolveLimit(perPath.eachPath) } : {}),
              }
            : undefined,
        prefix: resolveClientPrefix(input.clientPrefix),
        headersOn,
    };
}

/** `clientPrefix` with its defaults filled in (/32 for IPv4, /64 for IPv6). */
export function resolveClientPrefix(p: ClientPrefixArgs | undefined): ClientPrefix {
    return { v4: p?.v4 ?? DEFAULT_CLIENT_PREFIX.v4, v6: p?.v6 ?? DEFAULT_CLIENT_PREFIX.v6 };
}

/** The builder's output with the problems of the limits it was built from (the invalid rules left out). */
export interface CheckedLimits extends CompiledLimits {
    problems: Problem[];
}

/** Checks and builds the limits: the builder's output and every problem (returned, never thrown). */
export function compileGlobalLimits(input: GlobalLimitsInput): CheckedLimits {
    const { plan, problems } = planGlobalLimits(input);
    return { ...buildGlobalLimits(plan), problems };
}
