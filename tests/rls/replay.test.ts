/**
 * `mesh-ratelimit replay`'s counting against the REAL envoyproxy/ratelimit service and Redis: the
 * user's program of examples/login-limit (POST /login at 5 a minute per client) is
 * rendered under Pulumi's mocks, its rendered service started with its rendered settings, and the
 * generated 1,000-line log (tests/unit/prove-login-log.ts) replayed through both: the model
 * (prove/replay.ts) and the real service, sent the descriptors the gateway MODEL builds for each
 * request, over gRPC, in timestamp order. The refused counts per rule must be equal.
 *
 * Windows: the real service counts by its own clock, the log's times are hours old. The requests
 * are grouped by the log's fixed window (the rule's unit, a minute, aligned to the epoch); before
 * each group Redis is flushed and the service restarted (its local cache of over-limit keys,
 * `LOCAL_CACHE_SIZE_IN_BYTES`, would otherwise carry a refusal into the next group sent in the same
 * real minute), and the group is sent inside one real minute (the test waits for the next minute
 * when too little of the current one is left). So each group meets the same empty counters in one
 * window that the model's window of the log meets.
 */
import { expect } from "chai";
import * as path from "path";
import { renderProgram } from "../../prove/program-runner";
import { parseLog } from "../../prove/access-log";
import { inTimeOrder, requestOfLine, summarize, verdictOf } from "../../prove/replay";
import { Simulator } from "../../prove/simulate";
import { gatewayModel } from "../../gateway-model/read-rendered";
import { programGateways } from "../../gateway-model/program-gateways";
import type { K8sObject } from "../../lib/k8s-object";
import { RlsClient } from "./harness/client";
import { RedisServer } from "./harness/redis";
import { renderedRatelimits } from "./harness/rendered";
import { RateLimitProcess } from "./harness/service";
import { ensureWindow, minuteOf } from "./harness/window";
import { expectedLoginRefusals, loginLog } from "../unit/prove-login-log";

const PROGRAM = path.join(__dirname, "..", "..", "examples", "login-limit");

describe("rls replay: a log replayed through the real service refuses what the model's replay refuses, rule by rule", function () {
    this.timeout(900_000);
    let objects: K8sObject[];
    let redis: RedisServer;
    let service: RateLimitProcess | undefined;
    let client: RlsClient | undefined;

    /** Empty counters: Redis flushed, and a fresh service process (an empty local cache). */
    async function freshCounters(): Promise<RlsClient> {
        client?.close();
        await service?.stop();
        await redis.flushAll();
        service = await RateLimitProcess.start(renderedRatelimits(objects)[0]!, { redisAddress: redis.address, redisPassword: redis.password });
        client = service.client();
        await client.waitForReady();
        return client;
    }

    before(async () => {
        objects = (await renderProgram(PROGRAM)).objects;
        redis = await RedisServer.start();
    });
    after(async () => {
        client?.close();
        await service?.stop();
        await redis?.stop();
    });

    /** The 1,000-line log in time order, the model's decision on each line and its summary, and the domain the gateway calls. */
    function modelOfLog() {
        const log = loginLog(1000, { seed: 2026 });
        const parsed = parseLog(log.text);
        const { ordered } = inTimeOrder(parsed.requests);
        const sim = new Simulator(objects);
        const decisions = ordered.map((r) => sim.decide(requestOfLine(r)));
        const model = summarize(parsed, ordered, decisions.map(verdictOf), 0);
        const domain = gatewayModel(programGateways(objects)[0]!.objects).domain;
        return { log, ordered, decisions, model, domain };
    }

    it("the 1,000-line log: refused per rule, real service = model = oracle", async () => {
        const { log, ordered, decisions, model, domain } = modelOfLog();

        // The same requests through the real service, window by window of the log.
        const realRefused: Record<string, number> = {};
        let sent = 0;
        const groups = new Map<number, number[]>();
        ordered.forEach((r, i) => groups.set(minuteOf(r.timeMs), [...(groups.get(minuteOf(r.timeMs)) ?? []), i]));
        for (const indexes of groups.values()) {
            const c = await freshCounters();
            await ensureWindow(20);
            const started = minuteOf(Date.now());
            for (const i of indexes) {
                const d = decisions[i]!;
                // What the pre-limit refuses never reaches the service (none here: the program has no pre-limit).
                if (d.refusedBy?.by === "pre-limit" || !d.descriptors.length) continue;
                const answer = await c.shouldRateLimit(
                    domain,
                    d.descriptors.map((c) => c.entries),
                );
                sent++;
                if (answer.overallCode !== "OVER_LIMIT") continue;
                const over = answer.statuses.findIndex((s) => s.code === "OVER_LIMIT");
                const rule = d.descriptors[over]!.rule;
                realRefused[rule] = (realRefused[rule] ?? 0) + 1;
            }
            expect(minuteOf(Date.now()), "a group must stay inside one real window").to.equal(started);
        }
        const modelRefused = Object.fromEntries(model.rules.filter((r) => r.refused).map((r) => [r.rule, r.refused]));
        const oracle = expectedLoginRefusals(log.lines);
        expect(sent).to.equal(oracle.requests);
        expect(realRefused).to.deep.equal(modelRefused);
        expect(realRefused).to.deep.equal({ login: oracle.refused });
    });

    it("negative control: the same requests with no fresh counters between the log's windows (all in one real window) are refused otherwise: the windows matter", async () => {
        const { decisions, model, domain } = modelOfLog();
        const c = await freshCounters();
        await ensureWindow(40);
        const started = minuteOf(Date.now());
        let refused = 0;
        for (const d of decisions) {
            if (!d.descriptors.length) continue;
            const a = await c.shouldRateLimit(
                domain,
                d.descriptors.map((x) => x.entries),
            );
            if (a.overallCode === "OVER_LIMIT") refused++;
        }
        expect(minuteOf(Date.now()), "sent inside one real window").to.equal(started);
        expect(refused).to.be.greaterThan(model.refused);
    });
});
