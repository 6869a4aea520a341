/**
 * Values the REAL envoyproxy/ratelimit service cannot read: it takes descriptor values as protobuf
 * strings and refuses a whole call (gRPC INTERNAL) when one of them is not valid UTF-8, so every
 * other descriptor of that call goes uncounted, and a gateway failing open (`failureModeDeny`
 * false, the default) lets the request through. A client writes such a value with plain ASCII:
 * `?api_key=%FF` (Envoy's `query_parameters` percent-decodes it into the byte 0xFF), or raw bytes
 * in a header. Per-value rules therefore send a value only when it is valid UTF-8 (for a query
 * parameter: its percent-encoded bytes form whole, well-formed UTF-8 characters); other requests
 * share the client's guard counter (`untrusted_value=shared` and the client's prefix). The gateway MODEL (no Envoy here) turns requests into descriptors; the
 * negative control sends the bytes Envoy's reading would give.
 */
import { expect } from "chai";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { envoyPercentDecodeBytes } from "../../gateway-model/evaluate";
import { gatewayOutcome, shouldRateLimitBytes } from "./harness/client";
import { useShop } from "./harness/shop";
import { ensureWindow } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "per-qkey", path: { prefix: "/q" }, query: { name: "api_key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "fixed", path: { prefix: "/q" }, requestsPerUnit: 1000, unit: M },
];

/** 24 requests, each with a value never sent before that decodes to bytes the service refuses. */
const unreadable = (i: number) => [`/q?api_key=%FF${i}`, `/q?api_key=k${i}%C3`, `/q?api_key=%ED%A0%80${i}`, `/q?api_key=%C0%AF${i}`][i % 4]!;

describe("rls: values the rate-limit service cannot read (invalid UTF-8) never reach it", function () {
    const { send, perValueSide } = useShop(RULES);

    it("the real service refuses a whole call when one value is not valid UTF-8 (gRPC INTERNAL); a valid non-ASCII value is read", async () => {
        const addr = perValueSide().client.address;
        const shared = { key: "rule", value: Buffer.from("per-qkey") };
        const bad = await shouldRateLimitBytes(addr, "shop", [[shared], [shared, { key: "query_value", value: Buffer.from([0x6b, 0xff]) }]]);
        expect(bad instanceof Error ? `${(bad as any).code} ${(bad as any).details}` : "answered").to.match(/^13 .*invalid UTF-8/);
        const good = await shouldRateLimitBytes(addr, "shop", [[shared], [shared, { key: "query_value", value: Buffer.from("café", "utf8") }]]);
        expect(good instanceof Error ? "error" : (good as any).overallCode).to.equal("OK");
    });

    it("query.perValue: 24 requests from one client whose value decodes to invalid UTF-8 send no value; they share the client's guard counter of 3", async () => {
        await ensureWindow(10);
        let ok = 0;
        for (let i = 0; i < 24; i++) {
            const r = await send(unreadable(i), {});
            const entries = r.x.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`).join(","));
            expect(entries, unreadable(i)).to.include("rule=per-qkey,untrusted_value=shared,masked_remote_address=192.0.2.1/32");
            expect(
                entries.some((e) => e.includes("query_value")),
                unreadable(i),
            ).to.equal(false);
            if (r.d?.overallCode === "OK") ok++;
        }
        expect(ok).to.equal(3);
    });

    it("negative control: the bytes Envoy's query_parameters reads from the same requests make every call fail, and a gateway failing open passes all 24", async () => {
        const addr = perValueSide().client.address;
        const outcomes: string[] = [];
        for (let i = 100; i < 124; i++) {
            const raw = unreadable(i).split("api_key=")[1]!;
            const answer = await shouldRateLimitBytes(addr, "shop", [
                [
                    { key: "rule", value: Buffer.from("per-qkey") },
                    { key: "query_value", value: envoyPercentDecodeBytes(raw) },
                ],
            ]);
            // failure_mode_deny false: an error lets the request through (the model of Envoy's filter: only OVER_LIMIT refuses).
            outcomes.push(answer instanceof Error ? "error: allowed" : gatewayOutcome(answer));
        }
        expect(outcomes).to.deep.equal(Array(24).fill("error: allowed"));
    });
});
