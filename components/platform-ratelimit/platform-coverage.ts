/**
 * What the platform's HTTP filters cannot reach on its gateway: the servers of Istio Gateways (any
 * namespace) that select the platform's gateway pods and carry no HTTP connection manager, where no
 * HTTP filter runs at all. A TLS server in PASSTHROUGH or AUTO_PASSTHROUGH mode forwards encrypted
 * bytes (the gateway never sees a request); a TCP, TLS (terminated, then proxied as bytes), MONGO,
 * MySQL or Redis server is a TCP proxy. PlatformRateLimit lists them at preview with the reason
 * (docs/using-the-package.md says what a platform can do there); it refuses nothing.
 *
 * `uncoveredServers` is pure; `readUncoveredServers` reads the Gateways with kubectl (not under
 * Pulumi's mocks; skipped with a warning when kubectl cannot answer).
 */
import { firstLineOf, kubectlJson, underMocks } from "../global-ratelimit/host-ownership-lookup";

/** Protocols Istio serves through an HTTP connection manager (unless TLS is passed through). */
const HTTP_PROTOCOLS = new Set(["HTTP", "HTTPS", "HTTP2", "GRPC", "GRPC-WEB"]);

/** One server no HTTP filter covers. */
export interface UncoveredServer {
    /** `Gateway <namespace>/<name>`. */
    gateway: string;
    port: number;
    protocol: string;
    reason: string;
}

/** Whether a Gateway's selector picks pods with these labels (an empty selector picks none here: Istio needs one). */
function selects(selector: Record<string, string> | undefined, podLabels: Record<string, string>): boolean {
    const sel = Object.entries(selector ?? {});
    return sel.length > 0 && sel.every(([k, v]) => podLabels[k] === v);
}

/** The servers of `gateways` on the platform's pods that no HTTP filter can cover, each with why. */
export function uncoveredServers(gateways: any[], podLabels: Record<string, string>): UncoveredServer[] {
    const out: UncoveredServer[] = [];
    for (const g of gateways) {
        if (!selects(g?.spec?.selector, podLabels)) continue;
        const gateway = `Gateway ${g.metadata?.namespace ?? "default"}/${g.metadata?.name}`;
        for (const s of g.spec?.servers ?? []) {
            const protocol = String(s?.port?.protocol ?? "").toUpperCase();
            const port = Number(s?.port?.number);
            const mode = String(s?.tls?.mode ?? "");
            if (mode === "PASSTHROUGH" || mode === "AUTO_PASSTHROUGH")
                out.push({
                    gateway,
                    port,
                    protocol,
                    reason: `TLS ${mode}: the gateway forwards the encrypted bytes and never reads an HTTP request`,
                });
            else if (!HTTP_PROTOCOLS.has(protocol))
                out.push({ gateway, port, protocol, reason: `protocol ${protocol || "(none)"}: a TCP proxy, with no HTTP filter chain` });
        }
    }
    return out;
}

/** The preview's line for one such server. */
export function uncoveredMessage(s: UncoveredServer): string {
    return `platform limits do not reach ${s.gateway} port ${s.port} (${s.protocol}): ${s.reason}; its traffic meets none of the platform's overrides or defaults (docs/using-the-package.md, "What the platform's filters cannot reach")`;
}

/** The uncovered servers among the Gateways of every namespace, read with kubectl. Throws when kubectl fails. */
export function lookupUncoveredServers(podLabels: Record<string, string>): UncoveredServer[] {
    return uncoveredServers(kubectlJson(["gateways.networking.istio.io", "--all-namespaces"])?.items ?? [], podLabels);
}

/** The same, none under mocks or when kubectl fails (with a warning). */
export function readUncoveredServers(podLabels: Record<string, string>, warn: (m: string) => void): UncoveredServer[] {
    if (underMocks()) return [];
    try {
        return lookupUncoveredServers(podLabels);
    } catch (e: any) {
        warn(`could not list the Gateways with kubectl (${firstLineOf(e)}); not checked which servers on the platform's gateway no HTTP filter covers`);
        return [];
    }
}
