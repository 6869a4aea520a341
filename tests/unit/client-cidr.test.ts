/**
 * The `clientCidr` rule field (builders/client-cidr.ts): the Envoy actions and config entries it
 * compiles to, its checks, the address formatting that must equal Envoy's `masked_remote_address`
 * value, and the gateway MODEL (no Envoy here) of the trusted client address and its masked value.
 *
 * Expected values are derived apart from the code under test: Envoy's own test expectations
 * (router_ratelimit_test.cc: `10.0.0.0/16`, `2001:abcd:ef01:2345::/64`), Envoy's documentation
 * examples of the trusted client address, Node's WHATWG URL serializer for IPv6 text, and Node's
 * `net.BlockList` for "is this address inside this CIDR".
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { Problem } from "../../lib/problems";
import { BlockList } from "node:net";
import { parse } from "yaml";
import { formatIp, maskedRemoteAddress, parseIp } from "../../builders/client-cidr";
import { parseCidr } from "../../components/rules/client-cidr-checks";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { LimitUnit, PathSpellings, RateLimitRuleArgs } from "../../builders/rule-args";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { trustedClientAddress, xffEntry } from "../../gateway-model/client-address";
import { GatewayModel } from "../../gateway-model/model";
import { explainWith } from "../../gateway-model/explain";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { beforeAllTests } from "./helpers";
import { shopObjects } from "./rules.test";

const M = LimitUnit.Minute;
const limit = (n: number) => ({ rate_limit: { unit: "minute", requests_per_unit: n } });
const ruleAction = (name: string) => ({ generic_key: { descriptor_key: "rule", descriptor_value: name } });

describe("clientCidr: Envoy's masked_remote_address value, computed apart", () => {
    it("Envoy's own test values: 10.0.0.1 at /16 is 10.0.0.0/16; 2001:abcd:ef01:2345:6789:abcd:ef01:234 at /64 and at the default /128", () => {
        expect(maskedRemoteAddress("10.0.0.1", 16)).to.equal("10.0.0.0/16");
        expect(maskedRemoteAddress("2001:abcd:ef01:2345:6789:abcd:ef01:234", 32, 64)).to.equal("2001:abcd:ef01:2345::/64");
        expect(maskedRemoteAddress("2001:abcd:ef01:2345:6789:abcd:ef01:234")).to.equal("2001:abcd:ef01:2345:6789:abcd:ef01:234/128");
        expect(maskedRemoteAddress("10.0.0.1")).to.equal("10.0.0.1/32");
        expect(maskedRemoteAddress("203.0.113.77", 0)).to.equal("0.0.0.0/0");
        expect(maskedRemoteAddress("not-an-ip", 8)).to.equal(undefined);
    });

    it("IPv6 text equals Node's URL serializer (longest zero run of 2+ as ::, first on ties, lower case) on 2000 random addresses", () => {
        let seed = 7;
        const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
        for (let n = 0; n < 2000; n++) {
            // Mostly zero groups, so runs and ties are frequent.
            const groups = Array.from({ length: 8 }, () => (rnd() % 3 === 0 ? rnd() % 0x10000 : 0));
            if (groups.slice(0, 5).every((g) => g === 0) && (groups[5] === 0 || groups[5] === 0xffff)) continue; // dotted-quad forms: below
            const text = groups.map((g) => g.toString(16).toUpperCase()).join(":");
            const a = parseIp(text)!;
            expect(formatIp(a), text).to.equal(new URL(`http://[${text}]/`).hostname.slice(1, -1));
        }
    });

    it("glibc inet_ntop's dotted forms and a single zero group", () => {
        expect(formatIp(parseIp("::ffff:10.1.2.3")!)).to.equal("::ffff:10.1.2.3");
        expect(formatIp(parseIp("0:0:0:0:0:0:a01:203")!)).to.equal("::10.1.2.3");
        expect(formatIp(parseIp("1:0:2:3:4:5:6:7")!)).to.equal("1:0:2:3:4:5:6:7");
        expect(formatIp(parseIp("::")!)).to.equal("::");
        expect(formatIp(parseIp("::1")!)).to.equal("::1");
        expect(formatIp(parseIp("2001:DB8:0:0:1::")!)).to.equal("2001:db8:0:0:1::");
    });

    it("an address is inside a CIDR exactly when its masked value is the CIDR (checked against net.BlockList)", () => {
        const cidrs = ["10.0.0.0/8", "192.168.4.0/22", "203.0.113.128/25", "2001:db8::/32", "2001:db8:a:b::/64", "fd00::/8"];
        const addrs = ["10.0.0.0", "10.255.255.255", "11.0.0.0", "9.255.255.255", "192.168.3.255", "192.168.4.0", "192.168.7.255", "192.168.8.0"];
        addrs.push("203.0.113.127", "203.0.113.128", "203.0.113.255", "2001:db8::1", "2001:db9::", "2001:db7:ffff::1", "2001:db8:a:b:ffff::1");
        addrs.push("2001:db8:a:c::", "fd12:3456::1", "fe00::1", "::ffff:10.0.0.1");
        for (const c of cidrs) {
            const p = parseCidr("c", c) as any;
            expect(p.text).to.equal(c);
            const bl = new BlockList();
            const [net, len] = c.split("/");
            bl.addSubnet(net, Number(len), p.family === 4 ? "ipv4" : "ipv6");
            for (const a of addrs) {
                const family = a.includes(":") ? 6 : 4;
                const masked = maskedRemoteAddress(a, p.family === 4 ? p.length : 32, p.family === 6 ? p.length : 128);
                // BlockList also counts ::ffff:10.0.0.1 inside 10.0.0.0/8; Envoy (XFF entry) masks it as IPv6: never the IPv4 CIDR.
                const inside = family === p.family && bl.check(a, family === 4 ? "ipv4" : "ipv6");
                expect(masked === c, `${a} in ${c}`).to.equal(inside);
            }
        }
    });
});

describe("clientCidr: rules → Envoy actions and config entries", () => {
    it("one CIDR, one counter: the rule's action, masked_remote_address at the CIDR's length (IPv6 at a length no IPv6 CIDR uses, 128), the CIDR as the config value", () => {
        const c = compileGlobalLimits({ rules: [{ name: "office", clientCidr: { cidr: "10.0.0.0/8" }, requestsPerUnit: 5, unit: M }] });
        expect(c.problems).to.deep.equal([]);
        expectGolden("client-cidr/one-cidr-rate-limits", c.vhostRateLimits);
        expectGolden("client-cidr/one-cidr-config", c.configDescriptors);
        expect(c.vhostRateLimits.map((e) => e.actions)).to.deep.equal([
            [ruleAction("office"), { masked_remote_address: { v4_prefix_mask_len: 8, v6_prefix_mask_len: 128 } }],
        ]);
        const [node] = c.configDescriptors[0]!.descriptors!;
        expect(node).to.deep.include({ key: "masked_remote_address", value: "10.0.0.0/8", ...limit(5) });
    });

    it("per address: the same entry, then the client's prefix (masked_remote_address at /32 and /64); the limit on its catch-all under the CIDR", () => {
        const c = compileGlobalLimits({ rules: [{ name: "lab", clientCidr: { cidr: "2001:db8::/32", perAddress: true }, requestsPerUnit: 2, unit: M }] });
        expectGolden("client-cidr/per-address-rate-limits", c.vhostRateLimits);
        expectGolden("client-cidr/per-address-config", c.configDescriptors);
        expect(c.vhostRateLimits[0]!.actions.slice(1)).to.deep.equal([
            { masked_remote_address: { v4_prefix_mask_len: 32, v6_prefix_mask_len: 32 } },
            { masked_remote_address: { v4_prefix_mask_len: 32, v6_prefix_mask_len: 64 } },
        ]);
        const cidr = c.configDescriptors[0]!.descriptors![0]!;
        expect([cidr.value, cidr.rate_limit, cidr.descriptors?.map((d) => [d.key, d.value, d.rate_limit])]).to.deep.equal([
            "2001:db8::/32",
            undefined,
            [["masked_remote_address", undefined, limit(2).rate_limit]],
        ]);
    });

    it("several CIDRs: one rate_limits entry per prefix length (IPv4 and IPv6 lengths paired, the missing family at an unused length), one config child per CIDR", () => {
        const rule: RateLimitRuleArgs = {
            name: "partners",
            path: { prefix: "/api", spellings: PathSpellings.Exact },
            clientCidr: { cidrs: ["198.51.100.0/24", "2001:DB8:0:0::/48", "10.0.0.0/8", "203.0.113.0/24", "2001:db8:1::/64"] },
            requestsPerUnit: 3,
            unit: M,
        };
        const c = compileGlobalLimits({ rules: [rule] });
        expect(c.problems).to.deep.equal([]);
        const first = {
            header_value_match: {
                descriptor_key: "rule",
                descriptor_value: "partners",
                headers: [{ name: ":path", safe_regex_match: { google_re2: {}, regex: "/api(?:[/?].*)?" } }],
            },
        };
        expectGolden("client-cidr/several-cidrs-rate-limits", c.vhostRateLimits);
        expect(c.vhostRateLimits.map((e) => [e.actions[0], e.actions[1]?.masked_remote_address])).to.deep.equal([
            [first, { v4_prefix_mask_len: 8, v6_prefix_mask_len: 48 }],
            [first, { v4_prefix_mask_len: 24, v6_prefix_mask_len: 64 }],
        ]);
        expect(c.configDescriptors[0].descriptors!.map((d) => `${d.key}=${d.value}`)).to.deep.equal([
            "masked_remote_address=198.51.100.0/24",
            "masked_remote_address=2001:db8::/48",
            "masked_remote_address=10.0.0.0/8",
            "masked_remote_address=203.0.113.0/24",
            "masked_remote_address=2001:db8:1::/64",
        ]);
        // Only IPv4 CIDRs: every entry masks IPv6 at 128, a length no (absent) IPv6 CIDR uses.
        const v4only = compileGlobalLimits({ rules: [{ ...rule, clientCidr: { cidrs: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "192.0.2.7/32"] } }] });
        expect(v4only.vhostRateLimits.map((e) => e.actions[1])).to.deep.equal(
            [8, 12, 16, 32].map((l) => ({ masked_remote_address: { v4_prefix_mask_len: l, v6_prefix_mask_len: 128 } })),
        );
        // An IPv6 /128 and IPv4 CIDRs: the IPv4-only entries must not mask IPv6 at 128 (it would count that client twice).
        const v6full = compileGlobalLimits({ rules: [{ ...rule, clientCidr: { cidrs: ["10.0.0.0/8", "172.16.0.0/12", "2001:db8::5/128"] } }] });
        expect(v6full.vhostRateLimits.map((e) => e.actions[1])).to.deep.equal([
            { masked_remote_address: { v4_prefix_mask_len: 8, v6_prefix_mask_len: 128 } },
            { masked_remote_address: { v4_prefix_mask_len: 12, v6_prefix_mask_len: 127 } },
        ]);
    });

    it("on a route: every entry of the rule goes on the route", () => {
        const c = compileGlobalLimits({
            rules: [{ name: "r", route: { name: "checkout" }, clientCidr: { cidrs: ["10.0.0.0/8", "11.0.0.0/9"] }, requestsPerUnit: 1, unit: M }],
        });
        expect(c.problems).to.deep.equal([]);
        expect(c.vhostRateLimits).to.deep.equal([]);
        expect(c.routePatches).to.have.length(1);
        expect(c.routePatches[0].rateLimits.map((e) => e.actions[1])).to.deep.equal([
            { masked_remote_address: { v4_prefix_mask_len: 8, v6_prefix_mask_len: 128 } },
            { masked_remote_address: { v4_prefix_mask_len: 9, v6_prefix_mask_len: 128 } },
        ]);
    });

    it("the rendered config.yaml holds the CIDR values as written by Envoy (quoted where YAML needs it, read back equal)", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
            namespace: "shop",
            rules: [{ name: "office", clientCidr: { cidrs: ["10.0.0.0/8", "2001:db8::/32"], perAddress: true }, requestsPerUnit: 4, unit: M }],
        });
        expect(plan.problems).to.deep.equal([]);
        const config = parse(plan.configYaml);
        expect(
            config.descriptors[0].descriptors.map((d: any) => [d.key, d.value, d.descriptors[0].key, d.descriptors[0].rate_limit.requests_per_unit]),
        ).to.deep.equal([
            ["masked_remote_address", "10.0.0.0/8", "masked_remote_address", 4],
            ["masked_remote_address", "2001:db8::/32", "masked_remote_address", 4],
        ]);
    });
});

describe("clientCidr: checks name the field and the fix", () => {
    const R = (clientCidr: unknown, extra: Partial<RateLimitRuleArgs> = {}): RateLimitRuleArgs =>
        ({ name: "r", clientCidr, requestsPerUnit: 1, unit: M, ...extra }) as RateLimitRuleArgs;
    const problems = (rule: RateLimitRuleArgs): Problem[] => compileGlobalLimits({ rules: [rule] }).problems;
    const cases: [string, RateLimitRuleArgs, Problem[]][] = [
        [
            "host bits set",
            R({ cidr: "10.1.2.3/8" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: "10.1.2.3/8",
                    problem: "has host bits set: 10.1.2.3 is not the first address of a /8 network",
                    fix: 'use the network: "10.0.0.0/8"',
                },
            ],
        ],
        [
            "IPv6 host bits set",
            R({ cidrs: ["2001:db8::1/64"] }),
            [
                {
                    key: "rules[0].clientCidr.cidrs[0]",
                    value: "2001:db8::1/64",
                    problem: "has host bits set: 2001:db8::1 is not the first address of a /64 network",
                    fix: 'use the network: "2001:db8::/64"',
                },
            ],
        ],
        [
            "no prefix length",
            R({ cidr: "192.0.2.7" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: "192.0.2.7",
                    problem: "has no prefix length",
                    fix: 'give the length: "192.0.2.7/32" for this one address, or its network\'s',
                },
            ],
        ],
        [
            "IPv4 length over 32",
            R({ cidr: "10.0.0.0/33" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: "10.0.0.0/33",
                    problem: "prefix length 33 is longer than an IPv4 address (0-32)",
                    fix: 'use a length from 0 to 32, e.g. "10.0.0.0/32"',
                },
            ],
        ],
        [
            "IPv6 length over 128",
            R({ cidr: "2001:db8::/129" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: "2001:db8::/129",
                    problem: "prefix length 129 is longer than an IPv6 address (0-128)",
                    fix: 'use a length from 0 to 128, e.g. "2001:db8::/128"',
                },
            ],
        ],
        [
            "IPv4-mapped IPv6",
            R({ cidr: "::ffff:192.168.0.0/112" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: "::ffff:192.168.0.0/112",
                    problem:
                        "is an IPv4-mapped IPv6 range: Envoy masks an IPv4 client (also one reaching a dual-stack listener) as IPv4, so this range would never match it",
                    fix: 'write it as IPv4: "192.168.0.0/16"',
                },
            ],
        ],
        ...(["10.0.0/8", "010.0.0.0/8", "256.0.0.0/8", "fe80::%eth0/10", "2001:db8:::/48", "1:2:3:4:5:6:7:8:9/64"].map((v) => [
            `not an address: ${v}`,
            R({ cidr: v }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: v,
                    problem: `'${v.split("/")[0]}' is not an IPv4 or IPv6 address (IPv4: four numbers 0-255 without leading zeros; IPv6: no zone)`,
                    fix: 'write e.g. "10.0.0.0/8" or "2001:db8::/32"',
                },
            ],
        ]) as [string, RateLimitRuleArgs, Problem[]][]),
        [
            "spaces",
            R({ cidr: " 10.0.0.0 / 8" }),
            [
                {
                    key: "rules[0].clientCidr.cidr",
                    value: " 10.0.0.0 / 8",
                    problem: "is not a CIDR (an IPv4 or IPv6 address, '/', a prefix length)",
                    fix: 'remove the spaces: "10.0.0.0/8"',
                },
            ],
        ],
        [
            "empty list",
            R({ cidrs: [] }),
            [
                {
                    key: "rules[0].clientCidr.cidrs",
                    value: [],
                    problem: "is empty: the rule would apply to no client",
                    fix: 'give at least one CIDR, e.g. ["10.0.0.0/8"], or remove clientCidr',
                },
            ],
        ],
        [
            "both cidr and cidrs",
            R({ cidr: "10.0.0.0/8", cidrs: ["11.0.0.0/8"] }),
            [
                {
                    key: "rules[0].clientCidr",
                    value: { cidr: "10.0.0.0/8", cidrs: ["11.0.0.0/8"] },
                    problem: "needs exactly one of cidr, cidrs (has cidr, cidrs)",
                    fix: "keep one of them (put every CIDR into cidrs)",
                },
            ],
        ],
        [
            "neither",
            R({ perAddress: true }),
            [
                {
                    key: "rules[0].clientCidr",
                    value: { perAddress: true },
                    problem: "needs exactly one of cidr, cidrs (has none)",
                    fix: 'give cidr: "10.0.0.0/8" or cidrs: [...]',
                },
            ],
        ],
        [
            "not an object",
            R("10.0.0.0/8"),
            [
                {
                    key: "rules[0].clientCidr",
                    value: "10.0.0.0/8",
                    problem: "must be an object { cidr } or { cidrs }",
                    fix: 'give e.g. { cidr: "10.0.0.0/8" }',
                },
            ],
        ],
        [
            "overlapping CIDRs",
            R({ cidrs: ["10.0.0.0/8", "192.168.0.0/16", "10.20.0.0/16"] }),
            [
                {
                    key: "rules[0].clientCidr.cidrs[2]",
                    value: "10.20.0.0/16",
                    problem: "overlaps cidrs[0] (10.0.0.0/8): an address in both would be counted in two counters",
                    fix: "keep the wider one, or give CIDRs that do not overlap",
                },
            ],
        ],
        [
            "the same network written twice",
            R({ cidrs: ["2001:db8::/32", "2001:0DB8:0::/32"] }),
            [
                {
                    key: "rules[0].clientCidr.cidrs[1]",
                    value: "2001:0DB8:0::/32",
                    problem: "is the same network as cidrs[0] (2001:db8::/32); the service rejects duplicate descriptors",
                    fix: "remove one of the two",
                },
            ],
        ],
        [
            "with perClientAddress",
            R({ cidr: "10.0.0.0/8" }, { perClientAddress: true }),
            [
                {
                    key: "rules[0].perClientAddress",
                    value: true,
                    problem: "cannot be combined with clientCidr",
                    fix: "remove perClientAddress and set clientCidr.perAddress: true (one counter per address within the CIDRs)",
                },
            ],
        ],
        [
            "with a per-value header",
            R({ cidr: "10.0.0.0/8" }, { header: { name: "x-api-key", perValue: true } }),
            [
                {
                    key: "rules[0].header.perValue",
                    value: true,
                    problem: "cannot be combined with clientCidr",
                    fix: "make two rules: one per header value, one with clientCidr",
                },
            ],
        ],
    ];
    for (const [name, rule, expected] of cases) it(name, () => expect(problems(rule)).to.deep.equal(expected));

    it("accepted: IPv4 and IPv6 together, /0, /32 and /128, a header value or presence, a path, a route", () => {
        for (const rule of [
            R({ cidrs: ["0.0.0.0/0", "2001:db8::/32"] }),
            R({ cidrs: ["192.0.2.7/32", "2001:db8::7/128", "fd00::/8"] }),
            R({ cidr: "10.0.0.0/8" }, { header: { name: "x-env", value: "ci" }, path: { exact: "/login" }, route: { name: "web" } }),
            R({ cidr: "10.0.0.0/8", perAddress: false }, { header: { name: "x-env" } }),
        ]) {
            expect(problems(rule), JSON.stringify(rule)).to.deep.equal([]);
        }
    });

    it("the component refuses it before anything is registered, naming the field", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
            namespace: "shop",
            rules: [R({ cidr: "10.0.0.1/8" })],
        });
        expect(plan.problems.map((p) => p.key)).to.deep.equal(["rules[0].clientCidr.cidr"]);
    });
});

describe("clientCidr: the trusted client address (gateway MODEL, Envoy's documented rules)", () => {
    const xff = "203.0.113.128, 203.0.113.10, 203.0.113.1";
    it("Envoy's examples: use_remote_address with 0 trusted hops takes the peer (XFF ignored), with 2 the 2nd address from the right", () => {
        expect(trustedClientAddress({ peer: "192.0.2.5", xForwardedFor: xff })).to.equal("192.0.2.5");
        expect(trustedClientAddress({ peer: "192.0.2.5", xForwardedFor: xff, xffNumTrustedHops: 2 })).to.equal("203.0.113.10");
        expect(trustedClientAddress({ peer: "10.11.12.13", xForwardedFor: `${xff}, 192.0.2.5`, useRemoteAddress: false })).to.equal("192.0.2.5");
        expect(trustedClientAddress({ peer: "10.11.12.13", xForwardedFor: `${xff}, 192.0.2.5`, useRemoteAddress: false, xffNumTrustedHops: 2 })).to.equal(
            "203.0.113.10",
        );
    });
    it("fewer entries than trusted hops, or an entry that is not an address: the peer", () => {
        expect(trustedClientAddress({ peer: "192.0.2.5", xForwardedFor: "198.51.100.1", xffNumTrustedHops: 2 })).to.equal("192.0.2.5");
        expect(trustedClientAddress({ peer: "192.0.2.5", xForwardedFor: "unknown, 198.51.100.1", xffNumTrustedHops: 2 })).to.equal("192.0.2.5");
        expect(trustedClientAddress({ peer: "192.0.2.5", xffNumTrustedHops: 1 })).to.equal("192.0.2.5");
        expect(xffEntry(" 10.0.0.1 ,\t2001:DB8::1 ", 0)).to.equal("2001:db8::1");
        expect(xffEntry("10.0.0.1,", 0)).to.equal(undefined);
    });
    it("a mapped peer of a dual-stack listener is IPv4; a mapped X-Forwarded-For entry stays IPv6", () => {
        expect(trustedClientAddress({ peer: "::ffff:10.1.2.3" })).to.equal("10.1.2.3");
        expect(trustedClientAddress({ peer: "192.0.2.5", xForwardedFor: "::ffff:10.1.2.3", xffNumTrustedHops: 1 })).to.equal("::ffff:10.1.2.3");
    });
});

describe("clientCidr: a user's gateway through the gateway MODEL (no Envoy here)", () => {
    const RULES: RateLimitRuleArgs[] = [
        { name: "office", clientCidr: { cidrs: ["10.0.0.0/8", "2001:db8::/32"] }, requestsPerUnit: 5, unit: M },
        { name: "lab", path: { prefix: "/lab" }, clientCidr: { cidr: "192.168.4.0/22", perAddress: true }, requestsPerUnit: 2, unit: M },
    ];
    let m: GatewayModel;
    beforeAllTests(() => {
        m = gatewayModel(shopObjects(RULES));
    });
    const hits = (p: string, clientAddress: string, headers: Record<string, string> = {}, xffNumTrustedHops?: number) =>
        explainWith(m, p, { headers, clientAddress, xffNumTrustedHops }).descriptors.map(
            (d) => `${d.entries.map((e) => `${e.key}=${e.value}`).join(",")} -> ${d.limit ? `${d.limit.requests}/${d.limit.unit}` : "none"}`,
        );

    it("inside a CIDR: one counter for the CIDR (the same bucket for two addresses); the other entry sends a value no config entry has", () => {
        expect(hits("/", "10.1.2.3")).to.deep.equal(["rule=office,masked_remote_address=10.0.0.0/8 -> 5/minute"]);
        expect(hits("/", "2001:db8:ffff::9")).to.deep.equal(["rule=office,masked_remote_address=2001:db8::/32 -> 5/minute"]);
        const b = (a: string) => explainWith(m, "/", { clientAddress: a }).descriptors[0].bucket;
        expect(b("10.1.2.3")).to.equal(b("10.200.0.1"));
        expect(b("10.1.2.3")).to.not.equal(b("2001:db8::1"));
    });

    it("outside every CIDR, also just past a boundary: descriptors that match no limit (never counted, never refused)", () => {
        for (const a of ["11.0.0.0", "9.255.255.255", "2001:db9::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "192.168.8.0", "192.168.3.255"]) {
            const x = explainWith(m, "/lab", { clientAddress: a });
            expect(x.limited, a).to.equal(false);
            expect(
                x.descriptors.every((d) => d.limit === undefined),
                a,
            ).to.equal(true);
        }
    });

    it("per address within the CIDR: each address its own counter; 192.168.7.255 is inside /22, 192.168.8.0 is not", () => {
        expect(hits("/lab", "192.168.7.255")).to.deep.equal([
            "rule=office,masked_remote_address=192.0.0.0/8 -> none",
            "rule=lab,masked_remote_address=192.168.4.0/22,masked_remote_address=192.168.7.255/32 -> 2/minute",
        ]);
        const b = (a: string) => explainWith(m, "/lab", { clientAddress: a }).descriptors[1].bucket;
        expect(b("192.168.4.1")).to.not.equal(b("192.168.4.2"));
        expect(hits("/other", "192.168.4.1")).to.deep.equal(["rule=office,masked_remote_address=192.0.0.0/8 -> none"]);
    });

    it("a spoofed X-Forwarded-For changes nothing with 0 trusted hops (Istio's default); with 1, only the entry the trusted proxy appended counts", () => {
        // Outside, claiming to be inside: still outside. Inside, claiming to be outside: still counted.
        expect(hits("/", "198.51.100.1", { "x-forwarded-for": "10.0.0.1" })).to.deep.equal(["rule=office,masked_remote_address=198.0.0.0/8 -> none"]);
        expect(hits("/", "10.0.0.1", { "x-forwarded-for": "198.51.100.1" })).to.deep.equal(["rule=office,masked_remote_address=10.0.0.0/8 -> 5/minute"]);
        // Behind one trusted load balancer (peer 172.16.0.2): the client's own XFF is left of the entry the balancer appends.
        expect(hits("/", "172.16.0.2", { "x-forwarded-for": "10.0.0.1, 198.51.100.1" }, 1)).to.deep.equal([
            "rule=office,masked_remote_address=198.0.0.0/8 -> none",
        ]);
        expect(hits("/", "172.16.0.2", { "x-forwarded-for": "198.51.100.1, 10.0.0.1" }, 1)).to.deep.equal([
            "rule=office,masked_remote_address=10.0.0.0/8 -> 5/minute",
        ]);
    });

    it("an IPv4-mapped address: from a dual-stack listener's peer it is the IPv4 client (counted); as an X-Forwarded-For entry it is IPv6 (not the IPv4 CIDR)", () => {
        expect(hits("/", "::ffff:10.0.0.1")).to.deep.equal(["rule=office,masked_remote_address=10.0.0.0/8 -> 5/minute"]);
        expect(hits("/", "172.16.0.2", { "x-forwarded-for": "::ffff:10.0.0.1" }, 1)).to.deep.equal(["rule=office,masked_remote_address=::/32 -> none"]);
    });
});

describe("client CIDRs: the address and CIDR grammar at its edges (gaps a mutation run found)", () => {
    const v6 = (s: string) => {
        const a = parseIp(s);
        return a && a.family === 6 ? a.bits.toString(16).padStart(32, "0") : a;
    };

    it("IPv6 text: one '::' at most, a dotted quad only last, at most 4 hex digits a group, '::' standing for at least one group", () => {
        expect(parseIp("1::2::3")).to.equal(undefined);
        expect(parseIp("1:2:3:4:5:1.2.3.4:7")).to.equal(undefined);
        expect(parseIp("1:2:3:4:5:6:7:12345")).to.equal(undefined);
        expect(parseIp("1:2:3:4::5:6:7:8")).to.equal(undefined);
        // Seven groups and '::': the '::' is one zero group.
        expect(v6("1:2:3:4:5:6::7")).to.equal("00010002000300040005000600000007");
        expect(v6("::1.2.3.4")).to.equal("00000000000000000000000001020304");
        // Not a string: not an address (and no exception).
        expect(parseIp(5 as unknown as string)).to.equal(undefined);
    });

    it("IPv6 printed as glibc's inet_ntop does: the longest zero run (the first of equal ones, at least two) as '::'; a dotted quad only for ::a.b.c.d and ::ffff:a.b.c.d", () => {
        // Node's URL serializer follows the same compression rule (RFC 5952) and has no dotted form.
        const urlForm = (s: string) => new URL(`http://[${s}]/`).hostname.slice(1, -1);
        const rnd = (n: number) => Math.floor(Math.random() * n);
        for (let t = 0; t < 500; t++) {
            const words = Array.from({ length: 8 }, () => (rnd(3) === 0 ? 0 : 1 + rnd(0xffff)));
            const start = rnd(8);
            const len = rnd(8 - start + 1);
            for (let i = start; i < start + len; i++) words[i] = 0;
            const text = words.map((w) => w.toString(16)).join(":");
            const a = parseIp(text)!;
            // glibc's dotted forms: leave them to the cases below.
            if (words.slice(0, 6).every((w) => w === 0) || (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff)) continue;
            expect(formatIp(a), text).to.equal(urlForm(text));
        }
        const f = (s: string) => formatIp(parseIp(s)!);
        expect(f("::ffff:1.2.3.4")).to.equal("::ffff:1.2.3.4");
        expect(f("::1.2.3.4")).to.equal("::1.2.3.4");
        expect(f("::1")).to.equal("::1");
        expect(f("::")).to.equal("::");
        // A zero run of four before ffff, or one before a word that is not ffff: no dotted quad.
        expect(f("0:0:0:0:1:ffff:102:304")).to.equal("::1:ffff:102:304");
        expect(f("::1:102:304")).to.equal("::1:102:304");
        expect(f("1:0:2:0:0:3:0:0")).to.equal("1:0:2::3:0:0");
    });

    it("parseCidr: blank, text around the CIDR, spaces inside, IPv4-mapped ranges at and above /96", () => {
        expect(parseCidr("c", "   ")).to.deep.include({ problem: "must be a CIDR: an address, '/', a prefix length" });
        for (const s of ["a/10.0.0.0/8", "10.0.0.0/8x", "x10.0.0.0/8"]) expect((parseCidr("c", s) as Problem).problem, s).to.be.a("string");
        // Spaces: the fix gives the CIDR without them when that one is valid, else the example.
        expect(parseCidr("c", " 10.0.0.0/8")).to.deep.include({ fix: 'remove the spaces: "10.0.0.0/8"' });
        expect(parseCidr("c", "10.0.0.0 /8")).to.deep.include({ fix: 'remove the spaces: "10.0.0.0/8"' });
        expect(parseCidr("c", "10.0.0 .1/8")).to.deep.include({ fix: 'write e.g. "10.0.0.0/8" or "2001:db8::/32"' });
        expect(parseCidr("c", "10.0.0.0.0/8")).to.deep.include({ fix: 'write e.g. "10.0.0.0/8" or "2001:db8::/32"' });
        expect(parseCidr("c", "10.0.0.0/8")).to.deep.include({ family: 4, length: 8, text: "10.0.0.0/8" });
        expect(parseCidr("c", "::ffff:10.0.0.0/104")).to.deep.include({ fix: 'write it as IPv4: "10.0.0.0/8"' });
        expect(parseCidr("c", "::ffff:0.0.0.0/96")).to.deep.include({ fix: 'write it as IPv4: "0.0.0.0/0"' });
        // Below /96 the range holds more than the mapped addresses: judged as an ordinary IPv6 CIDR.
        expect(parseCidr("c", "::ffff:0:0/95")).to.deep.include({ fix: 'use the network: "::fffe:0:0/95"' });
        expect(parseCidr("c", "::fffe:0:0/95")).to.deep.include({ family: 6, length: 95, text: "::fffe:0:0/95" });
        expect(parseCidr("c", "::/0")).to.deep.include({ family: 6, length: 0 });
    });

    it("checkClientCidr: a non-list cidrs, a null clientCidr, and a narrower CIDR listed before the wider one", () => {
        const problems = (c: unknown) => {
            const out: Problem[] = [];
            const { checkClientCidr } = require("../../components/rules/client-cidr-checks");
            checkClientCidr("r.clientCidr", c, out);
            return out;
        };
        expect(problems({ cidrs: "10.0.0.0/8" })).to.deep.equal([
            {
                key: "r.clientCidr.cidrs",
                value: "10.0.0.0/8",
                problem: "must be a list of CIDRs",
                fix: 'give at least one CIDR, e.g. ["10.0.0.0/8"], or remove clientCidr',
            },
        ]);
        expect(problems(null).map((p) => p.key)).to.deep.equal(["r.clientCidr"]);
        expect(problems({ cidrs: ["10.1.0.0/16", "10.0.0.0/8"] }).map((p) => p.problem)).to.deep.equal([
            "overlaps cidrs[0] (10.1.0.0/16): an address in both would be counted in two counters",
        ]);
        expect(problems({ cidrs: ["10.0.0.0/16", "10.1.0.0/16"] })).to.deep.equal([]);
    });
});
