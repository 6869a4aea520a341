/**
 * The explain CLI's formatting (render/explain-format.ts), function by function, with exact
 * expectations: envoyproxy/ratelimit's fixed, epoch-aligned windows (windowStart), the limit reached
 * first (bindingDescriptor) and the CLI's text (formatExplanation). Inputs are small hand-written
 * gateway models (gateway-model-fixtures.ts), built inside each test.
 */
import { expect } from "chai";
import { AppliedLimit, DescriptorExplanation, Explanation } from "../../gateway-model/model";
import { explainWith } from "../../gateway-model/explain";
import { bindingDescriptor, formatExplanation, windowStart } from "../../render/explain-format";

import { bookinfoModel, route } from "./gateway-model-fixtures";

describe("the explain CLI's formatting (render/explain-format.ts): windowStart, envoyproxy/ratelimit's fixed epoch-aligned windows", () => {
    it("second, minute, hour and day windows start on UTC boundaries counted from the Unix epoch", () => {
        const now = Date.UTC(2026, 0, 1, 12, 34, 56, 789);
        expect(windowStart("second", now)).to.equal(Date.UTC(2026, 0, 1, 12, 34, 56) / 1000);
        expect(windowStart("minute", now)).to.equal(Date.UTC(2026, 0, 1, 12, 34) / 1000);
        expect(windowStart("hour", now)).to.equal(Date.UTC(2026, 0, 1, 12) / 1000);
        expect(windowStart("day", now)).to.equal(Date.UTC(2026, 0, 1) / 1000);
    });

    it("on a boundary the new window starts; one millisecond earlier it is still the previous one", () => {
        const minute = Date.UTC(2026, 5, 30, 23, 59);
        expect(windowStart("minute", minute)).to.equal(minute / 1000);
        expect(windowStart("minute", minute - 1)).to.equal(minute / 1000 - 60);
        const day = Date.UTC(2026, 6, 1);
        expect(windowStart("day", day)).to.equal(day / 1000);
        expect(windowStart("day", day - 1)).to.equal(day / 1000 - 86400);
        expect(windowStart("hour", day - 1)).to.equal(day / 1000 - 3600);
        expect(windowStart("second", 1_700_000_000_999)).to.equal(1_700_000_000);
        expect(windowStart("second", 1_700_000_001_000)).to.equal(1_700_000_001);
        expect(windowStart("minute", 0)).to.equal(0);
        expect(windowStart("day", 86_399_999)).to.equal(0);
    });

    it("a unit without a fixed window in this model is refused", () => {
        expect(() => windowStart("fortnight", 0)).to.throw("unit fortnight has no fixed window length in this model");
        expect(() => windowStart("MINUTE", 0)).to.throw("unit MINUTE has no fixed window length in this model");
        expect(() => windowStart("", 0)).to.throw("unit  has no fixed window length in this model");
    });
});

describe("the explain CLI's formatting (render/explain-format.ts): bindingDescriptor, the limit reached first", () => {
    const d = (value: string, requestsPerUnit: number, unit: string, more: Partial<AppliedLimit> = {}): DescriptorExplanation => ({
        entries: [{ key: "K", value }],
        limit: { entry: `K=${value}`, unit, requests: requestsPerUnit, unlimited: false, shadow: false, ...more },
        bucket: `d_K_${value}_{window}`,
    });
    const x = (descriptors: DescriptorExplanation[]): Explanation => ({
        path: "/",
        normalizedPath: "/",
        virtualHost: "*:80",
        route: { name: "r", index: 0, match: "prefix /", virtualService: "VirtualService v" },
        rateLimitsFrom: { level: "virtual host", envoyFilter: "f" },
        domain: "d",
        descriptors,
        calls: [{ filter: "envoy.filters.http.ratelimit", service: "", domain: "d", descriptors, responseHeaders: {} }],
        limited: true,
    });
    const binds = (ds: DescriptorExplanation[]) => bindingDescriptor(x(ds))?.entries[0].value;

    it("the smallest allowance per second binds, units converted (2/minute before 100/minute and 1/second)", () => {
        expect(binds([d("a", 100, "minute"), d("b", 2, "minute"), d("c", 1, "second")])).to.equal("b");
        // 100 per minute is 1.67/s, more than 1 per second.
        expect(binds([d("a", 100, "minute"), d("b", 1, "second")])).to.equal("b");
        expect(binds([d("a", 1, "second"), d("b", 100, "minute")])).to.equal("a");
        // 10 per hour (0.0028/s) against 200 per day (0.0023/s).
        expect(binds([d("a", 10, "hour"), d("b", 200, "day")])).to.equal("b");
        expect(binds([d("a", 23, "hour"), d("b", 600, "day")])).to.equal("a");
        // 59 per minute is less than 1 per second.
        expect(binds([d("a", 1, "second"), d("b", 59, "minute")])).to.equal("b");
    });

    it("equal allowances: the first descriptor binds", () => {
        expect(binds([d("a", 2, "minute"), d("b", 120, "hour")])).to.equal("a");
        expect(binds([d("b", 120, "hour"), d("a", 2, "minute")])).to.equal("b");
    });

    it("descriptors that can never refuse do not bind: shadow, unlimited, no limit", () => {
        const none: DescriptorExplanation = { entries: [{ key: "K", value: "none" }] };
        expect(binds([d("s", 1, "minute", { shadow: true }), d("u", 0, "", { unlimited: true }), none, d("real", 5, "minute")])).to.equal("real");
        expect(bindingDescriptor(x([d("s", 1, "minute", { shadow: true }), d("u", 0, "", { unlimited: true }), none]))).to.equal(undefined);
        expect(bindingDescriptor(x([]))).to.equal(undefined);
    });
});

