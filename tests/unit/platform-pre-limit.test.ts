/**
 * The pre-limit in front of the platform's filters (builders/platform-filters.ts,
 * components/platform-ratelimit/plan.ts): which buckets the platform's rules imply, where the local
 * filters go, the switch, and the sizing checked on the gateway MODEL of Envoy's local bucket
 * (gateway-model/pre-limit-model.ts) against a fixed-window oracle written here: what the
 * platform's service allows, per counter over every gateway pod. Expected names and sizes are
 * written from the doc comments and Envoy's API, not read from the code under test.
 */
import { expect } from "chai";
import { LimitUnit } from "../../builders/rule-args";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { descriptorFor } from "../../gateway-model/evaluate";
import { Entry } from "../../gateway-model/model";
import { PreLimitConfigModel, PreLimitPod, parseLocalConfig } from "../../gateway-model/pre-limit-model";
import { GW } from "./platform-fixtures";

const M = LimitUnit.Minute;
const S = LimitUnit.Second;
const LOCAL_OVERRIDES = "envoy.filters.http.local_ratelimit.platform-overrides";
const LOCAL_DEFAULTS = "envoy.filters.http.local_ratelimit.platform-defaults";
const OVERRIDES = "envoy.filters.http.ratelimit.platform-overrides";
const DEFAULTS = "envoy.filters.http.ratelimit.platform-defaults";

/** Fixed limits and a per-client one in each source. */
const ARGS: PlatformRateLimitArgs = {
    gateway: { ...GW, listenerPorts: [8080] },
    namespace: "platform",
    overrides: {
        rules: [
            { name: "ceiling", requestsPerUnit: 6, unit: M },
            { name: "api-ceiling", path: { prefix: "/api" }, requestsPerUnit: 3, unit: M },
            { name: "per-client-ceiling", perClientAddress: true, requestsPerUnit: 100, unit: M },
        ],
    },
    defaults: {
        rules: [
            { name: "default-all", requestsPerUnit: 2, unit: S },
            { name: "per-client", perClientAddress: true, requestsPerUnit: 10, unit: M },
        ],
    },
};

const patchesOf = (args: PlatformRateLimitArgs, source: "overrides" | "defaults") =>
    planPlatformRateLimit(args).filters.find((f) => f.name === `platform-ratelimit-${source}`)!.spec.configPatches as any[];
const localPatches = (args: PlatformRateLimitArgs, source: "overrides" | "defaults") =>
    patchesOf(args, source).filter((p) => p.applyTo === "HTTP_FILTER" && String(p.patch.value.name).includes("local_ratelimit"));

/** The rendered pre-limit of a source, read into the model of Envoy's local filter. */
function modelOf(args: PlatformRateLimitArgs, source: "overrides" | "defaults"): PreLimitConfigModel {
    const [p] = localPatches(args, source);
    return parseLocalConfig("test", source, p.patch.value.typed_config);
}

/** The descriptors Envoy builds from the config's own rate_limits (model). */
function descriptors(cfg: PreLimitConfigModel, path: string, client: string): Entry[][] {
    const headers = { ":path": path, ":method": "GET" };
    return (cfg.rateLimits ?? []).map((rl) => descriptorFor(rl, headers, client)).filter((d): d is Entry[] => d !== undefined);
}

/**
 * ORACLE: what the platform's service allows: each counter L per fixed, epoch-aligned window of T
 * seconds over every pod; every counter of a request is incremented, over the limit in any refuses.
 * The counters are written from the rules above, not read from the render.
 */
class PlatformOracle {
    private counts = new Map<string, number>();
    constructor(private readonly limits: { key: (path: string, client: string) => string | undefined; L: number; T: number }[]) {}
    allows(t: number, path: string, client: string): boolean {
        let ok = true;
        for (const l of this.limits) {
            const k = l.key(path, client);
            if (k === undefined) continue;
            const id = `${k}@${Math.floor(t / l.T)}`;
            const n = (this.counts.get(id) ?? 0) + 1;
            this.counts.set(id, n);
            if (n > l.L) ok = false;
        }
        return ok;
    }
}

