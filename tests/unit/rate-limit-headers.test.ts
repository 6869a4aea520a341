/**
 * The X-RateLimit headers of the gateway MODEL (gateway-model/rate-limit-headers.ts): which status
 * they report, which limits they list, and that a hidden rule is never revealed.
 */
import { expect } from "chai";
import { LimitStatus, xRateLimitHeaders } from "../../gateway-model/rate-limit-headers";

const s = (requestsPerUnit: number, unit: string, limitRemaining: number, reset: number, name?: string): LimitStatus => ({
    currentLimit: { requests: requestsPerUnit, unit, ...(name ? { name } : {}) },
    limitRemaining,
    durationUntilResetSeconds: reset,
});

describe("the gateway MODEL's X-RateLimit headers (draft-03)", () => {
    it("the fewest remaining wins; every shown limit is listed with its window; a name is quoted", () => {
        expect(xRateLimitHeaders([s(100, "MINUTE", 40, 20), s(1000, "HOUR", 3, 1800, "per-key")], [undefined, undefined], true)).to.deep.equal({
            "x-ratelimit-limit": '1000, 100;w=60, 1000;w=3600;name="per-key"',
            "x-ratelimit-remaining": "3",
            "x-ratelimit-reset": "1800",
        });
    });
    it("a tie: the first status wins", () => {
        expect(xRateLimitHeaders([s(5, "SECOND", 0, 1), s(9, "MINUTE", 0, 30)], [], true)["x-ratelimit-limit"]).to.equal("5, 5;w=1, 9;w=60");
    });
    it("a status without a limit takes no part; none with a limit: no headers", () => {
        expect(xRateLimitHeaders([{ limitRemaining: 0 }, s(7, "minute", 3, 60)], [], true)["x-ratelimit-remaining"]).to.equal("3");
        expect(xRateLimitHeaders([{ limitRemaining: 0 }], [], true)).to.deep.equal({});
    });
    it("filter off: no headers; a rule switched on still shows", () => {
        expect(xRateLimitHeaders([s(5, "minute", 2, 60)], [undefined], false)).to.deep.equal({});
        expect(xRateLimitHeaders([s(5, "minute", 2, 60)], ["DRAFT_VERSION_03"], false)["x-ratelimit-limit"]).to.equal("5, 5;w=60");
    });
    it("a hidden rule that is the tightest hides every header (a looser limit never stands in for it)", () => {
        expect(xRateLimitHeaders([s(100, "minute", 50, 60), s(3, "minute", 1, 60)], [undefined, "OFF"], true)).to.deep.equal({});
    });
    it("a hidden rule that is not the tightest is left out of the list", () => {
        expect(xRateLimitHeaders([s(100, "minute", 50, 60), s(3, "minute", 1, 60)], ["OFF", undefined], true)).to.deep.equal({
            "x-ratelimit-limit": "3, 3;w=60",
            "x-ratelimit-remaining": "1",
            "x-ratelimit-reset": "60",
        });
    });
});
