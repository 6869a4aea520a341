/** Shadow mode and the Prometheus scrape target, in the builders and in the rendered Deployment. */
import { expect } from "chai";
import { prometheusScrapeAnnotations, shadowModeEnv } from "../../components/service/safe-rollout";
import { planOfConfig, resolveSettings } from "../../program/config-args";

/** The service settings GlobalRateLimit derives for the dev stack. */
const devService = () => planOfConfig(DEV).global.service;
import { DEV, render } from "./helpers";

function ratelimitPod(objects: any[]): any {
    const d = objects.find((o) => o.kind === "Deployment" && o.metadata.name === "ratelimit");
    if (!d) throw new Error("no ratelimit Deployment rendered");
    return d.spec.template;
}

describe("safe rollout: shadow mode and the Prometheus scrape target", () => {
    it("shadowMode defaults to off: no SHADOW_MODE in the service environment", async () => {
        expect(resolveSettings(DEV).ratelimit.shadowMode).to.equal(false);
        expect(shadowModeEnv(devService())).to.deep.equal([]);
        const env = ratelimitPod((await render()).objects).spec.containers[0].env.map((e: any) => e.name);
        expect(env).to.not.include("SHADOW_MODE");
    });

    it("shadowMode=true renders SHADOW_MODE=true on the service container", async () => {
        const env = ratelimitPod((await render({ overrides: { shadowMode: "true" } })).objects).spec.containers[0].env;
        expect(env.filter((e: any) => e.name === "SHADOW_MODE")).to.deep.equal([{ name: "SHADOW_MODE", value: "true" }]);
    });

    it("ratelimitPrometheus=true marks the pods a scrape target whose port and path are where the service serves", async () => {
        const pod = ratelimitPod((await render({ overrides: { ratelimitPrometheus: "true" } })).objects);
        const a = pod.metadata.annotations;
        expect(a["prometheus.io/scrape"]).to.equal("true");
        const c = pod.spec.containers[0];
        const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value]));
        // The annotated port is the one PROMETHEUS_ADDR listens on and a declared container port.
        expect(env.PROMETHEUS_ADDR).to.equal(`:${a["prometheus.io/port"]}`);
        expect(c.ports.map((p: any) => String(p.containerPort))).to.include(a["prometheus.io/port"]);
        // The path is the service's PROMETHEUS_PATH (its default /metrics when not set).
        expect(a["prometheus.io/path"]).to.equal(env.PROMETHEUS_PATH ?? "/metrics");
    });

    it("no scrape annotations while Prometheus is off", async () => {
        const pod = ratelimitPod((await render()).objects);
        const keys = Object.keys(pod.metadata.annotations ?? {}).filter((k) => k.startsWith("prometheus.io/"));
        expect(keys).to.deep.equal([]);
        expect(prometheusScrapeAnnotations(devService())).to.deep.equal({});
    });

    it("shadowMode must be a boolean (config error names the key)", () => {
        expect(() => resolveSettings({ ...DEV, shadowMode: "observe" })).to.throw(/shadowMode = "observe": must be true or false/);
    });
});