const isApi = (p: string) => p === "/api" || p.startsWith("/api/") || p.startsWith("/api?");
const overridesOracle = () =>
    new PlatformOracle([
        { key: () => "ceiling", L: 6, T: 60 },
        { key: (p) => (isApi(p) ? "api-ceiling" : undefined), L: 3, T: 60 },
        { key: (_p, c) => `client ${c}`, L: 100, T: 60 },
    ]);

function rng(seed: number): () => number {
    return () => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const PATHS = ["/", "/api", "/api/items", "/api?x=1", "/apiv2", "/shop"];
const CLIENTS = ["10.0.0.1", "10.0.0.2", "192.0.2.7"];

/** Sends only what the oracle allows through random pods; returns the pre-limit's refusals. */
function refusalsOfAllowedTraffic(cfg: PreLimitConfigModel, seed: number, runs: number): number {
    const r = rng(seed);
    let refused = 0;
    for (let run = 0; run < runs; run++) {
        const pods = 1 + Math.floor(r() * 4);
        const gw = Array.from({ length: pods }, () => new PreLimitPod(cfg, 0));
        const oracle = overridesOracle();
        let t = 0;
        for (let k = 0; k < 80; k++) {
            t += r() < 0.3 ? 0 : r() * 40;
            const path = PATHS[Math.floor(r() * PATHS.length)]!;
            const client = CLIENTS[Math.floor(r() * CLIENTS.length)]!;
            if (!oracle.allows(t, path, client)) continue;
            if (!gw[Math.floor(r() * pods)]!.decide(descriptors(cfg, path, client), t).allowed) refused++;
        }
    }
    return refused;
}

describe("platform pre-limit: buckets and placement", () => {
    it("one bucket of 2L refilled L per window for each fixed rule of each source; per-client rules get none, with the reason", () => {
        const plan = planPlatformRateLimit(ARGS);
        expect(plan.problems).to.deep.equal([]);
        const bucketsOf = (s: string) =>
            plan.sources
                .find((x) => x.source === s)!
                .preLimit!.buckets.map((b) => [b.entries.map((e) => `${e.key}=${e.value}`).join(","), b.maxTokens, b.tokensPerFill, b.fillInterval]);
        expect(bucketsOf("overrides")).to.deep.equal([
            ["platform_override=ceiling", 12, 6, "60s"],
            ["platform_override=api-ceiling", 6, 3, "60s"],
        ]);
        expect(bucketsOf("defaults")).to.deep.equal([["platform_default=default-all", 4, 2, "1s"]]);
        const unbounded = plan.sources.flatMap((s) => s.preLimit!.unbounded.map((u) => u.descriptor));
        expect(unbounded).to.have.length(2);
        expect(unbounded.join(" ")).to.include("per-client-ceiling").and.include("per-client /");
    });

    it("each local filter goes directly before its source's filter (same EnvoyFilter, after the insertion): the overrides' on every listener, the defaults' on listenerPorts", () => {
        for (const [source, local, global, ports] of [
            ["overrides", LOCAL_OVERRIDES, OVERRIDES, [undefined]],
            ["defaults", LOCAL_DEFAULTS, DEFAULTS, [8080]],
        ] as const) {
            const all = patchesOf(ARGS, source);
            const local_ = all.filter((p) => p.patch.value.name === local);
            expect(
                local_.map((p) => [p.match.context, p.match.listener.portNumber, p.match.listener.filterChain.filter.subFilter.name, p.patch.operation]),
            ).to.deep.equal(ports.map((port) => ["GATEWAY", port, global, "INSERT_BEFORE"]));
            expect(all.findIndex((p) => p.patch.value.name === global)).to.be.lessThan(all.indexOf(local_[0]));
            const tc = local_[0].patch.value.typed_config;
            expect(tc.filter_enabled.default_value.numerator).to.equal(100);
            expect(tc.always_consume_default_token_bucket).to.equal(false);
            expect(tc.token_bucket.max_tokens).to.equal(4294967295);
        }
    });

    it("reaches only the platform's gateway pods: every EnvoyFilter carrying a local filter selects the gateway's labels in its namespace", () => {
        const plan = planPlatformRateLimit(ARGS);
        const withLocal = plan.filters.filter((f) => JSON.stringify(f.spec).includes("local_ratelimit"));
        expect(withLocal.map((f) => f.name)).to.deep.equal(["platform-ratelimit-overrides", "platform-ratelimit-defaults"]);
        for (const f of withLocal) {
            expect(f.namespace).to.equal("istio-system");
            expect((f.spec as any).workloadSelector).to.deep.equal({ labels: { istio: "ingressgateway" } });
        }
    });

    it("the descriptors the local filter builds are the ones its source's filter sends (the same rate_limits)", () => {
        for (const source of ["overrides", "defaults"] as const) {
            const all = patchesOf(ARGS, source);
            const global = all.find((p) => p.patch.value.name === (source === "overrides" ? OVERRIDES : DEFAULTS));
            const [local] = localPatches(ARGS, source);
            expect(local.patch.value.typed_config.rate_limits).to.deep.equal(global.patch.value.typed_config.rate_limits);
        }
    });

    it("preLimit: false (and the service's shadow mode) render no local filter; only per-client rules render none; a non-boolean is refused naming the field", () => {
        expect(localPatches(ARGS, "overrides")).to.have.length(1);
        expect(localPatches({ ...ARGS, preLimit: false }, "overrides")).to.have.length(0);
        expect(localPatches({ ...ARGS, preLimit: false }, "defaults")).to.have.length(0);
        expect(localPatches({ ...ARGS, service: { shadowMode: true } }, "overrides")).to.have.length(0);
        const perClientOnly: PlatformRateLimitArgs = { ...ARGS, overrides: { rules: [ARGS.overrides!.rules![2]!] }, defaults: undefined };
        expect(localPatches(perClientOnly, "overrides")).to.have.length(0);
        const bad = planPlatformRateLimit({ ...ARGS, preLimit: "no" as unknown as boolean });
        expect(bad.problems.map((p) => p.key)).to.deep.equal(["preLimit"]);
        expect(bad.problems[0]!.fix).to.match(/true|false/);
    });
});

describe("platform pre-limit MODEL: never refuses what the platform allows", function () {
    this.timeout(60000);
    it("400 random sequences of allowed traffic (hosts' paths, /api spellings, several clients) over 1 to 4 pods: no refusal", () => {
        expect(refusalsOfAllowedTraffic(modelOf(ARGS, "overrides"), 55, 400)).to.equal(0);
    });

    it("the worst case per window boundary: all of one window's ceiling just before it, all of the next at it, on one pod", () => {
        const cfg = modelOf(ARGS, "overrides");
        const pod = new PreLimitPod(cfg, 0);
        const oracle = overridesOracle();
        for (let w = 1; w <= 21; w += 2) {
            for (const t of [...Array(6).fill(w * 60 - 1e-6), ...Array(6).fill(w * 60)]) {
                expect(oracle.allows(t, "/shop", "10.0.0.1")).to.equal(true);
                expect(pod.decide(descriptors(cfg, "/shop", "10.0.0.1"), t).allowed, `t=${t}`).to.equal(true);
            }
        }
    });

    it("control: with buckets of L instead of 2L the same allowed traffic is refused, so the test can fail", () => {
        const cfg = modelOf(ARGS, "overrides");
        const halved = { ...cfg, descriptors: cfg.descriptors.map((d) => ({ ...d, maxTokens: d.tokensPerFill })) };
        expect(refusalsOfAllowedTraffic(halved, 55, 400)).to.be.above(0);
    });

    it("a flood: 5,000 requests in 10 s on one pod, spread over clients and /api spellings, passes at most 2L + L·10/60 of each fixed limit", () => {
        const cfg = modelOf(ARGS, "overrides");
        const pod = new PreLimitPod(cfg, 0);
        let passed = 0;
        let apiPassed = 0;
        for (let i = 0; i < 5000; i++) {
            const path = PATHS[i % PATHS.length]!;
            if (pod.decide(descriptors(cfg, path, `10.1.${i % 250}.${i % 7}`), i / 500).allowed) {
                passed++;
                if (isApi(path)) apiPassed++;
            }
        }
        expect(passed).to.be.at.most(Math.floor(12 + (6 * 10) / 60));
        expect(apiPassed).to.be.at.most(Math.floor(6 + (3 * 10) / 60));
        // Control: the pre-limit does let the ceiling's worth through.
        expect(passed).to.be.at.least(6);
    });
});
