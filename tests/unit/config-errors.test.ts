/**
 * Bad stack config fails before any resource is registered, with a message naming the key, the value
 * and the fix. Table-driven: each case is a config change from the valid dev config.
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as path from "path";
import { formatConfigProblems as formatProblems, RawConfig } from "../../program/config-problems";
import { closestValue } from "../../lib/edit-distance";
import { resolveSettings } from "../../program/config-args";
import { InputError } from "../../lib/problems";
import { cliFix, parseCli, UsageError } from "../../render/args";
import { parseArgs } from "../../render/cli";
import { parseExplainArgs } from "../../render/stack-explain";
import { programConfig, registerProgram } from "../../render/render";
import * as pulumi from "@pulumi/pulumi";
import { buildProgram, isConfigSecret } from "../../program/program";
import { rawConfigFromAll } from "../../program/stack-config";

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
    // Checks that the mutation run found untested (docs/proof/mutation.md, settings.ts 531-733).
    {
        name: "api descriptor value equal to the limited path",
        set: { apiDescriptorValue: "/productpage" },
        key: "apiDescriptorValue",
        says: /^equals limitedPath, so two descriptors would collide$/,
        fix: /config set apiDescriptorValue api$/,
    },
    {
        name: "a limit key beside descriptors",
        set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":5}]', catchAllLimit: "7" },
        key: "catchAllLimit",
        says: /^is ignored because 'descriptors' replaces the whole list$/,
        fix: /config rm catchAllLimit, or pulumi config rm descriptors$/,
    },
    {
        name: "service label with a space",
        set: { serviceLabel: "product page" },
        key: "serviceLabel",
        says: /^must be a valid label value$/,
        fix: /config set serviceLabel productpage$/,
    },
    {
        name: "service label of 64 characters",
        set: { serviceLabel: "a".repeat(64) },
        key: "serviceLabel",
        says: /^must be a valid label value$/,
        fix: /config set serviceLabel productpage$/,
    },
    {
        name: "gateway selector without '='",
        set: { gatewaySelector: "ingressgateway" },
        key: "gatewaySelector",
        says: /^must be one label written key=value$/,
        fix: /config set gatewaySelector istio=ingressgateway$/,
    },
    {
        name: "gateway selector with two '='",
        set: { gatewaySelector: "a=b=c" },
        key: "gatewaySelector",
        says: /^must be one label written key=value$/,
        fix: /gatewaySelector istio=ingressgateway$/,
    },
    {
        name: "gRPC port equal to the HTTP port",
        set: { ratelimitGrpcPort: "8080" },
        key: "ratelimitGrpcPort",
        says: /^collides with the service's HTTP \(8080\) or debug \(6070\) port$/,
        fix: /config set ratelimitGrpcPort 8081$/,
    },
    {
        name: "gRPC port equal to the debug port",
        set: { ratelimitGrpcPort: "6070" },
        key: "ratelimitGrpcPort",
        says: /collides/,
        fix: /ratelimitGrpcPort 8081$/,
    },
    {
        name: "gateway principal with spiffe:// (the fix drops it)",
        set: { gatewayPrincipal: "spiffe://example.org/ns/gw/sa/edge" },
        key: "gatewayPrincipal",
        says: /no spiffe:\/\/ prefix/,
        fix: /config set gatewayPrincipal example\.org\/ns\/gw\/sa\/edge$/,
    },
    {
        name: "gateway principal with a suffix (the fix is the default)",
        set: { gatewayPrincipal: "example.org/ns/gw/sa/edge/x" },
        key: "gatewayPrincipal",
        says: /must be an Istio principal/,
        fix: /gatewayPrincipal cluster\.local\/ns\/istio-system\/sa\/istio-ingressgateway-service-account$/,
    },
    {
        name: "gateway principal with a prefix (the fix is the default)",
        set: { gatewayPrincipal: "x/example.org/ns/gw/sa/edge" },
        key: "gatewayPrincipal",
        says: /must be an Istio principal/,
        fix: /gatewayPrincipal cluster\.local\/ns\/istio-system\/sa\/istio-ingressgateway-service-account$/,
    },
    {
        name: "include ranges of commas only",
        set: { includeIpRanges: " , ," },
        key: "includeIpRanges",
        says: /^has invalid CIDR\(s\): \(empty\)$/,
        fix: /^pulumi config set includeIpRanges 10\.4\.0\.0\/14,10\.7\.240\.0\/20 {3}\(your cluster.s pod and service CIDRs\)$/,
    },
    {
        name: "ESP service name with capitals",
        set: { espServiceName: "Echo.Endpoints.x.cloud.goog" },
        key: "espServiceName",
        says: /^must be a DNS name such as echo-api\.endpoints\.MY_PROJECT\.cloud\.goog$/,
        fix: /config set espServiceName echo-api\.endpoints\.MY_PROJECT\.cloud\.goog$/,
    },
    {
        name: "ESP service-account Secret name with capitals",
        set: { espServiceAccountSecret: "ESP_Key" },
        key: "espServiceAccountSecret",
        says: /DNS-1123 subdomain/,
        fix: /espServiceAccountSecret/,
    },
    // The suggested name is itself valid: no dot in a label, no empty part, within the length limit.
    {
        name: "namespace with a dot (a label has none)",
        set: { workloadNamespace: "shop.prod" },
        key: "workloadNamespace",
        says: /^must be a Kubernetes DNS-1123 label \(lower-case letters, digits, '-'\)$/,
        fix: /config set workloadNamespace shop-prod$/,
    },
    {
        name: "namespace of 64 characters",
        set: { ratelimitNamespace: "a".repeat(64) },
        key: "ratelimitNamespace",
        says: /DNS-1123 label/,
        fix: new RegExp(`config set ratelimitNamespace a{63}$`),
    },
    {
        name: "ConfigMap name with an empty part",
        set: { configName: "rate..limits." },
        key: "configName",
        says: /^must be a Kubernetes DNS-1123 subdomain \(lower-case letters, digits, '-', '\.'\)$/,
        fix: /config set configName rate\.limits$/,
    },
    {
        name: "ConfigMap name of punctuation only",
        set: { configName: "_._" },
        key: "configName",
        says: /DNS-1123 subdomain/,
        fix: /config set configName name$/,
    },
    {
        name: "Redis TLS CA Secret name with capitals",
        set: { redisMode: "external", redisAddress: "r:6379", redisTls: "true", redisTlsCaSecret: "Redis.CA." },
        key: "redisTlsCaSecret",
        says: /^must be the name of a Secret in the service's namespace \(a DNS-1123 subdomain\)$/,
        fix: /config set redisTlsCaSecret redis\.ca$/,
    },
    { name: "unknown variant", set: { variant: "C" }, key: "variant", says: /one of 'A', 'B'/, fix: /config set variant A/ },
    { name: "unknown api profile", set: { apiProfile: "legacy" }, key: "apiProfile", says: /one of 'current', 'seed'/, fix: /apiProfile current/ },
    { name: "negative limit", set: { catchAllLimit: "-5" }, key: "catchAllLimit", says: /at least 1/, fix: /catchAllLimit 1/ },
    { name: "fractional limit", set: { limitedPathLimit: "1.5" }, key: "limitedPathLimit", says: /whole number/, fix: /limitedPathLimit 2/ },
    { name: "non-numeric limit", set: { apiLimit: "two" }, key: "apiLimit", says: /whole number/, fix: /config set apiLimit/ },
    { name: "zero api limit", set: { apiLimit: "0" }, key: "apiLimit", says: /at least 1/, fix: /apiLimit 1/ },
    { name: "api limit in variant B", set: { variant: "B", apiLimit: "2" }, key: "apiLimit", says: /only to variant A/, fix: /config rm apiLimit/ },
    {
        name: "api regex in variant B",
        set: { variant: "B", apiRouteRegex: "/x" },
        key: "apiRouteRegex",
        says: /only to variant A/,
        fix: /config rm apiRouteRegex/,
    },
    // Nothing close to 'fortnight': the key's default, not simply the first allowed value ('second', 60x off).
    { name: "unknown unit", set: { unit: "fortnight" }, key: "unit", says: /one of/, fix: /config set unit minute$/ },
    { name: "plural unit suggests the singular", set: { unit: "minutes" }, key: "unit", says: /one of/, fix: /config set unit minute$/ },
    { name: "port mode https suggests http", set: { espPortMode: "https" }, key: "espPortMode", says: /one of/, fix: /config set espPortMode http$/ },
    { name: "placement prefix", set: { localPlacement: "single" }, key: "localPlacement", says: /one of/, fix: /config set localPlacement single-route$/ },
    {
        name: "non-numeric bucket suggests the variant's default (A: 4)",
        set: { localBucket: "abc" },
        key: "localBucket",
        says: /whole number/,
        fix: /config set localBucket 4$/,
    },
    {
        name: "non-numeric bucket suggests the variant's default (B: 10)",
        set: { variant: "B", localBucket: "abc" },
        key: "localBucket",
        says: /whole number/,
        fix: /config set localBucket 10$/,
    },
    { name: "non-numeric api limit suggests its default", set: { apiLimit: "two" }, key: "apiLimit", says: /whole number/, fix: /config set apiLimit 2$/ },
    {
        name: "non-numeric port suggests its default",
        set: { gatewayPort: "http" },
        key: "gatewayPort",
        says: /whole number/,
        fix: /config set gatewayPort 8080$/,
    },
    { name: "boolean spelled no", set: { failureModeDeny: "no" }, key: "failureModeDeny", says: /true or false/, fix: /failureModeDeny false$/ },
    { name: "zero bucket", set: { localBucket: "0" }, key: "localBucket", says: /between 1 and/, fix: /localBucket 1/ },
    { name: "fractional bucket", set: { localBucket: "2.5" }, key: "localBucket", says: /whole number/, fix: /localBucket 3/ },
    { name: "fill interval without unit", set: { localFillInterval: "60" }, key: "localFillInterval", says: /protobuf duration/, fix: /localFillInterval 60s/ },
    { name: "fill interval in minutes", set: { localFillInterval: "1m" }, key: "localFillInterval", says: /protobuf duration/, fix: /60s/ },
    { name: "fill interval below 50ms", set: { localFillInterval: "0.01s" }, key: "localFillInterval", says: /at least 0.05s/, fix: /0.05s/ },
    { name: "timeout in ms", set: { rateLimitTimeout: "500ms" }, key: "rateLimitTimeout", says: /protobuf duration/, fix: /rateLimitTimeout/ },
    {
        name: "unknown local placement",
        set: { localPlacement: "one-route" },
        key: "localPlacement",
        says: /'all-routes', 'single-route'/,
        fix: /localPlacement all-routes/,
    },
    { name: "unknown port mode", set: { espPortMode: "https" }, key: "espPortMode", says: /'http', 'tcp'/, fix: /espPortMode http/ },
    { name: "missing include ranges", set: { includeIpRanges: "" }, key: "includeIpRanges", says: /required/, fix: /includeIpRanges .*managedApi false/ },
    {
        name: "include range prefix too long",
        set: { includeIpRanges: "10.4.0.0/33" },
        key: "includeIpRanges",
        says: /invalid CIDR.*10\.4\.0\.0\/33/,
        fix: /config set includeIpRanges 10\.4\.0\.0\/14,10\.7\.240\.0\/20/,
    },
    { name: "include range not a CIDR", set: { includeIpRanges: "10.4.0.0/14,pods" }, key: "includeIpRanges", says: /invalid CIDR.*pods/, fix: /CIDRs/ },
    { name: "missing ESP service", set: { espServiceName: "" }, key: "espServiceName", says: /required/, fix: /espServiceName .*cloud\.goog/ },
    {
        name: "route patch names a missing route",
        set: { apiRoute: "products", virtualServiceRoutes: '[{"exact":["/productpage"]},{"name":"api","prefix":["/api/v1/products"]}]' },
        key: "apiRoute",
        says: /names no route.*'api'.*silently ignore/,
        fix: /apiRoute api/,
    },
    {
        name: "route patch names a missing route, two named routes listed",
        set: { apiRoute: "products", virtualServiceRoutes: '[{"name":"main","exact":["/productpage"]},{"name":"api","prefix":["/api/v1/products"]}]' },
        key: "apiRoute",
        says: /^names no route of the VirtualService \(routes: 'main', 'api'\); Istio would silently ignore the route patch$/,
        fix: /config set apiRoute main$/,
    },
    {
        name: "route patch with no named route at all",
        set: { apiRoute: "api", virtualServiceRoutes: '[{"exact":["/productpage"]},{"prefix":["/api/v1/products"]}]' },
        key: "apiRoute",
        says: /\(routes: none named\)/,
        fix: /^name a route in virtualServiceRoutes$/,
    },
    { name: "invalid regex", set: { apiRouteRegex: "/api/v1/products/([0-9]" }, key: "apiRouteRegex", says: /not a valid RE2/, fix: /apiRouteRegex/ },
    {
        name: "regex with look-ahead (not RE2)",
        set: { apiRouteRegex: "/api/(?=v1)" },
        key: "apiRouteRegex",
        says: /not a valid RE2/,
        fix: /\/api\/v1\/products\/\[1-9\]\[0-9\]\?/,
    },
    {
        name: "duplicate descriptors",
        set: {
            descriptors: '[{"key":"PATH","value":"/a","unit":"minute","requestsPerUnit":1},{"key":"PATH","value":"/a","unit":"minute","requestsPerUnit":2}]',
        },
        key: "descriptors",
        says: /duplicates 'PATH=\/a'/,
        fix: /remove one/,
    },
    {
        name: "duplicate catch-all",
        set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1},{"key":"PATH","unit":"hour","requestsPerUnit":2}]' },
        key: "descriptors",
        says: /duplicates the catch-all/,
        fix: /remove one/,
    },
    {
        name: "descriptor with empty key",
        set: { descriptors: '[{"key":"","unit":"minute","requestsPerUnit":1}]' },
        key: "descriptors",
        says: /empty or missing 'key'/,
        fix: /"key":"PATH"/,
    },
    {
        name: "descriptor key never sent",
        set: { descriptors: '[{"key":"path","unit":"minute","requestsPerUnit":1}]' },
        key: "descriptors",
        says: /only send 'PATH'/,
        fix: /"key":"PATH"/,
    },
    {
        name: "descriptor with bad unit",
        set: { descriptors: '[{"key":"PATH","unit":"minutes","requestsPerUnit":1}]' },
        key: "descriptors",
        says: /unit "minutes"/,
        fix: /second, minute/,
    },
    {
        name: "descriptor with zero requests",
        set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":0}]' },
        key: "descriptors",
        says: /requestsPerUnit 0/,
        fix: /at least 1/,
    },
    {
        name: "descriptor with unknown field",
        set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1,"unlimited":true}]' },
        key: "descriptors",
        says: /unknown field.*unlimited/,
        fix: /allowed fields/,
    },
    { name: "descriptors not JSON", set: { descriptors: "[{key: PATH}]" }, key: "descriptors", says: /not valid JSON/, fix: /config set descriptors/ },
    {
        name: "descriptors plus limit keys",
        set: { descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":1}]', catchAllLimit: "5" },
        key: "catchAllLimit",
        says: /ignored because 'descriptors'/,
        fix: /config rm catchAllLimit/,
    },
    { name: "api prefix with space", set: { apiPrefix: "/api/v1 /products" }, key: "apiPrefix", says: /without spaces/, fix: /apiPrefix \/api\/v1\/products/ },
    { name: "gateway port out of range", set: { gatewayPort: "70000" }, key: "gatewayPort", says: /between 1 and 65535/, fix: /gatewayPort 65535/ },
    { name: "grpc port zero", set: { ratelimitGrpcPort: "0" }, key: "ratelimitGrpcPort", says: /between 1 and 65535/, fix: /ratelimitGrpcPort 1/ },
    {
        name: "grpc port collides with http port",
        set: { ratelimitGrpcPort: "8080" },
        key: "ratelimitGrpcPort",
        says: /collides/,
        fix: /ratelimitGrpcPort 8081/,
    },
    { name: "namespace not DNS-1123", set: { meshNamespace: "Istio_System" }, key: "meshNamespace", says: /DNS-1123 label/, fix: /meshNamespace istio-system/ },
    {
        name: "config map name not DNS-1123",
        set: { configName: "RateLimit Config" },
        key: "configName",
        says: /DNS-1123 subdomain/,
        fix: /configName ratelimit-config/,
    },
    {
        name: "gateway selector without '='",
        set: { gatewaySelector: "ingressgateway" },
        key: "gatewaySelector",
        says: /key=value/,
        fix: /istio=ingressgateway/,
    },
    { name: "boolean spelled yes", set: { failureModeDeny: "yes" }, key: "failureModeDeny", says: /true or false/, fix: /failureModeDeny true/ },
    { name: "replicas zero", set: { ratelimitReplicas: "0" }, key: "ratelimitReplicas", says: /between 1 and 100/, fix: /ratelimitReplicas 1/ },
    { name: "unknown log level", set: { ratelimitLogLevel: "verbose" }, key: "ratelimitLogLevel", says: /'warn', 'debug'/, fix: /ratelimitLogLevel warn/ },
    { name: "pipeline window not a Go duration", set: { redisPipelineWindow: "150 us" }, key: "redisPipelineWindow", says: /Go duration/, fix: /150us/ },
    {
        name: "routes JSON with an empty route",
        set: { virtualServiceRoutes: '[{"name":"api"}]' },
        key: "virtualServiceRoutes",
        says: /needs 'exact' and\/or 'prefix'/,
        fix: /config set virtualServiceRoutes/,
    },
    {
        name: "routes JSON with duplicate names",
        set: { virtualServiceRoutes: '[{"name":"api","prefix":["/a"]},{"name":"api","prefix":["/b"]}]' },
        key: "virtualServiceRoutes",
        says: /appears twice/,
        fix: /distinct name/,
    },
    { name: "empty domain characters", set: { domain: "rate limit" }, key: "domain", says: /letters, digits/, fix: /domain rate-limit/ },
    // Redis choices (builders/redis-connection.ts)
    {
        name: "unknown redis mode",
        set: { redisMode: "sentinels" },
        key: "redisMode",
        says: /one of 'in-cluster', 'external', 'sentinel', 'cluster'/,
        fix: /config set redisMode sentinel$/,
    },
    {
        name: "external redis without address",
        set: { redisMode: "external" },
        key: "redisAddress",
        says: /required with mode external/,
        fix: /config set redisAddress redis\.cache/,
    },
    {
        name: "cluster without seed nodes",
        set: { redisMode: "cluster" },
        key: "redisAddress",
        says: /required with mode cluster/,
        fix: /redisAddress redis-0/,
    },
    {
        name: "address with the in-cluster redis",
        set: { redisAddress: "redis.cache:6379" },
        key: "redisAddress",
        says: /applies only to an existing Redis/,
        fix: /config rm redisAddress, or pulumi config set redisMode external/,
    },
    {
        name: "several addresses with the in-cluster redis suggest cluster",
        set: { redisAddress: "a:6379,b:6379" },
        key: "redisAddress",
        says: /existing Redis/,
        fix: /redisMode cluster/,
    },
    {
        name: "password secret key without a password secret",
        set: { redisPasswordSecretKey: "pw" },
        key: "redisPasswordSecretKey",
        says: /names a key of redisPasswordSecret, which is not set/,
        fix: /config rm redisPasswordSecretKey/,
    },
    { name: "TLS with the in-cluster redis", set: { redisTls: "true" }, key: "redisTls", says: /existing Redis/, fix: /config rm redisTls/ },
    {
        name: "external address without port",
        set: { redisMode: "external", redisAddress: "redis.cache" },
        key: "redisAddress",
        says: /not host:port: redis\.cache/,
        fix: /redisAddress redis\.cache:6379$/,
    },
    {
        name: "external with several servers",
        set: { redisMode: "external", redisAddress: "a:6379,b:6379" },
        key: "redisAddress",
        says: /several servers/,
        fix: /redisMode cluster/,
    },
    {
        name: "sentinel without master name",
        set: { redisMode: "sentinel", redisAddress: "s0:26379,s1:26379" },
        key: "redisSentinelMaster",
        says: /required with mode sentinel/,
        fix: /redisSentinelMaster mymaster/,
    },
    {
        name: "sentinel master with a comma",
        set: { redisMode: "sentinel", redisAddress: "s0:26379", redisSentinelMaster: "a,b" },
        key: "redisSentinelMaster",
        says: /commas/,
        fix: /redisSentinelMaster ab/,
    },
    {
        name: "sentinel master with cluster mode",
        set: { redisMode: "cluster", redisAddress: "n0:6379", redisSentinelMaster: "mymaster" },
        key: "redisSentinelMaster",
        says: /only to mode sentinel/,
        fix: /config rm redisSentinelMaster/,
    },
    {
        name: "sentinel password without sentinel",
        set: { redisMode: "external", redisAddress: "r:6379", redisSentinelPasswordSecret: "s" },
        key: "redisSentinelPasswordSecret",
        says: /only to mode sentinel/,
        fix: /redisMode sentinel/,
    },
    {
        name: "TLS CA without TLS",
        set: { redisMode: "external", redisAddress: "r:6379", redisTlsCaSecret: "redis-ca" },
        key: "redisTlsCaSecret",
        says: /only read with tls true/,
        fix: /redisTls true/,
    },
    {
        name: "password secret name not DNS-1123",
        set: { redisMode: "external", redisAddress: "r:6379", redisPasswordSecret: "My_Secret" },
        key: "redisPasswordSecret",
        says: /name of a Secret/,
        fix: /redisPasswordSecret my-secret$/,
    },
    {
        name: "password key without a secret",
        set: { redisMode: "external", redisAddress: "r:6379", redisPasswordSecretKey: "pw" },
        key: "redisPasswordSecretKey",
        says: /not set/,
        fix: /redisPasswordSecret/,
    },
    {
        name: "pipeline window with a single redis",
        set: { redisPipelineWindow: "150us" },
        key: "redisPipelineWindow",
        says: /Redis Cluster only/,
        fix: /config rm redisPipelineWindow, or pulumi config set redisMode cluster/,
    },
];

function problemsOf(set: RawConfig) {
    try {
        resolveSettings({ ...BASE, ...set });
    } catch (e) {
        expect(e).to.be.instanceOf(InputError);
        return e as InputError;
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

    it("a number or boolean where the CLI hands over strings (a typed default, a YAML scalar) reads the same", () => {
        const { raw, unknown } = rawConfigFromAll({
            "mesh-ratelimit:localBucket": 7 as unknown as string,
            "mesh-ratelimit:managedApi": false as unknown as string,
        });
        expect(unknown).to.deep.equal([]);
        const s = resolveSettings({ ...raw, variant: "A" });
        expect(s.local.bucket).to.equal(7);
        expect(s.managedApi).to.equal(undefined);
    });

    it('an empty value in pulumi config means the key\'s default (Pulumi.yaml declares "" for variant-dependent keys)', () => {
        expect(resolveSettings({ ...BASE, domain: "", localBucket: "" }).global.domain).to.equal("ratelimit");
        expect(resolveSettings({ ...BASE, variant: "B", localBucket: "" }).local.bucket).to.equal(10);
    });

    it("closest allowed value: case, prefix, near misspelling, else the fallback", () => {
        const units = ["second", "minute", "hour", "day"];
        expect(closestValue("MINUTE", units, "minute")).to.equal("minute");
        expect(closestValue("minutes", units, "second")).to.equal("minute");
        expect(closestValue("days", units, "minute")).to.equal("day");
        expect(closestValue("secnod", units, "minute")).to.equal("second");
        expect(closestValue("fortnight", units, "minute")).to.equal("minute");
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
        expect(error).to.be.instanceOf(InputError);
        expect(seen, "resources registered despite the bad config").to.deep.equal([]);
        // The same counter sees a valid run's resources: the check above could have failed.
        await registerProgram({ base: { ...BASE }, onRegister: (r) => seen.push(r.type) });
        expect(seen.length).to.be.greaterThan(20);
        expect(programConfig({ base: BASE })["mesh-ratelimit:variant"]).to.equal("A");
    });
});

/** The render and explain CLIs: the same flags, fixes phrased as what the user typed, the same exit code. */
describe("config errors never print a secret config value", () => {
    /** The dev config with a secret host in redisAddress (bad port) and a secret under a misspelt key. */
    const config = (): Record<string, string> => ({
        ...Object.fromEntries(Object.entries(BASE).map(([k, v]) => [`mesh-ratelimit:${k}`, v])),
        "mesh-ratelimit:redisMode": "external",
        "mesh-ratelimit:redisAddress": "  redis-7f3k9q.internal.example:63x9 ",
        "mesh-ratelimit:espServiceNam": "s3cr3t-t0ken-value",
    });
    const SECRET_KEYS = ["mesh-ratelimit:redisAddress", "mesh-ratelimit:espServiceNam"];
    const messageOf = (all: Record<string, string>, isSecret?: (k: string) => boolean): string => {
        try {
            buildProgram(all, isSecret ? { isSecret } : {});
        } catch (e) {
            expect(e).to.be.instanceOf(InputError);
            return (e as Error).message;
        }
        throw new Error("the config was accepted");
    };

    it("a plain value is printed (the control: the same config without secrets)", () => {
        const m = messageOf(config(), () => false);
        expect(m).to.include(
            'mesh-ratelimit:redisAddress = "redis-7f3k9q.internal.example:63x9": has address(es) that are not host:port: redis-7f3k9q.internal.example:63x9',
        );
        expect(m).to.include("pulumi config set espServiceName 's3cr3t-t0ken-value'");
    });

    it("a secret value appears nowhere: not as the value, not in the problem, not in the fix; a misspelt secret key's fix moves it and keeps it secret", () => {
        const m = messageOf(config(), (k) => SECRET_KEYS.includes(k));
        expect(m).to.not.include("7f3k9q");
        expect(m).to.not.include("s3cr3t");
        // The suggested address would be derived from the secret one: the fix names no value and keeps it secret.
        expect(m).to.include(
            "  - mesh-ratelimit:redisAddress = \"[secret]\": has address(es) that are not host:port: [secret]\n    fix: pulumi config set --secret redisAddress '<corrected value>'",
        );
        expect(m).to.include(
            '  - mesh-ratelimit:espServiceNam = "[secret]": unknown configuration key\n    fix: did you mean \'espServiceName\'? pulumi config set --secret espServiceName "$(pulumi config get espServiceNam)" && pulumi config rm espServiceNam',
        );
    });

    it("by default the Pulumi runtime's record of secret keys decides (pulumi config set --secret)", () => {
        expect(typeof (pulumi.runtime as unknown as { isConfigSecret?: unknown }).isConfigSecret, "the pinned @pulumi/pulumi exposes isConfigSecret").to.equal(
            "function",
        );
        const before = pulumi.runtime.allConfig();
        try {
            pulumi.runtime.setAllConfig(config(), SECRET_KEYS);
            expect(isConfigSecret("mesh-ratelimit:redisAddress")).to.equal(true);
            expect(isConfigSecret("mesh-ratelimit:variant")).to.equal(false);
            const m = messageOf(pulumi.runtime.allConfig());
            expect(m).to.not.include("7f3k9q");
            expect(m).to.not.include("s3cr3t");
            expect(m).to.include('mesh-ratelimit:redisAddress = "[secret]"');
        } finally {
            pulumi.runtime.setAllConfig(before, []);
        }
    });
});

