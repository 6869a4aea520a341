/**
 * Tests by behaviour: one table per field rule (lib/field-checks.ts and the limit's rule in
 * components/rules/rule-checks.ts). Each rule's behaviour is tested once, on the rule itself; then one
 * wiring row per field that uses it shows that field is checked by that rule (the bad value is
 * refused under the field's path with the rule's wording, and a good value passes).
 */
import { expect } from "chai";
import { booleanProblems, goDurationProblems, oneOfProblems, protoDurationProblems, wholeNumberProblems } from "../../lib/field-checks";
import { MAX_REQUESTS_PER_UNIT, requestsPerUnitProblems } from "../../components/rules/rule-checks";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planLocalRateLimit } from "../../components/local-ratelimit/component";
import { Problem } from "../../lib/problems";
import { G, M } from "./global-ratelimit-fixtures";

/** A field's wiring: the problems of the arguments with `value` at the field. */
type Wiring = [field: string, problemsWith: (value: unknown) => Problem[], good?: unknown];

const rule = (extra: (v: unknown) => Record<string, unknown>) => (v: unknown) =>
    planGlobalRateLimit(G({ rules: [{ name: "r", requestsPerUnit: 10, unit: M, ...extra(v) }] })).problems;
const global = (change: (v: unknown) => Record<string, unknown>) => (v: unknown) => planGlobalRateLimit(G(change(v))).problems;
const LOCAL = { selector: { app: "productpage" }, port: 9080, bucket: 10, namespace: "shop" };
const local = (field: string) => (v: unknown) => planLocalRateLimit("b", { ...LOCAL, [field]: v } as any).problems;

/** Each wiring row: the bad value refused under the field with `problem`, the good value accepted there. */
function wiringRows(rows: Wiring[], bad: unknown, problem: RegExp, good: unknown): void {
    for (const [field, problemsWith, fieldGood = good] of rows) {
        it(`${field}: ${JSON.stringify(bad)} refused by this rule, ${JSON.stringify(fieldGood)} accepted`, () => {
            const refused = problemsWith(bad).filter((p) => p.key === field);
            expect(
                refused.map((p) => p.problem),
                field,
            ).to.have.length(1);
            expect(refused[0]!.problem).to.match(problem);
            expect(refused[0]!.value).to.deep.equal(bad);
            expect(refused[0]!.fix, "the fix names the field").to.contain(field);
            expect(problemsWith(fieldGood).filter((p) => p.key === field)).to.deep.equal([]);
        });
    }
}

describe("field rule: a boolean (true or false)", () => {
    it("accepts true and false; refuses text, numbers and null; the fix reads what was meant", () => {
        expect(booleanProblems("f", true, false)).to.deep.equal([]);
        expect(booleanProblems("f", false, true)).to.deep.equal([]);
        const fix = (v: unknown, fallback = false) => booleanProblems("f", v, fallback)[0]?.fix;
        expect(fix("yes")).to.equal("set f to true");
        expect(fix("off", true)).to.equal("set f to false");
        expect(fix(1)).to.equal("set f to true");
        expect(fix("maybe", true)).to.equal("set f to true");
        expect(fix(null)).to.equal("set f to false");
        // Text spelling a boolean is refused: the program converts stack config's text at its edge.
        expect(booleanProblems("f", "true", false)).to.have.length(1);
    });
    wiringRows(
        [
            ["failureModeDeny", global((v) => ({ failureModeDeny: v }))],
            ["preLimit", global((v) => ({ preLimit: v }))],
            ["service.prometheus", global((v) => ({ service: { prometheus: v } }))],
            ["service.shadowMode", global((v) => ({ service: { shadowMode: v } }))],
            ["perValueStore.failureModeDeny", global((v) => ({ perValueStore: { failureModeDeny: v } }))],
            [
                "gateway.allVirtualHosts",
                global((v) => ({ gateway: { selector: { app: "shop-gateway" }, virtualHosts: ["shop.example.com:80"], allVirtualHosts: v } })),
            ],
            ["rules[0].shadow", rule((v) => ({ shadow: v }))],
            ["rules[0].perClientAddress", rule((v) => ({ perClientAddress: v }))],
            ["rules[0].rateLimitHeaders", rule((v) => ({ rateLimitHeaders: v }))],
            ["rules[0].header.invert", rule((v) => ({ header: { name: "x-tier", value: "free", invert: v } }))],
            ["rules[0].query.perValue", rule((v) => ({ query: { name: "tier", perValue: v } }))],
            ["rules[0].header.perValue", rule((v) => ({ header: { name: "x-tier", perValue: v } }))],
            ["rules[0].clientCidr.perAddress", rule((v) => ({ clientCidr: { cidr: "10.0.0.0/8", perAddress: v } }))],
            ["shadow", local("shadow")],
            ["reachAllNamespaces", local("reachAllNamespaces")],
        ],
        "yes",
        /^must be true or false$/,
        true,
    );
});

