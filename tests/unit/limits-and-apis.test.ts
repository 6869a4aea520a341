/**
 * The limits table (stack output `limits`, `npm start`) and the served-API check, beyond the
 * counts in pure.test.ts: what each row says, how the table lines up, and which API versions each
 * combination of profile, managed API and mutual TLS needs. Added after the mutation run
 * (docs/proof/mutation.md) showed these texts and branches could change without a failing test.
 */
import { expect } from "chai";
import { effectiveLimits, formatLimits } from "../../mesh/limits-table";
import { missingApis, requiredApiVersions } from "../../program/served-apis";
import { resolveSettings } from "../../program/config-args";
import { DEV } from "./helpers";

const ALL_SERVED = new Set([
    "v1",
    "apps/v1",
    "extensions/v1beta1",
    "networking.k8s.io/v1",
    "networking.istio.io/v1alpha3",
    "networking.istio.io/v1beta1",
    "security.istio.io/v1",
]);
const without = (...gone: string[]) => new Set([...ALL_SERVED].filter((v) => !gone.includes(v)));

describe("limits table: what each row says", () => {
    it("variant A: the three global descriptors and the local bucket, with where they are enforced", () => {
        const rows = effectiveLimits(resolveSettings(DEV));
        expect(rows.map((r) => r.scope)).to.deep.equal(["global", "global", "global", "local"]);
        const [page, api, other, local] = rows;
        expect(page.match).to.equal("path /productpage, with or without a query [PATH=/productpage]");
        expect(api.match).to.equal("paths matching /api/v1/products/[1-9][0-9]? on route 'api', with or without a query, shared [PATH=api]");
        expect(other.match).to.equal("any other path (each path its own counter, query ignored; 'api' route paths the api limit counts are left out) [PATH]");
        expect(other.enforcedBy).to.equal("ingress gateway (istio=ingressgateway), 429; domain 'ratelimit'; service ratelimit-per-value (its own Redis)");
        // The pre-limit: 2 × the limit per pod for the named descriptors (1/min, 2/min), none for the catch-all.
        expect(page.enforcedBy).to.equal(
            "ingress gateway (istio=ingressgateway), 429; domain 'ratelimit'; service ratelimit; pre-limit first: 2 per gateway pod, +1 per 60s (429, x-mesh-ratelimit: pre-limit)",
        );
        expect(api.enforcedBy).to.equal(
            "ingress gateway (istio=ingressgateway), 429; domain 'ratelimit'; service ratelimit; pre-limit first: 4 per gateway pod, +2 per 60s (429, x-mesh-ratelimit: pre-limit)",
        );
        // One store (the specification's): the api paths count under the catch-all too, one service.
        const single = effectiveLimits(resolveSettings({ ...DEV, counterStore: "single", preLimit: "false" }));
        expect(single[2]!.match).to.equal("any other path (each path its own counter, query ignored; 'api' route paths count here too) [PATH]");
        for (const g of single.slice(0, 3)) expect(g.enforcedBy).to.equal("ingress gateway (istio=ingressgateway), 429; domain 'ratelimit'");
        const shadow = effectiveLimits(resolveSettings({ ...DEV, shadowMode: "true" }));
        for (const g of shadow.slice(0, 3)) expect(g.enforcedBy).to.not.include("pre-limit");
        expect(local.match).to.equal("inbound HTTP to app=productpage:9080 (all-routes)");
        expect(local.limit).to.equal("4/60s per pod");
        expect(local.enforcedBy).to.equal("sidecar, 429 with x-local-rate-limit: true");
    });

    it("variant B: its domain, no api row; the settings reach the texts", () => {
        const rows = effectiveLimits(
            resolveSettings({
                ...DEV,
                variant: "B",
                gatewaySelector: "app=edge",
                localPlacement: "single-route",
                serviceLabel: "web",
                localServicePort: "8000",
            }),
        );
        expect(rows.map((r) => r.match)).to.deep.equal([
            "path /productpage, with or without a query [PATH=/productpage]",
            "any other path (each path its own counter, query ignored) [PATH]",
            "inbound HTTP to app=web:8000 (single-route)",
        ]);
        expect(rows[0].enforcedBy).to.equal(
            "ingress gateway (app=edge), 429; domain 'productpage-ratelimit'; service ratelimit; pre-limit first: 2 per gateway pod, +1 per 60s (429, x-mesh-ratelimit: pre-limit)",
        );
        expect(rows[1].enforcedBy).to.equal("ingress gateway (app=edge), 429; domain 'productpage-ratelimit'; service ratelimit-per-value (its own Redis)");
    });

    it("the api row is recognised by the configured descriptor value, not by the word 'api'", () => {
        const rows = effectiveLimits(resolveSettings({ ...DEV, apiDescriptorValue: "products" }));
        expect(rows[1].match).to.equal("paths matching /api/v1/products/[1-9][0-9]? on route 'api', with or without a query, shared [PATH=products]");
    });

    it("pathKey=literal says that the query counts as part of the path", () => {
        const rows = effectiveLimits(resolveSettings({ ...DEV, pathKey: "literal" }));
        expect(rows.map((r) => r.match).slice(0, 3)).to.deep.equal([
            "path /productpage; the query counts as part of the path [PATH=/productpage]",
            "paths matching /api/v1/products/[1-9][0-9]? on route 'api'; the query counts as part of the path, shared [PATH=api]",
            "any other :path, query included (each its own counter) [PATH]",
        ]);
    });

    it("formatLimits: a header, a rule of dashes as wide as each column, columns aligned, no trailing blanks", () => {
        const rows = effectiveLimits(resolveSettings(DEV));
        const lines = formatLimits(rows).split("\n");
        expect(lines).to.have.length(2 + rows.length);
        const header = lines[0];
        const starts = ["scope", "match", "limit", "enforced by"].map((h) => header.indexOf(h));
        expect(starts[0]).to.equal(0);
        expect(starts.every((s, i) => i === 0 || s > starts[i - 1])).to.equal(true);
        // The rule: one run of dashes per column, starting where the column starts, two blanks between.
        const runs = [...lines[1].matchAll(/-+/g)].map((m) => ({ at: m.index!, len: m[0].length }));
        expect(runs.map((r) => r.at)).to.deep.equal(starts);
        expect(lines[1].replace(/[- ]/g, "")).to.equal("");
        rows.forEach((r, i) => {
            const line = lines[2 + i];
            const cells = [r.scope, r.match, r.limit, r.enforcedBy];
            cells.forEach((c, j) => expect(line.slice(starts[j]).startsWith(c), `row ${i} column ${j}`).to.equal(true));
        });
        // Each column is as wide as its widest cell: the column after the widest match starts two blanks later.
        const widestMatch = Math.max("match".length, ...rows.map((r) => r.match.length));
        expect(starts[2] - starts[1]).to.equal(widestMatch + 2);
        expect(runs[1].len).to.equal(widestMatch);
        for (const l of lines) expect(l).to.equal(l.trimEnd());
    });
});

