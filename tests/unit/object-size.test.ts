/**
 * components/common/object-size.ts: no object the components would create is over the API server's
 * bound (a ConfigMap holds at most 1 MiB of data), whatever the number of limits; the check runs
 * at preview, before anything is registered, and names the field and the fix.
 */
import { expect } from "chai";
import { MAX_OBJECT_BYTES, oversizeProblems } from "../../components/common/object-size";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { MeshRateLimit } from "../../mesh/mesh-ratelimit";
import { registerComponents } from "../../render/render";

const GATEWAY = { selector: { istio: "shop-gateway" }, namespace: "shop", virtualHosts: ["shop.example:8080"] };
const rules = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `rule-${i}`, path: { exact: `/p/${i}` }, requestsPerUnit: 5, unit: "minute" as const }));
const plan = (n: number, dashboard = true) =>
    planGlobalRateLimit({ domain: "shop", namespace: "shop", gateway: GATEWAY, rules: rules(n), monitoring: { dashboard } });

describe("objects within the API server's bound (components/common/object-size.ts)", function () {
    this.timeout(60_000);

    it("counts bytes, not characters: 1 MiB exactly passes, one byte more is refused", () => {
        // The Kubernetes API server's ConfigMap bound is 1 MiB of data (1,048,576 bytes).
        expect(MAX_OBJECT_BYTES).to.equal(1024 * 1024);
        const sized = (text: string) => oversizeProblems([{ what: "x", text, key: "k", value: 1, by: "with 1 limit,", fix: "f" }]);
        expect(sized("a".repeat(1_048_576))).to.deep.equal([]);
        expect(sized("a".repeat(1_048_577))).to.have.length(1);
        // 524,289 two-byte characters are 1,048,578 bytes.
        expect(sized("é".repeat(524_289))[0].problem).to.include("1048578 bytes");
    });

    it("1,000 rules: the dashboard (a panel row per limit) would be over 1 MiB; refused with the field and the fix", () => {
        const p = plan(1000);
        const json = p.monitoring.dashboard!.json;
        expect(Buffer.byteLength(json)).to.be.greaterThan(1_048_576);
        expect(p.problems.map((x) => x.key)).to.deep.equal(["monitoring.dashboard"]);
        expect(p.problems[0].problem).to.match(
            /^with 1000 limits, makes the dashboard ConfigMap \S+ \(a panel row per limit\) \d+ bytes, more than the 1048576 bytes/,
        );
        expect(p.problems[0].fix).to.include("set monitoring.dashboard to false");
    });

    it("the same 1,000 rules without the dashboard, and 100 rules with it, pass; every object is then under 1 MiB", () => {
        for (const p of [plan(1000, false), plan(100)]) {
            expect(p.problems).to.deep.equal([]);
            const texts = [p.configYaml, ...p.filters.map((f) => JSON.stringify(f.spec)), p.monitoring.dashboard?.json ?? ""];
            for (const t of texts) expect(Buffer.byteLength(t)).to.be.at.most(1_048_576);
        }
    });

    it("MeshRateLimit: 1,000 descriptors are refused under global.monitoring.dashboard at construction, and nothing is registered", async () => {
        const descriptors = Array.from({ length: 1000 }, (_, i) => ({ key: "PATH", value: `/p/${i}`, unit: "minute" as const, requestsPerUnit: 5 }));
        let registered: string[] = [];
        let message = "";
        try {
            registered = (await registerComponents(() => new MeshRateLimit("s", { managedApi: { enabled: false }, limits: { descriptors } }))).all.map(
                (r) => r.type,
            );
        } catch (e) {
            message = (e as Error).message;
        }
        expect(message).to.match(/^MeshRateLimit: invalid arguments \(1 problem\)/);
        expect(message).to.include("- global.monitoring.dashboard = true: with 1000 limits, makes the dashboard ConfigMap");
        expect(message).to.include("fix: set global.monitoring.dashboard: false in MeshRateLimit's args");
        expect(registered).to.deep.equal([]);
        const ok = await registerComponents(
            () => new MeshRateLimit("t", { managedApi: { enabled: false }, limits: { descriptors }, global: { monitoring: { dashboard: false } } }),
        );
        expect(ok.objects.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata.name)).to.include("ratelimit-config");
    });
});
