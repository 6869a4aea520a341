/**
 * PlatformRateLimit resolved once (components/platform-ratelimit/resolve.ts): the value has every
 * default filled in and is read-only at every level; refused arguments give problems and no value;
 * the plan is a pure build of the value. (The arguments' JSDoc is generated from the declarations in
 * platform-ratelimit-fields.ts, tests/unit/field-decl.test.ts.)
 */
import { expect } from "chai";
import { LimitUnit } from "../../builders/rule-args";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { buildPlatformRateLimit, planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { resolvePlatformRateLimit } from "../../components/platform-ratelimit/resolve";
import { frozenCopy } from "../../lib/frozen";
import { GW, PLATFORM } from "./platform-fixtures";

const M = LimitUnit.Minute;
const FIXED: PlatformRateLimitArgs = {
    gateway: { ...GW, listenerPorts: [8080] },
    overrides: { rules: [{ name: "ceiling", requestsPerUnit: 6, unit: M }] },
    defaults: { rules: [{ name: "floor", requestsPerUnit: 60, unit: M }] },
};

describe("PlatformRateLimit: resolved once", () => {
    it("every default filled in: each filter fails open and waits 1s, a pre-limit, the service's names; the defaults on listenerPorts, the overrides everywhere", () => {
        const { problems, value } = resolvePlatformRateLimit(FIXED);
        expect(problems).to.deep.equal([]);
        const v = value!;
        expect(v.sources.map((s) => [s.source, s.call, s.preLimit, s.ports])).to.deep.equal([
            ["overrides", { failureModeDeny: false, timeout: "1s" }, true, []],
            ["defaults", { failureModeDeny: false, timeout: "1s" }, true, [8080]],
        ]);
        expect([v.service.ratelimit.serviceName, v.service.ratelimit.configName, v.service.ratelimit.namespace]).to.deep.equal([
            "ratelimit-platform",
            "ratelimit-platform-config",
            "default",
        ]);
        expect(v.reach).to.deep.equal({
            clusterName: "outbound|8081||ratelimit-platform.default.svc.cluster.local",
            authority: "ratelimit-platform.default.svc.cluster.local",
            grpcAddress: "ratelimit-platform.default.svc.cluster.local:8081",
        });
        expect(v.gateway.namespace).to.equal("istio-system");
        expect(v.teamHosts).to.equal(undefined);
    });

    it("no pre-limit with preLimit false or in the service's shadow mode (control: the default has one)", () => {
        const pre = (a: PlatformRateLimitArgs) => resolvePlatformRateLimit(a).value!.sources.map((s) => s.preLimit);
        expect(pre(FIXED)).to.deep.equal([true, true]);
        expect(pre({ ...FIXED, preLimit: false })).to.deep.equal([false, false]);
        expect(pre({ ...FIXED, service: { shadowMode: true } })).to.deep.equal([false, false]);
    });

    it("the value is read-only at every level, and the arguments stay the caller's (not frozen)", () => {
        const args: PlatformRateLimitArgs = { ...PLATFORM, teamHosts: { "team-b": ["b.example.com"] } };
        const v = resolvePlatformRateLimit(args).value!;
        const nested: object[] = [
            v,
            v.gateway,
            v.gateway.target,
            v.service.ratelimit,
            v.sources,
            v.sources[0]!.call,
            v.sources[0]!.compiled.vhostRateLimits[0]!,
        ];
        nested.push(v.teamHosts!["team-b"]!, v.monitoring, v.perValueFigures);
        for (const o of nested) expect(Object.isFrozen(o), JSON.stringify(o).slice(0, 80)).to.equal(true);
        expect(() => ((v.sources[0]!.call as { timeout: string }).timeout = "10s")).to.throw(TypeError);
        expect(Object.isFrozen(args.teamHosts!["team-b"])).to.equal(false);
        expect(Object.isFrozen(args.defaults!.rules)).to.equal(false);
    });

    it("refused arguments: every problem and no value; the plan of them builds nothing and says so when its service is read", () => {
        const bad = { ...FIXED, timeout: "ten seconds", preLimit: "no" } as unknown as PlatformRateLimitArgs;
        const r = resolvePlatformRateLimit(bad);
        expect(r.problems.map((p) => p.key)).to.deep.equal(["timeout", "preLimit"]);
        expect(r.value).to.equal(undefined);
        const plan = planPlatformRateLimit(bad);
        expect(plan.problems.map((p) => p.key)).to.deep.equal(["timeout", "preLimit"]);
        expect([plan.filters, plan.sources]).to.deep.equal([[], []]);
        expect(() => plan.service).to.throw(/refused/);
    });

    it("a bad failureModeDeny or timeout: the fix falls back to the platform's defaults (false, 1s), not GlobalRateLimit's (true, 10s)", () => {
        const fixes = (x: object) => resolvePlatformRateLimit({ ...FIXED, ...x } as PlatformRateLimitArgs).problems.map((p) => [p.key, p.fix]);
        expect(fixes({ failureModeDeny: "maybe", timeout: "ten seconds" })).to.deep.equal([
            ["failureModeDeny", "set failureModeDeny to false"],
            ["timeout", 'set timeout to "1s"'],
        ]);
        // Controls: a value that spells one is read as meant; a duration too short is raised to the minimum.
        expect(fixes({ failureModeDeny: "yes", timeout: "0.0001s" })).to.deep.equal([
            ["failureModeDeny", "set failureModeDeny to true"],
            ["timeout", 'set timeout to "0.001s"'],
        ]);
    });

    it("the build reads the value only: twice from one value, the same objects, and the value unchanged", () => {
        const v = resolvePlatformRateLimit(FIXED).value!;
        const before = JSON.stringify(v);
        const first = buildPlatformRateLimit(v);
        expect(JSON.parse(JSON.stringify(buildPlatformRateLimit(v)))).to.deep.equal(JSON.parse(JSON.stringify(first)));
        expect(JSON.stringify(v)).to.equal(before);
        // Each filter's pre-limit patch is in its spec as built (the spec is not changed afterwards).
        const names = first.filters.map((f) => f.spec.configPatches.map((p) => (p.patch.value as { name?: string }).name));
        expect(names).to.deep.equal([
            ["envoy.filters.http.ratelimit.platform-overrides", "envoy.filters.http.local_ratelimit.platform-overrides"],
            ["envoy.filters.http.ratelimit.platform-defaults", "envoy.filters.http.local_ratelimit.platform-defaults"],
        ]);
    });
});

describe("frozenCopy (lib/frozen.ts)", () => {
    it("copies plain objects and arrays and freezes them at every level; leaves the input changeable and other objects as they are", () => {
        const when = new Date(0);
        const input = { a: [{ b: 1 }], when, fn: () => 2, none: undefined };
        const copy = frozenCopy(input);
        expect(copy).to.deep.equal(input);
        expect([Object.isFrozen(copy), Object.isFrozen(copy.a), Object.isFrozen(copy.a[0])]).to.deep.equal([true, true, true]);
        expect([Object.isFrozen(input), Object.isFrozen(input.a[0])]).to.deep.equal([false, false]);
        expect(copy.when).to.equal(when);
        expect(Object.isFrozen(when)).to.equal(false);
        expect("none" in copy).to.equal(true);
    });
});