describe("config errors in the render and explain CLIs", function () {
    this.timeout(120_000);
    const CLI = cliFix("nothing was rendered");
    const cliFixOf = (set: RawConfig, key: string) => {
        const err = problemsOf(set);
        const p = err.problems.find((x) => x.key === key)!;
        return { text: formatProblems([p], CLI), fix: p.fixWith ? p.fixWith(CLI) : p.fix };
    };
    const CLI_CASES: { set: RawConfig; key: string; fix: string }[] = [
        { set: { unit: "minutes" }, key: "unit", fix: "--set unit=minute" },
        { set: { localBucket: "abc" }, key: "localBucket", fix: "--set localBucket=4" },
        { set: { variant: "C" }, key: "variant", fix: "--variant A" },
        { set: { apiProfile: "Seed2" }, key: "apiProfile", fix: "--profile seed" },
        { set: { localPlacement: "single" }, key: "localPlacement", fix: "--local-placement single-route" },
        { set: { espPortMode: "https" }, key: "espPortMode", fix: "--port-mode http" },
        { set: { variant: "B", apiLimit: "2" }, key: "apiLimit", fix: "leave out --set apiLimit=..., or --variant A" },
        {
            set: { includeIpRanges: "" },
            key: "includeIpRanges",
            fix: "--set includeIpRanges=10.4.0.0/14,10.7.240.0/20   (your cluster's pod and service CIDRs), or --set managedApi=false",
        },
        { set: { apiRouteRegex: "/api/(?=v1)" }, key: "apiRouteRegex", fix: "--set 'apiRouteRegex=/api/v1/products/[1-9][0-9]?'" },
    ];
    for (const c of CLI_CASES) {
        it(`${JSON.stringify(c.set)}: fix is '${c.fix}', no pulumi command`, () => {
            const { text, fix } = cliFixOf(c.set, c.key);
            expect(fix).to.equal(c.fix);
            expect(text).to.match(/^invalid configuration \(1 problem\); nothing was rendered:/);
            expect(text).not.to.contain("pulumi config");
        });
    }

    it("a misspelt --set key: did you mean, phrased as --set", () => {
        const { unknown } = rawConfigFromAll({ "mesh-ratelimit:varient": "B" });
        expect(unknown[0].fixWith!(CLI)).to.equal("did you mean 'variant'? --set variant=B instead of --set varient=...");
        expect(unknown[0].fix).to.equal("did you mean 'variant'? pulumi config rm varient && pulumi config set variant 'B'");
    });

    it("a misspelt flag: did you mean, in both CLIs", () => {
        expect(() => parseArgs(["--varient", "B"])).to.throw(UsageError, /unknown argument '--varient': did you mean --variant\?/);
        expect(() => parseExplainArgs(["--varient", "B", "/p"])).to.throw(UsageError, /unknown argument '--varient': did you mean --variant\?/);
        expect(() => parseArgs(["--local-placment", "single-route"])).to.throw(/did you mean --local-placement\?/);
        expect(() => parseArgs(["--frobnicate", "x"])).to.throw(/unknown argument '--frobnicate'\n/);
    });

    it("an empty --set value is an error that says to leave it out (not silently the default)", () => {
        expect(() => parseArgs(["--set", "domain="])).to.throw(
            UsageError,
            /--set domain= has an empty value: to use the key's default, leave it out \(remove '--set domain='\)/,
        );
        expect(() => parseExplainArgs(["--set", "domain= ", "/p"])).to.throw(UsageError, /empty value/);
        expect(() => parseArgs(["--set", "domian="])).to.throw(UsageError, /did you mean 'domain'/);
    });

    it("explain takes the same flags as render, mapped to the same keys", () => {
        const argv = ["--variant", "b", "--profile", "seed", "--local-placement", "single-route", "--port-mode", "tcp", "--set", "unit=hour"];
        const r = parseArgs(argv).opts.overrides;
        const e = parseExplainArgs([...argv, "/p"]);
        expect(r).to.deep.equal({ variant: "B", apiProfile: "seed", localPlacement: "single-route", espPortMode: "tcp", unit: "hour" });
        expect({ ...e.overrides, variant: e.variant, apiProfile: e.apiProfile }).to.deep.equal(r);
        expect(parseCli(["--json", "/a"], { usage: "u", switches: ["--json"], positional: true }).json).to.equal(true);
    });

    it("render and explain exit 2 on the same bad config and on a bad flag, with the --set fix", () => {
        const root = path.resolve(__dirname, "..", "..");
        const tsx = path.join(root, "node_modules", ".bin", "tsx");
        const run = (script: string, args: string[]) => spawnSync(tsx, [path.join(root, "render", script), ...args], { cwd: root, encoding: "utf8" });
        for (const [script, extra] of [
            ["cli.ts", ["--out", path.join(require("os").tmpdir(), `never-written-${process.pid}`)]],
            ["explain-cli.ts", ["/productpage"]],
        ] as const) {
            const bad = run(script, ["--set", "unit=minutes", ...extra]);
            expect(bad.status, `${script}: ${bad.stderr}`).to.equal(2);
            expect(bad.stderr).to.contain("fix: --set unit=minute\n");
            expect(bad.stderr).not.to.contain("pulumi config");
            const flag = run(script, ["--varient", "B", ...extra]);
            expect(flag.status, `${script}: ${flag.stderr}`).to.equal(2);
            expect(flag.stderr).to.contain("did you mean --variant?");
        }
    });
});
