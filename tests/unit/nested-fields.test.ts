/**
 * GlobalRateLimit's nested argument types declared once (components/service/redis-fields.ts,
 * ratelimit-monitoring-fields.ts, access-policy-fields.ts, client-prefix-fields.ts): their
 * interfaces generated, their defaults read by the resolve and the stack's keys, their rules run by
 * the checks. Expected values are written from the declarations.
 */
import { expect } from "chai";
import * as fs from "fs";
import { ACCESS_POLICY_FIELDS } from "../../components/service/access-policy-fields";
import { CLIENT_PREFIX_FIELDS } from "../../components/rules/client-prefix-fields";
import { DEFAULTS } from "../../components/common/defaults";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { MONITORING_FIELDS, MONITORING_OPTION_FIELDS } from "../../components/service/ratelimit-monitoring-fields";
import { REDIS_FIELDS, SECRET_KEY_FIELDS } from "../../components/service/redis-fields";
import { CONFIG_KEYS, configDefault } from "../../program/config-keys";
import { generated } from "../../scripts/gen-arg-types";
import { EXT, G, REDIS } from "./global-ratelimit-fixtures";

/** The problems of arguments, without their fix functions. */
const problemsOf = (a: Parameters<typeof planGlobalRateLimit>[0]) => planGlobalRateLimit(a).problems.map(({ fixWith: _f, ...p }) => p);

/** Runs `body` with a declaration's default changed, then puts it back. */
function withDefault<T>(d: { default: T }, value: T, body: () => void): void {
    const before = d.default;
    d.default = value;
    try {
        body();
    } finally {
        d.default = before;
    }
}

describe("GlobalRateLimit's nested fields: one declaration each", () => {
    it("every generated file is current; control: a changed default makes the Redis options' file stale", () => {
        const files = generated();
        expect(files.map(([out]) => out.replace(/.*\/(builders|components)\//, "$1/"))).to.include.members([
            "components/service/redis-options-args.generated.ts",
            "components/service/ratelimit-monitoring-args.generated.ts",
            "components/service/access-policy-args.generated.ts",
            "builders/client-prefix-args.generated.ts",
        ]);
        for (const [out, text] of files) expect(fs.readFileSync(out, "utf8"), `${out}: run npm run gen`).to.equal(text);
        const redisFile = () => generated().find(([out]) => out.endsWith("redis-options-args.generated.ts"))![1];
        const text = redisFile();
        withDefault(REDIS_FIELDS.maxMemory, "100mb", () => expect(redisFile().replace("`100mb`", "`160mb`")).to.equal(text).and.not.equal(redisFile()));
    });

    it("the defaults live in the declarations, not in components/common/defaults.ts", () => {
        for (const k of [
            "redisImage",
            "redisMaxMemory",
            "redisTls",
            "redisPasswordSecretKey",
            "monitoringDashboard",
            "monitoringAlerts",
            "monitoringDashboardLabel",
        ])
            expect(DEFAULTS, k).to.not.have.property(k);
    });

    it("the stack's keys take name, kind, default and description from the declarations", () => {
        const key = (k: string) => CONFIG_KEYS.find((c) => c.key === k)!;
        for (const [name, d] of [
            ["redisImage", REDIS_FIELDS.image],
            ["redisMaxMemory", REDIS_FIELDS.maxMemory],
            ["redisTls", REDIS_FIELDS.tls],
            ["monitoringDashboard", MONITORING_OPTION_FIELDS.dashboard],
            ["monitoringAlerts", MONITORING_OPTION_FIELDS.alerts],
            ["monitoringDashboardLabel", MONITORING_OPTION_FIELDS.dashboardLabel],
            ["clientPrefixV4", CLIENT_PREFIX_FIELDS.v4],
            ["clientPrefixV6", CLIENT_PREFIX_FIELDS.v6],
        ] as const) {
            expect(key(name).default, name).to.equal(String(d.default));
            expect(key(name).description.startsWith(d.doc), name).to.equal(true);
            expect(d.stackKey).to.equal(name);
        }
        // MeshRateLimit declares its own gatewayPrincipal (its default derived from the stack's gateway namespace): the key is that declaration's.
        expect(key("gatewayPrincipal").description.startsWith(ACCESS_POLICY_FIELDS.gatewayPrincipal.doc)).to.equal(false);
        expect(ACCESS_POLICY_FIELDS.gatewayPrincipal.stackKey).to.equal(undefined);
        expect([key("clientPrefixV4").kind, key("monitoringAlerts").kind, key("redisMode").kind]).to.deep.equal(["integer", "boolean", "string"]);
        expect(configDefault("redisPasswordSecretKey")).to.equal(SECRET_KEY_FIELDS.key.default);
    });

    it("the resolve fills the declared defaults: image, maxMemory, tls, the Secret's key, the client prefix, the dashboard's label", () => {
        const plan = planGlobalRateLimit(EXT({ passwordSecret: { name: "cache-auth" } }));
        expect([plan.service.redis.tls, plan.service.redis.auth]).to.deep.equal([false, { kind: "given", secret: { name: "cache-auth", key: "password" } }]);
        const inCluster = planGlobalRateLimit(G());
        expect([inCluster.service.ratelimit.redisImage, inCluster.service.ratelimit.redisMaxMemory]).to.deep.equal([
            REDIS_FIELDS.image.default,
            REDIS_FIELDS.maxMemory.default,
        ]);
        expect(inCluster.monitoring.dashboard?.labels).to.include({ grafana_dashboard: "1" });
        expect(inCluster.monitoring.rules).to.equal(undefined);
        expect(MONITORING_FIELDS.gatewayClusters.default).to.equal(inCluster.monitoring.input.gatewayClusters);
    });

    it("the checks run the declared rules, their fixes the declared defaults", () => {
        expect(problemsOf(REDIS({ maxMemory: "1gb" }))).to.deep.equal([
            {
                key: "redis.maxMemory",
                value: "1gb",
                problem: "must be at most 192mb: 75 % of the container's memory limit 256Mi, so Redis evicts counters before the kernel kills it",
                fix: 'set redis.maxMemory to "160mb"',
            },
        ]);
        expect(problemsOf(REDIS({ mode: "redis" }))).to.have.length(1);
        expect(problemsOf(G({ clientPrefix: { v4: 40 } }))[0]).to.include({ key: "clientPrefix.v4", value: 40 });
        expect(problemsOf(G({ monitoring: { dashboardLabel: "x" } }))[0]).to.include({
            key: "monitoring.dashboardLabel",
            fix: 'set monitoring.dashboardLabel to "grafana_dashboard=1"',
        });
        expect(problemsOf(G({ monitoring: { gatewayClusters: "" } }))[0]).to.include({ key: "monitoring.gatewayClusters", fix: 'use ".*"' });
        expect(problemsOf(G({ accessPolicy: { gatewayPrincipal: "spiffe://x" } }))[0]).to.include({ key: "accessPolicy.gatewayPrincipal" });
        // Control: the fix follows the declaration's default.
        withDefault(MONITORING_OPTION_FIELDS.dashboardLabel, "grafana=yes", () =>
            expect(problemsOf(G({ monitoring: { dashboardLabel: "x" } }))[0]).to.include({ fix: 'set monitoring.dashboardLabel to "grafana=yes"' }),
        );
    });
});
