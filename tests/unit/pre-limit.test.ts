/**
 * The gateway's pre-limit: which buckets the rules imply (builders/pre-limit.ts), where the
 * patches go, and the sizing argument checked on the gateway MODEL of Envoy's local bucket
 * (gateway-model/pre-limit-model.ts; there is no Envoy here). The oracle for "what the global limit
 * allows" is a fixed-window counter written in this file, not the code under test.
 */
import { expect } from "chai";
import { FilterLayout } from "../../builders/envoy-filters";
import { preLimitPlan } from "../../builders/pre-limit";
import { LimitUnit, MissingHeader } from "../../builders/rule-args";
import { compileGlobalLimits } from "../../components/global-ratelimit/limits-plan";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { Entry, GatewayModel } from "../../gateway-model/model";
import { PreLimitConfigModel, PreLimitPod, TokenBucketModel, formatPreLimit, preLimitDescriptors, readPreLimit } from "../../gateway-model/pre-limit-model";
import { HostNotServed, gatewayModel } from "../../gateway-model/read-rendered";
import { renderVariant } from "../rls/harness/stack";

const M = LimitUnit.Minute;
const P = (v: string): Entry[] => [{ key: "PATH", value: v }];

/** What the global limit allows: L per fixed, epoch-aligned window of T seconds, over every pod (oracle). */
class FixedWindowOracle {
    private counts = new Map<number, number>();
    constructor(
        readonly L: number,
        readonly T: number,
    ) {}
    allows(t: number): boolean {
        const w = Math.floor(t / this.T);
        const n = (this.counts.get(w) ?? 0) + 1;
        this.counts.set(w, n);
        return n <= this.L;
    }
}

