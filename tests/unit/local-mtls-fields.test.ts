/**
 * LocalRateLimit's and MeshMutualTls's fields declared once (components/local-ratelimit/fields.ts,
 * components/mesh-mtls/fields.ts): the argument interfaces are generated from them, each declared
 * default meets its own rule and is what the resolve fills in (controls: a changed declaration
 * changes the generated text and the resolved value), the stack's local keys are the declarations',
 * and MeshMutualTls's checks refuse what they refused, with the same texts.
 */
import { expect } from "chai";
import * as fs from "fs";
import { DEFAULTS } from "../../components/common/defaults";
import { LocalRateLimitArgs, localBucketOptionsProblems, resolveLocalRateLimit } from "../../components/local-ratelimit/component";
import { LOCAL_ARGS_FIELDS, LOCAL_ARG_INTERFACES, LOCAL_BUCKET_FIELDS } from "../../components/local-ratelimit/fields";
import { MeshMutualTlsArgs, resolveMeshMutualTls } from "../../components/mesh-mtls/component";
import { MTLS_ARG_INTERFACES, MTLS_FIELDS } from "../../components/mesh-mtls/fields";
import { FieldDecl, givenProblems } from "../../lib/field-decl";
import { MESH_DEFAULTS } from "../../mesh/mesh-defaults";
import { CONFIG_KEYS, configDefault, declarationOf } from "../../program/config-keys";
import { LOCAL_OUT, MTLS_OUT, generated, generatedText } from "../../scripts/gen-arg-types";

