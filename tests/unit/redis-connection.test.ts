/**
 * Redis choices: stack config -> the service's REDIS_* environment (variable names and forms of
 * the pinned envoyproxy/ratelimit, src/settings/settings.go and src/redis/driver_impl.go), and no
 * in-cluster Redis objects when an existing one is chosen.
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { isHostPort, redisConnectionEnv, withRedisConnection } from "../../builders/redis-connection";
import { resolveSettings } from "../../program/config-args";
import { DEV, render } from "./helpers";

const AUTH = { name: "redis-auth", key: "password" };
const envOf = (set: Record<string, string>) => redisConnectionEnv(resolveSettings({ ...DEV, ...set }).redis, "redis.default.svc.cluster.local:6379");
const asMap = (env: { name: string; value?: string; valueFrom?: any }[]) => Object.fromEntries(env.map((e) => [e.name, e.value ?? e.valueFrom]));

describe("Redis choices: config -> REDIS_* environment", () => {
    it("default: the in-cluster single Redis, its generated password", () => {
        const m = asMap(envOf({}));
        expectGolden("redis/env-default", m);
        expect([m.REDIS_TYPE, m.REDIS_URL, m.REDIS_AUTH]).to.deep.equal(["SINGLE", "redis.default.svc.cluster.local:6379", { secretKeyRef: AUTH }]);
    });

    it("external: SINGLE at the named address, password from the named Secret key, TLS with a mounted CA", () => {
        const m = asMap(
            envOf({
                redisMode: "external",
                redisAddress: "redis.cache.svc.cluster.local:6380",
                redisPasswordSecret: "cache-auth",
                redisPasswordSecretKey: "pw",
                redisTls: "true",
                redisTlsCaSecret: "cache-ca",
            }),
        );
        expectGolden("redis/env-external-tls", m);
        expect([m.REDIS_URL, m.REDIS_AUTH, m.REDIS_TLS, m.REDIS_TLS_CACERT]).to.deep.equal([
            "redis.cache.svc.cluster.local:6380",
            { secretKeyRef: { name: "cache-auth", key: "pw" } },
            "true",
            "/etc/ratelimit/redis-tls/ca.crt",
        ]);
    });

    it("external without a password Secret: no REDIS_AUTH at all (not the in-cluster Secret)", () => {
        const m = asMap(envOf({ redisMode: "external", redisAddress: "10.0.0.5:6379" }));
        expectGolden("redis/env-external-no-password", m);
        expect(m).to.not.have.any.keys("REDIS_AUTH", "REDIS_SENTINEL_AUTH");
    });

    it("sentinel: SENTINEL, REDIS_URL '<master>,<sentinel>,...', Sentinel password separate from the servers'", () => {
        const m = asMap(
            envOf({
                redisMode: "sentinel",
                redisAddress: "s0:26379, s1:26379,s2:26379",
                redisSentinelMaster: "mymaster",
                redisPasswordSecret: "redis-pw",
                redisSentinelPasswordSecret: "sentinel-pw",
            }),
        );
        expect(m.REDIS_TYPE).to.equal("SENTINEL");
        expect(m.REDIS_URL).to.equal("mymaster,s0:26379,s1:26379,s2:26379");
        expect(m.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "redis-pw", key: "password" } });
        expect(m.REDIS_SENTINEL_AUTH).to.deep.equal({ secretKeyRef: { name: "sentinel-pw", key: "password" } });
    });

    it("cluster: CLUSTER, comma-separated seeds; the pipeline window is allowed only here", () => {
        const s = resolveSettings({ ...DEV, redisMode: "cluster", redisAddress: "n0:6379,n1:6379,n2:6379", redisPipelineWindow: "150us" });
        const m = asMap(redisConnectionEnv(s.redis, "unused:6379"));
        expectGolden("redis/env-cluster", m);
        expect([m.REDIS_TYPE, m.REDIS_URL]).to.deep.equal(["CLUSTER", "n0:6379,n1:6379,n2:6379"]);
        expect(s.ratelimit.redisPipelineWindow).to.equal("150us");
    });

    it("withRedisConnection replaces exactly the Redis variables and keeps the others in place", () => {
        const c = resolveSettings({ ...DEV, redisMode: "cluster", redisAddress: "n0:6379" }).redis;
        const before = [
            { name: "A", value: "1" },
            { name: "REDIS_TYPE", value: "SINGLE" },
            { name: "REDIS_URL", value: "x:1" },
            { name: "REDIS_AUTH", valueFrom: {} },
            { name: "B", value: "2" },
        ];
        expect(withRedisConnection(before, c, "x:1").map((e) => e.name)).to.deep.equal(["A", "REDIS_TYPE", "REDIS_URL", "B"]);
    });

    it("host:port check (negative controls: no port, port 0, port 70000, bare IPv6)", () => {
        for (const ok of ["redis:6379", "10.1.2.3:6379", "[fd00::1]:6379", "a.b.svc.cluster.local:26379"]) expect(isHostPort(ok), ok).to.equal(true);
        for (const bad of ["redis", "redis:0", "redis:70000", "fd00::1:6379", ":6379", "re dis:6379"]) expect(isHostPort(bad), bad).to.equal(false);
    });
});

describe("Redis choices in the render", () => {
    const redisObjects = (objects: any[]) =>
        objects
            .filter((o) => o.metadata?.labels?.["app.kubernetes.io/component"] === "redis")
            .map((o) => `${o.kind}/${o.metadata.name}`)
            .sort();

    it("in-cluster (default) renders the Redis Deployment, Service, password Secret, ServiceAccount and who may reach it", async () => {
        // Two: the fixed counters' and the per-path counters' (counterStore split, the default).
        expect(redisObjects((await render()).objects)).to.deep.equal([
            "AuthorizationPolicy/redis-from-ratelimit",
            "AuthorizationPolicy/redis-per-value-from-ratelimit",
            "Deployment/redis",
            "Deployment/redis-per-value",
            "NetworkPolicy/redis-from-ratelimit",
            "NetworkPolicy/redis-per-value-from-ratelimit",
            "Secret/redis-auth",
            "Secret/redis-per-value-auth",
            "Service/redis",
            "Service/redis-per-value",
            "ServiceAccount/redis",
            "ServiceAccount/redis-per-value",
        ]);
    });

    for (const [mode, set] of [
        ["external", { redisMode: "external", redisAddress: "redis.cache:6379", redisPasswordSecret: "cache-auth" }],
        ["sentinel", { redisMode: "sentinel", redisAddress: "s0:26379,s1:26379", redisSentinelMaster: "mymaster" }],
        ["cluster", { redisMode: "cluster", redisAddress: "n0:6379,n1:6379,n2:6379" }],
    ] as const) {
        it(`${mode}: no in-cluster Redis objects for the fixed counters; the service's env names the chosen Redis`, async () => {
            const r = await render({ overrides: set });
            // The per-path counters never go to the user's Redis: they keep a deployed one of their own.
            expect(redisObjects(r.objects).filter((o) => !o.includes("per-value"))).to.deep.equal([]);
            const d = r.get("Deployment", "ratelimit");
            const env = asMap(d.spec.template.spec.containers[0].env);
            expect(env.REDIS_TYPE).to.equal({ external: "SINGLE", sentinel: "SENTINEL", cluster: "CLUSTER" }[mode]);
            expect(env.REDIS_URL).to.contain(set.redisAddress.split(",")[0]);
            // Nothing still points at the Secret the stack no longer creates.
            expect(JSON.stringify(d)).to.not.contain('"redis-auth"');
            expect(JSON.stringify(r.get("Deployment", "ratelimit-per-value"))).to.not.contain(set.redisAddress.split(",")[0]);
        });
    }

    it("in-cluster with a password Secret the user manages: no generated password, Redis and the service both read the user's Secret", async () => {
        const regs: string[] = [];
        const r = await render({
            overrides: { redisPasswordSecret: "team-redis-auth", redisPasswordSecretKey: "pw" },
            onRegister: (reg) => regs.push(reg.type),
        });
        expect(regs, "no RandomPassword: the Random provider is not needed").to.not.include("random:index/randomPassword:RandomPassword");
        expect(redisObjects(r.objects)).to.not.include("Secret/redis-auth");
        expect(redisObjects(r.objects)).to.include("Deployment/redis");
        const redisEnv = asMap(r.get("Deployment", "redis").spec.template.spec.containers[0].env);
        expect(redisEnv.REDIS_PASSWORD).to.deep.equal({ secretKeyRef: { name: "team-redis-auth", key: "pw" } });
        const svcEnv = asMap(r.get("Deployment", "ratelimit").spec.template.spec.containers[0].env);
        expect(svcEnv.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "team-redis-auth", key: "pw" } });
        expect(svcEnv.REDIS_URL).to.equal("redis.default.svc.cluster.local:6379");
        expect(JSON.stringify(r.objects)).to.not.contain('"redis-auth"');
    });

    it("in-cluster without one (negative control): the generated password's Secret, read by both", async () => {
        const regs: string[] = [];
        const r = await render({ onRegister: (reg) => regs.push(reg.type) });
        expect(regs).to.include("random:index/randomPassword:RandomPassword");
        const svcEnv = asMap(r.get("Deployment", "ratelimit").spec.template.spec.containers[0].env);
        expect(svcEnv.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "redis-auth", key: "password" } });
    });

    it("TLS CA Secret: mounted read-only where REDIS_TLS_CACERT points", async () => {
        const r = await render({ overrides: { redisMode: "external", redisAddress: "r:6379", redisTls: "true", redisTlsCaSecret: "redis-ca" } });
        const pod = r.get("Deployment", "ratelimit").spec.template.spec;
        const c = pod.containers[0];
        const cacert = asMap(c.env).REDIS_TLS_CACERT as string;
        const mount = c.volumeMounts.find((m: any) => cacert.startsWith(`${m.mountPath}/`));
        expect(mount, "a mount holding REDIS_TLS_CACERT").to.exist;
        expect(mount.readOnly).to.equal(true);
        const vol = pod.volumes.find((v: any) => v.name === mount.name);
        expect(vol.secret.secretName).to.equal("redis-ca");
        expect(vol.secret.items.map((i: any) => i.path)).to.include(cacert.slice(mount.mountPath.length + 1));
    });
});
