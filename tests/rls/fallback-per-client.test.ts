/**
 * The fallback counters of the typed rules on the REAL envoyproxy/ratelimit service and Redis: the
 * per-path catch-all's paths over 1024 bytes, a per-value rule's untrusted values (too long, a
 * control character, a repeated header) and its missing value are each counted PER CLIENT (the
 * client's address prefix, `masked_remote_address`), so one client that fills its own fallback
 * counter never refuses another client; and clients are keyed by prefix, /64 for IPv6 by default,
 * so a /64 neighbour shares the counter. The gateway MODEL (no Envoy here) turns each request into
 * descriptors; the service decides. Negative controls: the same requests against the old layouts
 * (one shared fallback counter; the full /128 address).
 */
import { expect } from "chai";
import { parse, stringify } from "yaml";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "fixed", path: { exact: "/f" }, requestsPerUnit: 1000, unit: M },
    { name: "per-key", path: { prefix: "/k" }, header: { name: "x-api-key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "per-qkey", path: { prefix: "/q" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
];
const EXTRA = { perPath: { eachPath: { requestsPerUnit: 3, unit: M } } };
// Each test its own two clients: the service keeps an over-limit key in a local cache until its
// window ends (Redis flushed between tests or not), so a client refused in one test stays refused.
const CLIENTS = [0, 1, 2, 3, 4].map((i) => ({ A: `192.0.2.${10 + i}`, B: `198.51.100.${20 + i}` }));
const longPath = (i: number) => `/${"p".repeat(1100)}${i}`;
/** A fresh path under /k per request: the per-path catch-all (3 per path) never refuses these. */
const kPath = (i: number) => `/k/${i}`;

/** The old layout (before per-client fallbacks): every long path counted by the catch-all as one value, PATH=(path over 1024 bytes). */
function sharedLongPath(configYaml: string): string {
    const cfg = parse(configYaml);
    const drop = (ds: any[]): any[] =>
        ds.filter((d) => d.value !== "(path over 1024 bytes)").map((d) => (d.descriptors ? { ...d, descriptors: drop(d.descriptors) } : d));
    return stringify({ ...cfg, descriptors: drop(cfg.descriptors) });
}

describe("rls: fallback counters per client (long paths, untrusted and missing values); clients by /64", function () {
    const { send, okCount } = useShop(RULES, EXTRA);

    it("long paths: client A's 4th long path is refused (its own counter of 3); client B's long paths still pass (3 of them)", async () => {
        const { A, B } = CLIENTS[0]!;
        await ensureWindow(10);
        expect(await okCount(4, longPath, () => ({ clientAddress: A }))).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => longPath(100 + i),
                () => ({ clientAddress: B }),
            ),
        ).to.equal(3);
        const r = await send(longPath(200), { clientAddress: B });
        expect(r.d?.overallCode).to.equal("OVER_LIMIT");
        const entries = r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));
        expect(entries).to.include(`long_path=over-1024-bytes,masked_remote_address=${B}/32`);
    });

    it("a 300-character header value lands on the rule's guard (untrusted_value=shared, per client), never on a counter of its own", async () => {
        const { A } = CLIENTS[1]!;
        await ensureWindow(10);
        const r = await send(kPath(99), { clientAddress: A, headers: { "x-api-key": "v".repeat(300) } });
        const entries = r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));
        expect(entries).to.include(`rule=per-key,untrusted_value=shared,masked_remote_address=${A}/32`);
        expect(entries.some((e) => e.includes("x-api-key="))).to.equal(false);
        // 300 fresh long values from A: 2 more pass (3 in all), then A is refused on the guard.
        expect(await okCount(4, kPath, (i) => ({ clientAddress: A, headers: { "x-api-key": `${"w".repeat(300)}${i}` } }))).to.equal(2);
    });

    it("untrusted values: after client A fills its guard counter (repeated header, control character, 300-char query value), client B's untrusted requests still pass", async () => {
        const { A, B } = CLIENTS[2]!;
        await ensureWindow(10);
        const bad: Record<string, string | string[]>[] = [{ "x-api-key": ["k1", "k2"] }, { "x-api-key": "a\tb" }, { "x-api-key": "u".repeat(300) }];
        expect(await okCount(4, kPath, (i) => ({ clientAddress: A, headers: bad[i % 3]! }))).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => kPath(10 + i),
                (i) => ({ clientAddress: B, headers: bad[i % 3]! }),
            ),
        ).to.equal(3);
        // The query rule's guard: a 300-character value.
        const q = await send(`/q?api_key=${"z".repeat(300)}`, { clientAddress: A });
        expect(q.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","))).to.include(
            `rule=per-qkey,untrusted_value=shared,masked_remote_address=${A}/32`,
        );
    });

    it("missing values: client A's 4th request without x-api-key is refused; client B's still pass", async () => {
        const { A, B } = CLIENTS[3]!;
        await ensureWindow(10);
        expect(await okCount(4, kPath, () => ({ clientAddress: A }))).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => kPath(10 + i),
                () => ({ clientAddress: B }),
            ),
        ).to.equal(3);
    });

    it("a legitimate UTF-8 query value (caf%C3%A9) and a + have counters of their own, not the guard", async () => {
        const { A } = CLIENTS[4]!;
        await ensureWindow(10);
        for (const v of ["caf%C3%A9", "a+b"]) {
            const r = await send(`/q?api_key=${v}`, { clientAddress: A });
            expect(r.d?.overallCode, v).to.equal("OK");
            expect(
                r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(",")),
                v,
            ).to.include(`rule=per-qkey,query_value=${v === "a+b" ? "a+b" : "café"}`);
        }
    });

    it("IPv6: a /64 neighbour shares the counter (2001:db8:1:2::1 fills it, 2001:db8:1:2::ffff is refused); another /64 passes", async () => {
        await ensureWindow(10);
        expect(await okCount(3, longPath, () => ({ clientAddress: "2001:db8:1:2::1" }))).to.equal(3);
        expect((await send(longPath(50), { clientAddress: "2001:db8:1:2::ffff" })).d?.overallCode).to.equal("OVER_LIMIT");
        expect((await send(longPath(51), { clientAddress: "2001:db8:1:3::1" })).d?.overallCode).to.equal("OK");
    });
});

describe("rls: negative control, the old shared long-path counter (every long path one value of the catch-all): client A's long paths deny client B", function () {
    const { okCount } = useShop(RULES, EXTRA, sharedLongPath);

    it("client A uses up the one counter (3); client B's first long path is refused", async () => {
        const { A, B } = CLIENTS[0]!;
        await ensureWindow(10);
        expect(await okCount(3, longPath, () => ({ clientAddress: A }))).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => longPath(100 + i),
                () => ({ clientAddress: B }),
            ),
        ).to.equal(0);
    });
});

describe("rls: negative control, clients keyed by the full address (clientPrefix v6 128): each /64 neighbour gets a fresh counter", function () {
    const { okCount } = useShop(RULES, { ...EXTRA, clientPrefix: { v6: 128 } });

    it("2001:db8:1:2::1 fills its counter; 2001:db8:1:2::ffff, in the same /64, gets 3 more", async () => {
        await ensureWindow(10);
        expect(await okCount(4, longPath, () => ({ clientAddress: "2001:db8:1:2::1" }))).to.equal(3);
        expect(
            await okCount(
                3,
                (i) => longPath(100 + i),
                () => ({ clientAddress: "2001:db8:1:2::ffff" }),
            ),
        ).to.equal(3);
    });
});
