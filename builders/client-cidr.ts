/**
 * The `clientCidr` field of a global rule: requests from client addresses inside one or more CIDRs,
 * counted together per CIDR (one counter for every address of the CIDR, Envoy Gateway's sourceCIDR
 * `Exact`) or per address within it (`perAddress`, Envoy Gateway's `Distinct`).
 *
 * Envoy side (router_ratelimit.cc): `masked_remote_address` appends the entry
 * `masked_remote_address = <trusted client address with its host bits cleared>/<mask length>`, the
 * address printed as Envoy prints addresses (IPv4 dotted quad; IPv6 by inet_ntop: lower-case hex,
 * the longest run of two or more zero groups as `::`), e.g. `10.0.0.0/8`, `2001:db8::/32`. The
 * mask length is per family (`v4_prefix_mask_len`, default 32; `v6_prefix_mask_len`, default 128),
 * so CIDRs of different lengths need one `rate_limits` entry each. `remote_address` appends the
 * trusted client address itself.
 *
 * Service side: the rule's node holds one child per CIDR, `masked_remote_address = <the CIDR>`,
 * with the limit (or, per address, a `remote_address` catch-all child with the limit). A request
 * from outside every CIDR sends values no child has (its own network at that length), so the
 * service finds no limit: it is never counted and never refused by this rule.
 *
 * CIDRs must not overlap: an address inside two would be counted in both. Then, for each length
 * L, an address masked at L equals a configured CIDR of length L exactly when it is inside it, and
 * at most one CIDR matches. Each entry pairs an IPv4 length with an IPv6 one; when one family has
 * more distinct lengths than the other, the other family's mask in the extra entries is a length
 * none of its CIDRs uses, so the value it yields matches nothing.
 *
 * Pure: no Pulumi runtime, no I/O, no checks (components/rules/client-cidr-checks.ts checks a rule's
 * `clientCidr`; these functions take it checked).
 */
import { RateLimitAction } from "./envoy-types";
import { ClientCidrArgs } from "./client-cidr-args.generated";

export { ClientCidrArgs };

/** A parsed address: family and its bits. */
export interface IpAddress {
    family: 4 | 6;
    bits: bigint;
}

/** A parsed, valid CIDR. */
export interface Cidr extends IpAddress {
    length: number;
    /** As Envoy prints the masked address: `10.0.0.0/8`, `2001:db8::/32`. */
    text: string;
}

/** The descriptor key of Envoy's `masked_remote_address` action (fixed by Envoy). */
export const MASKED_REMOTE_ADDRESS_KEY = "masked_remote_address";

export const WIDTH = { 4: 32, 6: 128 } as const;
export const V4_MAPPED = 0xffffn << 32n;

function parseIpv4(s: string): bigint | undefined {
    const m = /^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$/.exec(s);
    if (!m) return undefined;
    const octets = m.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    return octets.reduce((a, o) => (a << 8n) | BigInt(o), 0n);
}

function parseIpv6(s: string): bigint | undefined {
    const halves = s.split("::");
    if (halves.length > 2) return undefined;
    const groupsOf = (part: string): number[] | undefined => {
        if (part === "") return [];
        const out: number[] = [];
        const items = part.split(":");
        for (let i = 0; i < items.length; i++) {
            const g = items[i];
            if (i === items.length - 1 && g.includes(".")) {
                const v4 = parseIpv4(g);
                if (v4 === undefined) return undefined;
                out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
            } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) out.push(parseInt(g, 16));
            else return undefined;
        }
        return out;
    };
    const head = groupsOf(halves[0]);
    const tail = halves.length === 2 ? groupsOf(halves[1]) : [];
    if (!head || !tail) return undefined;
    const given = head.length + tail.length;
    if (halves.length === 2 ? given > 7 : given !== 8) return undefined;
    const groups = [...head, ...new Array(8 - given).fill(0), ...tail];
    return groups.reduce((a, g) => (a << 16n) | BigInt(g), 0n);
}

/** Parses an IPv4 or IPv6 address as Envoy's `inet_pton` does (no zone, no leading zeros in IPv4); undefined when it is not one. */
export function parseIp(s: string): IpAddress | undefined {
    if (typeof s !== "string") return undefined;
    const v4 = parseIpv4(s);
    if (v4 !== undefined) return { family: 4, bits: v4 };
    const v6 = s.includes(":") ? parseIpv6(s) : undefined;
    return v6 === undefined ? undefined : { family: 6, bits: v6 };
}

export function formatIpv4(bits: bigint): string {
    return [24n, 16n, 8n, 0n].map((s) => String((bits >> s) & 0xffn)).join(".");
}

