/**
 * User-defined rules on the REAL envoyproxy/ratelimit service and Redis: a shop's gateway (not
 * bookinfo) limited by GlobalRateLimit's typed rules (header per value, header presence, client
 * address, per client on one path, shadow). The component is evaluated under Pulumi's mocks; the
 * gateway MODEL turns each request into descriptors from the rendered filters; the real service
 * decides with the rendered config.yaml and environment. Counts are exact (one window, one process).
 * The path rules cover an exact path (`/login`) and a prefix (`/search`).
 */
import { expect } from "chai";
import { GlobalRateLimit, LimitUnit, RateLimitRuleArgs } from "../../components/index";
import { ModelRequest, explain } from "../../render/explain";
import type { K8sObject } from "../../render/explain";
import { registerComponents } from "../../render/render";
import { RlsClient } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { ensureWindow, minuteOf } from "./harness/window";

const M = LimitUnit.Minute;
const RULES: RateLimitRuleArgs[] = [
    { name: "per-api-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 3, unit: M },
    { name: "has-token", header: { name: "authorization" }, requestsPerUnit: 4, unit: M },
    { name: "per-client", perClientAddress: true, requestsPerUnit: 6, unit: M },
    { name: "login-per-client", path: { exact: "/login" }, perClientAddress: true, requestsPerUnit: 2, unit: M },
    { name: "search", path: { prefix: "/search" }, requestsPerUnit: 3, unit: M },
    { name: "beta", header: { name: "x-beta", value: "on" }, requestsPerUnit: 1, unit: M, shadow: true },
];

/** The shop's own Gateway and VirtualService (what the user already has). */
const USER_OBJECTS: K8sObject[] = [
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "Gateway",
        metadata: { name: "shop-gw", namespace: "shop" },
        spec: { selector: { app: "shop-gateway" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
    },
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "shop", namespace: "shop" },
        spec: { hosts: ["*"], gateways: ["shop-gw"], http: [{ name: "web", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "web" } }] }] },
    },
];

async function renderComponent(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules: RULES,
            });
        },
        "shop",
        "rls",
    );
    return objects;
}