describe("the explain CLI's formatting (render/explain-format.ts): formatExplanation, the CLI's text", () => {
    const NOW = Date.UTC(2026, 0, 1, 12, 34, 56, 789);
    const MINUTE = Date.UTC(2026, 0, 1, 12, 34) / 1000;

    it("no route: the request line, the normalized path when it differs, the virtual host and the 404", () => {
        expect(formatExplanation(explainWith(bookinfoModel(), "/nope/../x?y#f"), NOW)).to.equal(
            [
                "GET /nope/../x?y#f",
                "  normalized path: /x?y",
                "  virtual host: *:8080",
                "  route: none matches (Envoy answers 404; the rate-limit service is not asked)",
            ].join("\n"),
        );
        expect(formatExplanation(explainWith(bookinfoModel(), "/nope"), NOW)).to.equal(
            ["GET /nope", "  virtual host: *:8080", "  route: none matches (Envoy answers 404; the rate-limit service is not asked)"].join("\n"),
        );
    });

    it("one descriptor from the virtual host, with its limit and the counter of the current minute", () => {
        expect(formatExplanation(explainWith(bookinfoModel(), "/productpage"), NOW)).to.equal(
            [
                "GET /productpage",
                "  virtual host: *:8080",
                "  route: pages (VirtualService bookinfo [0], exact /productpage)",
                "  rate_limits: from the virtual host (EnvoyFilter filter-ratelimit-svc)",
                "  domain: ratelimit",
                "  descriptor 1: PATH=/productpage",
                "    limit: 1 per minute (config entry PATH=/productpage)",
                `    bucket: ratelimit_PATH_/productpage_${MINUTE} (window starting 2026-01-01T12:34:00.000Z, fixed and epoch-aligned)`,
                "  response headers (the window's first request; Remaining falls with each request, Reset counts down to the window's end):",
                "    X-RateLimit-Limit: 1, 1;w=60",
                "    X-RateLimit-Remaining: 0",
                "    X-RateLimit-Reset: 60",
            ].join("\n"),
        );
    });

    it("route and virtual host: two descriptors, the one that binds first marked, and the any-one-refuses rule", () => {
        expect(formatExplanation(explainWith(bookinfoModel(), "/api/v1/products/7?x=1"), NOW)).to.equal(
            [
                "GET /api/v1/products/7?x=1",
                "  virtual host: *:8080",
                "  route: api (VirtualService bookinfo [1], prefix /api/v1/products)",
                "  rate_limits: from the route and virtual host (EnvoyFilter filter-ratelimit-svc-api, filter-ratelimit-svc)",
                "  domain: ratelimit",
                "  descriptor 1: PATH=api",
                "    limit: 2 per minute (config entry PATH=api) <- binds first",
                `    bucket: ratelimit_PATH_api_${MINUTE} (window starting 2026-01-01T12:34:00.000Z, fixed and epoch-aligned)`,
                "  descriptor 2: PATH=/api/v1/products/7",
                "    limit: 100 per minute (config entry PATH (catch-all))",
                `    bucket: ratelimit_PATH_/api/v1/products/7_${MINUTE} (window starting 2026-01-01T12:34:00.000Z, fixed and epoch-aligned)`,
                "  every descriptor is counted; the request is refused (429) when any one is over its limit",
                // The fewest remaining wins (PATH=api: 1 of 2); every limit is listed with its window.
                "  response headers (the window's first request; Remaining falls with each request, Reset counts down to the window's end):",
                "    X-RateLimit-Limit: 2, 2;w=60, 100;w=60",
                "    X-RateLimit-Remaining: 1",
                "    X-RateLimit-Reset: 60",
            ].join("\n"),
        );
    });

    it("route only (OVERRIDE) and nothing sent: the route's list replaces the virtual host's", () => {
        expect(formatExplanation(explainWith(bookinfoModel({ apiMode: "OVERRIDE" }), "/api/v1/products/100"), NOW)).to.equal(
            [
                "GET /api/v1/products/100",
                "  virtual host: *:8080",
                "  route: api (VirtualService bookinfo [1], prefix /api/v1/products)",
                "  rate_limits: from the route (EnvoyFilter filter-ratelimit-svc-api); they replace the virtual host's",
                "  domain: ratelimit",
                "  descriptors: none (nothing is sent: never limited globally)",
            ].join("\n"),
        );
    });

    it("no rate_limits, an unnamed route; limits that never refuse: none, unlimited, shadow (with an hour window)", () => {
        const m = bookinfoModel();
        m.routes = [route(undefined, 0, [{ kind: "prefix", value: "/" }], [], "IGNORE")];
        expect(formatExplanation(explainWith(m, "/a"), NOW)).to.equal(
            [
                "GET /a",
                "  virtual host: *:8080",
                "  route: (unnamed) (VirtualService bookinfo [0], prefix /)",
                "  rate_limits: none",
                "  domain: ratelimit",
                "  descriptors: none (nothing is sent: never limited globally)",
            ].join("\n"),
        );
        const gk = (v: string) => ({ actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: v } }] });
        const n = bookinfoModel({
            config: {
                domain: "ratelimit",
                descriptors: [
                    { key: "rule", value: "free", rate_limit: { unlimited: true } },
                    { key: "rule", value: "beta", shadow_mode: true, rate_limit: { unit: "hour", requests_per_unit: 3 } },
                ],
            },
        });
        n.vhostRateLimits = [{ rateLimits: [gk("none"), gk("free"), gk("beta")], envoyFilter: "f" }];
        expect(formatExplanation(explainWith(n, "/login"), NOW)).to.equal(
            [
                "GET /login",
                "  virtual host: *:8080",
                "  route: pages (VirtualService bookinfo [0], exact /login)",
                "  rate_limits: from the virtual host (EnvoyFilter f)",
                "  domain: ratelimit",
                "  descriptor 1: rule=none",
                "    limit: none in the config (the service answers OK: never limited)",
                "  descriptor 2: rule=free",
                "    limit: unlimited (config entry rule=free)",
                "  descriptor 3: rule=beta",
                "    limit: 3 per hour (config entry rule=beta) [shadow: counted and reported, never refused]",
                `    bucket: ratelimit_rule_beta_${Date.UTC(2026, 0, 1, 12) / 1000} (window starting 2026-01-01T12:00:00.000Z, fixed and epoch-aligned)`,
                "  every descriptor is counted; the request is refused (429) when any one is over its limit",
                // No limit and unlimited carry no current limit: only the shadow limit shows.
                "  response headers (the window's first request; Remaining falls with each request, Reset counts down to the window's end):",
                "    X-RateLimit-Limit: 3, 3;w=3600",
                "    X-RateLimit-Remaining: 2",
                "    X-RateLimit-Reset: 3600",
            ].join("\n"),
        );
    });

    it("a multi-entry descriptor is printed key=value, comma-separated; a day window starts at UTC midnight", () => {
        const m = bookinfoModel({
            vhActions: [{ generic_key: { descriptor_key: "rule", descriptor_value: "login" } }, { remote_address: {} }],
            config: {
                domain: "ratelimit",
                descriptors: [{ key: "rule", value: "login", descriptors: [{ key: "remote_address", rate_limit: { unit: "day", requests_per_unit: 1000 } }] }],
            },
        });
        const text = formatExplanation(explainWith(m, "/login", { clientAddress: "198.51.100.7" }), Date.UTC(2026, 2, 3, 23, 59, 59, 999));
        expect(text.split("\n").slice(5)).to.deep.equal([
            "  descriptor 1: rule=login, remote_address=198.51.100.7",
            "    limit: 1000 per day (config entry rule=login / remote_address (catch-all))",
            `    bucket: ratelimit_rule_login_remote_address_198.51.100.7_${Date.UTC(2026, 2, 3) / 1000} (window starting 2026-03-03T00:00:00.000Z, fixed and epoch-aligned)`,
            "  response headers (the window's first request; Remaining falls with each request, Reset counts down to the window's end):",
            "    X-RateLimit-Limit: 1000, 1000;w=86400",
            "    X-RateLimit-Remaining: 999",
            "    X-RateLimit-Reset: 86400",
        ]);
    });
});
