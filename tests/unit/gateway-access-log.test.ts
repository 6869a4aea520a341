/**
 * GlobalRateLimit's `accessLog`: off unless asked for; when on, one EnvoyFilter in the gateway's
 * namespace for the gateway's pods and ports only, appending a file access log to their connection
 * managers with the fields replay reads and the rules' headers, a secret header left out; every bad
 * value refused with its path and fix. Then replay of a log written in that format, the format taken
 * from the program itself: the lines are written by a small Envoy formatter of this test (each
 * operator of the rendered format replaced by the request's value), the counts checked against an
 * oracle written from the rule's statement. Negative controls: the same log through the program
 * without the access log (no per-key counts), and with the key marked secret (the same).
 */
import { expect } from "chai";
import * as path from "path";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { GlobalRateLimitArgs } from "../../components/global-ratelimit/args.generated";
import { LimitUnit } from "../../index";
import { programLogFormat, replayLog } from "../../prove/api";
import { renderProgram } from "../../prove/program-runner";
import { KeyedRequest, keyedRequests, perKeyOracle } from "./keyed-traffic";

const FIXTURES = path.join(__dirname, "fixtures");
const WITH_LOG = path.join(FIXTURES, "api-key-log-program");
const WITHOUT_LOG = path.join(FIXTURES, "api-key-program");

const base = (extra: Partial<GlobalRateLimitArgs> = {}): GlobalRateLimitArgs => ({
    domain: "api",
    namespace: "api",
    gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["api.example.com:8080"] },
    rules: [{ name: "per-key", path: { prefix: "/api" }, header: { name: "x-api-key", perValue: true }, requestsPerUnit: 10, unit: LimitUnit.Minute }],
    ...extra,
});

const logFilters = (args: GlobalRateLimitArgs) =>
    planGlobalRateLimit(args).filters.filter((f) => f.spec.configPatches.some((p) => p.applyTo === "NETWORK_FILTER"));
const formatOf = (f: ReturnType<typeof logFilters>[number]) => (f.spec.configPatches[0] as any).patch.value.typed_config.access_log[0].typed_config;
const values = (a: GlobalRateLimitArgs) => Object.values(formatOf(logFilters(a)[0]!).log_format.json_format);

