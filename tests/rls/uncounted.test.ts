/**
 * No request passes a limit uncounted under a flood aimed at the service: the REAL service and Redis
 * as rendered, the gateway MODEL deciding each filter's call, its rendered `timeout` and failure mode.
 *
 * A filter that fails open lets a request through uncounted when its call takes longer than the
 * filter's `timeout`. Each case floods the service of a fail-open filter with new values (the
 * project's load generator, 64 calls in flight, every call a new counter) and meanwhile probes it
 * the way the gateway calls it; a probe answered later than the rendered timeout is one that would
 * have passed uncounted. As rendered, fewer than 0.1 % of the probes do (at least 2,000 probes, so
 * 0.1 % is 2). Control, from the same probes: the timeouts rendered before (0.1 s for the split
 * per-value filter, 0.05 s for the platform's filters) give the fraction printed, at least 0.1 %.
 * Layouts whose filter fails closed (a per-value rule alone, `counterStore: single`) pass nothing
 * uncounted by construction: their rendered failure mode is asserted.
 */
import { expect } from "chai";
import type { K8sObject } from "../../lib/k8s-object";
import { LimitUnit, RateLimitRuleArgs } from "../../builders/rule-args";
import { CounterStore } from "../../builders/counter-stores";
import { PlatformRateLimit } from "../../components/platform-ratelimit/component";
import { explain } from "../../gateway-model/explain";
import { listenerCalls, listenerModel } from "../../gateway-model/listener";
import { registerComponents } from "../../render/render";
import { renderedRatelimits } from "./harness/rendered";
import { USER_OBJECTS, renderComponent } from "./harness/shop";
import { failureModeDeny, filterTimeoutMs, startSide, stopSide, Side } from "./harness/flood";
import { runLoadgenWorkload } from "./harness/loadgen";

const FLOOD_SECONDS = Number(process.env.RLS_UNCOUNTED_SECONDS ?? 25);
const MIN_PROBES = 2_000;
const PER_KEY: RateLimitRuleArgs = { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 100, unit: LimitUnit.Minute };
const FIXED: RateLimitRuleArgs = { name: "checkout", path: { exact: "/checkout" }, requestsPerUnit: 100, unit: LimitUnit.Minute };
const HOST = "a.example.com:8080";

type Call = { domain: string; filter: string; descriptors: { key: string; value: string }[][] };

function globalCall(objects: K8sObject[], key: string, side: string): Call {
    const c = explain(objects, "/search", { headers: { "x-api-key": key } }).calls.find((x) => x.service.split("|")[3]?.startsWith(`${side}.`));
    if (!c) throw new Error(`no call to ${side} (model)`);
    return { domain: c.domain, filter: c.filter, descriptors: c.descriptors.map((d) => d.entries) };
}

function platformCall(objects: K8sObject[], key: string): Call {
    const model = listenerModel(
        objects.filter((o) => o.kind === "EnvoyFilter"),
        { port: 8080, podLabels: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: [{ name: HOST, routes: ["web"] }] },
    );
    const c = listenerCalls(model, { virtualHost: HOST, route: "web", path: "/search", headers: { "x-api-key": key }, clientAddress: "10.0.0.1" }).find(
        (x) => x.descriptors.length,
    );
    if (!c) throw new Error("the platform's filters send no descriptor (model)");
    return { domain: c.domain, filter: c.filter.name, descriptors: c.descriptors as { key: string; value: string }[][] };
}

const platform = (source: "defaults" | "overrides") => async () =>
    (
        await registerComponents(
            () =>
                void new PlatformRateLimit("platform", {
                    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system" },
                    namespace: "platform",
                    [source]: { rules: [PER_KEY] },
                }),
            "platform",
            "rls",
        )
    ).objects;

interface Layout {
    label: string;
    render(): Promise<K8sObject[]>;
    side: number;
    call(objects: K8sObject[], key: string, side: string): Call;
    /** The timeout rendered before (ms), for the control; undefined for a filter that fails closed. */
    before?: number;
}

const LAYOUTS: Layout[] = [
    {
        label: "split: the per-value filter",
        side: 1,
        call: globalCall,
        before: 100,
        render: async () => [...USER_OBJECTS, ...(await renderComponent([FIXED, PER_KEY], {}))],
    },
    { label: "PlatformRateLimit defaults", side: 0, call: platformCall, before: 50, render: platform("defaults") },
    { label: "PlatformRateLimit overrides", side: 0, call: platformCall, before: 50, render: platform("overrides") },
];
const CLOSED: Layout[] = [
    { label: "a per-value rule alone", side: 0, call: globalCall, render: async () => [...USER_OBJECTS, ...(await renderComponent([PER_KEY], {}))] },
    {
        label: "counterStore single",
        side: 0,
        call: globalCall,
        render: async () => [...USER_OBJECTS, ...(await renderComponent([FIXED, PER_KEY], { counterStore: CounterStore.Single }))],
    },
];

