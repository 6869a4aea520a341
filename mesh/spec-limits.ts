/**
 * The specified stack's global limits as typed rules (builders/rules.ts): the per-path counters
 * of spec 2.4 (`PATH=<path>`, `limitedPath` and the catch-all) and, in variant A, the `api` route's
 * shared limit of spec 2.6 as a rule on that route. Pure; the one mapping from settings to rules,
 * used by the MeshRateLimit component and by the settings-based builders.
 */
import { DEFAULT_PATH_KEY } from "../builders/rule-args";
import { GlobalLimitsInput, RateLimitRuleArgs } from "../builders/rule-args";
import { descriptorLimit as limit } from "../components/common/mesh-enums";
import { StackSettings } from "./settings-types";

/** The route rule names no virtual host: GlobalRateLimit puts it on each of the Gateway's (`*:8080` by default, spec 2.6). */
export function globalLimitsFromSettings(s: Pick<StackSettings, "global">): GlobalLimitsInput {
    const api = s.global.apiRoute;
    const catchAll = s.global.descriptors.find((d) => d.value === undefined);
    const apiEntry = api ? s.global.descriptors.find((d) => d.value === api.descriptorValue) : undefined;
    // Without an entry of its own the service counted PATH=<api value> under the catch-all: same limit.
    const apiLimit = apiEntry ?? catchAll;
    const rules: RateLimitRuleArgs[] =
        api && apiLimit ? [{ name: api.descriptorValue, path: { regex: api.regex }, route: { name: api.route }, ...limit(apiLimit) }] : [];
    return {
        pathKey: s.global.pathKey,
        ruleKey: DEFAULT_PATH_KEY,
        perPath: {
            descriptorKey: DEFAULT_PATH_KEY,
            paths: s.global.descriptors.filter((d) => d.value !== undefined && d !== apiEntry).map((d) => ({ path: d.value!, ...limit(d) })),
            ...(catchAll ? { eachPath: limit(catchAll) } : {}),
        },
        rules,
    };
}