describe("rls: user-defined rules (header, client address, combined, shadow) on the real service; a shop's gateway via the model", function () {
    let objects: K8sObject[];
    let redis: RedisServer;
    let service: RateLimitProcess;
    let client: RlsClient;

    before(async () => {
        objects = [...USER_OBJECTS, ...(await renderComponent())];
        const rendered = renderedRatelimit(objects);
        redis = await RedisServer.start();
        service = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password });
        client = service.client();
        await client.waitForReady();
    });
    after(async () => {
        client?.close();
        await service?.stop();
        await redis?.stop();
    });
    beforeEach(async () => {
        await redis.flushAll();
    });

    /** What the gateway would send for this request (model), decided by the real service. */
    async function send(path: string, request: ModelRequest) {
        const x = explain(objects, path, request);
        return {
            x,
            d: x.descriptors.length
                ? await client.shouldRateLimit(
                      x.domain,
                      x.descriptors.map((d) => d.entries),
                  )
                : undefined,
        };
    }
    const okCount = async (n: number, path: (i: number) => string, request: (i: number) => ModelRequest) => {
        let ok = 0;
        for (let i = 0; i < n; i++) if ((await send(path(i), request(i))).d?.overallCode === "OK") ok++;
        return ok;
    };

    it("the service loaded the config the rules compiled to (it answers with the rules' limits)", async () => {
        const { d } = await send("/", { headers: { "x-api-key": "k" }, clientAddress: "198.51.100.1" });
        expect(d!.statuses.map((s) => s.currentLimit?.requestsPerUnit)).to.deep.equal([3, 6]);
    });

    it("header per value: each API key gets 3 per minute of its own; a request without the key is not counted by that rule", async () => {
        await ensureWindow(10);
        const t0 = Date.now();
        // Different client addresses so the per-client rule (6/min) never binds first.
        expect(
            await okCount(
                5,
                () => "/items",
                (i) => ({ headers: { "x-api-key": "alpha" }, clientAddress: `192.0.2.${i + 1}` }),
            ),
        ).to.equal(3);
        expect(
            await okCount(
                5,
                () => "/items?page=2",
                (i) => ({ headers: { "x-api-key": "beta" }, clientAddress: `192.0.2.${i + 11}` }),
            ),
        ).to.equal(3);
        const noKey = await send("/items", { clientAddress: "192.0.2.99" });
        expect(noKey.x.descriptors.map((x) => x.entries[0].value)).to.deep.equal(["per-client"]);
        expect(noKey.d!.overallCode).to.equal("OK");
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    it("header presence: 4 per minute for all requests carrying authorization together, whatever its value", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                7,
                (i) => `/p${i}`,
                (i) => ({ headers: { authorization: `Bearer t${i}` }, clientAddress: `198.51.100.${i + 1}` }),
            ),
        ).to.equal(4);
    });

    it("client address: 6 per minute per address, another address has its own 6", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                9,
                (i) => `/any/${i}?q=${i}`,
                () => ({ clientAddress: "203.0.113.7" }),
            ),
        ).to.equal(6);
        expect(
            await okCount(
                9,
                (i) => `/any/${i}`,
                () => ({ clientAddress: "203.0.113.8" }),
            ),
        ).to.equal(6);
    });

    it("combined, per client on one path: /login 2 per minute per client with any query; other paths of that client are not refused by it", async () => {
        await ensureWindow(10);
        expect(
            await okCount(
                4,
                (i) => `/login?next=/x${i}`,
                () => ({ clientAddress: "203.0.113.20" }),
            ),
        ).to.equal(2);
        expect(
            await okCount(
                4,
                () => "/login",
                () => ({ clientAddress: "203.0.113.21" }),
            ),
        ).to.equal(2);
        // The same client elsewhere: only its per-client rule (6/min, 4 used) counts.
        expect(
            await okCount(
                2,
                () => "/cart",
                () => ({ clientAddress: "203.0.113.20" }),
            ),
        ).to.equal(2);
    });

    // The promise of a path prefix (rules.ts, PathMatchArgs.prefix): `/search` matches `/search`,
    // `/search/...` and `/search?...`, not `/searchx` (Envoy Gateway's path-separated prefix form,
    // `^/search(/.*|\?.*|#.*|;.*|$)`, refuses `/searchx` too), and the query never matters. A regex
    // that matched the prefix anywhere in the path, or without the separator, or only without a
    // query, fails here. Every request comes from its own client address so the per-client rule
    // (6/min) never binds; each answer is checked on the search descriptor's own status.
    it("path prefix: /search, /search/x and /search?q=1 share 3 per minute; /x/search, /searchx and other paths are not counted by it", async () => {
        await ensureWindow(15);
        const t0 = Date.now();
        let client = 0;
        const from = () => ({ clientAddress: `198.51.100.${++client}` });
        const searchStatus = (r: Awaited<ReturnType<typeof send>>) => {
            const i = r.x.descriptors.findIndex((d) => d.entries[0].value === "search");
            return i < 0 ? undefined : r.d!.statuses[i].code;
        };
        const searchKeys = async () => (await redis.keys()).filter((k) => k.startsWith("shop_rule_search_"));
        // Must not count: the prefix elsewhere in the path, without a separator after it, in the
        // query, or left by dot segments. Sent first: none of them may create the counter.
        const notCounted = [
            "/x/search",
            "/searchx",
            "/search-results",
            "/searches",
            "/x/search/y",
            "/x?next=/search",
            "/?q=/search",
            "/search/../x",
            "/",
            "/sear",
        ];
        const pass = async () => {
            for (const p of notCounted) {
                const r = await send(p, from());
                expect(searchStatus(r), `${p} sends no search descriptor`).to.equal(undefined);
                expect(r.d!.overallCode, p).to.equal("OK");
            }
        };
        await pass();
        expect(await searchKeys(), "no search counter before a counted request").to.deep.equal([]);
        // Must count, one counter: the prefix itself, a path under it, and with a query.
        for (const p of ["/search", "/search/x", "/search?q=1"]) {
            const r = await send(p, from());
            expect(searchStatus(r), p).to.equal("OK");
            expect(r.d!.overallCode, p).to.equal("OK");
        }
        expect(await searchKeys(), "one counter for all three").to.have.length(1);
        // What a client would try next to get around the spent limit: other queries, a fragment,
        // a trailing slash, deeper paths, dot segments (also %2e), a backslash. Each reaches the
        // search rule after Envoy's path normalization and is refused by it.
        const retries = [
            "/search",
            "/search?q=2",
            "/search?",
            "/search?cachebust=1&q=1",
            `/search?q=${"a".repeat(3000)}`,
            "/search#top",
            "/search/",
            "/search/x/y?z=1",
            "/search/./",
            "/x/../search",
            "/./search",
            "/%2e/search",
            "/search/%2e%2e/search",
            "\\search",
        ];
        for (const p of retries) {
            const r = await send(p, from());
            expect(searchStatus(r), `${p} counts against /search`).to.equal("OVER_LIMIT");
            expect(r.d!.overallCode, p).to.equal("OVER_LIMIT");
        }
        // The spent /search counter still refuses none of the others.
        await pass();
        expect(await searchKeys()).to.have.length(1);
        expect(minuteOf(Date.now())).to.equal(minuteOf(t0));
    });

    // The pinned service sets a shadow limit's status to OK when over it (src/limiter/base_limiter.go)
    // and counts the excess in the limit's shadow_mode statistic; the counter still runs out.
    it("shadow rule: over its limit the descriptor's status stays OK with nothing remaining, the request passes", async () => {
        await ensureWindow(10);
        const first = await send("/", { headers: { "x-beta": "on" }, clientAddress: "192.0.2.200" });
        const second = await send("/", { headers: { "x-beta": "on" }, clientAddress: "192.0.2.201" });
        expect(first.d!.overallCode).to.equal("OK");
        expect(second.d!.overallCode).to.equal("OK");
        const i = second.x.descriptors.findIndex((d) => d.entries[0].value === "beta");
        expect(second.d!.statuses[i].code).to.equal("OK");
        expect(second.d!.statuses[i].limitRemaining).to.equal(0);
        expect(second.d!.statuses[i].currentLimit?.requestsPerUnit).to.equal(1);
        const third = await send("/", { headers: { "x-beta": "on" }, clientAddress: "192.0.2.202" });
        expect(third.d!.overallCode).to.equal("OK");
        expect(explain(objects, "/", { headers: { "x-beta": "on" } }).descriptors[i].limit?.shadow).to.equal(true);
        expect(second.x.limited).to.equal(true); // the per-client rule still applies
    });
});