/** A pre-limit config with one bucket of `max` tokens refilled `fill` per `T` s (model input). */
function oneBucket(max: number, fill: number, T: number): PreLimitConfigModel {
    return {
        envoyFilter: "test",
        vhMode: "INCLUDE",
        descriptors: [{ entries: P("/x"), maxTokens: max, tokensPerFill: fill, fillSeconds: T }],
        defaultBucket: { maxTokens: 4294967295, tokensPerFill: 4294967295, fillSeconds: 1 },
        alwaysConsumeDefault: false,
        statPrefix: "test",
    };
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
    return () => {
        seed = (seed + 0x6d2b79f5) | 0;
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

describe("pre-limit: buckets from the compiled rules (builders/pre-limit.ts)", () => {
    it("the specified limits (variant A): one bucket of 2L refilled L per 60 s for /productpage (1/min) and api (2/min); the per-path catch-all is left to the service", async () => {
        const objs = await renderVariant("A");
        const f = objs.find((o) => o.kind === "EnvoyFilter" && o.metadata.name === "filter-ratelimit")!;
        const vh = f.spec.configPatches.find((p: any) => p.applyTo === "VIRTUAL_HOST");
        const cfg = vh.patch.value.typed_per_filter_config["envoy.filters.http.local_ratelimit"];
        expect(cfg.descriptors).to.deep.equal([
            { entries: [{ key: "PATH", value: "/productpage" }], token_bucket: { max_tokens: 2, tokens_per_fill: 1, fill_interval: "60s" } },
            { entries: [{ key: "PATH", value: "api" }], token_bucket: { max_tokens: 4, tokens_per_fill: 2, fill_interval: "60s" } },
        ]);
        expect(cfg.response_headers_to_add).to.deep.equal([
            { append_action: "OVERWRITE_IF_EXISTS_OR_ADD", header: { key: "x-mesh-ratelimit", value: "pre-limit" } },
        ]);
        expect(cfg.stat_prefix).to.equal("mesh_ratelimit_pre_limit");
        // Requests that match no bucket must never be refused by the default bucket.
        expect(cfg.always_consume_default_token_bucket).to.equal(false);
        expect(cfg.token_bucket.max_tokens).to.equal(4294967295);
        expect(cfg.vh_rate_limits).to.equal("INCLUDE");
    });

    it("variant B and other limits: the buckets follow the config (limitedPathLimit 3 per hour → 6 tokens, 3 per 3600 s)", async () => {
        const objs = await renderVariant("B", { limitedPathLimit: "3", unit: "hour" });
        const f = objs.find((o) => o.kind === "EnvoyFilter" && o.metadata.name === "filter-ratelimit")!;
        const cfg = f.spec.configPatches.find((p: any) => p.applyTo === "VIRTUAL_HOST").patch.value.typed_per_filter_config[
            "envoy.filters.http.local_ratelimit"
        ];
        expect(cfg.descriptors).to.deep.equal([
            { entries: [{ key: "PATH", value: "/productpage" }], token_bucket: { max_tokens: 6, tokens_per_fill: 3, fill_interval: "3600s" } },
        ]);
    });

    it("rule kinds: a plain rule gets a bucket; per client (the fallback counters too), per header value, per path, shadow and refusing limits do not, each with its reason", () => {
        const c = compileGlobalLimits({
            rules: [
                { name: "login", path: { exact: "/login" }, requestsPerUnit: 5, unit: LimitUnit.Second },
                { name: "per-client", perClientAddress: true, requestsPerUnit: 10, unit: M },
                { name: "per-key", header: { name: "x-api-key", perValue: true }, requestsPerUnit: 7, unit: LimitUnit.Day },
                { name: "keyless", header: { name: "x-api-key", perValue: true, whenMissing: MissingHeader.Refuse }, requestsPerUnit: 3, unit: M },
                { name: "observe", requestsPerUnit: 1, unit: M, shadow: true },
            ],
            perPath: { eachPath: { requestsPerUnit: 100, unit: M } },
        });
        const p = preLimitPlan(c.plannedDescriptors);
        expect(p.buckets.map((b) => [b.entries.map((e) => `${e.key}=${e.value}`).join(","), b.maxTokens, b.tokensPerFill, b.fillInterval])).to.deep.equal([
            ["rule=login", 10, 5, "1s"],
        ]);
        const why = Object.fromEntries(p.unbounded.map((u) => [u.descriptor, u.reason]));
        expect(Object.keys(why)).to.have.members([
            "rule=per-client / masked_remote_address (each value)",
            "rule=per-key / x-api-key (each value)",
            // The fallback counters are per client: no static bucket names one.
            "rule=per-key / untrusted_value=shared / masked_remote_address (each value)",
            "rule=per-key / missing_value=shared / masked_remote_address (each value)",
            "rule=keyless / x-api-key (each value)",
            "rule=keyless / untrusted_value=shared",
            "rule=keyless / missing_value=shared",
            "PATH (each value)",
            "rule=observe",
        ]);
        expect(why["PATH (each value)"])
            .to.match(/Envoy after 1\.32/)
            .and.match(/max_dynamic_descriptors/);
        expect(why["rule=observe"]).to.match(/shadow/);
        expect(why["rule=keyless / missing_value=shared"]).to.match(/limit of 0/);
    });

    it("preLimit: false renders no local filter; a non-boolean is refused naming the field and the fix", () => {
        const args: GlobalRateLimitArgs = {
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80"] },
            rules: [{ name: "all", requestsPerUnit: 5, unit: M }],
        };
        const on = planGlobalRateLimit(args);
        const names = (plan: typeof on) => plan.filters.flatMap((f) => (f.spec.configPatches as any[]).map((p) => p.patch.value.name ?? p.applyTo));
        // Per-instance layout (the default): the local filter is named after the instance's service.
        expect(names(on)).to.include("envoy.filters.http.local_ratelimit/default/ratelimit");
        expect(names(planGlobalRateLimit({ ...args, filterLayout: FilterLayout.Shared }))).to.include("envoy.filters.http.local_ratelimit");
        // Without the switch of the platform's defaults, which also turns the platform's own defaults pre-limit off.
        const own = (plan: typeof on) => JSON.stringify(plan.filters).replaceAll('"envoy.filters.http.local_ratelimit.platform-defaults"', "");
        const off = planGlobalRateLimit({ ...args, preLimit: false });
        expect(off.problems).to.deep.equal([]);
        expect(own(off)).to.not.include("envoy.filters.http.local_ratelimit");
        expect(off.preLimit).to.equal(undefined);
        // The service's shadow mode refuses nothing: no pre-limit either.
        const shadow = planGlobalRateLimit({ ...args, service: { shadowMode: true } });
        expect(own(shadow)).to.not.include("envoy.filters.http.local_ratelimit");
        const bad = planGlobalRateLimit({ ...args, preLimit: "no" as unknown as boolean });
        expect(bad.problems.map((p) => [p.key, p.fix])).to.deep.equal([["preLimit", "set preLimit to false"]]);
    });

    it("scope: the local filter goes on the global filter's listener ports only, directly before it; its buckets on the same virtual hosts as the rate_limits", () => {
        const plan = planGlobalRateLimit({
            domain: "shop",
            gateway: { selector: { app: "gw" }, virtualHosts: ["shop.example.com:80", "api.example.com:8443"] },
            rules: [{ name: "all", requestsPerUnit: 5, unit: M }],
        });
        const patches = plan.filters[0].spec.configPatches as any[];
        const localName = "envoy.filters.http.local_ratelimit/default/ratelimit";
        const globalName = "envoy.filters.http.ratelimit/default/ratelimit";
        const local = patches.filter((p) => p.patch.value.name === localName);
        expect(local.map((p) => [p.match.listener.portNumber, p.match.listener.filterChain.filter.subFilter.name, p.patch.operation])).to.deep.equal([
            [80, globalName, "INSERT_BEFORE"],
            [8443, globalName, "INSERT_BEFORE"],
        ]);
        expect(JSON.stringify(plan.filters)).to.not.include('"envoy.filters.http.ratelimit"').and.not.include('"envoy.filters.http.local_ratelimit"');
        // The listener-wide config holds no bucket and is not enabled: another team's host on the port is untouched.
        expect(Object.keys(local[0].patch.value.typed_config).sort()).to.deep.equal(["@type", "stat_prefix"]);
        // Applied after the insertion of the rate-limit filter (same EnvoyFilter, later patch).
        expect(patches.findIndex((p) => p.patch.value.name === globalName)).to.be.lessThan(patches.indexOf(local[0]));
        // The pre-limit's buckets (the RateLimit-Policy patches of the same EnvoyFilter set no typed_per_filter_config).
        const vhosts = patches
            .filter((p) => p.applyTo === "VIRTUAL_HOST" && p.patch.value.typed_per_filter_config?.[localName])
            .map((p) => p.match.routeConfiguration.vhost.name);
        const svc = (plan.filters[1].spec.configPatches as any[]).map((p) => p.match.routeConfiguration.vhost.name);
        expect(vhosts).to.deep.equal(svc).and.deep.equal(["shop.example.com:80", "api.example.com:8443"]);
        expect(plan.filters.every((f) => f.spec.priority === 10)).to.equal(true);
    });
});

describe("pre-limit MODEL: Envoy's local bucket (gateway-model/pre-limit-model.ts)", () => {
    it("AtomicTokenBucketImpl: starts full, refills continuously, a request needs a whole token (hand-computed times)", () => {
        const b = new TokenBucketModel(2, 1, 60, 0);
        expect([b.consume(0), b.consume(0), b.consume(0)]).to.deep.equal([true, true, false]);
        expect(b.consume(59.9)).to.equal(false);
        expect(b.consume(60)).to.equal(true);
        expect(b.tokens(90)).to.be.closeTo(0.5, 1e-9);
        // Never above max_tokens, however long it rests.
        expect(b.tokens(1e6)).to.equal(2);
    });

    it("never refuses traffic the global limit allows: the worst case (L at the end of a window, L at the start of the next), every window, 1 to 5 pods", () => {
        for (const L of [1, 2, 7]) {
            for (const pods of [1, 3, 5]) {
                const T = 60;
                const gw = Array.from({ length: pods }, () => new PreLimitPod(oneBucket(2 * L, L, T), 0));
                const oracle = new FixedWindowOracle(L, T);
                let refused = 0;
                let i = 0;
                for (let w = 1; w <= 99; w += 2) {
                    // L requests just before the boundary (all of window w-1's allowance), L at the boundary
                    // (all of window w's): 2L within a microsecond, every other boundary.
                    for (const t of [...Array(L).fill(w * T - 1e-6), ...Array(L).fill(w * T)]) {
                        expect(oracle.allows(t), `oracle at ${t}`).to.equal(true);
                        if (!gw[i++ % pods].decide([P("/x")], t).allowed) refused++;
                    }
                }
                expect(refused, `L=${L}, ${pods} pods`).to.equal(0);
            }
        }
    });

    it("never refuses traffic the global limit allows: 2,000 random allowed sequences over random pods", () => {
        const r = rng(21);
        for (let run = 0; run < 2000; run++) {
            const L = 1 + Math.floor(r() * 5);
            const T = [1, 60][run % 2];
            const pods = 1 + Math.floor(r() * 4);
            const gw = Array.from({ length: pods }, () => new PreLimitPod(oneBucket(2 * L, L, T), 0));
            const oracle = new FixedWindowOracle(L, T);
            let t = 0;
            for (let k = 0; k < 60; k++) {
                t += r() < 0.3 ? 0 : r() * T * 0.7;
                if (!oracle.allows(t)) continue; // only what the global limit allows is sent
                const d = gw[Math.floor(r() * pods)].decide([P("/x")], t);
                expect(d.allowed, `run ${run}: L=${L} T=${T} pods=${pods} t=${t}`).to.equal(true);
            }
        }
    });

    it("control: a bucket of L (not 2L) refuses a request the global limit allows at a window boundary, so the sizing matters", () => {
        const pod = new PreLimitPod(oneBucket(1, 1, 60), 0);
        const oracle = new FixedWindowOracle(1, 60);
        expect(oracle.allows(59.999) && pod.decide([P("/x")], 59.999).allowed).to.equal(true);
        expect(oracle.allows(60)).to.equal(true);
        expect(pod.decide([P("/x")], 60).allowed).to.equal(false);
    });

    it("known limit: after this pod's clients overran the limit, the pre-limit can refuse a request early in the next window that the service alone would allow", () => {
        const pod = new PreLimitPod(oneBucket(2, 1, 60), 0);
        // A burst of 3 at 59 s drains the bucket (2 pass, the service allows the first only).
        [59, 59, 59].forEach((t) => pod.decide([P("/x")], t));
        // New window at 60 s: the service would allow the next request; the bucket has 1/60 token.
        expect(pod.decide([P("/x")], 60).allowed).to.equal(false);
        // It gives the window its L back within the window: a token at 119 s.
        expect(pod.decide([P("/x")], 119).allowed).to.equal(true);
    });

    it("a flood: 10,000 requests/s for 10 s on 3 pods passes at most pods × ⌊2L + L·10/60⌋ requests to the service", () => {
        for (const L of [1, 2, 100]) {
            const pods = Array.from({ length: 3 }, () => new PreLimitPod(oneBucket(2 * L, L, 60), 0));
            let passed = 0;
            for (let i = 0; i < 100_000; i++) if (pods[i % 3].decide([P("/x")], i / 10_000).allowed) passed++;
            const bound = 3 * Math.floor(2 * L + (L * 10) / 60);
            expect(passed, `L=${L}`).to.be.at.most(bound);
            // And it is not a trivial bound: the buckets pass what they hold.
            expect(passed, `L=${L}`).to.be.at.least(3 * 2 * L);
        }
    });
});

describe("pre-limit MODEL read from the render: requests a client would use to get around it", () => {
    let model: GatewayModel;
    let cfg: PreLimitConfigModel;
    before(async () => {
        const objs = await renderVariant("A");
        model = gatewayModel(objs);
        cfg = readPreLimit(objs, model)!;
    });

    it("query strings, dot segments and encoded dots count in the same /productpage and api buckets (model)", () => {
        for (const p of ["/productpage", "/productpage?a=1", "/productpage?", "/static/../productpage", "/%2e/productpage"]) {
            expect(preLimitDescriptors(model, cfg, p), p).to.deep.equal([P("/productpage")]);
        }
        for (const p of ["/api/v1/products/7", "/api/v1/products/7?x=1", "/api/v1/products/99", "/api/v1/products/../products/7"]) {
            expect(preLimitDescriptors(model, cfg, p)[0], p).to.deep.equal(P("api"));
        }
    });

    it("a flood of query variants of /productpage from one pod still passes only the bucket's 2 + refill (model)", () => {
        const pod = new PreLimitPod(cfg, 0);
        let passed = 0;
        for (let i = 0; i < 10_000; i++) if (pod.decide(preLimitDescriptors(model, cfg, `/productpage?n=${i}`), i / 1000).allowed) passed++;
        expect(passed).to.equal(2);
    });

    it("paths without a bucket (per-path counters, unmatched api spellings) are never refused by it: the service decides (model)", () => {
        const pod = new PreLimitPod(cfg, 0);
        for (const p of ["/login", "/api/v1/products/100", "/api/v1/products//7", "/logout?x=1"]) {
            for (let i = 0; i < 1000; i++) expect(pod.decide(preLimitDescriptors(model, cfg, p), i / 1000).allowed, p).to.equal(true);
        }
        expect(preLimitDescriptors(model, cfg, "/productpage/")).to.deep.equal([]);
    });

    it("another host is not the stack's: no pre-limit, no service call (model)", async () => {
        const objs = await renderVariant("A", { gatewayHosts: "bookinfo.example.com" });
        expect(() => gatewayModel(objs, "other.example.com")).to.throw(HostNotServed);
    });

    it("npm run explain says who decides (model): the pre-limit first for /productpage, the service alone for /login, nobody without a pre-limit", async () => {
        expect(formatPreLimit(model, cfg, "/productpage"))
            .to.match(/PATH=\/productpage: 2 tokens per gateway pod, refilled 1 per 60 s/)
            .and.match(/pre-limit first/);
        expect(formatPreLimit(model, cfg, "/login"))
            .to.match(/no bucket/)
            .and.match(/who decides: the service/);
        const off = await renderVariant("A", { preLimit: "false" });
        expect(readPreLimit(off, gatewayModel(off))).to.equal(undefined);
        expect(formatPreLimit(model, undefined, "/productpage")).to.match(/the rate-limit service decides every request/);
    });
});

describe("pre-limit: limits a bucket cannot hold (gaps a mutation run found)", () => {
    const plan = (requests: number, unit: LimitUnit = LimitUnit.Minute, seconds = 60) =>
        preLimitPlan([{ key: "PATH", value: "/x", limit: { requests, unit, seconds, shadow: false } }]);
    const tooBig = (L: number) => ({ descriptor: "PATH=/x", reason: `2 × ${L} tokens do not fit Envoy's uint32 max_tokens` });

    it("2L must fit Envoy's uint32 max_tokens: 2,147,483,647 fits (4,294,967,294 tokens), 2,147,483,648 does not", () => {
        expect(plan(2147483647).buckets.map((b) => b.maxTokens)).to.deep.equal([4294967294]);
        expect(plan(2147483647).unbounded).to.deep.equal([]);
        expect(plan(2147483648)).to.deep.equal({ buckets: [], unbounded: [tooBig(2147483648)] });
    });

    it("a limit that is not a whole number, or a window that is not a whole number of seconds, gets no bucket", () => {
        expect(plan(1.5)).to.deep.equal({ buckets: [], unbounded: [tooBig(1.5)] });
        for (const seconds of [0, 0.5, Number.NaN]) {
            expect(plan(10, LimitUnit.Minute, seconds).buckets).to.deep.equal([]);
            expect(plan(10, LimitUnit.Minute, seconds).unbounded).to.have.length(1);
        }
        expect(plan(10, LimitUnit.Hour, 3600).buckets.map((b) => [b.maxTokens, b.tokensPerFill, b.fillInterval])).to.deep.equal([[20, 10, "3600s"]]);
    });
});
