/**
 * Value formats the stack config and the component arguments share: protobuf and Go durations, RE2
 * full matches, CIDRs, Gateway hosts. Pure.
 */
import { isIPv6 } from "net";
import { RE2 } from "re2-wasm";
import { isDnsName } from "./dns-names";

/** Protobuf JSON duration, the form Istio passes to Envoy: seconds with up to 9 decimals and `s`. */
const PROTO_DURATION = /^(\d+)(\.\d{1,9})?s$/;
/** Go `time.ParseDuration` form used by envoyproxy/ratelimit's environment. */
/** Go `time.ParseDuration` form used by envoyproxy/ratelimit's environment (the stack config and GlobalRateLimit's args). */
export const GO_DURATION = /^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/;

/** Seconds of a protobuf duration string, or undefined when it is not one. Exported for testing. */
export function protoDurationSeconds(s: string): number | undefined {
    const m = PROTO_DURATION.exec(s);
    return m ? Number(m[1] + (m[2] ?? "")) : undefined;
}

/** Compiles an RE2 regex anchored for a full match (Envoy's semantics). Throws on invalid RE2. */
export function compileFullMatch(regex: string): { test(s: string): boolean } {
    // Alone first: the anchoring group would balance an invalid `a)|(b` into a valid expression.
    new RE2(regex, "u");
    return new RE2(`^(?:${regex})$`, "u");
}

/** Validates an IPv4/IPv6 CIDR. Exported for testing. */
export function isCidr(s: string): boolean {
    const [addr, bits, ...rest] = s.split("/");
    // No leading zero in the length: Istio parses the ranges with Go's netip.ParsePrefix, which refuses one.
    if (rest.length || bits === undefined || !/^(0|[1-9]\d{0,2})$/.test(bits)) return false;
    const n = Number(bits);
    if (/^\d{1,3}(\.\d{1,3}){3}$/.test(addr)) {
        return n <= 32 && addr.split(".").every((o) => Number(o) <= 255 && String(Number(o)) === o);
    }
    if (/^[0-9a-fA-F:]+$/.test(addr) && isIPv6(addr)) {
        return n <= 128;
    }
    return false;
}

/** A host of a Gateway server or VirtualService: `*`, `*.<domain>` or a DNS name (no port, lower case). */
export function isGatewayHost(h: string): boolean {
    return h === "*" || isDnsName(h.startsWith("*.") ? h.slice(2) : h, "subdomain");
}

/** One character a request path carries as it is: RFC 3986 `pchar` (unreserved, sub-delims, `:`, `@`), `/`, and `%` of an escape. */
const PATH_CHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]$/;

/**
 * The path as a client sends it on the wire: every other character percent-encoded as UTF-8 bytes
 * (`/café` → `/caf%C3%A9`). Envoy compares `:path` byte for byte, so a path that differs from this
 * form never matches a request.
 */
export function pathAsSent(p: string): string {
    return [...p]
        .map((c) => (PATH_CHAR.test(c) ? c : [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")))
        .join("");
}

/** The problem text of a path that cannot match as written (the fix is `pathAsSent`). */
export const UNSENDABLE_PATH =
    "cannot match as written: clients send such characters percent-encoded (RFC 3986) and the gateway compares the path byte for byte";
