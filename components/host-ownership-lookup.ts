/**
 * The cluster's side of host ownership (components/host-ownership.ts): the platform's defaults
 * EnvoyFilter on the gateway and every VirtualService and Gateway API HTTPRoute, read with kubectl (`KUBECONFIG`, else
 * `~/.kube/config`, as kubectl finds its cluster) when a GlobalRateLimit would turn the platform's
 * defaults off on some hosts. Not read under Pulumi's mocks (unit tests, `mesh-ratelimit explain`):
 * there is no cluster there. When kubectl cannot answer, the check is skipped with a warning.
 */
import { execFileSync } from "child_process";
import * as pulumi from "@pulumi/pulumi";
import { PLATFORM_OBJECT_PREFIX, PlatformSource } from "../builders/platform-filters";
import { OwnershipView, RoutedHosts, TEAM_HOSTS_ANNOTATION, teamHostsOf } from "./host-ownership";

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
    return {
        platform: {
            envoyFilter: `${filter.metadata?.namespace}/${filter.metadata?.name}`,
            teamHosts: teamHostsOf(filter.metadata?.annotations?.[TEAM_HOSTS_ANNOTATION]),
        },
        virtualServices: routed,
    };
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
    const list = kubectlJson(["virtualservices.networking.istio.io", "--all-namespaces"]);
    const view = ownershipViewOf(filter, list?.items ?? []);
    return { ...view, virtualServices: [...view.virtualServices, ...httpRoutes()] };
}

/** Gateway API HTTPRoutes as bound hosts (`hostnames` on a `parentRefs` gateway); none when the cluster does not serve them. */
function httpRoutes(): RoutedHosts[] {
    let list: any;
    try {
        list = kubectlJson(["httproutes.gateway.networking.k8s.io", "--all-namespaces"]);
    } catch {
        return [];
    }
    return httpRoutesOf(list?.items ?? []);
}

/** HTTPRoutes read as the check reads VirtualServices: a route with a parent gateway binds its hostnames. Exported for testing. */
export function httpRoutesOf(items: any[]): RoutedHosts[] {
    return items.map((r) => ({
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
            `could not read the platform's defaults EnvoyFilter or the VirtualServices with kubectl (${firstLineOf(e)}); not checked that this instance turns the platform's defaults off only on its own hosts`,
        );
        return undefined;
    }
}