/** An address as Envoy prints it (IPv6: glibc inet_ntop's form). */
export function formatIp(a: IpAddress): string {
    if (a.family === 4) return formatIpv4(a.bits);
    const words = Array.from({ length: 8 }, (_, i) => Number((a.bits >> BigInt(112 - 16 * i)) & 0xffffn));
    // The longest run of zero words (the first of equal ones), if at least two long, becomes "::".
    let best = { base: -1, len: 0 };
    let cur = { base: -1, len: 0 };
    words.forEach((w, i) => {
        if (w === 0) {
            cur = cur.base < 0 ? { base: i, len: 1 } : { base: cur.base, len: cur.len + 1 };
            if (cur.len > best.len) best = { ...cur };
        } else cur = { base: -1, len: 0 };
    });
    if (best.len < 2) best = { base: -1, len: 0 };
    let out = "";
    for (let i = 0; i < 8; i++) {
        if (best.base >= 0 && i >= best.base && i < best.base + best.len) {
            if (i === best.base) out += ":";
            continue;
        }
        if (i > 0) out += ":";
        // IPv4-compatible (::a.b.c.d) and IPv4-mapped (::ffff:a.b.c.d) addresses end in a dotted quad.
        if (i === 6 && best.base === 0 && (best.len === 6 || (best.len === 5 && words[5] === 0xffff))) {
            out += formatIpv4(a.bits & 0xffffffffn);
            break;
        }
        out += words[i].toString(16);
    }
    if (best.base >= 0 && best.base + best.len === 8) out += ":";
    return out;
}

export function networkOf(a: IpAddress, length: number): bigint {
    const w = BigInt(WIDTH[a.family]);
    const host = (1n << (w - BigInt(length))) - 1n;
    return a.bits & ~host & ((1n << w) - 1n);
}

/**
 * What Envoy's `masked_remote_address` sends for a client address: the address with its host bits
 * cleared at the family's mask length, then `/` and the length. Undefined when it is not an address.
 */
export function maskedRemoteAddress(address: string, v4PrefixMaskLen = 32, v6PrefixMaskLen = 128): string | undefined {
    const a = parseIp(address);
    if (!a) return undefined;
    const length = a.family === 4 ? v4PrefixMaskLen : v6PrefixMaskLen;
    return `${formatIp({ family: a.family, bits: networkOf(a, length) })}/${length}`;
}

/** The CIDRs of a `clientCidr` (validated or not): `cidr` alone, or `cidrs`. */
export function listOf(c: ClientCidrArgs): { list: unknown[]; field: (i: number) => string } {
    if (c.cidr !== undefined) return { list: [c.cidr], field: () => "cidr" };
    return { list: Array.isArray(c.cidrs) ? c.cidrs : [], field: (i) => `cidrs[${i}]` };
}

/** The valid CIDRs of a checked `clientCidr`, in the order given. */
export function cidrsOf(c: ClientCidrArgs): Cidr[] {
    return listOf(c).list.map((s) => cidrOf(s as string));
}

/** A checked CIDR (components/rules/client-cidr-checks.ts parseCidr): its family, network and Envoy's text of it. */
export function cidrOf(s: string): Cidr {
    const [addr, len] = s.split("/");
    const a = parseIp(addr!)!;
    const length = Number(len);
    const network = networkOf(a, length);
    return { family: a.family, bits: network, length, text: `${formatIp({ family: a.family, bits: network })}/${length}` };
}

/** A mask length of the family that no CIDR of that family uses (the full length when it is free). */
function unusedLength(used: number[], width: number): number {
    for (let l = width; l >= 0; l--) if (!used.includes(l)) return l;
    // Unreachable for non-overlapping CIDRs: a /0 overlaps every other CIDR of its family.
    throw new Error(`internal: every IPv${width === 32 ? 4 : 6} prefix length is used (the plan refuses overlapping CIDRs)`);
}

/**
 * The `masked_remote_address` actions of a rule's CIDRs: one per distinct prefix length (IPv4 and
 * IPv6 lengths paired), each `rate_limits` entry of the rule carrying one of them.
 */
export function maskedRemoteAddressActions(c: ClientCidrArgs): RateLimitAction[] {
    const cidrs = cidrsOf(c);
    const lengths = (f: 4 | 6) => [...new Set(cidrs.filter((x) => x.family === f).map((x) => x.length))].sort((a, b) => a - b);
    const v4 = lengths(4);
    const v6 = lengths(6);
    const n = Math.max(v4.length, v6.length);
    return Array.from({ length: n }, (_, i) => ({
        masked_remote_address: { v4_prefix_mask_len: v4[i] ?? unusedLength(v4, 32), v6_prefix_mask_len: v6[i] ?? unusedLength(v6, 128) },
    }));
}