describe("GlobalRateLimit accessLog: the gateway's access log for replay", () => {
    it("is off by default: no EnvoyFilter touches a connection manager", () => {
        expect(logFilters(base())).to.have.length(0);
    });

    it("when on: one EnvoyFilter in the gateway's namespace, for its pods and its port only, a MERGE of a file access log", () => {
        const plan = planGlobalRateLimit(base({ accessLog: {} }));
        expect(plan.problems).to.deep.equal([]);
        const [f, ...more] = logFilters(base({ accessLog: {} }));
        expect(more).to.have.length(0);
        expect(f!.namespace).to.equal("istio-system");
        expect(f!.spec.workloadSelector).to.deep.equal({ labels: { istio: "ingressgateway" } });
        for (const p of f!.spec.configPatches) {
            expect(p.applyTo).to.equal("NETWORK_FILTER");
            expect(p.match).to.deep.equal({
                context: "GATEWAY",
                listener: { portNumber: 8080, filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } },
            });
            expect(p.patch.operation).to.equal("MERGE");
        }
        const c = formatOf(f!);
        expect(c.path).to.equal("/dev/stdout");
        expect(c["@type"]).to.equal("type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog");
        // The fields replay needs, and the header the rule counts by.
        expect(Object.values(c.log_format.json_format)).to.include.members([
            "%START_TIME%",
            "%REQ(:METHOD)%",
            "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
            "%REQ(:AUTHORITY)%",
            "%DOWNSTREAM_REMOTE_ADDRESS%",
            "%REQ(X-API-KEY)%",
        ]);
    });

    it("a secret header is left out; an extra header is logged (control: without secretHeaders the key is logged)", () => {
        expect(values(base({ accessLog: { secretHeaders: [{ name: "x-api-key" }], headers: ["x-tenant"] } })))
            .to.include("%REQ(X-TENANT)%")
            .and.not.include("%REQ(X-API-KEY)%");
        expect(values(base({ accessLog: {} }))).to.include("%REQ(X-API-KEY)%");
    });

    it("refuses logging credentials (authorization, cookie, proxy-authorization) and secretHeaders unless accepted by name, with the fix (control: accepted, they are logged)", () => {
        for (const name of ["authorization", "cookie", "proxy-authorization"]) {
            const problems = planGlobalRateLimit(base({ accessLog: { headers: ["x-tenant", name] } })).problems;
            expect(problems.map((p) => p.key)).to.deep.equal(["accessLog.headers[1]"]);
            expect(problems[0]!.fix).to.include(`accessLog.acceptLoggedSecrets: ["${name}"]`);
            const accepted = base({ accessLog: { headers: [name], acceptLoggedSecrets: [name] } });
            expect(planGlobalRateLimit(accepted).problems).to.deep.equal([]);
            expect(values(accepted)).to.include(`%REQ(${name.toUpperCase()})%`);
        }
        const marked = planGlobalRateLimit(base({ accessLog: { headers: ["x-api-key"], secretHeaders: [{ name: "x-api-key" }] } })).problems;
        expect(marked.map((p) => [p.key, p.value])).to.deep.equal([["accessLog.headers[0]", "x-api-key"]]);
        const markedAccepted = base({ accessLog: { headers: ["x-api-key"], secretHeaders: [{ name: "x-api-key" }], acceptLoggedSecrets: ["x-api-key"] } });
        expect(planGlobalRateLimit(markedAccepted).problems).to.deep.equal([]);
        expect(values(markedAccepted)).to.include("%REQ(X-API-KEY)%");
    });

    it("a rule reading a credential header does not log it silently: refused unless kept out or accepted (control: secretHeaders keeps it out)", () => {
        const rules = [
            { name: "per-token", path: { prefix: "/api" }, header: { name: "authorization", perValue: true }, requestsPerUnit: 10, unit: LimitUnit.Minute },
        ];
        const problems = planGlobalRateLimit(base({ rules, accessLog: {} })).problems.filter((p) => p.key.startsWith("accessLog"));
        expect(problems.map((p) => p.key)).to.deep.equal(["accessLog"]);
        expect(problems[0]!.fix).to.include('accessLog.secretHeaders: [{ name: "authorization" }]');
        const kept = base({ rules, accessLog: { secretHeaders: [{ name: "authorization" }] } });
        expect(planGlobalRateLimit(kept).problems.filter((p) => p.key.startsWith("accessLog"))).to.deep.equal([]);
        expect(values(kept)).to.not.include("%REQ(AUTHORIZATION)%");
    });

    it("an identity rule's verified claim and issuer are logged, never the token (control: without identity rules no claim key)", () => {
        const identity = { jwt: { issuer: "https://auth.example.com", jwksUri: "https://auth.example.com/jwks.json", claim: "email" } };
        const withId = base({ accessLog: {}, rules: [{ name: "per-user", path: { prefix: "/api" }, identity, requestsPerUnit: 10, unit: LimitUnit.Minute }] });
        expect(planGlobalRateLimit(withId).problems).to.deep.equal([]);
        const f = formatOf(logFilters(withId)[0]!).log_format.json_format;
        expect(f["claim.email"]).to.equal("%DYNAMIC_METADATA(envoy.filters.http.jwt_authn:payload:email)%");
        expect(f["claim.iss"]).to.equal("%DYNAMIC_METADATA(envoy.filters.http.jwt_authn:payload:iss)%");
        expect(Object.values(f)).to.not.include("%REQ(AUTHORIZATION)%");
        expect(Object.keys(formatOf(logFilters(base({ accessLog: {} }))[0]!).log_format.json_format).filter((k) => k.startsWith("claim."))).to.deep.equal([]);
    });

    it("a rule's request cost header is logged too (control: the rule without a cost logs no such header)", () => {
        const cost = base({
            accessLog: {},
            rules: [
                { name: "budget", path: { prefix: "/api" }, cost: { requestHeader: "x-cost", maxCost: 100 }, requestsPerUnit: 1000, unit: LimitUnit.Minute },
            ],
        });
        expect(planGlobalRateLimit(cost).problems).to.deep.equal([]);
        expect(Object.values(formatOf(logFilters(cost)[0]!).log_format.json_format)).to.include("%REQ(X-COST)%");
        const plain = base({ accessLog: {}, rules: [{ name: "budget", path: { prefix: "/api" }, requestsPerUnit: 1000, unit: LimitUnit.Minute }] });
        expect(Object.values(formatOf(logFilters(plain)[0]!).log_format.json_format)).to.not.include("%REQ(X-COST)%");
    });

    it("refuses each bad value with its path and fix, a keyed hash among them", () => {
        const problems = planGlobalRateLimit(
            base({ accessLog: { path: "access.log", headers: ["X-Tenant", "x-api-key"], secretHeaders: [{ name: "x-api-key", as: "hmac-sha256" }] } }),
        ).problems;
        expect(problems.map((p) => p.key)).to.have.members(["accessLog.path", "accessLog.headers[0]", "accessLog.headers[1]", "accessLog.secretHeaders[0].as"]);
        expect(problems.find((p) => p.key === "accessLog.headers[0]")!.fix).to.equal('use "x-tenant"');
        expect(problems.find((p) => p.key === "accessLog.secretHeaders[0].as")!.problem).to.match(/stock Envoy has no .* keyed hash/);
        expect(planGlobalRateLimit(base({ accessLog: [] as any })).problems.map((p) => p.key)).to.deep.equal(["accessLog"]);
    });

    it("a misspelt field of accessLog is refused naming the known one", () => {
        const problems = planGlobalRateLimit(base({ accessLog: { header: ["x-tenant"] } as any })).problems;
        expect(problems.map((p) => `${p.key}: ${p.fix}`).join("\n")).to.match(/accessLog\.header\b.*headers/);
    });
});

