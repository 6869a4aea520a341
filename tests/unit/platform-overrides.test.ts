/**
 * A team's preview names the platform overrides that will apply to it, read from the cluster's
 * EnvoyFilters (program/platform-overrides.ts). The platform's objects here are its plan's, as the
 * cluster would hold them after its `pulumi up`; the team never writes or changes them.
 */
import { expect } from "chai";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { LiveObject } from "../../program/preflight";
import { platformOverridesMessages, platformOverridesOn } from "../../program/platform-overrides";
import { PLATFORM } from "./platform-fixtures";

const POD = [{ istio: "ingressgateway", app: "istio-ingressgateway" }];

function platformInCluster(args = PLATFORM): LiveObject[] {
    const plan = planPlatformRateLimit(args);
    expect(plan.problems).to.deep.equal([]);
    return plan.filters.map((f) => ({
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { name: f.name, namespace: f.namespace },
        spec: f.spec,
    }));
}

describe("a team's preview names the platform's overrides on its gateway (program/platform-overrides.ts)", () => {
    it("the overrides filter: its rules by name and its EnvoyFilter; the defaults filter is not an override", () => {
        expect(platformOverridesOn(platformInCluster(), POD, 8080)).to.deep.equal([
            { envoyFilter: "istio-system/platform-ratelimit-overrides", rules: ["per-client-ceiling"], failureModeDeny: false },
        ]);
        const [m] = platformOverridesMessages(platformInCluster(), POD, 8080);
        expect(m).to.include("per-client-ceiling").and.include("istio-system/platform-ratelimit-overrides").and.include("on top of its own limits");
    });

    it("a per-path override is named 'each path'; a fail-closed platform says so", () => {
        const args = { ...PLATFORM, failureModeDeny: true, overrides: { perPath: { eachPath: { requestsPerUnit: 5000, unit: "minute" as const } } } };
        const [o] = platformOverridesOn(platformInCluster(args), POD, 8080);
        expect(o!.rules).to.deep.equal(["each path"]);
        expect(platformOverridesMessages(platformInCluster(args), POD, 8080)[0]).to.include("fail closed");
    });

    it("nothing to say: no platform, another gateway's pods, an overrides filter (of an earlier release) on another listener port", () => {
        expect(platformOverridesMessages([], POD, 8080)).to.deep.equal([]);
        expect(platformOverridesMessages(undefined, POD, 8080)).to.deep.equal([]);
        expect(platformOverridesMessages(platformInCluster(), [{ istio: "eastwestgateway" }], 8080)).to.deep.equal([]);
        // This release puts the overrides on every listener whatever listenerPorts says; an earlier one matched the port.
        const onPort = platformInCluster({ ...PLATFORM, gateway: { ...PLATFORM.gateway, listenerPorts: [8443] } });
        expect(platformOverridesMessages(onPort, POD, 8080)).to.have.length(1);
        for (const f of onPort) for (const p of f.spec.configPatches) p.match.listener = { ...p.match.listener, portNumber: 8443 };
        expect(platformOverridesMessages(onPort, POD, 8080)).to.deep.equal([]);
        expect(platformOverridesMessages(onPort, POD, 8443)).to.have.length(1);
    });

    it("negative control: the defaults alone (no overrides) are never reported as overrides", () => {
        expect(platformOverridesOn(platformInCluster({ ...PLATFORM, overrides: undefined }), POD, 8080)).to.deep.equal([]);
    });
});
