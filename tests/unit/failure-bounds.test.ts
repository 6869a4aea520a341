/**
 * What keeps a failing Redis from spreading (builders/failure-bounds.ts), and how the rendered
 * rate-limit service and Redis carry it: memory bound and eviction, the Redis timeout below the
 * gateway's, health that reflects Redis, probes that differ, sidecars started first, ephemeral
 * storage bounds. The rls tier runs the real service and Redis with these values
 * (tests/rls/faults.test.ts); the cluster tier has the API server admit them.
 */
import { expect } from "chai";
import { REDIS_FIELDS } from "../../components/service/redis-fields";
import {
    REDIS_EVICTION_POLICY,
    REDIS_MEMORY_LIMIT_BYTES,
    counterBytes,
    expirationJitterFor,
    maxMemoryFor,
    redisMemoryBytes,
    redisServerArgs,
    REDIS_TIMEOUT,
} from "../../builders/failure-bounds";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { redisMaxMemoryProblem } from "../../components/service/redis-options";
import { LimitUnit } from "../../builders/rule-args";
import { render } from "./helpers";

const MiB = 1024 * 1024;

/** Go's time.ParseDuration for the forms redisTimeoutFor writes (written here, not taken from the code). */
function goMillis(d: string): number {
    const m = /^(\d+)ms$/.exec(d);
    if (!m) throw new Error(`not a whole-millisecond Go duration: ${d}`);
    return Number(m[1]);
}

