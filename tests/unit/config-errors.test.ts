/**
 * Bad stack config fails before any resource is registered, with a message naming the key, the value
 * and the fix. Table-driven: each case is a config change from the valid dev config.
 */
import { expect } from "chai";
import { ConfigError, RawConfig, rawConfigFromAll, resolveSettings } from "../../components/settings";
import { programConfig, registerProgram } from "../../render/render";

/** The dev stack's config: valid, so each case below fails only for what it changes. */
const BASE: Record<string, string> = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

interface Case {
    name: string;
    set: RawConfig;
    /** The key the message must name. */
    key: string;
    /** Text the problem must contain. */
    says: RegExp;
    /** Text the fix must contain. */
    fix: RegExp;
}

const CASES: Case[] = [
    { name: "unknown variant", set: { variant: "C" }, key: "variant", says: /one of 'A', 'B'/, fix: /config set variant A/ },
    { name: "lower-case variant", set: { variant: "b" }, key: "variant", says: /one of/, fix: /config set variant B/ },
    { name: "unknown api profile", set: { apiProfile: "legacy" }, key: "apiProfile", says: /one of 'current', 'seed'/, fix: /apiProfile current/ },
    { name: "zero limit", set: { limitedPathLimit: "0" }, key: "limitedPathLimit", says: /at least 1/, fix: /limitedPathLimit 1/ },
    { name: "negative limit", set: { catchAllLimit: "-5" }, key: "catchAllLimit", says: /at least 1/, fix: /catchAllLimit 1/ },
    { name: "fractional limit", set: { limitedPathLimit: "1.5" }, key: "limitedPathLimit", says: /whole number/, fix: /limitedPathLimit 2/ },
    { name: "non-numeric limit", set: { apiLimit: "two" }, key: "apiLimit", says: /whole number/, fix: /config set apiLimit/ },
    { name: "zero api limit", set: { apiLimit: "0" }, key: "apiLimit", says: /at least 1/, fix: /apiLimit 1/ },
    { name: "api limit in variant B", set: { variant: "B", apiLimit: "2" }, key: "apiLimit", says: /only to variant A/, fix: /config rm apiLimit/ },
    { name: "api regex in variant B", set: { variant: "B", apiRouteRegex: "/x" }, key: "apiRouteRegex", says: /only to variant A/, fix: /config rm apiRouteRegex/ },
    { name: "plural unit", set: { unit: "minutes" }, key: "unit", says: /one of 'second', 'minute'/, fix: /config set unit/ },
    { name: "unknown unit", set: { unit: "fortnight" }, key: "unit", says: /one of/, fix: /config set unit second/ },
    { name: "zero bucket", set: { localBucket: "0" }, key: "localBucket", says: /between 1 and/, fix: /localBucket 1/ },
    { name: "fractional bucket", set: { localBucket: "2.5" }, key: "localBucket", says: /whole number/, fix: /localBucket 3/ },
    { name: "fill interval without unit", set: { localFillInterval: "60" }, key: "localFillInterval", says: /protobuf duration/, fix: /localFillInterval 60s/ },
    { name: "fill interval in minutes", set: { localFillInterval: "1m" }, key: "localFillInterval", says: /protobuf duration/, fix: /60s/ },
    { name: "fill interval below 50ms", set: { localFillInterval: "0.01s" }, key: "localFillInterval", says: /at least 0.05s/, fix: /0.05s/ },
    { name: "timeout in ms", set: { rateLimitTimeout: "500ms" }, key: "rateLimitTimeout", says: /protobuf duration/, fix: /rateLimitTimeout/ },
    { name: "unknown local placement", set: { localPlacement: "one-route" }, key: "localPlacement", says: /'all-routes', 'single-route'/, fix: /localPlacement all-routes/ },
    { name: "unknown port mode", set: { espPortMode: "https" }, key: "espPortMode", says: /'http', 'tcp'/, fix: /espPortMode http/ },
    { name: "missing include ranges", set: { includeIpRanges: "" }, key: "includeIpRanges", says: /required/, fix: /includeIpRanges .*managedApi false/ },
    { name: "include range prefix too long", set: { includeIpRanges: "10.4.0.0/33" }, key: "includeIpRanges", says: /invalid CIDR.*10\.4\.0\.0\/33/, fix: /comma-separated CIDRs/ },
    { name: "include range not a CIDR", set: { includeIpRanges: "10.4.0.0/14,pods" }, key: "includeIpRanges", says: /invalid CIDR.*pods/, fix: /CIDRs/ },
    { name: "missing ESP service", set: { espServiceName: "" }, key: "espServiceName", says: /required/, fix: /espServiceName .*cloud\.goog/ },
    { name: "route patch names a missing route", set: { apiRoute: "products", virtualServiceRoutes: '[{"exact":["/productpage"]},{"name":"api","prefix":["/api/v1/products"]}]' }, key: "apiRoute", says: /names no route.*'api'.*silently ignore/, fix: /apiRoute api/ },
    { name: "invalid regex", set: { apiRouteRegex: "/api/v1/products/([0-9]" }, key: "apiRouteRegex", says: /not a valid RE2/, fix: /apiRouteRegex/ },
    { name: "regex with look-ahead (not RE2)", set: { apiRouteRegex: "/api/(?=v1)" }, key: "apiRouteRegex", says: /not a valid RE2/, fix: /\/api\/v1\/products\/\[1-9\]\[0-9\]\?/ },
    { name: "duplicate descriptors", set: { descriptors: '[{"key":"PATH","value":"/a","unit":"minute","requestsPerUnit":1},{"key":"PATH","value":"/a","unit":"minute","requestsPerUnit":2}]' }, key: "descriptors", says: /duplicates 'PATH=\/a'/, fix: /remove one/ },
    { name: "duplicate catch-all", set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1},{"key":"PATH","unit":"hour","requestsPerUnit":2}]' }, key: "descriptors", says: /duplicates the catch-all/, fix: /remove one/ },
    { name: "descriptor with empty key", set: { descriptors: '[{"key":"","unit":"minute","requestsPerUnit":1}]' }, key: "descriptors", says: /empty or missing 'key'/, fix: /"key":"PATH"/ },
    { name: "descriptor key never sent", set: { descriptors: '[{"key":"path","unit":"minute","requestsPerUnit":1}]' }, key: "descriptors", says: /only send 'PATH'/, fix: /"key":"PATH"/ },
    { name: "descriptor with bad unit", set: { descriptors: '[{"key":"PATH","unit":"minutes","requestsPerUnit":1}]' }, key: "descriptors", says: /unit "minutes"/, fix: /second, minute/ },
    { name: "descriptor with zero requests", set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":0}]' }, key: "descriptors", says: /requestsPerUnit 0/, fix: /at least 1/ },
    { name: "descriptor with unknown field", set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1,"unlimited":true}]' }, key: "descriptors", says: /unknown field.*unlimited/, fix: /allowed fields/ },
    { name: "descriptors not JSON", set: { descriptors: "[{key: PATH}]" }, key: "descriptors", says: /not valid JSON/, fix: /config set descriptors/ },
    { name: "descriptors plus limit keys", set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1}]', catchAllLimit: "5" }, key: "catchAllLimit", says: /ignored because 'descriptors'/, fix: /config rm catchAllLimit/ },
    { name: "limited path without slash", set: { limitedPath: "productpage" }, key: "limitedPath", says: /starting with '\/'/, fix: /limitedPath \/productpage/ },
    { name: "api prefix with space", set: { apiPrefix: "/api/v1 /products" }, key: "apiPrefix", says: /without spaces/, fix: /apiPrefix \/api\/v1\/products/ },
    { name: "gateway port out of range", set: { gatewayPort: "70000" }, key: "gatewayPort", says: /between 1 and 65535/, fix: /gatewayPort 65535/ },
    { name: "grpc port zero", set: { ratelimitGrpcPort: "0" }, key: "ratelimitGrpcPort", says: /between 1 and 65535/, fix: /ratelimitGrpcPort 1/ },
    { name: "grpc port collides with http port", set: { ratelimitGrpcPort: "8080" }, key: "ratelimitGrpcPort", says: /collides/, fix: /ratelimitGrpcPort 8081/ },
    { name: "namespace not DNS-1123", set: { meshNamespace: "Istio_System" }, key: "meshNamespace", says: /DNS-1123 label/, fix: /meshNamespace istio-system/ },
    { name: "config map name not DNS-1123", set: { configName: "RateLimit Config" }, key: "configName", says: /DNS-1123 subdomain/, fix: /configName ratelimit-config/ },
    { name: "gateway selector without '='", set: { gatewaySelector: "ingressgateway" }, key: "gatewaySelector", says: /key=value/, fix: /istio=ingressgateway/ },
    { name: "boolean spelled yes", set: { failureModeDeny: "yes" }, key: "failureModeDeny", says: /true or false/, fix: /failureModeDeny true/ },
    { name: "replicas zero", set: { ratelimitReplicas: "0" }, key: "ratelimitReplicas", says: /between 1 and 100/, fix: /ratelimitReplicas 1/ },
    { name: "unknown log level", set: { ratelimitLogLevel: "verbose" }, key: "ratelimitLogLevel", says: /'warn', 'debug'/, fix: /ratelimitLogLevel warn/ },
    { name: "pipeline window not a Go duration", set: { redisPipelineWindow: "150 us" }, key: "redisPipelineWindow", says: /Go duration/, fix: /150us/ },
    { name: "routes JSON with an empty route", set: { virtualServiceRoutes: '[{"name":"api"}]' }, key: "virtualServiceRoutes", says: /needs 'exact' and\/or 'prefix'/, fix: /config set virtualServiceRoutes/ },
    { name: "routes JSON with duplicate names", set: { virtualServiceRoutes: '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]' }, key: "virtualServiceRoutes", says: /appears twice/, fix: /distinct name/ },
    { name: "empty domain characters", set: { domain: "rate limit" }, key: "domain", says: /letters, digits/, fix: /domain ratelimit/ },
];

