/**
 * The platform's side of host ownership (components/host-ownership.ts), for a team that deployed
 * before the platform: a team's EnvoyFilter already in the gateway's namespace may switch the
 * defaults off on hosts its namespace does not own (its own preview found no platform to check
 * against). PlatformRateLimit's preview names each such switch, with the namespace that wrote it and
 * the host's owner; it changes nothing of the team's.
 *
 * The team's namespace is read from the rate-limit filter its EnvoyFilter inserts
 * (`envoy.filters.http.ratelimit/<namespace>/<service>`, the per-instance layout, the only one that
 * writes the switch). `teamSwitches` is pure; `readForeignSwitches` reads the cluster with kubectl.
 */
import { PLATFORM_FILTER_NAMES } from "../builders/platform-filters";
import { RATELIMIT_FILTER } from "../builders/envoy-filters";
import { OwnershipView, RoutedHosts, hostOfVirtualHost, hostOwners } from "./host-ownership";
import { firstLineOf, kubectlJson, ownershipViewOf, underMocks } from "./host-ownership-lookup";

/** One switch of the defaults a team's EnvoyFilter writes. */
export interface TeamSwitch {
    envoyFilter: string;
    /** The namespace of the GlobalRateLimit that wrote it (from its filter's name); undefined when unknown. */
    team?: string;
    virtualHost: string;
}

/** The switches of the platform's defaults in `envoyFilters`, with the namespace that wrote each. */
export function teamSwitches(envoyFilters: any[]): TeamSwitch[] {
    const out: TeamSwitch[] = [];
    for (const f of envoyFilters) {
        const patches: any[] = f?.spec?.configPatches ?? [];
        const own = patches.map((p) => String(p?.patch?.value?.name ?? "")).find((n) => n.startsWith(`${RATELIMIT_FILTER}/`));
        const team = own?.split("/")[1];
        for (const p of patches) {
            const off = p?.patch?.value?.typed_per_filter_config?.[PLATFORM_FILTER_NAMES.defaults];
            if (p?.applyTo !== "VIRTUAL_HOST" || off?.disabled !== true) continue;
            const envoyFilter = `${f.metadata?.namespace}/${f.metadata?.name}`;
            out.push({ envoyFilter, ...(team ? { team } : {}), virtualHost: String(p.match?.routeConfiguration?.vhost?.name ?? "") });
        }
    }
    return out;
}

/** The switches on hosts the writing namespace does not own (`teamHosts` as this platform assigns them), as preview lines. */
export function foreignSwitchMessages(switches: TeamSwitch[], teamHosts: Record<string, string[]>, virtualServices: RoutedHosts[]): string[] {
    const view: OwnershipView = { platform: { envoyFilter: "", teamHosts }, virtualServices };
    return switches.flatMap((s) => {
        const host = s.virtualHost === "" ? "" : hostOfVirtualHost(s.virtualHost);
        const owners = host === "" ? { namespaces: [] as string[] } : hostOwners(host, view);
        if (s.team !== undefined && owners.namespaces.includes(s.team)) return [];
        const what = host === "" ? "every host of the gateway (an earlier release's allVirtualHosts)" : `${s.virtualHost}`;
        const owner = owners.namespaces.length ? `owned by namespace ${owners.namespaces.join(", ")}` : "owned by no namespace";
        return [
            `EnvoyFilter ${s.envoyFilter} (${s.team !== undefined ? `namespace ${s.team}'s GlobalRateLimit` : "not a GlobalRateLimit's"}) turns the platform's defaults off on ${what}, ${owner}: the defaults do not apply there until that team redeploys (its preview then refuses the host) or removes it`,
        ];
    });
}

/** The preview's lines about foreign switches on the gateway in `gatewayNamespace`; none under mocks or when kubectl fails (with a warning). */
export function readForeignSwitches(gatewayNamespace: string, teamHosts: Record<string, string[]>, warn: (m: string) => void): string[] {
    if (underMocks()) return [];
    try {
        const filters = kubectlJson(["envoyfilters.networking.istio.io", "-n", gatewayNamespace])?.items ?? [];
        const switches = teamSwitches(filters);
        if (!switches.length) return [];
        const vs = kubectlJson(["virtualservices.networking.istio.io", "--all-namespaces"])?.items ?? [];
        return foreignSwitchMessages(switches, teamHosts, ownershipViewOf(undefined, vs).virtualServices);
    } catch (e: any) {
        warn(
            `could not list the EnvoyFilters of ${gatewayNamespace} with kubectl (${firstLineOf(e)}); not checked whether a team switches the defaults off on hosts it does not own`,
        );
        return [];
    }
}
