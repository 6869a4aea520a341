/**
 * MODEL of how the gateway's Envoy picks the client address its `remote_address` and
 * `masked_remote_address` rate-limit actions send (the "trusted client address"); there is no
 * Envoy binary here. Envoy's rules (docs/proof/upstream.md has the sources):
 * - `use_remote_address: true` (what Istio sets on gateways): with `xff_num_trusted_hops` N = 0 the
 *   address of the connection's peer, X-Forwarded-For ignored; with N > 0 the Nth address from the
 *   right of X-Forwarded-For as received, or the peer when it has fewer than N entries or that entry
 *   is not an IP address. Istio sets N from `meshConfig.defaultConfig.gatewayTopology.numTrustedProxies`
 *   (default 0).
 * - `use_remote_address: false`: the (N+1)th address from the right, else the peer.
 * - An X-Forwarded-For entry is parsed as written: `::ffff:10.1.2.3` stays an IPv6 address. The
 *   peer of a dual-stack listener that accepts IPv4 is an IPv4 address (Envoy converts a mapped
 *   peer address), so the model turns a mapped peer into IPv4.
 * - Addresses are printed as Envoy prints them (IPv6 compressed, lower case).
 */
import { formatIp, parseIp } from "../builders/client-cidr";
import { field } from "../builders/rendered-config";

export interface ClientAddressInput {
    /** The connection's source address (the downstream peer). */
    peer: string;
    /** The X-Forwarded-For header as received (several headers joined with `,`). */
    xForwardedFor?: string;
    /** Envoy's `xff_num_trusted_hops` (Istio's `numTrustedProxies`). Defaults to 0. */
    xffNumTrustedHops?: number;
    /** Envoy's `use_remote_address`. Defaults to `true`, as on Istio's gateways. */
    useRemoteAddress?: boolean;
}

/** The X-Forwarded-For entry `skip` places from the right, parsed; undefined when there is none or it is not an IP address. */
export function xffEntry(xff: string | undefined, skip: number): string | undefined {
    if (xff === undefined) return undefined;
    let s = xff;
    for (let i = 0; i < skip; i++) {
        const comma = s.lastIndexOf(",");
        if (comma < 0) return undefined;
        s = s.slice(0, comma);
    }
    const comma = s.lastIndexOf(",");
    if (comma >= 0 && comma + 1 < s.length) s = s.slice(comma + 1);
    const a = parseIp(s.trim());
    return a ? formatIp(a) : undefined;
}

function peerAddress(peer: string): string {
    const a = parseIp(peer);
    if (!a) return peer;
    // A dual-stack listener's IPv4 peer (::ffff:a.b.c.d) is an IPv4 address to Envoy.
    if (a.family === 6 && a.bits >> 32n === 0xffffn) return formatIp({ family: 4, bits: a.bits & 0xffffffffn });
    return formatIp(a);
}

/** The trusted client address Envoy's rate-limit actions send for this request. */
export function trustedClientAddress(input: ClientAddressInput): string {
    const n = input.xffNumTrustedHops ?? 0;
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`xff_num_trusted_hops must be a whole number of at least 0, got ${n}`);
    const fromXff = (input.useRemoteAddress ?? true) ? (n > 0 ? xffEntry(input.xForwardedFor, n - 1) : undefined) : xffEntry(input.xForwardedFor, n);
    return fromXff ?? peerAddress(input.peer);
}

/** Every value under a key named `masked_remote_address`, however deep. */
function maskedActions(o: unknown, out: unknown[] = []): unknown[] {
    if (Array.isArray(o)) for (const x of o) maskedActions(x, out);
    else if (o !== null && typeof o === "object")
        for (const [k, v] of Object.entries(o)) {
            if (k === "masked_remote_address" || k === "maskedRemoteAddress") out.push(v);
            else maskedActions(v, out);
        }
    return out;
}

/** The IPv4 mask length (`v4_prefix_mask_len`, 32 when unset) of every `masked_remote_address` action the objects render. */
export function ipv4MaskLengths(objects: unknown[]): number[] {
    return maskedActions(objects).map((a) => Number(field(a, "v4_prefix_mask_len") ?? 32));
}
