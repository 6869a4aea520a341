/**
 * The stack config key `gatewayNamespace` decides where the gateway's EnvoyFilters land (with
 * `filterNamespaces=own`, the default); with `filterNamespaces=root` they go to `meshNamespace`
 * instead. The gateway's filters are found by what they patch (every patch in the GATEWAY
 * context), not by their names, so the check does not depend on how the filters are named.
 */
import { expect } from "chai";
import { K8sObject } from "../../lib/k8s-object";
import { render } from "./helpers";

const GATEWAY_NS = "edge-gw";

/** Namespace of each EnvoyFilter, split into the gateway's filters and the others (the sidecar's). */
function filterNamespaces(objects: K8sObject[]): { gateway: string[]; other: string[] } {
    const filters = objects.filter((o) => o.kind === "EnvoyFilter");
    const isGateway = (f: K8sObject) => ((f.spec as any).configPatches as any[]).every((p) => p.match?.context === "GATEWAY");
    return {
        gateway: filters.filter(isGateway).map((f) => f.metadata.namespace!),
        other: filters.filter((f) => !isGateway(f)).map((f) => f.metadata.namespace!),
    };
}

describe("stack config gatewayNamespace: where the gateway's filters land", function () {
    this.timeout(120_000);

    for (const variant of ["A", "B"] as const) {
        it(`variant ${variant}: filterNamespaces own (the default) puts every gateway filter in gatewayNamespace, the sidecar's in the workload's`, async () => {
            const r = await render({ variant, overrides: { gatewayNamespace: GATEWAY_NS } });
            const ns = filterNamespaces(r.objects);
            // A has three gateway filters (the api route's own) and three of the per-path counters' side, B two and two.
            expect(ns.gateway).to.have.length(variant === "A" ? 6 : 4);
            expect(ns.gateway).to.deep.equal(ns.gateway.map(() => GATEWAY_NS));
            expect(ns.other).to.deep.equal(["default"]);
        });
    }

    it("filterNamespaces root: every filter in meshNamespace, whatever gatewayNamespace says", async () => {
        const r = await render({ overrides: { gatewayNamespace: GATEWAY_NS, filterNamespaces: "root", meshNamespace: "mesh-root" } });
        const ns = filterNamespaces(r.objects);
        expect(ns.gateway).to.deep.equal(Array(6).fill("mesh-root"));
        expect(ns.other).to.deep.equal(["mesh-root"]);
    });

    it("not set: the gateway filters in istio-system (the default gateway's namespace)", async () => {
        const r = await render();
        const ns = filterNamespaces(r.objects);
        expect(ns.gateway).to.deep.equal(Array(6).fill("istio-system"));
    });
});