const value = (i: number | string) => `v-${i}-`.padEnd(64, "x");

/** Probes `side` with `call` until `until`, one after the other: each probe's answer time (ms), or Infinity when it failed. */
async function probe(side: Side, call: Call, until: () => boolean): Promise<number[]> {
    const c = side.svc.client();
    const times: number[] = [];
    try {
        for (let i = 0; !until(); i++) {
            const d = call.descriptors.map((entries) => entries.map((e) => ({ ...e, value: e.value.replace(value("probe"), value(`probe-${i}`)) })));
            const t = process.hrtime.bigint();
            try {
                await c.shouldRateLimit(call.domain, d, { deadlineMs: 5_000 });
                times.push(Number(process.hrtime.bigint() - t) / 1e6);
            } catch {
                times.push(Infinity);
            }
        }
    } finally {
        c.close();
    }
    return times;
}

async function floodCase(l: Layout) {
    const objects = await l.render();
    const rendered = renderedRatelimits(objects)[l.side]!;
    const side = await startSide(objects, rendered);
    try {
        const call = l.call(objects, value("probe"), side.name);
        const timeoutMs = filterTimeoutMs(objects, call.filter);
        const deny = failureModeDeny(objects, call.filter);
        const reqs: unknown[] = [];
        for (let i = 0; i < 100_000; i++)
            reqs.push(call.descriptors.map((entries) => entries.map((e) => ({ ...e, value: e.value.replace(value("probe"), value(i)) }))));
        const args = [
            "-target",
            side.svc.grpcAddress,
            "-warmup",
            "1s",
            "-duration",
            `${FLOOD_SECONDS}s`,
            "-concurrency",
            "64",
            "-conns",
            "4",
            "-timeout",
            "5s",
        ];
        let done = false;
        const flood = runLoadgenWorkload(call.domain, reqs, args).finally(() => (done = true));
        await new Promise((r) => setTimeout(r, 1_500));
        const probes = (await Promise.all([0, 1, 2, 3].map(() => probe(side, call, () => done)))).flat();
        const rep = await flood;
        const over = (ms: number) => probes.filter((t) => t > ms).length;
        const sorted = [...probes].sort((a, b) => a - b);
        const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
        return {
            timeoutMs,
            deny,
            probes: probes.length,
            late: over(timeoutMs),
            lateBefore: l.before ? over(l.before) : 0,
            lateControl: over(CONTROL_TIMEOUT_MS),
            rate: rep.decisionsPerSecond,
            p: [q(0.5), q(0.99), q(0.999), sorted.at(-1)],
        };
    } finally {
        await stopSide(side);
    }
}

/**
 * The negative control's timeout: far below what a call takes under the flood (its median was 7 to 20
 * ms in every run measured), so the same count must find at least 0.1 % of calls later than it. The
 * timeouts rendered before (100 ms, 50 ms) are printed as a figure, not asserted: whether a flood
 * outlasts them depends on the machine's load (1.2 to 14.8 % on a busy one, 0.07 % on a quieter one).
 */
const CONTROL_TIMEOUT_MS = 5;

describe("rls uncounted: under a flood aimed at the service, fewer than 0.1 % of a fail-open filter's calls outlast its rendered timeout (real service and Redis as rendered, gateway MODEL)", function () {
    this.timeout(300_000);

    for (const l of LAYOUTS) {
        it(`${l.label}: probes later than the rendered timeout < 0.1 %; negative control: a ${CONTROL_TIMEOUT_MS} ms timeout lets at least 0.1 % pass uncounted (the count can fail); the timeout rendered before (${l.before} ms) printed`, async () => {
            const r = await floodCase(l);
            const pct = (n: number) => ((100 * n) / r.probes).toFixed(3);
            console.log(
                `      flood ${Math.round(r.rate)} decisions/s; ${r.probes} probes, p50/p99/p99.9/max ${r.p.map((x) => x!.toFixed(1)).join("/")} ms; ` +
                    `later than the rendered ${r.timeoutMs} ms: ${r.late} (${pct(r.late)} %); later than ${l.before} ms (before): ${r.lateBefore} (${pct(r.lateBefore)} %)`,
            );
            expect(r.deny, "the filter fails open as rendered").to.equal(false);
            expect(r.probes, "probes made during the flood").to.be.at.least(MIN_PROBES);
            expect(r.late / r.probes, "the fraction that would pass uncounted").to.be.below(0.001);
            expect(r.lateControl / r.probes, `control: a ${CONTROL_TIMEOUT_MS} ms timeout`).to.be.at.least(0.001);
        });
    }

    for (const l of CLOSED)
        it(`${l.label}: its filter fails closed as rendered, so a call that outlasts its timeout is refused, never passed uncounted`, async () => {
            const objects = await l.render();
            const name = String(renderedRatelimits(objects)[l.side]!.deployment.metadata.name);
            const call = l.call(objects, value("probe"), name);
            expect(failureModeDeny(objects, call.filter)).to.equal(true);
        });
});
