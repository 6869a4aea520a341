/**
 * A flood of new per-value keys against the REAL services and Redis servers started exactly as the
 * stack renders them (each Redis from its rendered command and arguments), with the gateway MODEL
 * (gateway-model/explain.ts) deciding which service each request's descriptors go to: the sides, one
 * request through the filters, the store filled with counters in the service's own key format, and
 * real decisions for new keys from the project's Go load generator (tests/rls/flood.test.ts,
 * tests/rls/store-full.test.ts).
 */
import { expect } from "chai";
import * as os from "os";
import type { K8sObject } from "../../../lib/k8s-object";
import { explain } from "../../../gateway-model/explain";
import { windowStart } from "../../../render/explain-format";
import { RlsClient } from "./client";
import { RedisServer } from "./redis";
import { RateLimitProcess } from "./service";
import { RenderedRatelimit, RenderedRedis, renderedRedis } from "./rendered";
import { protoDurationSeconds } from "../../../lib/formats";

/** The load generator's arguments for exactly `n` decisions at `target`: 64 in flight over 4 connections, no warm-up, a 5 s timeout a call. */
export function countedWorkloadArgs(target: string, n: number, flow: { concurrency: number; conns: number } = { concurrency: 64, conns: 4 }): string[] {
    const f = ["-concurrency", String(flow.concurrency), "-conns", String(flow.conns)];
    return ["-target", target, "-count", String(n), "-warmup", "0s", "-duration", "10m", ...f, "-timeout", "5s"];
}
import { UNIT_DIVIDER, UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS, pipeCounters, redisInfo } from "./counters";
import { runLoadgenWorkload } from "./loadgen";

/** The service's side of a rendered stack: a Redis started as rendered, one service process. */
export interface Side {
    name: string;
    redis: RedisServer;
    svc: RateLimitProcess;
    client: RlsClient;
}

/**
 * CPUs of each side on this machine: the per-value side (its service, its Redis and the flood's
 * load generator) on one core, the fixed side on the other, as two pods with CPU budgets of their
 * own would be in a cluster (the service's container limit is one CPU). On one core: no pinning.
 */
export const CPUS = os.cpus().length >= 2 ? { fixed: "0", perValue: "1" } : undefined;

export async function startSide(
    objects: K8sObject[],
    rendered: RenderedRatelimit,
    cpus?: string,
    redisOf?: (r: RenderedRedis) => RenderedRedis,
): Promise<Side> {
    // The Redis this service's REDIS_URL names, as the stack renders it.
    const url = rendered.env.find((e) => e.name === "REDIS_URL")?.value ?? "";
    const redisName = url.split(".")[0]!;
    const asRendered = renderedRedis(objects, redisName);
    const redis = await RedisServer.startRendered(redisOf ? redisOf(asRendered) : asRendered, { ...(cpus ? { cpus } : {}) });
    const svc = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password, ...(cpus ? { cpus } : {}) });
    const client = svc.client();
    await client.waitForReady();
    return { name: String(rendered.deployment.metadata.name), redis, svc, client };
}

export async function stopSide(s: Side | undefined): Promise<void> {
    if (!s) return;
    s.client.close();
    await s.svc.stop();
    await s.redis.stop();
}

/**
 * One request as the gateway (MODEL) handles it: its calls in filter order (the fixed counters'
 * filter first: its EnvoyFilters have the lower priority), each to its side; a refusal stops the
 * chain (later filters never call); a call that fails on a filter with `failure_mode_deny: false`
 * (the per-value one, as rendered) lets the request go on, one with `true` refuses it (500).
 */
export async function send(
    objects: K8sObject[],
    sides: Side[],
    path: string,
    headers: Record<string, string> = {},
    deadlineMs = 5_000,
): Promise<{ code: string; ms: number; calls: string[]; failedOpen: string[] }> {
    const x = explain(objects, path, { headers });
    const t = Date.now();
    const calls: string[] = [];
    const failedOpen: string[] = [];
    for (const c of x.calls) {
        const name = c.service.split("|")[3]?.split(".")[0] ?? "";
        const side = sides.find((s) => s.name === name) ?? sides[0]!;
        calls.push(name);
        try {
            const a = await side.client.shouldRateLimit(
                c.domain,
                c.descriptors.map((d) => d.entries),
                { deadlineMs },
            );
            if (a.overallCode === "OVER_LIMIT") return { code: "OVER_LIMIT", ms: Date.now() - t, calls, failedOpen };
        } catch (e: any) {
            if (failureModeDeny(objects, c.filter)) return { code: "500", ms: Date.now() - t, calls, failedOpen };
            failedOpen.push(`${name}: ${e.code}`);
        }
    }
    return { code: calls.length ? "OK" : "none", ms: Date.now() - t, calls, failedOpen };
}

/** `failure_mode_deny` of the rendered rate-limit HTTP filter named `filter`. */
export function failureModeDeny(objects: K8sObject[], filter: string): boolean {
    for (const o of objects.filter((x) => x.kind === "EnvoyFilter"))
        for (const p of o.spec?.configPatches ?? []) if (p.patch?.value?.name === filter) return p.patch.value.typed_config?.failure_mode_deny === true;
    throw new Error(`no rendered rate-limit filter ${filter}`);
}

