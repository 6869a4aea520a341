/**
 * Many teams, one gateway (issue 26) with the REAL envoyproxy/ratelimit service and Redis: two
 * teams, each its own program (rendered apart under Pulumi's mocks), its own rate-limit service and
 * Redis, on one gateway listener. The gateway is the listener MODEL (gateway-model/listener.ts; no
 * Envoy here): for each request it says which filter calls which service with which descriptors; the
 * calls go to the real services, and the model's failure rule (fail closed: 500) turns a service
 * that does not answer into the client's status. Team A's service is stopped while team B's traffic
 * flows: B's answers must not change and A must get no call; and the reverse. Negative control: the
 * old layout (shared names, route and virtual-host rate_limits) in the same test.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { GlobalRateLimit } from "../../components/global-ratelimit/component";
import { LimitUnit } from "../../builders/rule-args";
import { K8sObject } from "../../lib/k8s-object";
import { ListenerModel, listenerCalls, listenerModel } from "../../gateway-model/listener";
import { registerComponents } from "../../render/render";
import { RlsClient } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { renderedRatelimit } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { ensureWindow } from "./harness/window";

type Team = "a" | "b";
const TEAMS: Team[] = ["a", "b"];
const HOST = (t: Team) => `${t}.example.com:8080`;
const PATHS = ["/checkout-1", "/checkout-2", "/checkout-3", "/checkout-4"];
const CLUSTER = (t: Team) => `outbound|8081||ratelimit.team-${t}.svc.cluster.local`;

/** One team's program, rendered on its own (its own project: no state shared with the other). */
async function renderTeam(team: Team, layout: FilterLayout): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit(`team-${team}`, {
                domain: `team-${team}`,
                gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: [HOST(team)] },
                namespace: `team-${team}`,
                // One path per test: the service caches an over-limit key until its window ends, whatever the flush.
                rules: PATHS.map((p) => ({ name: p.slice(1), path: { exact: p }, requestsPerUnit: 3, unit: LimitUnit.Minute })),
                preLimit: false,
                filterLayout: layout,
            });
        },
        `team-${team}`,
        "rls",
    );
    return objects;
}

interface Running {
    redis: RedisServer;
    service?: RateLimitProcess;
    client?: RlsClient;
    objects: K8sObject[];
}

/** Two teams on one listener: the model over both programs' EnvoyFilters, each team's real service. */
function useTwoTeams(layout: FilterLayout) {
    const teams = {} as Record<Team, Running>;
    const ctx = {} as { model: ListenerModel; calls: Record<string, number> };
    const start = async (t: Team) => {
        const rendered = renderedRatelimit(teams[t].objects);
        teams[t].service = await RateLimitProcess.start(rendered, { redisAddress: teams[t].redis.address, redisPassword: teams[t].redis.password });
        teams[t].client = teams[t].service!.client();
        await teams[t].client!.waitForReady();
    };
    const stop = async (t: Team) => {
        teams[t].client?.close();
        await teams[t].service?.stop();
        teams[t].client = undefined;
        teams[t].service = undefined;
    };
    before(async function () {
        this.timeout(120_000);
        for (const t of TEAMS) teams[t] = { redis: await RedisServer.start(), objects: await renderTeam(t, layout) };
        for (const t of TEAMS) await start(t);
        ctx.model = listenerModel(
            TEAMS.flatMap((t) => teams[t].objects.filter((o) => o.kind === "EnvoyFilter")),
            {
                port: 8080,
                podLabels: { istio: "ingressgateway" },
                namespace: "istio-system",
                virtualHosts: TEAMS.map((t) => ({ name: HOST(t), routes: ["web"] })),
            },
        );
    });
    after(async () => {
        for (const t of TEAMS) {
            await stop(t);
            await teams[t]?.redis.stop();
        }
    });
    beforeEach(async () => {
        for (const t of TEAMS) await teams[t].redis.flushAll();
        ctx.calls = {};
    });

    /** The client's status for one request to a team's host: each filter that produced descriptors calls its service. */
    async function request(t: Team, path: string): Promise<number> {
        const calls = listenerCalls(ctx.model, { virtualHost: HOST(t), route: "web", path });
        let status = 200;
        for (const c of calls) {
            if (!c.descriptors.length) continue;
            ctx.calls[c.filter.cluster] = (ctx.calls[c.filter.cluster] ?? 0) + 1;
            const owner = TEAMS.find((x) => CLUSTER(x) === c.filter.cluster)!;
            const client = teams[owner].client;
            let code: string;
            try {
                if (!client) throw new Error("service stopped");
                code = (await client.shouldRateLimit(c.domain, c.descriptors, { deadlineMs: 2_000 })).overallCode;
            } catch {
                code = "ERROR";
            }
            if (code === "ERROR" && c.filter.failureModeDeny && status === 200) status = c.filter.statusOnError;
            if (code === "OVER_LIMIT" && status === 200) status = 429;
        }
        return status;
    }
    const burst = async (t: Team, n: number, path: string) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push(await request(t, path));
        return out;
    };
    return { teams, ctx, start, stop, burst };
}

describe("rls: many teams, one gateway (per-instance layout): one team's outage never changes another's answers (real services, gateway MODEL)", function () {
    const { ctx, start, stop, burst } = useTwoTeams(FilterLayout.PerInstance);
    const LIMITED = [200, 200, 200, 429, 429];

    it("both up: each team's 5 requests to /checkout get 3 × 200 then 429 from its own service; one call per request, to its own service", async () => {
        await ensureWindow(15);
        expect(await burst("a", 5, PATHS[0])).to.deep.equal(LIMITED);
        expect(await burst("b", 5, PATHS[0])).to.deep.equal(LIMITED);
        expect(ctx.calls).to.deep.equal({ [CLUSTER("a")]: 5, [CLUSTER("b")]: 5 });
    });

    it("A's service stopped while B's traffic flows: B's answers unchanged, zero calls to A's service; A's own requests fail closed (500)", async () => {
        await ensureWindow(15);
        await stop("a");
        try {
            expect(await burst("b", 5, PATHS[1])).to.deep.equal(LIMITED);
            expect(ctx.calls[CLUSTER("a")] ?? 0, "calls to A's service").to.equal(0);
            expect(await burst("a", 2, PATHS[1])).to.deep.equal([500, 500]);
        } finally {
            await start("a");
        }
    });

    it("the reverse: B's service stopped while A's traffic flows: A's answers unchanged, zero calls to B's service", async () => {
        await ensureWindow(15);
        await stop("b");
        try {
            expect(await burst("a", 5, PATHS[2])).to.deep.equal(LIMITED);
            expect(ctx.calls[CLUSTER("b")] ?? 0, "calls to B's service").to.equal(0);
            expect(await burst("b", 1, PATHS[2])).to.deep.equal([500]);
        } finally {
            await start("b");
        }
    });
});

describe("rls: many teams, one gateway, NEGATIVE CONTROL: the old layout (shared names, route and virtual-host rate_limits) leaks (real services, gateway MODEL)", function () {
    const { ctx, start, stop, burst } = useTwoTeams(FilterLayout.Shared);

    it("every request of B also calls A's service (2 calls per request), and A's outage turns B's answers into 500", async () => {
        await ensureWindow(15);
        const before = await burst("b", 3, PATHS[3]);
        expect(before).to.deep.equal([200, 200, 200]);
        expect(ctx.calls).to.deep.equal({ [CLUSTER("a")]: 3, [CLUSTER("b")]: 3 });
        await stop("a");
        try {
            expect(await burst("b", 2, PATHS[3])).to.deep.equal([500, 500]);
        } finally {
            await start("a");
        }
    });
});
