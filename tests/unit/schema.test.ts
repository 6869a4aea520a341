/**
 * Every rendered object validates against its published schema: `kubernetes-models` for core kinds
 * (including the seed profile's extensions/v1beta1 Ingress) and `@kubernetes-models/istio` for Istio's.
 */
import { expect } from "chai";
import { K8sObject } from "../../lib/k8s-object";
import { render } from "./helpers";

/** Module that exports the model class of an apiVersion. */
function modelModule(apiVersion: string): string {
    if (apiVersion.includes("istio.io")) return `@kubernetes-models/istio/${apiVersion}`;
    return `kubernetes-models/${apiVersion}`;
}

/**
 * @kubernetes-models/istio 2.3.0 (the last release for Node 20) has no security.istio.io/v1
 * PeerAuthentication model; Istio promoted the v1beta1 schema to v1 unchanged, so that one checks it.
 */
const SCHEMA_ALIASES: Record<string, string> = { "security.istio.io/v1 PeerAuthentication": "security.istio.io/v1beta1" };

function validate(o: K8sObject): void {
    const alias = SCHEMA_ALIASES[`${o.apiVersion} ${o.kind}`];
    if (alias) o = { ...o, apiVersion: alias };
    const mod = require(modelModule(o.apiVersion));
    const Model = mod[o.kind];
    if (!Model) throw new Error(`no schema model for ${o.apiVersion} ${o.kind}`);
    new Model(o).validate();
}

describe("rendered objects validate against published schemas", function () {
    this.timeout(120_000);
    const combos = [
        { variant: "A", apiProfile: "current", localPlacement: "all-routes", espPortMode: "http" },
        { variant: "A", apiProfile: "seed", localPlacement: "single-route", espPortMode: "tcp" },
        { variant: "B", apiProfile: "current", localPlacement: "single-route", espPortMode: "http" },
        { variant: "B", apiProfile: "seed", localPlacement: "all-routes", espPortMode: "tcp" },
    ] as const;
    for (const c of combos) {
        it(`variant ${c.variant}, ${c.apiProfile}, ${c.localPlacement}, port ${c.espPortMode}`, async () => {
            const r = await render({
                variant: c.variant,
                apiProfile: c.apiProfile,
                overrides: { localPlacement: c.localPlacement, espPortMode: c.espPortMode },
            });
            expect(r.objects.length).to.be.greaterThan(20);
            for (const o of r.objects) {
                try {
                    validate(o);
                } catch (e) {
                    throw new Error(`${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}: ${(e as Error).message}`, { cause: e });
                }
            }
        });
    }

    it("the validators reject a broken object (negative control)", () => {
        const bad: K8sObject = {
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: "x", namespace: "istio-system" },
            spec: { configPatches: [{ applyTo: "HTTP_FILTR", patch: { operation: "MERGE" } }] },
        };
        expect(() => validate(bad)).to.throw();
        const badPort: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [{ port: "eighty" }] } };
        expect(() => validate(badPort)).to.throw();
    });
});
