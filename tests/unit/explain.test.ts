/**
 * The gateway MODEL reads everything from the rendered objects: change the stack config and the
 * model's answer follows (no constant of the specification inside it). Also the CLI's arguments.
 */
import { expect } from "chai";
import { explain } from "../../gateway-model/explain";
import { formatExplanation } from "../../render/explain-format";
import { parseExplainArgs } from "../../render/stack-explain";
import { renderVariant } from "../rls/harness/stack";

describe("gateway model (gateway-model/explain.ts): answers follow the rendered objects", function () {
    it("a different route regex in the stack config changes which api paths send PATH=api (model)", async () => {
        const objs = await renderVariant("A", { apiRouteRegex: "/api/v1/products/[0-9]+" });
        // Counted by the api limit, which refuses before the per-path catch-all could: no per-path counter.
        expect(explain(objs, "/api/v1/products/100").descriptors.map((d) => d.entries)).to.deep.equal([[{ key: "PATH", value: "api" }]]);
        const dflt = await renderVariant("A");
        // The catch-all's second entry (the long-path marker and the client) meets no limit for a short path.
        expect(
            explain(dflt, "/api/v1/products/100").descriptors.map((d) => [d.entries.map((e) => `${e.key}=${e.value}`).join(","), d.limit !== undefined]),
        ).to.deep.equal([
            ["other_paths=each,PATH=/api/v1/products/100", true],
            ["other_paths=each,long_path=within-1024-bytes,masked_remote_address=192.0.2.1/32", false],
        ]);
    });

    it("domain, limited path and limits come from the rendered filter and ConfigMap (model)", async () => {
        const objs = await renderVariant("B", { domain: "shop", limitedPath: "/login", limitedPathLimit: "7" });
        const x = explain(objs, "/login");
        expect(x.domain).to.equal("shop");
        expect(x.descriptors[0].limit).to.deep.include({ entry: "PATH=/login", requests: 7, unit: "minute" });
        expect(explain(objs, "/productpage").descriptors[0].limit?.entry).to.equal("other_paths=each / PATH (catch-all)");
    });

    it("variant A's api route name is read from the VirtualService and the route patch (model)", async () => {
        const objs = await renderVariant("A", {
            apiRoute: "products",
            virtualServiceRoutes: JSON.stringify([
                { exact: ["/productpage", "/login", "/logout"], prefix: ["/static"] },
                { name: "products", prefix: ["/api/v1/products"] },
            ]),
        });
        const x = explain(objs, "/api/v1/products/3");
        expect(x.route?.name).to.equal("products");
        expect(x.rateLimitsFrom.level).to.equal("route and virtual host");
        expect(x.descriptors.map((d) => d.entries)).to.deep.equal([[{ key: "PATH", value: "api" }]]);
    });

    it("the printed explanation names route, descriptor, limit and the bucket of the current window (model)", async () => {
        const objs = await renderVariant("A");
        const at = Date.UTC(2026, 0, 1, 12, 34, 56);
        const text = formatExplanation(explain(objs, "/api/v1/products/7"), at);
        expect(text).to.include("route: api");
        expect(text).to.include("descriptor 1: PATH=api");
        expect(text).to.include("limit: 2 per minute (config entry PATH=api)");
        expect(text).to.include(`bucket: ratelimit_PATH_api_${Date.UTC(2026, 0, 1, 12, 34) / 1000}`);
        // One call, to the fixed counters' service: the api limit refuses before a per-path counter could.
        expect(text).to.include("calls: 1 (ratelimit.default: 1 descriptor(s))");
        expect(text).to.not.include("descriptor 2");
        const other = formatExplanation(explain(objs, "/api/v1/products/100"), at);
        expect(other).to.include("limit: 100 per minute (config entry other_paths=each / PATH (catch-all))");
        expect(other).to.include("calls: 1 (ratelimit-per-value.default: 2 descriptor(s))");
        const literal = await renderVariant("A", { pathKey: "literal" });
        expect(formatExplanation(explain(literal, "/api/v1/products/100"), at)).to.include("descriptors: none");
    });

    it("explain CLI arguments: variant, profile, --set, paths; bad input is refused with the usage", () => {
        expect(parseExplainArgs(["--variant", "a", "--profile", "seed", "--set", "domain=x", "/p", "/q"])).to.deep.equal({
            variant: "A",
            apiProfile: "seed",
            overrides: { domain: "x" },
            json: false,
            paths: ["/p", "/q"],
            client: {},
            sources: "config: Pulumi.yaml defaults, then Pulumi.dev.yaml, then --variant, then --profile, then --set domain",
        });
        expect(() => parseExplainArgs(["--variant", "C", "/p"])).to.throw(/A or B/);
        expect(() => parseExplainArgs(["--variant", "A"])).to.throw(/at least one request path/);
        expect(() => parseExplainArgs(["productpage"])).to.throw(/starts with '\/'/);
    });

    it("explain CLI client arguments (gateway MODEL): --client-address, --xff, --trusted-hops; a bad address or count is refused", () => {
        expect(parseExplainArgs(["--client-address", "2001:db8::7", "--xff", "10.0.0.1, 198.51.100.4", "--trusted-hops", "1", "/p"]).client).to.deep.equal({
            clientAddress: "2001:db8::7",
            xForwardedFor: "10.0.0.1, 198.51.100.4",
            headers: { "x-forwarded-for": "10.0.0.1, 198.51.100.4" },
            xffNumTrustedHops: 1,
        });
        expect(() => parseExplainArgs(["--client-address", "10.0.0.300", "/p"])).to.throw(/--client-address needs an IPv4 or IPv6 address, got '10.0.0.300'/);
        expect(() => parseExplainArgs(["--client-address", "/p"])).to.throw(/needs an IPv4 or IPv6 address, got '\/p'/);
        expect(() => parseExplainArgs(["--trusted-hops", "-1", "/p"])).to.throw(/--trusted-hops needs a whole number, got '-1'/);
        expect(() => parseExplainArgs(["--trusted-hops", "one", "/p"])).to.throw(/--trusted-hops needs a whole number, got 'one'/);
        expect(() => parseExplainArgs(["--xff", "--json", "/p"])).to.throw(/--xff needs a value/);
    });
});
