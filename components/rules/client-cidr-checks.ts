/**
 * The checks of a rule's `clientCidr` (builders/client-cidr.ts builds from it once checked): each
 * CIDR a network of its family without host bits, not IPv4-mapped, none overlapping another; each
 * problem under its field (`rules[2].clientCidr.cidrs[1]`) with the value and the fix. Pure.
 */
import { CLIENT_CIDR_CHECK } from "./client-cidr-fields";
import { bindCrossCheck } from "../../lib/cross-checks";
import { Problem } from "../../lib/problems";
import { givenProblems } from "../../lib/field-decl";
import { CLIENT_CIDR_FIELDS } from "./client-cidr-fields";
import { Cidr, ClientCidrArgs, V4_MAPPED, WIDTH, formatIp, formatIpv4, listOf, networkOf, parseIp } from "../../builders/client-cidr";

/** Parses one CIDR; a problem (with the fix) when it is not a valid network. */
export function parseCidr(field: string, s: unknown): Cidr | Problem {
    if (typeof s !== "string" || s.trim() === "")
        return { key: field, value: s, problem: "must be a CIDR: an address, '/', a prefix length", fix: CIDR_EXAMPLE };
    const m = /^([^/]*)\/([0-9]{1,3})$/.exec(s);
    const a = parseIp(m ? m[1] : s);
    if (!m) {
        if (a)
            return {
                key: field,
                value: s,
                problem: "has no prefix length",
                fix: `give the length: "${s}/${WIDTH[a.family]}" for this one address, or its network's`,
            };
        return { key: field, value: s, problem: "is not a CIDR (an IPv4 or IPv6 address, '/', a prefix length)", fix: spacesFix(field, s) };
    }
    if (!a) {
        return {
            key: field,
            value: s,
            problem: `'${m[1]}' is not an IPv4 or IPv6 address (IPv4: four numbers 0-255 without leading zeros; IPv6: no zone)`,
            fix: spacesFix(field, s),
        };
    }
    return networkProblem(field, s, m[1], a, Number(m[2])) ?? cidrOf(a, Number(m[2]));
}

const CIDR_EXAMPLE = 'write e.g. "10.0.0.0/8" or "2001:db8::/32"';

/** The fix of text that is no CIDR: without its spaces, when that is one; else an example. */
function spacesFix(field: string, s: string): string {
    const trimmed = s.replace(/\s+/g, "");
    return trimmed !== s && !isProblem(parseCidr(field, trimmed)) ? `remove the spaces: "${trimmed}"` : CIDR_EXAMPLE;
}

/** The checked network of an address and a prefix length. */
function cidrOf(a: NonNullable<ReturnType<typeof parseIp>>, length: number): Cidr {
    const network = networkOf(a, length);
    return { family: a.family, bits: network, length, text: `${formatIp({ family: a.family, bits: network })}/${length}` };
}

/** What is wrong with a parsed address and length as a network (too long, IPv4-mapped, host bits set); undefined when nothing. */
function networkProblem(field: string, s: string, address: string, a: NonNullable<ReturnType<typeof parseIp>>, length: number): Problem | undefined {
    const width = WIDTH[a.family];
    if (length > width) {
        return {
            key: field,
            value: s,
            problem: `prefix length ${length} is longer than an IPv${a.family} address (0-${width})`,
            fix: `use a length from 0 to ${width}, e.g. "${address}/${width}"`,
        };
    }
    if (a.family === 6 && a.bits >> 32n === V4_MAPPED >> 32n && length >= 96) {
        const v4 = formatIpv4(networkOf(a, length) & 0xffffffffn);
        return {
            key: field,
            value: s,
            problem:
                "is an IPv4-mapped IPv6 range: Envoy masks an IPv4 client (also one reaching a dual-stack listener) as IPv4, so this range would never match it",
            fix: `write it as IPv4: "${v4}/${length - 96}"`,
        };
    }
    const { text, bits } = cidrOf(a, length);
    if (bits !== a.bits)
        return {
            key: field,
            value: s,
            problem: `has host bits set: ${address} is not the first address of a /${length} network`,
            fix: `use the network: "${text}"`,
        };
    return undefined;
}

function isProblem(x: Cidr | Problem): x is Problem {
    return (x as Problem).problem !== undefined;
}

function contains(outer: Cidr, inner: Cidr): boolean {
    return outer.family === inner.family && outer.length <= inner.length && networkOf(inner, outer.length) === outer.bits;
}

/** Checks a rule's `clientCidr` (at `at`, e.g. `rules[2].clientCidr`); problems are appended. */
export function checkClientCidr(at: string, c: unknown, problems: Problem[]): void {
    if (typeof c !== "object" || c === null || Array.isArray(c)) {
        problems.push({ key: at, value: c, problem: "must be an object { cidr } or { cidrs }", fix: 'give e.g. { cidr: "10.0.0.0/8" }' });
        return;
    }
    const cc = c as ClientCidrArgs;
    const kinds = (["cidr", "cidrs"] as const).filter((k) => cc[k] !== undefined);
    if (kinds.length !== 1) {
        problems.push({
            key: at,
            value: c,
            problem: `needs exactly one of cidr, cidrs (has ${kinds.length ? kinds.join(", ") : "none"})`,
            fix: kinds.length ? "keep one of them (put every CIDR into cidrs)" : 'give cidr: "10.0.0.0/8" or cidrs: [...]',
        });
        return;
    }
    problems.push(...givenProblems(CLIENT_CIDR_FIELDS.perAddress, `${at}.perAddress`, cc.perAddress));
    if (cc.cidrs !== undefined && (!Array.isArray(cc.cidrs) || cc.cidrs.length === 0)) {
        problems.push({
            key: `${at}.cidrs`,
            value: cc.cidrs,
            problem: Array.isArray(cc.cidrs) ? "is empty: the rule would apply to no client" : "must be a list of CIDRs",
            fix: 'give at least one CIDR, e.g. ["10.0.0.0/8"], or remove clientCidr',
        });
        return;
    }
    const { list, field } = listOf(cc);
    const parsed: { cidr: Cidr; i: number }[] = [];
    list.forEach((s, i) => {
        const p = parseCidr(`${at}.${field(i)}`, s);
        if (isProblem(p)) {
            problems.push(p);
            return;
        }
        const other = parsed.find((q) => contains(q.cidr, p) || contains(p, q.cidr));
        if (other) {
            const same = other.cidr.text === p.text;
            problems.push({
                key: `${at}.${field(i)}`,
                value: s,
                problem: same
                    ? `is the same network as ${field(other.i)} (${other.cidr.text}); the service rejects duplicate descriptors`
                    : `overlaps ${field(other.i)} (${other.cidr.text}): an address in both would be counted in two counters`,
                fix: same ? "remove one of the two" : "keep the wider one, or give CIDRs that do not overlap",
            });
            return;
        }
        parsed.push({ cidr: p, i });
    });
}

bindCrossCheck(CLIENT_CIDR_CHECK, "client-cidr-checks.ts checkClientCidr", checkClientCidr);
