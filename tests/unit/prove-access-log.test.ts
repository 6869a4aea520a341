/**
 * The access log readers of `mesh-ratelimit replay` (prove/access-log.ts): Istio's default text
 * format, Envoy's default text format and JSON lines, each field where the format puts it, and every
 * line that cannot be read counted with its number and the reason (never dropped).
 */
import { expect } from "chai";
import { addressOf, parseLog, parseLogLine } from "../../prove/access-log";

/** A line of Istio's default text format, written field by field as the format string orders them. */
export function istioLine(o: {
    time: string;
    method: string;
    path: string;
    status?: number;
    xff?: string;
    host?: string;
    client?: string;
    cluster?: string;
}): string {
    return [
        `[${o.time}]`,
        `"${o.method} ${o.path} HTTP/1.1"`,
        String(o.status ?? 200),
        "-",
        "via_upstream",
        "-",
        '"-"',
        "0",
        "12",
        "3",
        "2",
        `"${o.xff ?? "-"}"`,
        '"curl/8.5.0"',
        '"5d0c7a4e-0000-4000-8000-000000000001"',
        `"${o.host ?? "shop.example.com"}"`,
        '"10.1.0.7:8080"',
        o.cluster ?? "outbound|8080||web.shop.svc.cluster.local",
        "10.1.0.5:40112",
        "10.1.0.5:8080",
        o.client ?? "203.0.113.7:51234",
        "-",
        "-",
    ].join(" ");
}

describe("prove/access-log: the access log formats replay reads", () => {
    it("Istio's default text format: time, method, path with its query, host, trusted client address (port dropped), X-Forwarded-For, upstream cluster, logged status", () => {
        const r = parseLogLine(
            istioLine({ time: "2026-11-27T16:00:01.250Z", method: "POST", path: "/login?next=/a", status: 429, xff: "198.51.100.9", client: "198.51.100.9:0" }),
            7,
        );
        expect(r).to.deep.equal({
            line: 7,
            timeMs: Date.UTC(2026, 10, 27, 16, 0, 1, 250),
            method: "POST",
            path: "/login?next=/a",
            loggedStatus: 429,
            host: "shop.example.com",
            xForwardedFor: "198.51.100.9",
            clientAddress: "198.51.100.9",
            upstream: "outbound|8080||web.shop.svc.cluster.local",
        });
    });

    it("an IPv6 client address in brackets, and '-' fields read as absent", () => {
        const r = parseLogLine(
            istioLine({ time: "2026-11-27T16:00:01Z", method: "GET", path: "/", client: "[2001:db8::7]:443", xff: "-", cluster: "-" }),
            1,
        ) as any;
        expect(r.clientAddress).to.equal("2001:db8::7");
        expect(r).to.not.have.property("xForwardedFor");
        expect(r).to.not.have.property("upstream");
        expect(addressOf("-")).to.equal(undefined);
        expect(addressOf("not-an-address:80")).to.equal(undefined);
        expect(addressOf("10.0.0.1")).to.equal("10.0.0.1");
    });

    it("Envoy's default text format (12 fields, no client address): host and X-Forwarded-For from their places", () => {
        const line = '[2026-11-27T16:00:02.000Z] "GET /items?x=1 HTTP/2" 200 - 0 33 4 3 "192.0.2.44" "ua" "id-1" "shop.example.com" "10.0.0.9:80"';
        expect(parseLogLine(line, 3)).to.deep.equal({
            line: 3,
            timeMs: Date.UTC(2026, 10, 27, 16, 0, 2),
            method: "GET",
            path: "/items?x=1",
            loggedStatus: 200,
            host: "shop.example.com",
            xForwardedFor: "192.0.2.44",
        });
    });

    it("JSON lines with Istio's JSON keys", () => {
        const line = JSON.stringify({
            start_time: "2026-11-27T16:00:03.000Z",
            method: "POST",
            path: "/login",
            response_code: 200,
            authority: "shop.example.com",
            downstream_remote_address: "203.0.113.8:1234",
            x_forwarded_for: null,
            upstream_cluster: "outbound|8080||web.shop.svc.cluster.local",
        });
        expect(parseLogLine(line, 2)).to.deep.equal({
            line: 2,
            timeMs: Date.UTC(2026, 10, 27, 16, 0, 3),
            method: "POST",
            path: "/login",
            loggedStatus: 200,
            host: "shop.example.com",
            clientAddress: "203.0.113.8",
            upstream: "outbound|8080||web.shop.svc.cluster.local",
        });
    });

    const BAD: [string, string, RegExp][] = [
        ["garbage", "hello world", /neither a text access log line.*nor a JSON one/],
        ["a custom text format", '[2026-11-27T16:00:00Z] "GET / HTTP/1.1" 200', /2 fields after the start time: Istio's default format has 21, Envoy's 12/],
        ["a bad time", istioLine({ time: "yesterday", method: "GET", path: "/" }), /start time 'yesterday' is not a timestamp/],
        ["a bad method", istioLine({ time: "2026-11-27T16:00:00Z", method: "G(T", path: "/" }), /method 'G\(T' is not an HTTP method/],
        ["a path without '/'", istioLine({ time: "2026-11-27T16:00:00Z", method: "GET", path: "login" }), /path 'login' does not start with '\/'/],
        ["broken JSON", '{"start_time": "2026-', /not JSON/],
        ["JSON without a path", JSON.stringify({ start_time: "2026-11-27T16:00:00Z", method: "GET" }), /no string 'path'/],
        ["a JSON list", "[1,2]", /fields after the start time|no closing/],
        ["no closing bracket", "[2026-11-27T16:00:00Z", /no closing '\]'/],
    ];
    for (const [name, line, reason] of BAD)
        it(`a bad line is named with its number and why: ${name}`, () => {
            const log = parseLog(`${istioLine({ time: "2026-11-27T16:00:00Z", method: "GET", path: "/" })}\n${line}\n`);
            expect(log.requests.length, "the good line is read").to.equal(1);
            expect(log.bad.length).to.equal(1);
            expect(log.bad[0]!.line).to.equal(2);
            expect(log.bad[0]!.reason).to.match(reason);
        });

    it("every line is accounted for: requests + bad + blank = lines, and no bad line is dropped", () => {
        const good = istioLine({ time: "2026-11-27T16:00:00Z", method: "GET", path: "/" });
        const text = [good, "", "junk 1", good, "   ", "junk 2", good].join("\n");
        const log = parseLog(text);
        expect([log.requests.length, log.bad.length, log.blank]).to.deep.equal([3, 2, 2]);
        expect(log.bad.map((b) => b.line)).to.deep.equal([3, 6]);
        expect(log.requests.map((r) => r.line)).to.deep.equal([1, 4, 7]);
    });
});

describe("prove/access-log: start times", () => {
    const { timeOf } = require("../../prove/access-log");
    it("RFC 3339 times read as Date.parse reads them, milliseconds kept, across seconds and days", () => {
        for (const s of [
            "2026-11-27T16:00:01.250Z",
            "2026-11-27T16:00:01Z",
            "2026-11-27T16:00:02.5Z",
            "2026-11-27T23:59:59.999Z",
            "2026-11-28T00:00:00.001Z",
            "2026-11-27T16:00:01.123456Z",
            "2026-11-27T16:00:01.250+01:00",
        ])
            expect(timeOf(s), s).to.equal(Date.parse(s.replace(/(\.\d{3})\d+/, "$1")));
        expect(timeOf("2026-13-45T00:00:00Z")).to.be.NaN;
    });
});