describe("field rule: one of a set of words", () => {
    it("accepts a listed word exactly; the fix is the nearest listed word, else the fallback", () => {
        const allowed = ["second", "minute", "hour", "day"];
        expect(oneOfProblems("f", "hour", allowed, "minute")).to.deep.equal([]);
        expect(oneOfProblems("f", "Hour", allowed, "minute")[0]?.fix).to.equal('set f to "hour"');
        expect(oneOfProblems("f", "minutes", allowed, "minute")[0]?.fix).to.equal('set f to "minute"');
        expect(oneOfProblems("f", 60, allowed, "minute")[0]?.fix).to.equal('set f to "minute"');
        expect(oneOfProblems("f", "x", allowed, "minute")[0]?.problem).to.equal("must be one of 'second', 'minute', 'hour', 'day'");
        // A word whose meaning is known wins over the nearest spelling: "on" is nearest "off", but means the headers on.
        const headers = ["draft-03", "off"];
        expect(oneOfProblems("f", "on", headers, "draft-03")[0]?.fix).to.equal('set f to "off"');
        expect(oneOfProblems("f", "On", headers, "draft-03", { on: "draft-03" })[0]?.fix).to.equal('set f to "draft-03"');
    });
    wiringRows(
        [
            ["rules[0].unit", rule((v) => ({ unit: v })), "hour"],
            ["rules[0].header.whenMissing", rule((v) => ({ header: { name: "x-key", perValue: true, whenMissing: v } }))],
            ["rules[0].query.whenMissing", rule((v) => ({ query: { name: "key", perValue: true, whenMissing: v } }))],
            ["rules[0].header.valueCharset", rule((v) => ({ header: { name: "x-key", perValue: true, valueCharset: v } }))],
            ["pathKey", global((v) => ({ pathKey: v }))],
            ["filterLayout", global((v) => ({ filterLayout: v }))],
            ["rateLimitHeaders", global((v) => ({ rateLimitHeaders: v }))],
            ["statusOnError", global((v) => ({ statusOnError: v }))],
            ["counterStore", global((v) => ({ counterStore: v }))],
            ["service.logLevel", global((v) => ({ service: { logLevel: v } }))],
            ["filterLayout", local("filterLayout")],
        ],
        "bogus",
        /^must be one of '/,
        undefined,
    );
});

describe("field rule: a whole number in a range", () => {
    it("refuses fractions, text, NaN and out-of-range numbers; the fix is the nearest whole number in range", () => {
        const o = { min: 1, max: 100, fallback: 10 };
        expect(wholeNumberProblems("f", 1, o)).to.deep.equal([]);
        expect(wholeNumberProblems("f", 100, o)).to.deep.equal([]);
        expect(wholeNumberProblems("f", 2.6, o)[0]).to.include({ problem: "must be a whole number", fix: "set f to 3" });
        expect(wholeNumberProblems("f", "5", o)[0]).to.include({ problem: "must be a whole number", fix: "set f to 5" });
        expect(wholeNumberProblems("f", NaN, o)[0]).to.include({ problem: "must be a whole number", fix: "set f to 10" });
        expect(wholeNumberProblems("f", 2 ** 53, { min: 0, fallback: 0 })[0]).to.include({
            problem: "must be a whole number",
            fix: `set f to ${Number.MAX_SAFE_INTEGER}`,
        });
        expect(wholeNumberProblems("f", 0, o)[0]).to.include({ problem: "must be between 1 and 100", fix: "set f to 1" });
        expect(wholeNumberProblems("f", 101, o)[0]).to.include({ problem: "must be between 1 and 100", fix: "set f to 100" });
        expect(wholeNumberProblems("f", -1, { min: 0, fallback: 0 })[0]).to.include({ problem: "must be at least 0", fix: "set f to 0" });
    });
    wiringRows(
        [
            ["service.grpcPort", global((v) => ({ service: { grpcPort: v } }))],
            ["service.replicas", global((v) => ({ service: { replicas: v } }))],
            ["service.redisPoolSize", global((v) => ({ service: { redisPoolSize: v } }))],
            ["service.redisPipelineLimit", global((v) => ({ service: { redisPipelineLimit: v } }))],
            ["service.localCacheSizeInBytes", global((v) => ({ service: { localCacheSizeInBytes: v } }))],
            ["clientPrefix.v4", global((v) => ({ clientPrefix: { v4: v } }))],
            ["clientPrefix.v6", global((v) => ({ clientPrefix: { v6: v } }))],
            ["port", local("port")],
            ["bucket", local("bucket")],
        ],
        2.5,
        /^must be a whole number$/,
        3,
    );
});

