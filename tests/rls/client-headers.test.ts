/**
 * What clients see, on the REAL envoyproxy/ratelimit service and Redis: for each rule kind the
 * service's answer carries `current_limit`, `limit_remaining` and `duration_until_reset` matching the
 * rule, so the X-RateLimit headers the gateway builds from them (gateway MODEL,
 * gateway-model/rate-limit-headers.ts, no Envoy here) are right, refusals included; a hidden rule
 * never shows. And the method and query rules hold against what a client sends to get around them:
 * the method in another case, the parameter's name or value percent-encoded or in another case, the
 * parameter repeated behind another value. Every spelling counts against the one counter. A
 * per-value query rule (`query.perValue`) gives each decoded value its own counter, and a client
 * that hides its real value behind fresh ones (repeated, `;`-split, another case, `+`) meets one
 * shared counter instead of a new one per request; the negative control leaves that guard out.
 *
 * A shop's gateway (tests/rls/harness/shop.ts): GlobalRateLimit rendered under Pulumi's mocks, the
 * model turning each request into descriptors, the real service deciding. Counts are exact (one
 * window, one process); each test uses paths or keys of its own.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { envoyFirstQueryValue } from "../../gateway-model/evaluate";
import { LimitStatus, xRateLimitHeaders } from "../../gateway-model/rate-limit-headers";
import { DescriptorStatus } from "./harness/client";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "writes", path: { prefix: "/orders" }, methods: ["POST", "DELETE"], requestsPerUnit: 3, unit: M },
    // The same rule on paths of its own, for the method spellings (a counter that runs out stays refused in the service's cache until the window ends).
    { name: "cart-writes", path: { prefix: "/carts" }, methods: ["POST", "DELETE"], requestsPerUnit: 3, unit: M },
    { name: "free-tier", path: { prefix: "/items" }, query: { name: "tier", value: "free" }, requestsPerUnit: 4, unit: M },
    { name: "per-key", path: { prefix: "/keyed" }, header: { name: "x-api-key", perValue: true }, requestsPerUnit: 5, unit: M },
    { name: "per-client", path: { prefix: "/client" }, perClientAddress: true, requestsPerUnit: 2, unit: LimitUnit.Hour },
    // One counter per api_key value; three copies on paths of their own, so that each test's shared counters are its own.
    { name: "per-qkey", path: { prefix: "/qkeyed" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "qkey-guard", path: { prefix: "/qguard" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "qkey-missing", path: { prefix: "/qmissing" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
    // A guard clients must not see, 2 per minute, beside a shown 10 per minute on the same paths (both
    // fixed counters: one filter, one service, one set of headers).
    { name: "guarded-all", path: { prefix: "/guarded" }, requestsPerUnit: 10, unit: M },
    { name: "guard", path: { prefix: "/guarded" }, requestsPerUnit: 2, unit: M, rateLimitHeaders: false },
];

describe("rls: what clients see (X-RateLimit headers from the service's answer) and method and query rules against a client's spellings", function () {
    const { send, perValueSide } = useShop(RULES);

    /**
     * One request: the decision, and the X-RateLimit headers the gateway adds. Each rate-limit
     * filter builds its own set from its own call's statuses (with counterStore split, a fixed and
     * a per-value filter); the filters here ask for them (draft-03, the default). `headers`: the
     * sets merged, as the client reads them when only one filter answers.
     */
    async function ask(path: string, request: Parameters<typeof send>[1] = {}) {
        const r = await send(path, request);
        const statuses = r.d?.statuses ?? [];
        let at = 0;
        const sets = r.x.calls.map((c) => {
            const mine = statuses.slice(at, (at += c.descriptors.length));
            return xRateLimitHeaders(
                mine.map(modelStatus),
                c.descriptors.map((d) => d.headersOption),
                true,
            );
        });
        return { code: r.d?.overallCode ?? "NONE", statuses, sets, headers: Object.assign({}, ...sets) as Record<string, string>, x: r.x };
    }

    it("the rendered filter asks for the headers (enable_x_ratelimit_headers DRAFT_VERSION_03), so the model applies them", async () => {
        const r = await ask("/orders", { method: "POST" });
        expect(r.x.calls.map((c) => Object.keys(c.responseHeaders).length)).to.deep.equal([3]);
    });

    it("a fixed rule (methods): current_limit 3/minute, remaining 2, 1, 0, then 429 with remaining 0; the headers follow, Reset is the minute's seconds left", async () => {
        await ensureWindow(10);
        const seen: string[] = [];
        for (let i = 0; i < 4; i++) {
            const before = 60 - (Math.floor(Date.now() / 1000) % 60);
            const r = await ask("/orders/1", { method: "POST" });
            expect(r.statuses[0]!.currentLimit).to.deep.include({ requestsPerUnit: 3, unit: "MINUTE" });
            const reset = r.statuses[0]!.durationUntilResetSeconds!;
            expect(reset, "duration_until_reset: the seconds left in the minute").to.be.within(before - 1, before);
            expect(r.headers["x-ratelimit-reset"]).to.equal(String(reset));
            seen.push(`${r.code} ${r.headers["x-ratelimit-limit"]} ${r.headers["x-ratelimit-remaining"]}`);
        }
        expect(seen).to.deep.equal(["OK 3, 3;w=60 2", "OK 3, 3;w=60 1", "OK 3, 3;w=60 0", "OVER_LIMIT 3, 3;w=60 0"]);
    });

    it("a per-value rule: each key its own remaining count; a per-client rule per hour: w=3600 and Reset within the hour", async () => {
        await ensureWindow(10);
        const a1 = await ask("/keyed", { headers: { "x-api-key": "hdr-a" } });
        const a2 = await ask("/keyed", { headers: { "x-api-key": "hdr-a" } });
        const b1 = await ask("/keyed", { headers: { "x-api-key": "hdr-b" } });
        expect([a1, a2, b1].map((r) => `${r.headers["x-ratelimit-limit"]} ${r.headers["x-ratelimit-remaining"]}`)).to.deep.equal([
            "5, 5;w=60 4",
            "5, 5;w=60 3",
            "5, 5;w=60 4",
        ]);
        const c = await ask("/client", { clientAddress: "198.51.100.77" });
        expect(c.headers["x-ratelimit-limit"]).to.equal("2, 2;w=3600");
        expect(c.headers["x-ratelimit-remaining"]).to.equal("1");
        const hourLeft = 3600 - (Math.floor(Date.now() / 1000) % 3600);
        expect(Number(c.headers["x-ratelimit-reset"])).to.be.within(hourLeft - 1, hourLeft);
    });

    it("a hidden rule: while it is the tightest the response has no X-RateLimit headers, refusal included; it never appears in the list", async () => {
        await ensureWindow(10);
        const out: string[] = [];
        let last: Awaited<ReturnType<typeof ask>> | undefined;
        for (let i = 0; i < 3; i++) {
            last = await ask("/guarded/x");
            out.push(`${last.code} ${JSON.stringify(last.headers)}`);
        }
        // guard (2/min) is tighter than guarded-all (10/min): remaining 1, 0, 0 against 9, 8, 7.
        expect(out).to.deep.equal(["OK {}", "OK {}", "OVER_LIMIT {}"]);
        // Negative control: the same answer with the rule not hidden shows its limit, and lists both.
        const shown = xRateLimitHeaders(last!.statuses.map(modelStatus), [], true);
        expect(shown).to.deep.equal({
            "x-ratelimit-limit": "2, 10;w=60, 2;w=60",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": shown["x-ratelimit-reset"],
        });
    });

    it("methods: POST, post, Post and DELETE count against ONE counter of 3; GET and OPTIONS are not counted", async () => {
        await ensureWindow(10);
        const codes: string[] = [];
        for (const method of ["post", "Post", "delete"]) codes.push((await ask("/carts/m", { method })).code);
        codes.push((await ask("/carts/m", { method: "POST" })).code);
        expect(codes).to.deep.equal(["OK", "OK", "OK", "OVER_LIMIT"]);
        for (const method of ["GET", "OPTIONS", "POSTX"]) expect((await ask("/carts/m", { method })).code, method).to.equal("NONE");
    });

    it("query: tier=free in every spelling (plain, encoded name, encoded value, other case, repeated behind tier=gold) counts against ONE counter of 4", async () => {
        await ensureWindow(10);
        const spellings = ["/items?tier=free", "/items?%74ier=free", "/items?tier=fr%65e", "/items?TIER=free", "/items?tier=gold&tier=free"];
        const codes: string[] = [];
        for (const p of spellings) codes.push((await ask(p)).code);
        expect(codes).to.deep.equal(["OK", "OK", "OK", "OK", "OVER_LIMIT"]);
        // Other values and other parameters are not this rule's.
        for (const p of ["/items?tier=gold", "/items?tier=freeze", "/items?xtier=free", "/items"]) expect((await ask(p)).code, p).to.equal("NONE");
    });

    it("query.perValue: each decoded value its own counter of 3, whatever its spelling; its own X-RateLimit count", async () => {
        await ensureWindow(10);
        const seen: string[] = [];
        for (const p of ["/qkeyed?api_key=alpha", "/qkeyed/x?%61pi_key=alpha", "/qkeyed?api_key=%61lpha&x=1", "/qkeyed?api_key=alpha"]) {
            const r = await ask(p);
            seen.push(`${r.code} ${r.headers["x-ratelimit-remaining"]}`);
        }
        expect(seen).to.deep.equal(["OK 2", "OK 1", "OK 0", "OVER_LIMIT 0"]);
        const beta = await ask("/qkeyed?api_key=beta");
        expect(`${beta.code} ${beta.headers["x-ratelimit-limit"]} ${beta.headers["x-ratelimit-remaining"]}`).to.equal("OK 3, 3;w=60 2");
    });

    // A fresh value where the gateway reads (the first occurrence of the exact name, split on `&`,
    // `+` kept) and the real one where an application may read (the last, any case, `;`-split): 24
    // requests, each with a value never sent before. (A literal `+`, read as a space by some
    // applications, meets the same guard: unit tier, query-per-value.test.ts.)
    const hidden = (i: number) =>
        [
            `/qguard?api_key=fresh${i}&api_key=mine`,
            `/qguard?api_key=fresh${i};api_key=mine`,
            `/qguard?API_KEY=mine&api_key=fresh${i}`,
            `/qguard?api_key=mine;n=${i}`,
            `/qguard?%61pi_key=fresh${i}&api_key=mine`,
            `/qguard?api_key=fresh${i}&API_KEY=mine`,
        ][i % 6]!;

    it("query.perValue: a client hiding its value behind fresh ones gets 3 requests in all, not 3 per request (the guard's one counter)", async () => {
        await ensureWindow(10);
        let ok = 0;
        for (let i = 0; i < 24; i++) {
            const r = await ask(hidden(i));
            if (r.code === "OK") ok++;
            expect(
                r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(",")),
                hidden(i),
            ).to.deep.equal(["rule=qkey-guard,untrusted_value=shared,masked_remote_address=192.0.2.1/32"]);
        }
        expect(ok).to.equal(3);
    });

    it("negative control: the value Envoy's query_parameters alone would send for the same 24 requests is new each time: all 24 pass", async () => {
        await ensureWindow(10);
        const side = perValueSide();
        let ok = 0;
        for (let i = 100; i < 124; i++) {
            const value = envoyFirstQueryValue(hidden(i), "api_key")!;
            const d = await side.client.shouldRateLimit("shop", [
                [
                    { key: "rule", value: "qkey-guard" },
                    { key: "query_value", value },
                ],
            ]);
            if (d.overallCode === "OK") ok++;
        }
        expect(ok).to.equal(24);
    });

    it("query.perValue: without the parameter, the client's missing counter of 3; under another spelling only (other case, behind ';'), the client's guard counter of 3", async () => {
        await ensureWindow(10);
        const codes = async (paths: string[]) => {
            const out: string[] = [];
            for (const p of paths) out.push((await ask(p)).code);
            return out;
        };
        expect(await codes(["/qmissing", "/qmissing/y", "/qmissing?x=1", "/qmissing/z"])).to.deep.equal(["OK", "OK", "OK", "OVER_LIMIT"]);
        expect(await codes(["/qmissing?API_KEY=a1", "/qmissing?x=1;api_key=a2", "/qmissing?Api_Key=a3", "/qmissing?API_KEY=a4"])).to.deep.equal([
            "OK",
            "OK",
            "OK",
            "OVER_LIMIT",
        ]);
    });
});

/** A status as the service sends it (its `requestsPerUnit`), as the gateway model reads it. */
function modelStatus(s: DescriptorStatus): LimitStatus {
    const { code: _code, currentLimit: l, ...rest } = s;
    return { ...rest, ...(l ? { currentLimit: { requests: l.requestsPerUnit, unit: l.unit, name: l.name } } : {}) };
}