/** The rendered `timeout` of the rate-limit HTTP filter named `filter`, in milliseconds: how long the gateway waits for its service. */
export function filterTimeoutMs(objects: K8sObject[], filter: string): number {
    for (const o of objects.filter((x) => x.kind === "EnvoyFilter"))
        for (const p of o.spec?.configPatches ?? [])
            if (p.patch?.value?.name === filter) {
                const s = protoDurationSeconds(String(p.patch.value.typed_config?.timeout ?? ""));
                if (s === undefined) throw new Error(`the rendered filter ${filter} has no timeout`);
                return Math.round(s * 1000);
            }
    throw new Error(`no rendered rate-limit filter ${filter}`);
}

/** A path of `length` bytes (at least the prefix), distinct per `i`. */
export function floodPath(prefix: string, i: number, length: number): string {
    const base = `${prefix}${i}`;
    return length > base.length ? `${base}/${"x".repeat(length - base.length - 1)}` : base;
}

/** What the flood is made of in one case: the per-value request for `i`, as path and headers. */
export interface FloodShape {
    /** The request number `i` of the flood (a new counter each). */
    request(i: number): { path: string; headers: Record<string, string> };
}

/**
 * Fills `side`'s Redis with counters for flood requests (the model's bucket, checked against the
 * key the service wrote for request 0, and the service's TTL) until it is full: for a `noeviction`
 * store until writes are refused, for an evicting one until it has evicted at least as many keys as
 * it holds and `gone(key)` (the counter the attacker wants reset) is no longer there.
 */
export async function fill(
    objects: K8sObject[],
    side: Side,
    shape: FloodShape,
    opts: { evicting: boolean; watchKey?: string },
): Promise<{ written: number; info: Record<string, string> }> {
    const first = shape.request(0);
    const x = explain(objects, first.path, { headers: first.headers });
    const d = x.descriptors.find((e) => e.limit && !e.limit.shadow)!;
    expect(d, "the flood's request has a limited per-value descriptor (model)").to.not.equal(undefined);
    // The service writes request 0's counter itself: its key is the model's bucket, its TTL the window plus the jitter.
    expect((await send(objects, [side], first.path, first.headers)).code).to.equal("OK");
    const unit = d.limit!.unit;
    const win = String(windowStart(unit, Date.now()));
    const key0 = d.bucket!.replace("{window}", win);
    const c = await side.redis.client();
    const pttl = Number(await c.command("PTTL", key0));
    c.close();
    const jitter = Number(side.svc.env.EXPIRATION_JITTER_MAX_SECONDS ?? UPSTREAM_EXPIRATION_JITTER_MAX_SECONDS);
    expect(pttl, `the service wrote ${key0} with TTL ${UNIT_DIVIDER[unit]} s + jitter`).to.be.within(
        (UNIT_DIVIDER[unit]! - 2) * 1000,
        (UNIT_DIVIDER[unit]! + jitter) * 1000,
    );
    // The bucket of request i: request 0's with its varying part replaced (the model's key format).
    const varying0 = Object.values(first.headers)[0] ?? first.path;
    const keyOf = (i: number) => {
        const r = shape.request(i);
        return key0.replace(varying0, Object.values(r.headers)[0] ?? r.path);
    };
    const ttlOf = (i: number) => UNIT_DIVIDER[unit]! + (jitter > 0 ? (i * 7919) % jitter : 0);
    let written = 1;
    const round = 50_000;
    for (;;) {
        const { errors } = await pipeCounters(side.redis, keyOf, written, round, ttlOf, !opts.evicting);
        written += round;
        const info = await redisInfo(side.redis);
        if (!opts.evicting && errors > 0) return { written, info };
        if (opts.evicting && Number(info.evicted_keys) >= Number(/keys=(\d+)/.exec(info.db0 ?? "")?.[1] ?? 0)) {
            const gone =
                opts.watchKey === undefined ||
                Number(
                    await (async () => {
                        const k = await side.redis.client();
                        try {
                            return await k.command("EXISTS", opts.watchKey!);
                        } finally {
                            k.close();
                        }
                    })(),
                ) === 0;
            if (gone) return { written, info };
        }
        if (written > 20_000_000)
            throw new Error(`the store never filled (${JSON.stringify({ used: info.used_memory, evicted: info.evicted_keys, db0: info.db0 })})`);
    }
}

/**
 * `n` real decisions for new flood keys on the per-value side's service, from the project's Go load
 * generator (64 in flight, each request once) on the per-value side's CPU: the descriptors are the
 * model's per-value call for each request. Returns the generator's report (answers, errors, p99).
 */
export async function decisions(objects: K8sObject[], side: Side, shape: FloodShape, from: number, n: number): Promise<any> {
    const requests: unknown[] = [];
    let domain = "";
    for (let i = from; i < from + n; i++) {
        const r = shape.request(i);
        const call = explain(objects, r.path, { headers: r.headers }).calls.find((c) => c.service.split("|")[3]?.startsWith(`${side.name}.`));
        if (!call) throw new Error(`request ${i} sends nothing to ${side.name} (model)`);
        domain = call.domain;
        requests.push(call.descriptors.map((d) => d.entries));
    }
    const args = countedWorkloadArgs(side.svc.grpcAddress, n);
    return runLoadgenWorkload(domain, requests, args, CPUS?.perValue);
}
