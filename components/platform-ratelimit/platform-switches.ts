/**
 * The platform's side of host ownership (components/global-ratelimit/host-ownership.ts), for a team that deployed
 * before the platform: a team's EnvoyFilter already in the gateway's namespace may switch the
 * defaults off on hosts its namespace does not own (its own preview found no platform to check
 * against). PlatformRateLimit's preview names each such switch, with the namespace that wrote it and
 * the host's owner; it changes nothing of the team's.
 *
 * The team's namespace is read from the rate-limit filter its EnvoyFilter inserts
 * (`envoy.filters.http.ratelimit/<namespace>/<service>`, the per-instance layout, the only one that
 * writes the switch); the rule is builders/host-ownership-rule.ts, the one every reader runs. A
 * switch written after the platform's admission policy is refused at the API server; these are the
 * ones written before it. `foreignSwitchMessages` is pure; `readForeignSwitches` reads the cluster.
 */
import { OwnershipView, RoutedHosts, TeamSwitch, switchRefusal, teamSwitches } from "../../builders/host-ownership-rule";
import { PLATFORM_DEFAULTS_OBJECT, firstLineOf, kubectlJson, lookupOwnershipView, underMocks } from "../global-ratelimit/host-ownership-lookup";

/** The switches on hosts the writing namespace does not own (the platform's facts as `view` holds them), as preview lines. */
export function foreignSwitchMessages(switches: TeamSwitch[], view: OwnershipView): string[] {
    return switches.flatMap((s) => {
        const refusal =
            s.team === undefined ? { reason: "the EnvoyFilter is not a GlobalRateLimit's (no namespace named)" } : switchRefusal(s.team, s.virtualHost, view);
        if (!refusal) return [];
        const what = s.virtualHost === "" ? "every host of the gateway" : s.virtualHost;
        return [
            `EnvoyFilter ${s.envoyFilter} (${s.team !== undefined ? `namespace ${s.team}'s GlobalRateLimit` : "not a GlobalRateLimit's"}) turns the platform's defaults off on ${what}: ${refusal.reason}. Written before the API server refused such switches (the platform's admission policy refuses any new create or update of it): the defaults do not apply there until that team redeploys (its preview and the API server then refuse the host) or removes it`,
        ];
    });
}

/** The view the platform's own arguments give (its assignments and opt-in), with the cluster's routes and Gateways when it opts into route-bound ownership. */
function platformView(gatewayNamespace: string, teamHosts: Record<string, string[]>, routeBound: boolean): OwnershipView {
    const platform = { envoyFilter: `${gatewayNamespace}/${PLATFORM_DEFAULTS_OBJECT}`, teamHosts, ...(routeBound ? { routeBound } : {}) };
    if (!routeBound) return { platform, virtualServices: [] as RoutedHosts[] };
    const cluster = lookupOwnershipView(gatewayNamespace);
    return { platform, virtualServices: cluster.virtualServices, ...(cluster.gateways ? { gateways: cluster.gateways } : {}) };
}

/** The preview's lines about foreign switches on the gateway in `gatewayNamespace`; none under mocks or when kubectl fails (with a warning). */
export function readForeignSwitches(gatewayNamespace: string, teamHosts: Record<string, string[]>, routeBound: boolean, warn: (m: string) => void): string[] {
    if (underMocks()) return [];
    try {
        const filters = kubectlJson(["envoyfilters.networking.istio.io", "-n", gatewayNamespace])?.items ?? [];
        const switches = teamSwitches(filters);
        if (!switches.length) return [];
        return foreignSwitchMessages(switches, platformView(gatewayNamespace, teamHosts, routeBound));
    } catch (e: any) {
        warn(
            `could not list the EnvoyFilters of ${gatewayNamespace} with kubectl (${firstLineOf(e)}); not checked whether a team switches the defaults off on hosts it does not own`,
        );
        return [];
    }
}