function problemsOf(set: RawConfig) {
    try {
        resolveSettings({ ...BASE, ...set });
    } catch (e) {
        expect(e).to.be.instanceOf(ConfigError);
        return e as ConfigError;
    }
    throw new Error(`config ${JSON.stringify(set)} was accepted`);
}

describe("config errors (table-driven)", () => {
    it("the base config is valid", () => {
        expect(() => resolveSettings(BASE)).not.to.throw();
    });

    it(`covers at least 30 cases (${CASES.length})`, () => {
        expect(CASES.length).to.be.at.least(30);
    });

    for (const c of CASES) {
        it(`${c.name}: names ${c.key}, its value and the fix`, () => {
            const err = problemsOf(c.set);
            const p = err.problems.find((x) => x.key === c.key);
            expect(p, `no problem for ${c.key} in:\n${err.message}`).to.exist;
            expect(p!.problem).to.match(c.says);
            expect(p!.fix).to.match(c.fix);
            expect(err.message).to.contain(`mesh-ratelimit:${c.key}`);
            if (c.set[c.key]) expect(err.message).to.contain(JSON.stringify(c.set[c.key]!.trim()));
        });
    }

    it("reports every problem at once, not just the first", () => {
        const err = problemsOf({ variant: "C", unit: "weeks", localBucket: "-1", includeIpRanges: "" });
        expect(err.problems.map((p) => p.key)).to.include.members(["variant", "unit", "localBucket", "includeIpRanges"]);
    });

    it("unknown keys of this project are reported with the nearest known key", () => {
        const { unknown } = rawConfigFromAll({ "mesh-ratelimit:varient": "B", "kubernetes:context": "kind" });
        expect(unknown).to.have.length(1);
        expect(unknown[0].key).to.equal("varient");
        expect(unknown[0].fix).to.contain("did you mean 'variant'");
    });

    it("managedApi=false drops the ESP keys' requirement", () => {
        const s = resolveSettings({ variant: "A", managedApi: "false" });
        expect(s.managedApi).to.equal(undefined);
    });

    it("a bad config registers no resource at all (fails before the first registration)", async () => {
        let error: unknown;
        const seen: string[] = [];
        try {
            await registerProgram({ base: { ...BASE }, overrides: { variant: "C", localBucket: "0" }, onRegister: (r) => seen.push(r.type) });
        } catch (e) {
            error = e;
        }
        expect(error).to.be.instanceOf(ConfigError);
        expect(seen, "resources registered despite the bad config").to.deep.equal([]);
        // The same counter sees a valid run's resources: the check above could have failed.
        await registerProgram({ base: { ...BASE }, onRegister: (r) => seen.push(r.type) });
        expect(seen.length).to.be.greaterThan(20);
        expect(programConfig({ base: BASE })["mesh-ratelimit:variant"]).to.equal("A");
    });
});