/** These cases concern mutual TLS for the whole mesh (`mutualTlsScope` mesh), the specification's form. */
const MESH_WIDE = { mutualTlsScope: "mesh" };

describe("served-API check: which API versions each configuration needs", () => {
    const versions = (over: Record<string, string>) => requiredApiVersions(resolveSettings({ ...DEV, ...MESH_WIDE, ...over })).map((r) => r.apiVersion);

    it("mutual TLS for the stack's pods (the default scope) needs PeerAuthentication in both profiles; the fix names mutualTls", () => {
        for (const apiProfile of ["current", "seed"]) {
            const s = resolveSettings({ ...DEV, apiProfile, accessPolicies: "false" });
            expect(
                requiredApiVersions(s).map((r) => r.apiVersion),
                apiProfile,
            ).to.include("security.istio.io/v1");
            expect(missingApis(s, without("security.istio.io/v1")), apiProfile).to.deep.equal([
                {
                    key: "mutualTls",
                    value: "true",
                    problem: "the cluster does not serve security.istio.io/v1 (PeerAuthentication)",
                    fix: "use Istio 1.22 or later, or pulumi config set mutualTls false",
                },
            ]);
        }
    });

    it("Istio's EnvoyFilter, Gateway and VirtualService versions always", () => {
        for (const over of [{}, { apiProfile: "seed" }, { managedApi: "false", mutualTls: "false" }] as Record<string, string>[]) {
            expect(versions(over).slice(0, 2)).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1"]);
        }
    });

    it("the Ingress version of the profile only with the managed API; PeerAuthentication only for current with mutual TLS", () => {
        // accessPolicies=false here: the policies' own versions are the next test's.
        const v = (over: Record<string, string>) => versions({ accessPolicies: "false", ...over });
        expect(v({})).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1", "networking.k8s.io/v1", "security.istio.io/v1"]);
        expect(v({ apiProfile: "seed" })).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1", "extensions/v1beta1"]);
        expect(v({ managedApi: "false" })).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1", "security.istio.io/v1"]);
        expect(v({ mutualTls: "false" })).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1", "networking.k8s.io/v1"]);
        expect(v({ apiProfile: "seed", managedApi: "false" })).to.deep.equal(["networking.istio.io/v1alpha3", "networking.istio.io/v1beta1"]);
    });

    it("access policies (on by default) need AuthorizationPolicy security.istio.io/v1 and NetworkPolicy networking.k8s.io/v1 in every profile", () => {
        expect(versions({ apiProfile: "seed", managedApi: "false" })).to.deep.equal([
            "networking.istio.io/v1alpha3",
            "networking.istio.io/v1beta1",
            "security.istio.io/v1",
            "networking.k8s.io/v1",
        ]);
        expect(versions({ apiProfile: "seed" })).to.deep.equal([
            "networking.istio.io/v1alpha3",
            "networking.istio.io/v1beta1",
            "extensions/v1beta1",
            "security.istio.io/v1",
            "networking.k8s.io/v1",
        ]);
        // A version needed twice is listed once, naming both kinds.
        const req = requiredApiVersions(resolveSettings({ ...DEV, ...MESH_WIDE }));
        expect(req.map((r) => r.apiVersion)).to.deep.equal([
            "networking.istio.io/v1alpha3",
            "networking.istio.io/v1beta1",
            "networking.k8s.io/v1",
            "security.istio.io/v1",
        ]);
        expect(req.find((r) => r.apiVersion === "security.istio.io/v1")!.what).to.equal("PeerAuthentication, AuthorizationPolicy");
        expect(req.find((r) => r.apiVersion === "networking.k8s.io/v1")!.what).to.equal("Ingress, NetworkPolicy");
    });

    it("a version missing only because of the access policies names accessPolicies and how to turn them off", () => {
        const seed = resolveSettings({ ...DEV, ...MESH_WIDE, apiProfile: "seed", managedApi: "false" });
        const problems = missingApis(seed, without("security.istio.io/v1", "networking.k8s.io/v1"));
        expect(problems.map((p) => [p.key, p.value, p.problem])).to.deep.equal([
            ["accessPolicies", "true", "the cluster does not serve security.istio.io/v1 (AuthorizationPolicy)"],
            ["accessPolicies", "true", "the cluster does not serve networking.k8s.io/v1 (NetworkPolicy)"],
        ]);
        expect(problems[0].fix)
            .to.match(/Istio 1\.22 or later/)
            .and.match(/pulumi config set accessPolicies false/);
        expect(problems[1].fix).to.match(/pulumi config set accessPolicies false/);
        // Seed with the managed API: Istio 1.22 needs Kubernetes 1.27, which no longer serves the seed Ingress, so only turning the policies off helps.
        const [seedAuthz] = missingApis(resolveSettings({ ...DEV, ...MESH_WIDE, apiProfile: "seed" }), without("security.istio.io/v1"));
        expect(seedAuthz.fix).to.equal("pulumi config set accessPolicies false   (no AuthorizationPolicy or NetworkPolicy is created)");
        expect(
            missingApis(
                resolveSettings({ ...DEV, ...MESH_WIDE, apiProfile: "seed", managedApi: "false", accessPolicies: "false" }),
                without("security.istio.io/v1", "networking.k8s.io/v1"),
            ),
        ).to.deep.equal([]);
    });

    it("a cluster serving everything: no problem for any profile", () => {
        for (const over of [{}, { apiProfile: "seed" }, { managedApi: "false" }] as Record<string, string>[]) {
            expect(missingApis(resolveSettings({ ...DEV, ...MESH_WIDE, ...over }), ALL_SERVED)).to.deep.equal([]);
        }
    });

    it("a missing Istio version names meshNamespace and its value, and says to install Istio", () => {
        const problems = missingApis(resolveSettings({ ...DEV, ...MESH_WIDE }), without("networking.istio.io/v1beta1", "security.istio.io/v1"));
        expect(problems).to.deep.equal([
            {
                key: "meshNamespace",
                value: "istio-system",
                problem: "the cluster does not serve networking.istio.io/v1beta1 (Gateway and VirtualService (Istio's CRDs))",
                fix: "install Istio (its CRDs) in the cluster first",
            },
            {
                key: "meshNamespace",
                value: "istio-system",
                problem: "the cluster does not serve security.istio.io/v1 (PeerAuthentication, AuthorizationPolicy)",
                // Both kinds' fixes: an Istio older than 1.22 has the CRDs but not this version.
                fix: "install Istio (its CRDs) in the cluster first; for the AuthorizationPolicy: use Istio 1.22 or later, or pulumi config set accessPolicies false   (no AuthorizationPolicy or NetworkPolicy is created)",
            },
        ]);
        const [envoyFilter] = missingApis(resolveSettings({ ...DEV, ...MESH_WIDE }), without("networking.istio.io/v1alpha3"));
        expect(envoyFilter.problem).to.equal("the cluster does not serve networking.istio.io/v1alpha3 (EnvoyFilter (Istio's CRDs))");
    });

    it("a missing Kubernetes version names apiProfile and its value", () => {
        expect(missingApis(resolveSettings({ ...DEV, ...MESH_WIDE }), without("networking.k8s.io/v1"))).to.deep.equal([
            {
                key: "apiProfile",
                value: "current",
                problem: "the cluster does not serve networking.k8s.io/v1 (Ingress, NetworkPolicy)",
                fix: "use a cluster that serves it, or change apiProfile; for the NetworkPolicy: use a cluster that serves it, or pulumi config set accessPolicies false   (no AuthorizationPolicy or NetworkPolicy is created)",
            },
        ]);
        const [seed] = missingApis(resolveSettings({ ...DEV, ...MESH_WIDE, apiProfile: "seed" }), without("extensions/v1beta1"));
        expect(seed.value).to.equal("seed");
        expect(seed.problem).to.equal("the cluster does not serve extensions/v1beta1, which the seed profile's Ingress uses (removed in Kubernetes 1.22)");
        expect(seed.fix).to.equal("pulumi config set apiProfile current   (networking.k8s.io/v1 Ingress), or pulumi config set managedApi false");
    });
});
