/**
 * Many teams, one gateway, with a platform team's override, on the REAL
 * envoyproxy/ratelimit service and Redis: the platform's PlatformRateLimit and team A's
 * GlobalRateLimit, each rendered as its own program (its own Pulumi mock run), each with its own
 * service and Redis. The gateway is the listener MODEL (gateway-model/listener.ts; no Envoy here):
 * for each request it says which filter calls which service with which descriptors; the calls go to
 * the real services. The promise: a team cannot loosen an override, whatever its GlobalRateLimit
 * declares. The override (3 a minute per client) must refuse the 4th request of a client on team
 * A's host under every team input below. Negative control: a hand-written EnvoyFilter that disables
 * the overrides filter on the host (outside the package) lets every request through.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { LimitUnit } from "../../builders/rule-args";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { PlatformDefaults } from "../../components/global-ratelimit/platform-defaults";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { listenerCalls, listenerModel } from "../../gateway-model/listener";
import { LimitSource, refusedBy } from "../../gateway-model/platform-sources";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";
import { RlsClient } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { ensureWindow } from "./harness/window";
import { rogueOverridesOff } from "../unit/platform-fixtures";

const M = LimitUnit.Minute;
const GW = { selector: { istio: "ingressgateway" }, namespace: "istio-system" };
const HOST = "a.example.com:8080";
const PLATFORM_CLUSTER = "outbound|8081||ratelimit-platform.platform.svc.cluster.local";
const TEAM_CLUSTER = "outbound|8081||ratelimit.team-a.svc.cluster.local";

async function renderPlatform(): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () =>
            void new PlatformRateLimit("platform", {
                gateway: GW,
                namespace: "platform",
                overrides: { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 3, unit: M }] },
                defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 1000, unit: M }] },
            }),
        "platform",
        "rls",
    );
    return objects;
}

async function renderTeam(change: Partial<GlobalRateLimitArgs>): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () =>
            void new GlobalRateLimit("team-a", {
                domain: "team-a",
                gateway: { ...GW, virtualHosts: [HOST] },
                namespace: "team-a",
                rules: [{ name: "everything", requestsPerUnit: 1_000_000, unit: M }],
                preLimit: false,
                ...change,
            }),
        "team-a",
        "rls",
    );
    return objects;
}

/** What a team may declare, each an attempt to get more than the override allows. */
const ATTEMPTS: [string, Partial<GlobalRateLimitArgs>][] = [
    ["the defaults", {}],
    ["merge", { platformDefaults: PlatformDefaults.Merge }],
    ["the shared layout", { filterLayout: FilterLayout.Shared }],
    [
        "a huge per-client limit under the override's own rule name",
        { rules: [{ name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 4_294_967_295, unit: M }] },
    ],
    ["the override's rule key", { ruleKey: "platform_override", rules: [{ name: "per-client-ceiling", requestsPerUnit: 4_294_967_295, unit: M }] }],
    ["a shadow-mode service", { service: { shadowMode: true } }],
];

const ROGUE = rogueOverridesOff(HOST);

describe("rls: a team cannot loosen a platform override, whatever it declares (real services, gateway MODEL)", function () {
    this.timeout(120_000);
    const running: { cluster: string; redis: RedisServer; service: RateLimitProcess; client: RlsClient }[] = [];
    let platform: K8sObject[] = [];

    const startService = async (cluster: string, objects: K8sObject[]) => {
        const redis = await RedisServer.start();
        const service = await RateLimitProcess.start(renderedRatelimit(objects), { redisAddress: redis.address, redisPassword: redis.password });
        const client = service.client();
        await client.waitForReady();
        running.push({ cluster, redis, service, client });
    };
    const stopAll = async () => {
        for (const r of running.splice(0)) {
            r.client.close();
            await r.service.stop();
            await r.redis.stop();
        }
    };

    before(async () => {
        platform = await renderPlatform();
    });
    afterEach(stopAll);

    /** n requests of one client (a fresh address per attempt: the service caches an over-limit key for its window) to team A's host. */
    async function burst(objects: K8sObject[], n: number, client: string): Promise<{ statuses: number[]; refusedBy: (LimitSource | undefined)[] }> {
        const model = listenerModel(
            objects.filter((o) => o.kind === "EnvoyFilter"),
            { port: 8080, podLabels: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: [{ name: HOST, routes: ["web"] }] },
        );
        const statuses: number[] = [];
        const by: (LimitSource | undefined)[] = [];
        for (let i = 0; i < n; i++) {
            const calls = listenerCalls(model, { virtualHost: HOST, route: "web", path: "/x", clientAddress: client });
            const over = new Set<string>();
            for (const c of calls) {
                if (!c.descriptors.length) continue;
                const svc = running.find((r) => r.cluster === c.filter.cluster);
                if (!svc) throw new Error(`no service for ${c.filter.cluster}`);
                const answer = await svc.client.shouldRateLimit(c.domain, c.descriptors, { deadlineMs: 2_000 });
                if (answer.overallCode === "OVER_LIMIT") {
                    over.add(c.filter.cluster);
                    break; // Envoy stops the request at the first refusal: later filters are not called.
                }
            }
            statuses.push(over.size ? 429 : 200);
            by.push(refusedBy(calls, over));
        }
        return { statuses, refusedBy: by };
    }

    ATTEMPTS.forEach(([what, change], i) => {
        it(`${what}: the 4th request of a client is refused by the platform override (3 a minute)`, async () => {
            await ensureWindow(15);
            const team = await renderTeam(change);
            await startService(PLATFORM_CLUSTER, platform);
            await startService(TEAM_CLUSTER, team);
            const r = await burst([...platform, ...team], 5, `203.0.113.${10 + i}`);
            expect(r.statuses).to.deep.equal([200, 200, 200, 429, 429]);
            expect(r.refusedBy.slice(3)).to.deep.equal(["platform override", "platform override"]);
        });
    });

    it("negative control: a hand-written EnvoyFilter disabling the overrides filter on the host (outside the package) lets all 5 through", async () => {
        await ensureWindow(15);
        const team = await renderTeam({});
        await startService(PLATFORM_CLUSTER, platform);
        await startService(TEAM_CLUSTER, team);
        const r = await burst([...platform, ...team, ROGUE], 5, "203.0.113.99");
        expect(r.statuses).to.deep.equal([200, 200, 200, 200, 200]);
    });
});
