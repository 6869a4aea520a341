/**
 * A team's side of host ownership (builders/host-ownership-rule.ts, the one rule): a GlobalRateLimit
 * with `platformDefaults: replace` (the default) turns the platform's defaults filter off on its
 * virtual hosts, and may do that only on hosts its namespace owns. A team is the namespace its
 * GlobalRateLimit deploys its service into (`namespace`). The preview says so early; the API server
 * enforces it (PlatformRateLimit's admission policy, builders/admission-policy.ts), whatever program
 * or hand writes the EnvoyFilter.
 *
 * Pure: the cluster's answer comes in as an `OwnershipView` (components/global-ratelimit/host-ownership-lookup.ts
 * reads it with kubectl at preview and at update).
 */
import { OwnershipView, switchRefusal } from "../../builders/host-ownership-rule";
import { Problem } from "../../lib/problems";

/**
 * The virtual hosts on which `team` may not switch the platform's defaults off, as problems under
 * `gateway.virtualHosts[i]`: none when the gateway has no platform defaults to switch off.
 */
export function hostOwnershipProblems(team: string, virtualHosts: readonly string[], view: OwnershipView): Problem[] {
    const platform = view.platform;
    if (!platform) return [];
    const problems: Problem[] = [];
    virtualHosts.forEach((vh, i) => {
        const refusal = switchRefusal(team, vh, view);
        if (!refusal) return;
        problems.push({
            key: `gateway.virtualHosts[${i}]`,
            value: vh,
            problem: `this instance (namespace ${team}) may not turn the platform's defaults (EnvoyFilter ${platform.envoyFilter}) off on ${vh}: ${refusal.reason}; the cluster's admission policy refuses the EnvoyFilter too`,
            fix: refusal.fix,
        });
    });
    return problems;
}