describe("field rule: a limit's requestsPerUnit (a whole number from 1 to the service's uint32)", () => {
    it("accepts 1 and 4294967295; refuses 0, a fraction and 4294967296 with the uint32 reason", () => {
        expect(requestsPerUnitProblems("f", 1)).to.deep.equal([]);
        expect(requestsPerUnitProblems("f", MAX_REQUESTS_PER_UNIT)).to.deep.equal([]);
        expect(requestsPerUnitProblems("f", 0)[0]).to.include({ problem: "must be at least 1", fix: "set f to 1" });
        expect(requestsPerUnitProblems("f", 1.5)[0]).to.include({ problem: "must be a whole number" });
        const over = requestsPerUnitProblems("f", MAX_REQUESTS_PER_UNIT + 1);
        expect(over).to.have.length(1);
        expect(over[0]!.problem).to.match(/32-bit unsigned number/);
        expect(over[0]!.fix).to.equal("set f to 4294967295, or the same rate in a shorter unit");
    });
    wiringRows(
        [
            ["rules[0].requestsPerUnit", (v) => planGlobalRateLimit(G({ rules: [{ name: "r", requestsPerUnit: v, unit: M }] })).problems],
            ["perPath.paths[0].requestsPerUnit", global((v) => ({ perPath: { paths: [{ path: "/a", requestsPerUnit: v, unit: M }] } }))],
            ["perPath.eachPath.requestsPerUnit", global((v) => ({ perPath: { eachPath: { requestsPerUnit: v, unit: M } } }))],
        ],
        MAX_REQUESTS_PER_UNIT + 1,
        /32-bit unsigned number/,
        MAX_REQUESTS_PER_UNIT,
    );
});

describe("field rule: a protobuf duration (what Envoy reads)", () => {
    it("accepts seconds with an 's' suffix; refuses '60', '1m', '500ms' with the same length written as one", () => {
        expect(protoDurationProblems("f", "0.25s", 0.001, "10s")).to.deep.equal([]);
        expect(protoDurationProblems("f", "60", 0.001, "10s")[0]?.fix).to.equal('set f to "60s"');
        expect(protoDurationProblems("f", "1m", 0.001, "10s")[0]?.fix).to.equal('set f to "60s"');
        expect(protoDurationProblems("f", "500ms", 0.001, "10s")[0]?.fix).to.equal('set f to "0.5s"');
        expect(protoDurationProblems("f", "soon", 0.001, "10s")[0]?.fix).to.equal('set f to "10s"');
        expect(protoDurationProblems("f", 10, 0.001, "5s")[0]?.fix).to.equal('set f to "10s"');
        expect(protoDurationProblems("f", "0s", 0.001, "10s")[0]).to.include({ problem: "must be at least 0.001s", fix: 'set f to "0.001s"' });
    });
    it("the fix is the same length written as Envoy reads it: seconds with an 's', 9 decimals, at least the minimum", () => {
        // [given, min, fallback, fix]
        const cases: [string, number, string, string][] = [
            ["2m", 0.05, "60s", "120s"],
            ["1h", 0.001, "10s", "3600s"],
            [".5s", 0.001, "10s", "0.5s"],
            ["1.5", 0.05, "60s", "1.5s"],
            ["1.s", 0.001, "10s", "1s"],
            ["90 s", 0.05, "60s", "90s"],
            ["1.0000000001s", 0.001, "10s", "1s"],
            ["0.0000000001ms", 0.05, "60s", "0.05s"],
            ["0", 0.05, "60s", "0.05s"],
            ["0", 0.001, "10s", "0.001s"],
            ["0.1ms", 0.001, "10s", "0.001s"],
            ["99999999999999999999h", 0.001, "10s", "10s"],
            ["-1s", 0.05, "60s", "60s"],
        ];
        for (const [given, min, fallback, fix] of cases) {
            const p = protoDurationProblems("f", given, min, fallback);
            expect(p, given).to.have.length(1);
            expect(p[0]!.problem, given).to.match(/^must be a protobuf duration/);
            expect(p[0]!.fix, given).to.equal(`set f to "${fix}"`);
        }
    });
    wiringRows(
        [
            ["timeout", global((v) => ({ timeout: v }))],
            ["perValueStore.timeout", global((v) => ({ perValueStore: { timeout: v } }))],
            ["fillInterval", local("fillInterval")],
        ],
        "1m",
        /^must be a protobuf duration/,
        "0.5s",
    );
});

describe("field rule: a Go duration (what the service's environment reads)", () => {
    it("accepts '0', '150us', '2ms'; refuses '2 ms' with it written without the space, and 'soon' with the fallback", () => {
        expect(goDurationProblems("f", "0", "0")).to.deep.equal([]);
        expect(goDurationProblems("f", "150us", "0")).to.deep.equal([]);
        expect(goDurationProblems("f", "2 ms", "0")[0]?.fix).to.equal('set f to "2ms"');
        expect(goDurationProblems("f", "soon", "0")[0]?.fix).to.equal("set f to 0");
    });
    wiringRows(
        [["service.redisPipelineWindow", global((v) => ({ service: { redisPipelineWindow: v }, redis: { mode: "cluster", addresses: ["r:6379"] } }))]],
        "2 ms",
        /^must be a Go duration/,
        "2ms",
    );
});