const L = (change: Record<string, unknown> = {}): LocalRateLimitArgs =>
    ({ selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop", ...change }) as LocalRateLimitArgs;

/** Runs `body` with `d`'s default set to `value`, then puts it back. */
function withDefault<T>(d: { default: T }, value: T, body: () => void): void {
    const before = d.default;
    try {
        d.default = value;
        body();
    } finally {
        d.default = before;
    }
}

describe("LocalRateLimit's and MeshMutualTls's fields: one declaration each", () => {
    it("components/local-ratelimit/args.generated.ts and mesh-mtls-args.generated.ts are generated from the declarations; control: a changed default makes them stale", () => {
        expect(generated().map(([out]) => out)).to.include.members([LOCAL_OUT, MTLS_OUT]);
        expect(fs.readFileSync(LOCAL_OUT, "utf8"), "run npm run gen").to.equal(generatedText(LOCAL_OUT));
        expect(fs.readFileSync(MTLS_OUT, "utf8"), "run npm run gen").to.equal(generatedText(MTLS_OUT));
        expect(generatedText(MTLS_OUT)).to.include('Defaults to `{ "app.kubernetes.io/part-of": "mesh-ratelimit" }`.');
        withDefault(LOCAL_BUCKET_FIELDS.fillInterval, "30s", () => {
            expect(generatedText(LOCAL_OUT)).to.not.equal(fs.readFileSync(LOCAL_OUT, "utf8"));
            expect(generatedText(LOCAL_OUT)).to.include("at least `0.05s`. Defaults to `30s`. */");
        });
        withDefault(MTLS_FIELDS.meshNamespace, "mesh-root", () => expect(generatedText(MTLS_OUT)).to.include("Defaults to `mesh-root`."));
    });

    it("every declared default meets its own rule; control: a wrong value breaks it", () => {
        const all = [...LOCAL_ARG_INTERFACES, ...MTLS_ARG_INTERFACES].flatMap((i) =>
            Object.entries(i.fields).flatMap(([k, d]) => ("rule" in d ? [[`${i.name}.${k}`, d] as [string, FieldDecl<unknown>]] : [])),
        );
        // The fields with a default are found (not a count: a new defaulted field joins them).
        expect(all.filter(([, d]) => d.default !== undefined).map(([path]) => path)).to.include.members([
            "LocalRateLimitArgs.rootNamespace",
            "LocalBucketOptions.fillInterval",
            "LocalBucketOptions.shadow",
        ]);
        for (const [path, d] of all) if (d.default !== undefined) expect(givenProblems(d, path, d.default), path).to.deep.equal([]);
        expect(givenProblems(LOCAL_BUCKET_FIELDS.fillInterval, "fillInterval", "1m")[0]!.fix).to.equal('set fillInterval to "60s"');
        expect(givenProblems(MTLS_FIELDS.selector, "selector", {})[0]!.problem).to.equal("must name at least one pod label");
    });

    it("LocalRateLimit's resolve fills in the declared defaults; control: a changed declaration changes what it fills", () => {
        const b = resolveLocalRateLimit("orders-bucket", L()).value!.bucket;
        expect([b.fillInterval, b.behaviour.rateLimitHeaders, b.behaviour.shadow]).to.deep.equal([
            LOCAL_BUCKET_FIELDS.fillInterval.default,
            LOCAL_BUCKET_FIELDS.rateLimitHeaders.default,
            LOCAL_BUCKET_FIELDS.shadow.default,
        ]);
        withDefault(LOCAL_BUCKET_FIELDS.fillInterval, "30s", () => {
            expect(resolveLocalRateLimit("b", L()).value!.bucket.fillInterval).to.equal("30s");
            expect(resolveLocalRateLimit("b", L({ fillInterval: "5s" })).value!.bucket.fillInterval).to.equal("5s");
        });
        // The root namespace is the declared one: a workload there is refused unless reachAllNamespaces.
        expect(resolveLocalRateLimit("b", L({ namespace: LOCAL_ARGS_FIELDS.rootNamespace.default })).problems.map((p) => p.key)).to.deep.equal(["namespace"]);
        withDefault(LOCAL_ARGS_FIELDS.rootNamespace, "mesh-root", () => {
            expect(resolveLocalRateLimit("b", L({ namespace: "istio-system" })).problems).to.deep.equal([]);
            expect(resolveLocalRateLimit("b", L({ namespace: "mesh-root" })).problems.map((p) => p.key)).to.deep.equal(["namespace"]);
        });
        withDefault(LOCAL_ARGS_FIELDS.filterLayout, "shared", () =>
            expect(resolveLocalRateLimit("b", L()).value!.bucket.httpFilterName).to.equal("envoy.filters.http.local_ratelimit"),
        );
        // Ambient: the waypoint's name and the cluster domain are the declared defaults.
        const amb = { meshMode: "ambient" as const, service: "orders", port: 8080, bucket: 5, namespace: "shop" };
        expect(resolveLocalRateLimit("b", amb).value!.bucket.waypoint).to.deep.equal({ name: "waypoint", host: "orders.shop.svc.cluster.local" });
        withDefault(LOCAL_ARGS_FIELDS.waypoint, "shop-wp", () =>
            withDefault(LOCAL_ARGS_FIELDS.clusterDomain, "corp.example", () =>
                expect(resolveLocalRateLimit("b", amb).value!.bucket.waypoint).to.deep.equal({ name: "shop-wp", host: "orders.shop.svc.corp.example" }),
            ),
        );
        // A null interval is taken as not given, as before.
        expect(resolveLocalRateLimit("b", L({ fillInterval: null })).value!.bucket.fillInterval).to.equal("60s");
        expect(localBucketOptionsProblems({ fillInterval: "0.01s", shadow: "yes" as unknown as boolean }).map((p) => [p.key, p.fix])).to.deep.equal([
            ["fillInterval", 'set fillInterval to "0.05s"'],
            ["shadow", "set shadow to true"],
        ]);
    });

    it("MeshRateLimit's `local` and the stack's local keys take the bucket options' declarations: name, kind, default and description", () => {
        expect(MESH_DEFAULTS.local.fillInterval).to.equal(LOCAL_BUCKET_FIELDS.fillInterval.default);
        expect(Object.keys(DEFAULTS)).to.not.include("localFillInterval");
        // Every bucket option the stack sets (those with a stack key; these three at least) is read through its declaration.
        const withKeys = Object.entries(LOCAL_BUCKET_FIELDS).filter(([, d]) => "stackKey" in d && d.stackKey !== undefined);
        expect(withKeys.map(([name]) => name)).to.include.members(["fillInterval", "rateLimitHeaders", "shadow"]);
        for (const [name, d] of withKeys) {
            const key = CONFIG_KEYS.find((k) => k.key === d.stackKey)!;
            expect(key.field, name).to.deep.equal(["local", name]);
            expect(declarationOf(key.field)).to.equal(d);
            expect(configDefault(d.stackKey!)).to.equal(String(d.default));
        }
        const headers = CONFIG_KEYS.find((k) => k.key === "localRateLimitHeaders")!;
        expect(headers.description)
            .to.include("`draft-03`: every response")
            .and.match(/Not in the specification\.$/);
        expect(headers.description).to.not.include("RateLimitHeaders.");
        expect(CONFIG_KEYS.find((k) => k.key === "localFillInterval")!.description).to.equal(LOCAL_BUCKET_FIELDS.fillInterval.doc);
        expect(fs.readFileSync(require.resolve("../../program/config-keys"), "utf8")).to.not.match(/key: "local(FillInterval|RateLimitHeaders|Shadow)"/);
    });

    it("MeshMutualTls's resolve fills in the declared defaults; control: a changed declaration changes what it fills", () => {
        const v = resolveMeshMutualTls({ namespaces: ["shop", "shop"] }).value!;
        const d = MTLS_FIELDS;
        expect(v).to.deep.equal({
            scope: d.scope.default,
            namespaces: ["shop"],
            selector: d.selector.default,
            apiProfile: d.apiProfile.default,
            meshNamespace: d.meshNamespace.default,
            createPeerAuthentication: d.createPeerAuthentication.default,
            keepPeerAuthenticationOnDestroy: d.keepPeerAuthenticationOnDestroy.default,
        });
        expect(Object.isFrozen(v.selector)).to.equal(true);
        withDefault(d.meshNamespace, "mesh-root", () => expect(resolveMeshMutualTls({ scope: "mesh" }).value!.meshNamespace).to.equal("mesh-root"));
        withDefault(d.scope, "mesh", () => expect(resolveMeshMutualTls({}).value!.namespaces).to.deep.equal([]));
    });

    it("MeshMutualTls refuses what it refused, with the same texts (namespaces and selector only with scope workloads)", () => {
        const problems = (a: unknown) => resolveMeshMutualTls(a as MeshMutualTlsArgs).problems.map(({ fixWith: _f, problemWith: _p, ...p }) => p);
        expect(problems({ scope: "cluster" })).to.deep.equal([
            { key: "scope", value: "cluster", problem: "must be workloads or mesh", fix: "use MutualTlsScope.Workloads" },
        ]);
        expect(problems({ scope: "mesh", apiProfile: "old", selector: {} })).to.deep.equal([
            { key: "apiProfile", value: "old", problem: "must be current or seed", fix: "use ApiProfileName.Current" },
        ]);
        expect(problems({ meshNamespace: "Istio_System", namespaces: ["shop", "Shop"], selector: {} })).to.deep.equal([
            {
                key: "meshNamespace",
                value: "Istio_System",
                problem: "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')",
                fix: 'use "istio-system"',
            },
            { key: "namespaces[1]", value: "Shop", problem: "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')", fix: 'use "shop"' },
            { key: "selector", value: {}, problem: "must name at least one pod label", fix: 'give e.g. { istio: "ingressgateway" }' },
        ]);
        // null is taken as not given: the default scope, which needs namespaces.
        expect(problems({ scope: null, namespaces: [] })).to.deep.equal([
            { key: "namespaces", value: [], problem: "must list the namespaces of the pods (scope workloads)", fix: 'give e.g. ["shop"]' },
        ]);
    });
});