type Req = KeyedRequest;

const requests = (n: number): Req[] =>
    keyedRequests(n, {
        seed: 7,
        startMs: Date.UTC(2026, 10, 28, 11, 0, 5),
        maxGapMs: 300,
        paths: ["/api/orders", "/api", "/apix", "/health", "/api?page=2"],
        keys: 30,
        getShare: 0.7,
        keyOf: (k) => `key "${k}"`,
        clientOf: (k) => `198.51.100.${k}`,
    });
const oracle = perKeyOracle;

/** What Envoy writes for one operator of a JSON format (null for a missing header). */
function envoyValue(op: string, r: Req): string | number | null {
    if (op === "START_TIME") return new Date(r.timeMs).toISOString();
    if (op === "REQ(:METHOD)") return r.method;
    if (op === "REQ(X-ENVOY-ORIGINAL-PATH?:PATH)") return r.path;
    if (op === "REQ(:AUTHORITY)") return "api.example.com";
    if (op === "DOWNSTREAM_REMOTE_ADDRESS") return `${r.client}:51000`;
    if (op === "UPSTREAM_CLUSTER") return "outbound|9080||api.api.svc.cluster.local";
    if (op === "RESPONSE_CODE") return 200;
    if (op === "REQ(X-API-KEY)") return r.key ?? null;
    if (/^REQ\(/.test(op)) return null;
    throw new Error(`this test's formatter does not know %${op}%`);
}

/** A line as Envoy writes it in a JSON format: each key's operator replaced by its value. */
const envoyLine = (format: Record<string, string>, r: Req) =>
    JSON.stringify(Object.fromEntries(Object.entries(format).map(([k, v]) => [k, envoyValue(/^%(.+)%$/.exec(v)![1]!, r)])));

describe("replay with the program's own access-log format", function () {
    this.timeout(120_000);
    const rs = requests(2500);
    const want = oracle(rs);
    let log = "";

    before(async () => {
        const { objects } = await renderProgram(WITH_LOG);
        const format = JSON.parse(programLogFormat(objects)!);
        log = rs.map((r) => envoyLine(format, r)).join("\n") + "\n";
    });

    it("the oracle refuses some requests and not most (the test can fail both ways)", () => {
        expect(want.refused).to.be.above(50);
        expect(want.refused).to.be.below(want.requests / 2);
    });

    it("without --log-format the per-key rule counts and refuses as the oracle, per key", async () => {
        const r = await replayLog(WITH_LOG, log);
        expect([r.requests, r.badCount]).to.deep.equal([2500, 0]);
        const rule = r.rules.find((x) => x.rule === "per-key")!;
        expect([rule.requests, rule.refused]).to.deep.equal([want.requests, want.refused]);
        expect(rule.topRefusedKeys[0]!.key).to.match(/^x-api-key=key "\d+"$/);
    });

    it("negative control: the same log through the program without the access log reads no key", async () => {
        const r = await replayLog(WITHOUT_LOG, log);
        const rule = r.rules.find((x) => x.rule === "per-key")!;
        expect(rule.refused).to.not.equal(want.refused);
        for (const k of rule.topRefusedKeys) expect(k.key).to.not.match(/^x-api-key=/);
    });

    it("negative control: with the key a secret, the format has no key and replay counts no key", async () => {
        const { objects } = await renderProgram(WITH_LOG, { config: { secretKey: "true" } });
        expect(programLogFormat(objects)).to.not.include("X-API-KEY");
        const r = await replayLog(WITH_LOG, log, { config: { secretKey: "true" } });
        const rule = r.rules.find((x) => x.rule === "per-key")!;
        expect(rule.refused).to.not.equal(want.refused);
        for (const k of rule.topRefusedKeys) expect(k.key).to.not.match(/^x-api-key=/);
    });

    it("two different formats in one program are refused, naming their EnvoyFilters", () => {
        const filter = (name: string, format: Record<string, string>) => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name, namespace: "istio-system" },
            spec: {
                configPatches: [
                    {
                        applyTo: "NETWORK_FILTER",
                        match: { context: "GATEWAY" },
                        patch: {
                            operation: "MERGE",
                            value: {
                                name: "envoy.filters.network.http_connection_manager",
                                typed_config: {
                                    access_log: [
                                        {
                                            name: "envoy.access_loggers.file",
                                            typed_config: {
                                                "@type": "type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog",
                                                path: "/dev/stdout",
                                                log_format: { json_format: format },
                                            },
                                        },
                                    ],
                                },
                            },
                        },
                    },
                ],
            },
        });
        expect(programLogFormat([filter("a", { t: "%START_TIME%" }), filter("b", { t: "%START_TIME%" })] as any)).to.equal('{"t":"%START_TIME%"}');
        expect(() => programLogFormat([filter("a", { t: "%START_TIME%" }), filter("b", { s: "%START_TIME%" })] as any)).to.throw(
            /2 different access log formats \(istio-system\/a, istio-system\/b\): give the one the log was written with as --log-format/,
        );
    });
});
