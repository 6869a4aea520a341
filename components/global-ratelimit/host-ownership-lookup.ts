/**
 * The cluster's side of host ownership (builders/host-ownership-rule.ts): the platform's defaults
 * EnvoyFilter on the gateway and, when the platform opts into route-bound ownership, every
 * VirtualService, Gateway API HTTPRoute and the Gateways they bind to, read with kubectl
 * (`KUBECONFIG`, else `~/.kube/config`, as kubectl finds its cluster) when a GlobalRateLimit would
 * turn the platform's defaults off on some hosts. Not read under Pulumi's mocks (unit tests,
 * `mesh-ratelimit explain`, which read the program's own objects instead). When kubectl cannot
 * answer, the preview warns: the cluster's admission policy still decides.
 */
import { execFileSync } from "child_process";
import * as pulumi from "@pulumi/pulumi";
import { PLATFORM_OBJECT_PREFIX, PlatformSource } from "../../builders/platform-filters";
import { OwnershipView, RoutedHosts, ServingGateway, platformOfFilter } from "../../builders/host-ownership-rule";

/** The name of the platform's defaults EnvoyFilter (in the gateway's namespace). */
export const PLATFORM_DEFAULTS_OBJECT = `${PLATFORM_OBJECT_PREFIX}-${PlatformSource.Defaults}`;

export function kubectlJson(args: string[]): any {
    const out = execFileSync("kubectl", ["get", ...args, "--ignore-not-found", "-o", "json"], {
        encoding: "utf8",
        timeout: 20_000,
        stdio: ["ignore", "pipe", "pipe"],
    });
    return out.trim() ? JSON.parse(out) : undefined;
}

/** The view from a platform EnvoyFilter and a VirtualService list as kubectl returns them. Exported for testing. */
export function ownershipViewOf(filter: any, virtualServices: any[]): OwnershipView {
    const routed: RoutedHosts[] = virtualServices.map((v) => ({
        namespace: String(v?.metadata?.namespace ?? "default"),
        name: String(v?.metadata?.name ?? ""),
        hosts: Array.isArray(v?.spec?.hosts) ? v.spec.hosts.map(String) : [],
        gateways: Array.isArray(v?.spec?.gateways) ? v.spec.gateways.map(String) : [],
    }));
    if (!filter) return { virtualServices: routed };
    return { platform: platformOfFilter(filter), virtualServices: routed };
}

/** Istio Gateways (servers' hosts) and Gateway API Gateways (listeners' hostnames, `*` without one) as kubectl returns them. Exported for testing. */
export function servingGatewaysOf(istio: any[], gatewayApi: any[]): ServingGateway[] {
    const meta = (g: any) => ({ namespace: String(g?.metadata?.namespace ?? "default"), name: String(g?.metadata?.name ?? "") });
    return [
        ...istio.map((g): ServingGateway => ({
            kind: "Gateway",
            ...meta(g),
            hosts: (Array.isArray(g?.spec?.servers) ? g.spec.servers : []).flatMap((s: any) => (Array.isArray(s?.hosts) ? s.hosts.map(String) : [])),
        })),
        ...gatewayApi.map((g): ServingGateway => ({
            kind: "GatewayApi",
            ...meta(g),
            hosts: (Array.isArray(g?.spec?.listeners) ? g.spec.listeners : []).map((l: any) => String(l?.hostname ?? "*")),
        })),
    ];
}

/** Whether the program runs under Pulumi's mocks (no cluster behind it; also the preflight's in-memory construction). */
export function underMocks(): boolean {
    try {
        const { MockMonitor } = require("@pulumi/pulumi/runtime/mocks") as { MockMonitor: abstract new (...a: never[]) => unknown };
        return pulumi.runtime.getMonitor() instanceof MockMonitor;
    } catch {
        return true;
    }
}

/** The ownership view of the gateway in `gatewayNamespace`, read from the cluster kubectl reaches. Throws when kubectl fails. */
export function lookupOwnershipView(gatewayNamespace: string): OwnershipView {
    const filter = kubectlJson(["envoyfilters.networking.istio.io", PLATFORM_DEFAULTS_OBJECT, "-n", gatewayNamespace]);
    if (!filter) return { virtualServices: [] };
    const view = ownershipViewOf(filter, []);
    // Hosts are a team's by assignment only, unless the platform opts into route-bound ownership.
    if (view.platform?.routeBound !== true) return view;
    const list = kubectlJson(["virtualservices.networking.istio.io", "--all-namespaces"]);
    const gateways = kubectlJson(["gateways.networking.istio.io", "--all-namespaces"])?.items ?? [];
    const routed = ownershipViewOf(filter, list?.items ?? []).virtualServices;
    return {
        ...view,
        virtualServices: [...routed, ...httpRoutes()],
        gateways: servingGatewaysOf(gateways, optionalList("gateways.gateway.networking.k8s.io")),
    };
}

/** The items of a kind the cluster may not serve (Gateway API); none when it does not. */
function optionalList(kind: string): any[] {
    try {
        return kubectlJson([kind, "--all-namespaces"])?.items ?? [];
    } catch {
        return [];
    }
}

/** Gateway API HTTPRoutes as bound hosts (`hostnames` on a `parentRefs` gateway); none when the cluster does not serve them. */
function httpRoutes(): RoutedHosts[] {
    return httpRoutesOf(optionalList("httproutes.gateway.networking.k8s.io"));
}

/** HTTPRoutes read as the check reads VirtualServices: a route with a parent gateway binds its hostnames. Exported for testing. */
export function httpRoutesOf(items: any[]): RoutedHosts[] {
    return items.map((r) => ({
        kind: "HTTPRoute" as const,
        namespace: String(r?.metadata?.namespace ?? "default"),
        name: String(r?.metadata?.name ?? ""),
        hosts: Array.isArray(r?.spec?.hostnames) ? r.spec.hostnames.map(String) : [],
        gateways: (Array.isArray(r?.spec?.parentRefs) ? r.spec.parentRefs : []).map((p: any) => `${p?.namespace ?? r?.metadata?.namespace}/${p?.name}`),
    }));
}

/** The first line of a failed kubectl call's error. */
export function firstLineOf(e: any): string {
    return String(e?.stderr || e?.message || e)
        .trim()
        .split("\n")[0]!;
}

/**
 * The ownership view of the gateway in `gatewayNamespace`, read from the cluster; undefined (not
 * checked) under mocks or when kubectl fails, with a warning naming why in the latter case.
 */
export function readOwnershipView(gatewayNamespace: string, warn: (m: string) => void): OwnershipView | undefined {
    if (underMocks()) return undefined;
    try {
        return lookupOwnershipView(gatewayNamespace);
    } catch (e: any) {
        warn(
            `could not read the platform's defaults EnvoyFilter or the routes with kubectl (${firstLineOf(e)}); not checked here that this instance turns the platform's defaults off only on its own hosts (the platform's admission policy refuses the EnvoyFilter at the API server when it does not)`,
        );
        return undefined;
    }
}
