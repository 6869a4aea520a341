/**
 * Client-CIDR rules (`clientCidr`) on the REAL envoyproxy/ratelimit service and Redis: a shop's
 * gateway (harness/shop.ts), its requests turned into descriptors by the gateway MODEL (no Envoy
 * here: the trusted client address and Envoy's `masked_remote_address` value are modelled, in
 * gateway-model/client-address.ts and builders/client-cidr.ts), decided by the real service with the
 * rendered config.yaml. What the real service shows: the CIDR values (`10.0.0.0/8`,
 * `2001:db8::/32`) load as config values and match; addresses of one CIDR share one counter, or
 * have one each with `perAddress`; a request from outside sends a descriptor the service finds no
 * limit for (OK, and nothing written to Redis).
 *
 * Each rule has its own path, and each counter that runs out belongs to one test (the service
 * caches an over-limit key until the window ends, whatever the flush between tests).
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    // Two IPv4 CIDRs of different lengths: two rate_limits entries, one counter per CIDR.
    { name: "v4", path: { prefix: "/v4" }, clientCidr: { cidrs: ["10.0.0.0/8", "172.16.0.0/12"] }, requestsPerUnit: 3, unit: M },
    { name: "v6", path: { prefix: "/v6" }, clientCidr: { cidr: "2001:db8::/32" }, requestsPerUnit: 3, unit: M },
    { name: "lab", path: { prefix: "/lab" }, clientCidr: { cidr: "192.168.4.0/22", perAddress: true }, requestsPerUnit: 2, unit: M },
    { name: "lab6", path: { prefix: "/six" }, clientCidr: { cidr: "2001:db8:a::/48", perAddress: true }, requestsPerUnit: 2, unit: M },
    { name: "xff", path: { prefix: "/xff" }, clientCidr: { cidr: "10.0.0.0/8" }, requestsPerUnit: 3, unit: M },
    { name: "mapped", path: { prefix: "/mapped" }, clientCidr: { cidr: "10.0.0.0/8" }, requestsPerUnit: 3, unit: M },
];

describe("rls: client-CIDR rules (one counter per CIDR, per address within it) on the real service; a shop's gateway via the model", function () {
    const { shop, send, okCount, ruleOf, counters } = useShop(RULES);
    /** The service's answer for one request: OK / OVER_LIMIT, or "nothing sent" when the request sent no descriptor. */
    const code = async (path: string, clientAddress: string, headers?: Record<string, string>, xffNumTrustedHops?: number) =>
        (await send(path, { clientAddress, headers, xffNumTrustedHops })).d?.overallCode ?? "nothing sent";

    it("the service loaded the CIDR values as config values: masked_remote_address_10.0.0.0/8 and _2001:db8::/32 with the rules' limits", async () => {
        const cfg = await shop.rlconfig();
        for (const line of [
            "shop.rule_v4.masked_remote_address_10.0.0.0/8: unit=MINUTE requests_per_unit=3",
            "shop.rule_v4.masked_remote_address_172.16.0.0/12: unit=MINUTE requests_per_unit=3",
            "shop.rule_v6.masked_remote_address_2001:db8::/32: unit=MINUTE requests_per_unit=3",
            "shop.rule_lab.masked_remote_address_192.168.4.0/22.masked_remote_address: unit=MINUTE requests_per_unit=2",
        ]) {
            expect(cfg).to.include(line);
        }
        const r = await send("/v4", { clientAddress: "10.1.2.3" });
        // Two entries of the rule: the /8 one matches, the /12 one sends 10.0.0.0/12, which no entry has.
        expect(r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","))).to.deep.equal([
            "rule=v4,masked_remote_address=10.0.0.0/8",
            "rule=v4,masked_remote_address=10.0.0.0/12",
        ]);
        expect(r.d!.statuses.map((s) => s.currentLimit?.requestsPerUnit)).to.deep.equal([3, undefined]);
    });

    it("IPv4, one counter per CIDR: 10.1.2.3 and 10.200.0.9 share 3; then 10.255.255.255 (another address of the CIDR) is refused; 172.16.0.0/12 has its own 3; 11.0.0.0, 9.255.255.255 and 172.32.0.0 (just outside) are never counted", async () => {
        await ensureWindow(15);
        expect(
            await okCount(
                6,
                () => "/v4",
                (i) => ({ clientAddress: i % 2 ? "10.1.2.3" : "10.200.0.9" }),
            ),
        ).to.equal(3);
        expect(await code("/v4", "10.255.255.255")).to.equal("OVER_LIMIT");
        expect(await code("/v4", "10.0.0.0")).to.equal("OVER_LIMIT");
        expect(
            await okCount(
                5,
                () => "/v4",
                (i) => ({ clientAddress: `172.${16 + i * 3}.0.1` }),
            ),
        ).to.equal(3);
        for (const outside of ["11.0.0.0", "9.255.255.255", "172.32.0.0", "172.15.255.255"]) {
            expect(
                await okCount(
                    8,
                    () => "/v4",
                    () => ({ clientAddress: outside }),
                ),
                outside,
            ).to.equal(8);
        }
        // Only the two CIDRs' counters were written: outside addresses left nothing in Redis.
        expect(await counters("v4")).to.have.length(2);
        expect((await counters("v4")).map((k) => k.replace(/_\d+$/, ""))).to.have.members([
            "shop_rule_v4_masked_remote_address_10.0.0.0/8",
            "shop_rule_v4_masked_remote_address_172.16.0.0/12",
        ]);
    });

    it("IPv6, one counter per CIDR: 2001:db8::1 and 2001:db8:ffff:ffff::2 share 3; 2001:db8:1234:: is refused; 2001:db9:: and 2001:db7:ffff:...:ffff (just outside) are never counted", async () => {
        await ensureWindow(15);
        expect(
            await okCount(
                6,
                () => "/v6",
                (i) => ({ clientAddress: i % 2 ? "2001:db8::1" : "2001:DB8:FFFF:FFFF::2" }),
            ),
        ).to.equal(3);
        expect(await code("/v6", "2001:db8:1234::")).to.equal("OVER_LIMIT");
        for (const outside of ["2001:db9::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "10.0.0.1"]) {
            expect(
                await okCount(
                    6,
                    () => "/v6",
                    () => ({ clientAddress: outside }),
                ),
                outside,
            ).to.equal(6);
        }
        expect((await counters("v6")).map((k) => k.replace(/_\d+$/, ""))).to.deep.equal(["shop_rule_v6_masked_remote_address_2001:db8::/32"]);
    });

    it("per address within the CIDR: 192.168.4.1, .4.2 and .7.255 2 each; 192.168.3.255 and .8.0 (just outside) never counted", async () => {
        await ensureWindow(15);
        for (const inside of ["192.168.4.1", "192.168.4.2", "192.168.7.255"]) {
            expect(
                await okCount(
                    4,
                    () => "/lab",
                    () => ({ clientAddress: inside }),
                ),
                inside,
            ).to.equal(2);
        }
        for (const outside of ["192.168.3.255", "192.168.8.0"]) {
            expect(
                await okCount(
                    6,
                    () => "/lab",
                    () => ({ clientAddress: outside }),
                ),
                outside,
            ).to.equal(6);
        }
        const r = await send("/lab/x", { clientAddress: "192.168.5.5" });
        const lab = ruleOf(r, "lab")!;
        // The client within the CIDR by its prefix (/32 for IPv4 by default).
        expect(lab.entries).to.deep.equal(["rule=lab", "masked_remote_address=192.168.4.0/22", "masked_remote_address=192.168.5.5/32"]);
        expect([lab.status.code, lab.status.currentLimit?.requestsPerUnit, lab.status.limitRemaining]).to.deep.equal(["OK", 2, 1]);
        expect(await counters("lab")).to.have.length(4);
    });

    it("per address within an IPv6 CIDR: 2001:db8:a::1 and 2001:db8:a:ffff::1 2 each; 2001:db8:b:: (just outside) never counted", async () => {
        await ensureWindow(15);
        for (const inside of ["2001:db8:a::1", "2001:db8:a:ffff::1"]) {
            expect(
                await okCount(
                    4,
                    () => "/six",
                    () => ({ clientAddress: inside }),
                ),
                inside,
            ).to.equal(2);
        }
        expect(
            await okCount(
                6,
                () => "/six",
                () => ({ clientAddress: "2001:db8:b::" }),
            ),
        ).to.equal(6);
        expect(
            await okCount(
                6,
                () => "/six",
                () => ({ clientAddress: "2001:db8:9:ffff::1" }),
            ),
        ).to.equal(6);
    });

    it("a spoofed X-Forwarded-For (model side): with 0 trusted hops it is ignored, inside stays counted and outside stays free; with 1 trusted hop only the entry the trusted proxy appended counts", async () => {
        await ensureWindow(20);
        // Outside, claiming an inside address: never counted.
        expect(
            await okCount(
                6,
                () => "/xff",
                () => ({ clientAddress: "198.51.100.2", headers: { "x-forwarded-for": "10.0.0.1" } }),
            ),
        ).to.equal(6);
        // Inside, claiming an outside address: counted all the same.
        expect(
            await okCount(
                5,
                () => "/xff",
                (i) => ({ clientAddress: "10.7.7.7", headers: { "x-forwarded-for": `198.51.100.${i}` } }),
            ),
        ).to.equal(3);
        // Behind one trusted proxy (peer 172.16.0.2), the client's own entries come first: 198.51.100.9 is the client.
        expect(await code("/xff", "172.16.0.2", { "x-forwarded-for": "10.0.0.1, 198.51.100.9" }, 1)).to.equal("OK");
        expect(await code("/xff", "172.16.0.2", { "x-forwarded-for": "10.0.0.1, 198.51.100.9" }, 1)).to.equal("OK");
        // ... and an inside client behind it is refused (the counter is spent).
        expect(await code("/xff", "172.16.0.2", { "x-forwarded-for": "198.51.100.9, 10.3.3.3" }, 1)).to.equal("OVER_LIMIT");
    });

    it("IPv4-mapped IPv6: a dual-stack listener's mapped peer is the IPv4 client (counted); a mapped X-Forwarded-For entry is IPv6 to Envoy, never the IPv4 CIDR", async () => {
        await ensureWindow(15);
        expect(
            await okCount(
                5,
                () => "/mapped",
                (i) => ({ clientAddress: i % 2 ? "::ffff:10.1.1.1" : "10.1.1.2" }),
            ),
        ).to.equal(3);
        const viaXff = await send("/mapped", { clientAddress: "172.16.0.2", headers: { "x-forwarded-for": "::ffff:10.1.1.1" }, xffNumTrustedHops: 1 });
        expect(ruleOf(viaXff, "mapped")!.entries).to.deep.equal(["rule=mapped", "masked_remote_address=::ffff:10.1.1.1/128"]);
        expect(viaXff.d!.overallCode).to.equal("OK");
    });
});
