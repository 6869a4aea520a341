/**
 * Replay of a gateway log written in a custom Envoy format (text and JSON) that records the
 * `x-api-key` request header: the per-key rule of tests/unit/fixtures/api-key-program (requests
 * under /api, 10 a minute per key) is replayed per key, and its counts equal an independent oracle
 * written from the rule's statement. Negative control: the same requests in Istio's default format
 * (no request headers) are never counted per key.
 */
import { expect } from "chai";
import * as path from "path";
import { replayLog } from "../../prove/api";
import { formatReader, targetOf } from "../../prove/log-format";
import { istioText } from "./prove-login-log";
import { KeyedRequest, keyedRequests, perKeyOracle } from "./keyed-traffic";

const PROGRAM = path.join(__dirname, "fixtures", "api-key-program");
const TEXT = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% "%REQ(:AUTHORITY)%" key="%REQ(X-API-KEY)%" %DOWNSTREAM_REMOTE_ADDRESS%\n`;
const JSON_FORMAT = JSON.stringify({
    start_time: "%START_TIME%",
    method: "%REQ(:METHOD)%",
    path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
    authority: "%REQ(:AUTHORITY)%",
    api_key: "%REQ(X-API-KEY):64%",
    client: "%DOWNSTREAM_REMOTE_ADDRESS%",
    code: "%RESPONSE_CODE%",
});

type Req = KeyedRequest;

const requests = (n: number): Req[] =>
    keyedRequests(n, {
        seed: 99,
        startMs: Date.UTC(2026, 10, 28, 10, 0, 20),
        maxGapMs: 400,
        paths: ["/api/orders", "/api/items?id=7", "/apix", "/health", "/"],
        keys: 40,
        getShare: 0.5,
        keyOf: (k) => `key-${k}`,
        clientOf: (k) => `203.0.113.${k}`,
    });
const oracle = perKeyOracle;

const textLine = (r: Req) =>
    `[${new Date(r.timeMs).toISOString()}] "${r.method} ${r.path} HTTP/1.1" 200 "api.example.com" key="${r.key ?? "-"}" ${r.client}:40000`;
const jsonLine = (r: Req) =>
    JSON.stringify({
        start_time: new Date(r.timeMs).toISOString(),
        method: r.method,
        path: r.path,
        authority: "api.example.com",
        api_key: r.key ?? null,
        client: `${r.client}:40000`,
        code: 200,
    });

describe("prove/log-format: a custom access log format with request headers", function () {
    this.timeout(120_000);
    const rs = requests(3000);
    const want = oracle(rs);

    it("the oracle's log refuses some keys and leaves others (the test can fail both ways)", () => {
        expect(want.refused).to.be.above(50);
        expect(want.refused).to.be.below(want.requests / 2);
    });

    for (const [name, format, line] of [
        ["text", TEXT, textLine],
        ["JSON", JSON_FORMAT, jsonLine],
    ] as const)
        it(`${name}: the per-key rule counts and refuses as the oracle, per key`, async () => {
            const r = await replayLog(PROGRAM, rs.map(line).join("\n") + "\n", { logFormat: format });
            expect([r.requests, r.badCount]).to.deep.equal([3000, 0]);
            const rule = r.rules.find((x) => x.rule === "per-key")!;
            expect([rule.requests, rule.refused]).to.deep.equal([want.requests, want.refused]);
            expect(rule.topRefusedKeys[0]!.key).to.match(/^x-api-key=key-\d+$/);
        });

    it("negative control: the same requests in Istio's default format (no request headers) all fall on the clients' missing-key counters", async () => {
        const text = rs.map((r, i) => istioText(r, i).replace('"shop.example.com"', '"api.example.com"')).join("\n");
        const r = await replayLog(PROGRAM, text);
        expect(r.requests).to.equal(3000);
        const rule = r.rules.find((x) => x.rule === "per-key")!;
        expect(rule.requests).to.equal(want.requests);
        expect(rule.refused).to.not.equal(want.refused);
        expect(rule.topRefusedKeys.length).to.be.above(0);
        for (const k of rule.topRefusedKeys) expect(k.key).to.match(/^missing_value=shared, masked_remote_address=/);
    });

    it("a line not in the format is a bad line; a format without a time, method or path is refused naming what it lacks", async () => {
        const read = formatReader(TEXT);
        expect(read("hello", 3)).to.deep.include({ line: 3, reason: "the line does not have the shape of the access log format given" });
        expect(() => formatReader("%REQ(:METHOD)% %REQ(:PATH)%")).to.throw(/the access log format has no time field: replay needs %START_TIME%/);
        expect(() => formatReader("{not json")).to.throw(/starts with '\{' but is not JSON/);
        expect(targetOf("REQ(X-API-KEY):64")).to.deep.equal({ header: "x-api-key" });
        expect(targetOf("REQ(X-ENVOY-ORIGINAL-PATH?:PATH)")).to.equal("path");
        expect(targetOf("RESPONSE_CODE")).to.equal(undefined);
    });
});
