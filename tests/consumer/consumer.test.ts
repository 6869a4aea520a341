/**
 * Consumer tier: the package as a user gets it. Builds the compiled package (npm run build), packs
 * the tarball, installs it into an empty temporary program with npm on the oldest Pulumi SDKs the
 * package supports (tests/consumer/packed.ts; the newest: sdk-range.test.ts), type-checks a TypeScript
 * consumer against the installed .d.ts files and runs it and a plain JavaScript consumer under
 * Pulumi's mocks in the consumer's own node_modules (tests/consumer/app/mock-run.js).
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { MockRun, ROOT, TSC, mockRun, mustRun, packedTarball, programOn, run, workDir } from "./packed";

describe("consumer: the packed package installed into a user's empty program (the oldest SDKs the package supports)", function () {
    this.timeout(600_000);
    let work: string;
    let app: string;
    let tarFiles: string[];
    let packedCode: string;
    let packedPkg: any;
    const mock = (target: string, env: Record<string, string> = {}): MockRun => mockRun(app, target, env);

    before(() => {
        work = workDir();
        const tgz = packedTarball();
        tarFiles = mustRun("tar", ["-tzf", tgz], work)
            .split("\n")
            .filter(Boolean)
            .map((f) => f.replace(/^package\//, ""));
        packedPkg = JSON.parse(mustRun("tar", ["-xzOf", tgz, "package/package.json"], work));
        // Every compiled file's text, as shipped.
        packedCode = mustRun("tar", ["-xzOf", tgz, "--wildcards", "package/dist/*"], work);
        app = programOn("oldest");
    });

    it("the tarball holds the compiled package and its types, and no tests, scripts, stack config or program", () => {
        expect(tarFiles).to.include.members([
            "package.json",
            "README.md",
            "CHANGELOG.md",
            "dist/index.js",
            "dist/index.d.ts",
            "dist/components/global-ratelimit/component.js",
        ]);
        const stray = tarFiles.filter(
            (f) => /^(tests|scripts|plugin|render|gateway-model|cluster|program)\//.test(f) || /^Pulumi\..*ya?ml$/.test(f) || f === "main.ts",
        );
        expect(stray).to.deep.equal([]);
        expect(tarFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).to.deep.equal([]);
        // Compiled code only from the package's folders: nothing of the program (program/, cluster/, render/, main).
        const compiled = tarFiles.filter((f) => f.startsWith("dist/"));
        expect(
            compiled.filter(
                (f) => !/^dist\/(index\.(js|d\.ts)|(lib|builders|mesh|gateway-model|prove)\/[^/]+\.(js|d\.ts)|components\/[a-z-]+\/[^/]+\.(js|d\.ts))$/.test(f),
            ),
        ).to.deep.equal([]);
        expect(compiled.filter((f) => f.startsWith("dist/mesh/")).length).to.be.greaterThan(0);
        expect(packedPkg.main).to.equal("dist/index.js");
        expect(packedPkg.exports["."]).to.deep.equal({ types: "./dist/index.d.ts", default: "./dist/index.js" });
        expect(packedPkg.version).to.match(/^\d+\.\d+\.\d+$/);
    });

    it("the package speaks its arguments, not stack config: no `pulumi config` command and no config key table in its code", () => {
        expect(packedCode.length).to.be.greaterThan(100_000);
        expect(packedCode).to.include("'s args");
        expect(packedCode.match(/pulumi config (set|rm)/g) ?? []).to.deep.equal([]);
        // Negative control: the program, which is not shipped, holds that wording.
        expect(fs.readFileSync(path.join(ROOT, "program", "config-problems.ts"), "utf8")).to.match(/pulumi config set/);
    });

    it("importing it by name registers nothing, reads no stack config and starts no process", () => {
        const r = mock("--import-only");
        expect(r.error).to.equal(null);
        expect(r.entry).to.match(/node_modules\/mesh-ratelimit\/dist\/index\.js$/);
        expect(r.registrations).to.deep.equal([]);
        expect(r.spawned).to.deep.equal([]);
    });

    it("a TypeScript consumer type-checks against the installed .d.ts files; a wrong argument type does not", () => {
        const tsc = TSC;
        mustRun(process.execPath, [tsc, "-p", "tsconfig.json"], app);
        fs.writeFileSync(
            path.join(app, "bad.ts"),
            'import { GlobalRateLimit } from "mesh-ratelimit";\nnew GlobalRateLimit("x", { domain: "d", gateway: { selector: { a: "b" }, virtualHosts: ["h:80"] }, rules: [{ name: "r", requestsPerUnit: "5", unit: "minute" }] });\n',
        );
        fs.writeFileSync(
            path.join(app, "tsconfig.bad.json"),
            JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { noEmit: true }, files: ["bad.ts"] }),
        );
        const bad = run(process.execPath, [tsc, "-p", "tsconfig.bad.json"], app);
        expect(bad.code).to.not.equal(0);
        expect(bad.out).to.match(/bad\.ts.*error TS2322: Type 'string' is not assignable to type 'number'/);
    });

    it("the e2e tier's consumer program (tests/e2e/consumer) type-checks against the tarball and runs under mocks", () => {
        const tsc = TSC;
        const e2e = path.join(ROOT, "tests", "e2e", "consumer");
        fs.copyFileSync(path.join(e2e, "index.ts"), path.join(app, "e2e-shop.ts"));
        const own = JSON.parse(fs.readFileSync(path.join(e2e, "tsconfig.json"), "utf8"));
        fs.writeFileSync(
            path.join(app, "tsconfig.e2e.json"),
            JSON.stringify({ ...own, compilerOptions: { ...own.compilerOptions, outDir: "out-e2e" }, files: ["e2e-shop.ts"] }),
        );
        mustRun(process.execPath, [tsc, "-p", "tsconfig.e2e.json"], app);
        const r = mock(path.join("out-e2e", "e2e-shop.js"));
        expect(r.error).to.equal(null);
        expect(r.spawned).to.deep.equal([]);
        const filters = r.registrations.filter((x) => x.inputs?.kind === "EnvoyFilter").map((x) => x.inputs.metadata.name);
        expect(filters).to.include.members(["shop-ratelimit", "shop-ratelimit-svc", "orders-bucket"]);
    });

    it("the plugin folder of a fresh copy, after npm install there alone (what a git-URL plugin install runs), loads as Pulumi's plugin runner loads it", () => {
        // A copy of the tracked files, without the repository's node_modules.
        const copy = path.join(work, "repo");
        const files = mustRun("git", ["ls-files"], ROOT).split("\n").filter(Boolean);
        for (const f of files) {
            if (!fs.existsSync(path.join(ROOT, f))) continue;
            fs.mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
            fs.copyFileSync(path.join(ROOT, f), path.join(copy, f));
        }
        const plugin = path.join(copy, "plugin");
        // --ignore-scripts keeps @pulumi/kubernetes from fetching its provider binary; the plugin's own
        // install script is then run as npm would run it.
        mustRun("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], plugin);
        expect(fs.existsSync(path.join(copy, "node_modules"))).to.equal(false);
        mustRun("npm", ["run", "-s", "postinstall"], plugin);
        expect(fs.lstatSync(path.join(copy, "node_modules")).isSymbolicLink()).to.equal(true);
        // Run again: an existing ../node_modules is left alone.
        mustRun("npm", ["run", "-s", "postinstall"], plugin);
        // The file Node loads for the folder must be the one package.json's main names: when main
        // points at a missing file, Node falls back to the folder's index file and the require works.
        const probe = [
            "const { getPulumiComponents } = require('@pulumi/pulumi/provider/experimental/provider');",
            `const entry = require(${JSON.stringify(plugin)});`,
            `const loaded = require.resolve(${JSON.stringify(plugin)});`,
            "process.stdout.write(JSON.stringify({ loaded, names: getPulumiComponents(entry).map((c) => c.name).sort() }));",
        ].join("\n");
        const tsx = path.join(ROOT, "node_modules", "tsx", "dist", "cjs", "index.cjs");
        const { loaded, names } = JSON.parse(mustRun(process.execPath, ["-r", tsx, "-e", probe], plugin));
        const main = JSON.parse(fs.readFileSync(path.join(plugin, "package.json"), "utf8")).main;
        expect(loaded, "the plugin's entry is the file package.json main names").to.equal(path.resolve(plugin, main));
        expect(names).to.deep.equal(["Bookinfo", "GlobalRateLimit", "LocalRateLimit", "ManagedApi", "MeshMutualTls", "MeshRateLimit", "PlatformRateLimit"]);
    });

    describe("the TypeScript consumer under mocks: two gateways, two GlobalRateLimits, a LocalRateLimit, an explicit provider", () => {
        let r: MockRun;
        before(() => {
            r = mock(path.join("out", "shop.js"));
        });
        const filters = () => r.registrations.filter((x) => x.inputs?.kind === "EnvoyFilter");

        it("runs without error, in the consumer's own @pulumi/pulumi, and starts no process", () => {
            expect(r.error).to.equal(null);
            expect(r.samePulumi).to.equal(true);
            expect(r.spawned).to.deep.equal([]);
            expect(r.registrations.length).to.be.greaterThan(20);
        });

        it("no two resources share a type and name (so no duplicate URN)", () => {
            const seen = r.registrations.map((x) => `${x.type}::${x.name}`);
            expect(seen.filter((k, i) => seen.indexOf(k) !== i)).to.deep.equal([]);
        });

        it("every Kubernetes object goes through the provider passed in opts", () => {
            const k8sObjects = r.registrations.filter((x) => x.custom && x.type.startsWith("kubernetes:"));
            expect(k8sObjects.length).to.be.greaterThan(15);
            const other = k8sObjects.filter((x) => !(x.provider ?? "").includes("::pulumi:providers:kubernetes::shop-cluster::"));
            expect(other.map((x) => `${x.type} ${x.name} -> ${x.provider}`)).to.deep.equal([]);
        });

        it("each gateway's filters select its own gateway pods and call its own rate-limit service, on its own virtual host", () => {
            // The EnvoyFilter that inserts the rate-limit HTTP filter (its per-route configs name the filter too).
            const http = filters().filter((f) =>
                f.inputs.spec.configPatches.some(
                    (p: any) => p.applyTo === "HTTP_FILTER" && String(p.patch?.value?.name ?? "").startsWith("envoy.filters.http.ratelimit"),
                ),
            );
            const byNs = Object.fromEntries(http.map((f) => [f.inputs.metadata.namespace, f.inputs.spec]));
            expect(Object.keys(byNs).sort()).to.deep.equal(["istio-system", "partners"]);
            expect(byNs["istio-system"].workloadSelector.labels).to.deep.equal({ istio: "ingressgateway" });
            expect(byNs["partners"].workloadSelector.labels).to.deep.equal({ istio: "partner-gateway" });
            const text = (ns: string) => JSON.stringify(byNs[ns]);
            expect(text("istio-system")).to.match(/outbound\|8081\|\|[a-z-]+\.shop\.svc\.cluster\.local/);
            expect(text("istio-system")).to.not.include(".partners.svc");
            expect(text("partners")).to.match(/outbound\|8081\|\|[a-z-]+\.partners\.svc\.cluster\.local/);
            const vhosts = (ns: string) =>
                filters()
                    .filter((f) => f.inputs.metadata.namespace === ns)
                    .flatMap((f) => f.inputs.spec.configPatches.map((p: any) => p.match?.routeConfiguration?.vhost?.name))
                    .filter(Boolean);
            expect([...new Set(vhosts("istio-system"))]).to.deep.equal(["shop.example:8080"]);
            expect([...new Set(vhosts("partners"))]).to.deep.equal(["api.partner.example:8443"]);
        });

        it("each service gets its own domain's config: shop's login and checkout, the partners' per-key limit", () => {
            const configs = r.registrations.filter((x) => x.inputs?.kind === "ConfigMap" && x.inputs?.data?.["config.yaml"]);
            // Per namespace every config.yaml the services there load (with per-value rules, the
            // per-value counters' service has its own: counterStore split, the default).
            const byNs: Record<string, string> = {};
            for (const c of configs) byNs[c.inputs.metadata.namespace] = `${byNs[c.inputs.metadata.namespace] ?? ""}${c.inputs.data["config.yaml"]}\n`;
            expect(byNs.shop).to.match(/^domain: shop$/m);
            expect(byNs.shop).to.include("requests_per_unit: 5").and.include("requests_per_unit: 50");
            expect(byNs.partners).to.match(/^domain: partners$/m);
            expect(byNs.partners).to.include("requests_per_unit: 100");
            expect(byNs.partners).to.not.include("requests_per_unit: 50");
        });

        it("the local bucket: 20 tokens a second on the orders workload's port 8080, in namespace shop", () => {
            const local = filters().filter((f) => JSON.stringify(f.inputs.spec).includes("local_ratelimit") && f.inputs.metadata.namespace === "shop");
            expect(local).to.have.length(1);
            const spec = local[0].inputs.spec;
            expect(spec.workloadSelector.labels).to.deep.equal({ app: "orders" });
            const text = JSON.stringify(spec);
            expect(text).to.include('"max_tokens":20').and.include('"tokens_per_fill":20').and.include('"fill_interval":"1s"');
            expect(text).to.include('"portNumber":8080');
        });
    });

    describe("docs/using-the-package.md, run as written: its Pulumi.yaml and index.ts copied from the page", () => {
        let r: MockRun;
        let files: Record<string, string>;
        before(() => {
            const page = fs.readFileSync(path.join(ROOT, "docs", "using-the-package.md"), "utf8");
            files = Object.fromEntries([...page.matchAll(/<!-- file: (\S+) -->\n```\w+\n([\s\S]*?)\n```\n/g)].map((m) => [m[1], `${m[2]}\n`]));
            const dir = path.join(app, "doc");
            fs.mkdirSync(dir, { recursive: true });
            for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
            fs.writeFileSync(
                path.join(app, "tsconfig.doc.json"),
                JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { outDir: "out-doc", rootDir: "doc" }, files: ["doc/index.ts"] }),
            );
            mustRun(process.execPath, [TSC, "-p", "tsconfig.doc.json"], app);
            r = mock(path.join("out-doc", "index.js"));
        });

        it("the page holds a Pulumi.yaml for a Node.js program and its index.ts", () => {
            expect(Object.keys(files).sort()).to.deep.equal(["Pulumi.yaml", "index.ts"]);
            expect(files["Pulumi.yaml"])
                .to.match(/^name: \S+$/m)
                .and.match(/^runtime: nodejs$/m);
        });

        it("runs under mocks without error or process, every Kubernetes object through the provider it creates", () => {
            expect(r.error).to.equal(null);
            expect(r.spawned).to.deep.equal([]);
            const k8sObjects = r.registrations.filter((x) => x.custom && x.type.startsWith("kubernetes:"));
            expect(k8sObjects.length).to.be.greaterThan(15);
            expect(k8sObjects.filter((x) => !(x.provider ?? "").includes("::pulumi:providers:kubernetes::shop-cluster::")).map((x) => x.name)).to.deep.equal(
                [],
            );
        });

        it("every new field reaches Envoy: methods, query, a hidden rule, the headers, the policy, the local bucket's shadow", () => {
            const text = JSON.stringify(r.registrations.filter((x) => x.inputs?.kind === "EnvoyFilter").map((x) => x.inputs.spec));
            expect(text).to.include("(?i:POST|DELETE)");
            expect(text).to.include("(?:t|T|%74|%54)");
            expect(text).to.include('"x_ratelimit_option":"OFF"');
            expect(text).to.include('"enable_x_ratelimit_headers":"DRAFT_VERSION_03"');
            expect(text).to.include('"key":"ratelimit-policy"').and.include('\\"order-writes\\";q=30;w=60').and.not.include('flood-guard\\";q');
            // The local bucket's shadow: enforced 0 % (every other percentage the program renders is 100).
            expect(text.match(/"numerator":0\b/g) ?? []).to.have.length(1);
        });

        it("the per-user rule's identity: one RequestAuthentication of the issuer, the counter keyed by the verified claim, no header any client can send", () => {
            const kinds = r.registrations.filter((x) => x.inputs?.apiVersion === "security.istio.io/v1").map((x) => [x.inputs.kind, x.inputs.metadata.name]);
            expect(kinds).to.deep.equal([["RequestAuthentication", "shop-ratelimit-identity"]]);
            const ra = r.registrations.find((x) => x.inputs?.kind === "RequestAuthentication")!;
            expect(ra.inputs.spec.jwtRules).to.deep.equal([
                { issuer: "https://auth.shop.example.com", jwksUri: "https://auth.shop.example.com/.well-known/jwks.json" },
            ]);
            expect(JSON.stringify(ra.inputs.spec)).to.not.include("outputClaimToHeaders");
            const filters = JSON.stringify(r.registrations.filter((x) => x.inputs?.kind === "EnvoyFilter").map((x) => x.inputs.spec));
            // The claim comes from the JWT filter's dynamic metadata (payload -> sub), never from a request header.
            expect(filters).to.match(/"metadata_key":\{"key":"envoy.filters.http.jwt_authn","path":\[\{"key":"payload"\},\{"key":"sub"\}\]\}/);
            expect(filters).to.not.include('"header_name":"x-user"');
            const config = r.registrations
                .filter((x) => x.inputs?.data?.["config.yaml"])
                .map((x) => x.inputs.data["config.yaml"])
                .join("\n");
            expect(config).to.match(/value: per-user/);
        });
    });

    describe("the JavaScript consumer under mocks: two teams' gateways in a loop", () => {
        let r: MockRun;
        before(() => {
            r = mock("shop.js");
        });

        it("runs, with no duplicate resource, every object through its provider, no process", () => {
            expect(r.error).to.equal(null);
            const seen = r.registrations.map((x) => `${x.type}::${x.name}`);
            expect(seen.filter((k, i) => seen.indexOf(k) !== i)).to.deep.equal([]);
            const k8sObjects = r.registrations.filter((x) => x.custom && x.type.startsWith("kubernetes:"));
            expect(k8sObjects.filter((x) => !(x.provider ?? "").includes("::js-cluster::"))).to.deep.equal([]);
            expect(r.spawned).to.deep.equal([]);
        });

        it("two domains, each in its own namespace", () => {
            const configs = r.registrations.filter((x) => x.inputs?.kind === "ConfigMap" && x.inputs?.data?.["config.yaml"]);
            expect(configs.map((c) => [c.inputs.metadata.namespace, /^domain: (\S+)$/m.exec(c.inputs.data["config.yaml"])?.[1]]).sort()).to.deep.equal([
                ["blue", "blue"],
                ["green", "green"],
            ]);
        });
    });

    describe("plain JavaScript mistakes (no type checker): each refused at construction with the field, the value and the fix", () => {
        // [mistake, the field and value the message names, the fix it gives]
        const cases: [string, string, string][] = [
            ["rule-field-misspelt", 'rules[0].paths = {"exact":"/login"}: is not a field of RateLimitRuleArgs', "fix: rename paths to path"],
            ["argument-misspelt", "failureModeDenny = false: is not an argument of GlobalRateLimit", "fix: rename failureModeDenny to failureModeDeny"],
            ["local-argument-misspelt", "bucketSize = 20: is not an argument of LocalRateLimit", "fix: rename bucketSize to bucket"],
            [
                "limit-over-uint32",
                "rules[0].requestsPerUnit = 5000000000: is more than the rate-limit service can count",
                "fix: set rules[0].requestsPerUnit to 4294967295, or the same rate in a shorter unit",
            ],
            ["limit-not-a-number", "rules[0].requestsPerUnit = NaN: must be a whole number", "fix: set rules[0].requestsPerUnit to 100"],
            ["path-not-as-sent", 'rules[0].path.exact = "/café": cannot match as written', 'fix: use "/caf%C3%A9"'],
            ["dashboard-over-1mib", "monitoring.dashboard = true: with 1000 limits, makes the dashboard ConfigMap", "fix: set monitoring.dashboard to false"],
            ["login-route-dropped", 'paths.login = "/productpage": equals paths.page', 'fix: set paths.login: "/login" in MeshRateLimit\'s args'],
            [
                "mesh-limit-over-uint32",
                "limits.catchAll = 1000000000000: is more than the rate-limit service can count",
                "fix: set limits.catchAll: 4294967295 in MeshRateLimit's args, or the same rate in a shorter unit",
            ],
            ["mesh-service-option", "global.service.replicas = 0: must be between 1 and 100", "fix: set global.service.replicas: 1 in MeshRateLimit's args"],
            [
                "mesh-flat-argument",
                "catchAllLimit = 5: is not an argument of MeshRateLimit",
                "fix: remove catchAllLimit; the fields are variant, apiProfile, meshMode, awaitRollout, paths, limits",
            ],
        ];
        for (const [mistake, names, fix] of cases)
            it(mistake, () => {
                const r = mock("mistakes.js", { MISTAKE: mistake });
                expect(r.error, "refused").to.be.a("string");
                expect(r.error).to.include("invalid arguments").and.include("nothing was created");
                expect(r.error).to.include(names);
                expect(r.error).to.include(fix);
                // A Python, YAML or Go user gets the same refusal per property: Pulumi's InputPropertiesError.
                expect(r.inputProperties, "an InputPropertiesError").to.be.an("array");
                expect(r.inputProperties).to.include(names.slice(0, names.indexOf(" = ")));
                expect(r.registrations, "nothing registered").to.deep.equal([]);
            });
        it("negative control: the same refusal re-thrown as a RunError has the text but no property path", () => {
            const r = mock("mistakes.js", { MISTAKE: "as-run-error" });
            expect(r.error).to.include("global.service.replicas = 0: must be between 1 and 100");
            expect(r.inputProperties).to.equal(null);
        });
        it("each property path of a refusal with several problems", () => {
            const r = mock("mistakes.js", { MISTAKE: "mesh-two-problems" });
            expect(r.inputProperties).to.deep.equal(["limits.catchAll", "global.service.replicas"]);
        });
    });
});