describe("failure bounds: Redis memory and the service's Redis timeout (pure)", () => {
    it("Redis memory sizes read as Redis reads them (k = 1000, kb = 1024, case-insensitive)", () => {
        expect(redisMemoryBytes("160mb")).to.equal(160 * MiB);
        expect(redisMemoryBytes("160MB")).to.equal(160 * MiB);
        expect(redisMemoryBytes("100m")).to.equal(100_000_000);
        expect(redisMemoryBytes("2048kb")).to.equal(2 * MiB);
        expect(redisMemoryBytes("5000000")).to.equal(5_000_000);
        expect(redisMemoryBytes("1gb")).to.equal(1024 * MiB);
        for (const bad of ["", "mb", "0", "-1mb", "1.5mb", "160 mb x", "160MiB", 160, undefined])
            expect(redisMemoryBytes(bad), String(bad)).to.equal(undefined);
    });

    it("maxmemory: at least 1mb, at most 75 % of the 256Mi container limit (192mb); the default is accepted", () => {
        expect(REDIS_MEMORY_LIMIT_BYTES).to.equal(256 * MiB);
        expect(redisMaxMemoryProblem(REDIS_FIELDS.maxMemory.default)).to.equal(undefined);
        expect(redisMaxMemoryProblem("192mb")).to.equal(undefined);
        expect(redisMaxMemoryProblem("1mb")).to.equal(undefined);
        expect(redisMaxMemoryProblem("193mb")).to.match(/at most 192mb: 75 % of the container's memory limit 256Mi/);
        expect(redisMaxMemoryProblem("1gb")).to.match(/at most 192mb/);
        expect(redisMaxMemoryProblem("1023kb")).to.match(/at least 1mb/);
        expect(redisMaxMemoryProblem("lots")).to.match(/must be a Redis memory size/);
    });

    it("redis-server arguments: no persistence and the bound; the LFU tuning only where LFU decides (what each policy does to a full store: tests/rls/store-full.test.ts)", () => {
        const fixed = redisServerArgs("160mb", REDIS_EVICTION_POLICY);
        expect(fixed.slice(0, 6)).to.deep.equal(["--save", "", "--appendonly", "no", "--maxmemory", "160mb"]);
        expect(fixed).to.not.include("--lfu-log-factor");
        const lfu = redisServerArgs("3mb", "allkeys-lfu");
        // Every access counted, none forgotten: written here as Redis spells them, not read from the module.
        expect(lfu.slice(-4)).to.deep.equal(["--lfu-log-factor", "0", "--lfu-decay-time", "0"]);
    });

    it("counter bytes are what redis-server 7.0.15 held per counter once full (8mb, 32mb, 160mb), from 5 % under to 15 % over", () => {
        // Measured here (docs/proof/benchmarks.md): key bytes → (used_memory - an empty server's) / keys held, once the
        // store evicts (INCRBY + EXPIRE of the service's key shape, allkeys-lfu, LFU settings as rendered, jemalloc).
        const measured: [number, number][] = [
            [40, 151],
            [40, 147],
            [40, 142],
            [120, 227],
            [120, 225],
            [120, 231],
            [1061, 1407],
            [1061, 1387],
            [1061, 1378],
        ];
        for (const [key, bytes] of measured) {
            expect(counterBytes(key), `${key}-byte key`).to.be.at.least(bytes * 0.95);
            expect(counterBytes(key), `${key}-byte key`).to.be.at.most(bytes * 1.15);
        }
        // The earlier estimate (128 B + 1.25 B per key byte) is the control: 18 % over for a 40-byte key, so its counts were low by as much.
        expect(Math.ceil(128 + 1.25 * 40) / 151).to.be.greaterThan(1.15);
    });

    it("the service's expiry jitter: a tenth of the shortest window, at least 1 s, never over the service's own 300 s", () => {
        expect(expirationJitterFor([60])).to.equal(6);
        expect(expirationJitterFor([3600, 60])).to.equal(6);
        expect(expirationJitterFor([1, 3600])).to.equal(1);
        expect(expirationJitterFor([3600])).to.equal(300);
        expect(expirationJitterFor([86400])).to.equal(300);
        expect(expirationJitterFor([])).to.equal(1);
    });

    it("maxmemory for a rate: 1 MiB + rate × (window + jitter) × counter bytes, rounded up to whole mb", () => {
        // 100 new 1,000-byte paths a second, minute windows: 100 × 66 s × 1,427 B = 9.4 MB, + 1 MiB.
        const z = maxMemoryFor({ newValuesPerSecond: 100, windowSeconds: 60, jitterSeconds: 6, keyBytes: 1061 });
        expect(z.bytes).to.equal(1 * MiB + 100 * 66 * counterBytes(1061));
        expect(z.maxMemory).to.equal(`${Math.ceil(z.bytes / MiB)}mb`);
        expect(maxMemoryFor({ newValuesPerSecond: 1, windowSeconds: 1, jitterSeconds: 1, keyBytes: 10 }).maxMemory).to.equal("2mb");
    });

    it("REDIS_TIMEOUT outlasts a connect whose first SYN is lost (Linux resends it after 1 s, RFC 6298's initial RTO), with a second's margin", () => {
        expect(goMillis(REDIS_TIMEOUT)).to.be.at.least(2 * 1000);
    });

    it("GlobalRateLimit's REDIS_TIMEOUT does not follow its own timeout (25 ms crashed the service at start), and it checks redis.maxMemory where it applies", () => {
        const base = {
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
            rules: [{ name: "all", requestsPerUnit: 1, unit: LimitUnit.Minute }],
        };
        for (const timeout of ["0.05s", "0.2s", "10s"])
            expect(planGlobalRateLimit({ ...base, timeout }).service.ratelimit.redisTimeout, timeout).to.equal(REDIS_TIMEOUT);
        expect(planGlobalRateLimit({ ...base, redis: { maxMemory: "300mb" } }).problems.map((p) => [p.key, p.fix])).to.deep.equal([
            ["redis.maxMemory", 'set redis.maxMemory to "160mb"'],
        ]);
        expect(
            planGlobalRateLimit({ ...base, redis: { mode: "external" as any, addresses: ["r:6379"], maxMemory: "100mb" } }).problems.map((p) => p.key),
        ).to.deep.equal(["redis.maxMemory"]);
    });

    it("failureModeDeny is a boolean: a string or a number is refused, never written into the filter", () => {
        const base = {
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
            rules: [{ name: "all", requestsPerUnit: 1, unit: LimitUnit.Minute }],
        };
        for (const v of ["yes", "false", 0, 1, null]) {
            const plan = planGlobalRateLimit({ ...base, failureModeDeny: v as any });
            expect(
                plan.problems.map((p) => p.key),
                String(v),
            ).to.deep.equal(["failureModeDeny"]);
        }
        const open = planGlobalRateLimit({ ...base, failureModeDeny: false });
        expect(open.problems).to.deep.equal([]);
        expect((open.filters[0].spec as any).configPatches[0].patch.value.typed_config.failure_mode_deny).to.equal(false);
    });
});

describe("failure bounds in the rendered stack: the rate-limit service and Redis", function () {
    this.timeout(60_000);
    const env = (c: any) => Object.fromEntries((c.env ?? []).filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]));

    it("the service's REDIS_TIMEOUT (it bounds connecting to Redis) is the dial bound, and its health check reflects Redis", async function () {
        const r = await render();
        const c = r.get("Deployment", "ratelimit").spec.template.spec.containers[0];
        expect(goMillis(env(c).REDIS_TIMEOUT)).to.be.at.least(2 * 1000);
        expect(env(c).REDIS_HEALTH_CHECK_ACTIVE_CONNECTION).to.equal("true");
        // Readiness asks the gRPC health service "ratelimit" (NOT_SERVING without a Redis connection, as
        // /healthcheck); liveness does not, so a Redis outage takes pods out of the endpoints without restarting them.
        expect(c.readinessProbe.grpc).to.deep.equal({ port: 8081, service: "ratelimit" });
        expect(c.livenessProbe.httpGet).to.equal(undefined);
        expect(c.livenessProbe).to.not.deep.equal(c.readinessProbe);
    });

    it("a shorter gateway timeout leaves REDIS_TIMEOUT as it is (the dial bound must outlast a lost SYN whatever the gateway waits)", async function () {
        const r = await render({ overrides: { rateLimitTimeout: "0.3s" } });
        const c = r.get("Deployment", "ratelimit").spec.template.spec.containers[0];
        expect(env(c).REDIS_TIMEOUT).to.equal(REDIS_TIMEOUT);
    });

    it("Redis: maxmemory under its memory limit with volatile-ttl, a liveness probe unlike its readiness probe", async function () {
        const r = await render();
        const c = r.get("Deployment", "redis").spec.template.spec.containers[0];
        const at = (flag: string) => c.args[c.args.indexOf(flag) + 1];
        expect(redisMemoryBytes(at("--maxmemory"))!).to.be.at.most(0.75 * 256 * MiB);
        expect(c.resources.limits.memory).to.equal("256Mi");
        expect(at("--maxmemory-policy")).to.equal("volatile-ttl");
        expect(c.livenessProbe).to.not.equal(undefined);
        expect(c.livenessProbe).to.not.deep.equal(c.readinessProbe);
        const r2 = await render({ overrides: { redisMaxMemory: "64mb" } });
        const c2 = r2.get("Deployment", "redis").spec.template.spec.containers[0];
        expect(c2.args[c2.args.indexOf("--maxmemory") + 1]).to.equal("64mb");
    });

    it("the rate-limit service and Redis ask for a sidecar, started before them, and bound their ephemeral storage", async function () {
        const r = await render();
        for (const name of ["ratelimit", "redis"]) {
            const t = r.get("Deployment", name).spec.template;
            expect(t.metadata.labels["sidecar.istio.io/inject"], name).to.equal("true");
            expect(JSON.parse(t.metadata.annotations["proxy.istio.io/config"]), name).to.deep.equal({ holdApplicationUntilProxyStarts: true });
            for (const c of t.spec.containers) {
                expect(c.resources.requests["ephemeral-storage"], `${name}/${c.name}`).to.be.a("string");
                expect(c.resources.limits["ephemeral-storage"], `${name}/${c.name}`).to.be.a("string");
            }
        }
    });
});
