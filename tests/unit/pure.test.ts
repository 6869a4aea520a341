/** Pure helpers, without the Pulumi runtime. */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { effectiveLimits, formatLimits } from "../../mesh/limits-table";
import { getTopLevel, restoredText, setTopLevel } from "../../builders/mesh-config-text";
import { missingApis } from "../../program/served-apis";
import { compileFullMatch, isCidr, protoDurationSeconds } from "../../lib/formats";
import { resolveSettings } from "../../program/config-args";
import { parseArgs } from "../../render/cli";
import { pulumiYamlText } from "../../scripts/gen-pulumi-yaml";
import { DEV } from "./helpers";

const MESH = `# Istio mesh config
accessLogFile: /dev/stdout
defaultConfig:
  discoveryAddress: istiod.istio-system.svc:15012
# authPolicy: MUTUAL_TLS
rootNamespace: istio-system
`;

describe("mesh config text edits (seed profile's authPolicy)", () => {
    it("appends the line, keeping every other byte", () => {
        const out = setTopLevel(MESH, "authPolicy", "MUTUAL_TLS");
        expect(out).to.equal(`${MESH}authPolicy: MUTUAL_TLS\n`);
        expect(getTopLevel(out, "authPolicy")).to.equal("MUTUAL_TLS");
        // The commented-out line of the default config is not a setting.
        expect(getTopLevel(MESH, "authPolicy")).to.equal(undefined);
    });

    it("replaces an existing top-level value and ignores nested keys of the same name", () => {
        const text = "a: 1\nauthPolicy: NONE\nnested:\n  authPolicy: x\n";
        expect(setTopLevel(text, "authPolicy", "MUTUAL_TLS")).to.equal("a: 1\nauthPolicy: MUTUAL_TLS\nnested:\n  authPolicy: x\n");
    });

    it("text without a trailing newline and empty text", () => {
        expect(setTopLevel("a: 1", "authPolicy", "MUTUAL_TLS")).to.equal("a: 1\nauthPolicy: MUTUAL_TLS");
        expect(setTopLevel("", "authPolicy", "MUTUAL_TLS")).to.equal("authPolicy: MUTUAL_TLS\n");
    });

    it("restores the original byte for byte when nobody else changed it", () => {
        const applied = setTopLevel(MESH, "authPolicy", "MUTUAL_TLS");
        expect(restoredText(applied, applied, MESH, "authPolicy")).to.equal(MESH);
    });

    it("keeps others' later edits and puts back only its own line", () => {
        const original = "a: 1\nauthPolicy: NONE\n";
        const applied = setTopLevel(original, "authPolicy", "MUTUAL_TLS");
        const editedByOthers = applied + "b: 2\n";
        expect(restoredText(editedByOthers, applied, original, "authPolicy")).to.equal("a: 1\nauthPolicy: NONE\nb: 2\n");
        const noKeyOriginal = "a: 1\n";
        const applied2 = setTopLevel(noKeyOriginal, "authPolicy", "MUTUAL_TLS");
        expect(restoredText(applied2 + "c: 3\n", applied2, noKeyOriginal, "authPolicy")).to.equal("a: 1\nc: 3\n");
    });
});

describe("served-API check", () => {
    const served = new Set(["v1", "apps/v1", "networking.k8s.io/v1", "networking.istio.io/v1alpha3", "networking.istio.io/v1beta1", "security.istio.io/v1"]);
    it("current profile on a current cluster: nothing missing", () => {
        expect(missingApis(resolveSettings(DEV), served)).to.deep.equal([]);
    });
    it("seed profile on a 1.22+ cluster: a clear message naming apiProfile and the fix", () => {
        const [p, ...rest] = missingApis(resolveSettings({ ...DEV, apiProfile: "seed" }), served);
        expect(rest).to.deep.equal([]);
        expect(p.key).to.equal("apiProfile");
        expect(p.problem).to.contain("extensions/v1beta1");
        expect(p.fix).to.contain("pulumi config set apiProfile current");
    });
    it("no Istio CRDs: says to install Istio", () => {
        const problems = missingApis(resolveSettings(DEV), new Set(["v1", "apps/v1", "networking.k8s.io/v1"]));
        expect(problems.map((p) => p.problem).join("\n")).to.contain("networking.istio.io/v1alpha3");
        expect(problems[0].fix).to.contain("install Istio");
    });
});

describe("small validators", () => {
    it("CIDRs", () => {
        for (const ok of ["10.4.0.0/14", "0.0.0.0/0", "192.168.1.1/32", "fd00::/8"]) expect(isCidr(ok), ok).to.equal(true);
        for (const bad of ["10.4.0.0", "10.4.0.0/33", "256.1.1.1/8", "10.04.0.0/8", "pods/14", "10.4.0.0/14/1"]) expect(isCidr(bad), bad).to.equal(false);
    });
    it("protobuf durations", () => {
        expect(protoDurationSeconds("60s")).to.equal(60);
        expect(protoDurationSeconds("0.05s")).to.equal(0.05);
        for (const bad of ["60", "1m", "500ms", "s", "-1s"]) expect(protoDurationSeconds(bad), bad).to.equal(undefined);
    });
    it("the specification's literal regex form misses n = 10, 20 … 90 (why the default differs)", () => {
        const literal = compileFullMatch("/api/v1/products/[1-9]{1,2}");
        expect(literal.test("/api/v1/products/10")).to.equal(false);
        expect(literal.test("/api/v1/products/11")).to.equal(true);
    });
});

describe("limits table", () => {
    it("lists every descriptor and the local bucket of the variant", () => {
        const a = effectiveLimits(resolveSettings(DEV));
        expect(a.map((r) => r.limit)).to.deep.equal(["1/minute", "2/minute", "100/minute", "4/60s per pod"]);
        const b = effectiveLimits(resolveSettings({ ...DEV, variant: "B" }));
        expect(b.map((r) => r.limit)).to.deep.equal(["1/minute", "100/minute", "10/60s per pod"]);
        expect(formatLimits(b).split("\n")).to.have.length(2 + b.length);
    });
});

describe("render CLI arguments", () => {
    it("maps flags to config keys", () => {
        const { opts, out } = parseArgs([
            "--variant",
            "B",
            "--profile",
            "seed",
            "--local-placement",
            "single-route",
            "--port-mode",
            "tcp",
            "--set",
            "catchAllLimit=5",
            "--out",
            "x",
        ]);
        expect(out).to.equal("x");
        expect(opts.overrides).to.deep.equal({ variant: "B", apiProfile: "seed", localPlacement: "single-route", espPortMode: "tcp", catchAllLimit: "5" });
    });
    it("rejects unknown flags and missing values with the usage", () => {
        expect(() => parseArgs(["--variantt", "B"])).to.throw(/unknown argument '--variantt'[\s\S]*usage/);
        expect(() => parseArgs(["--variant"])).to.throw(/needs a value/);
        expect(() => parseArgs(["--set", "novalue"])).to.throw(/key=value/);
    });
});

describe("Pulumi.yaml", () => {
    it("declares every config key, in sync with program/config-keys.ts", () => {
        const file = fs.readFileSync(path.join(__dirname, "..", "..", "Pulumi.yaml"), "utf8");
        expect(file, "run `npm run gen`").to.equal(pulumiYamlText());
    });
});

describe("docs/configuration.md", () => {
    it("documents every config key (table in sync with program/config-keys.ts)", () => {
        const { readmeWithTable } = require("../../scripts/gen-config-docs") as typeof import("../../scripts/gen-config-docs");
        const readme = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "configuration.md"), "utf8");
        expect(readme, "run `npm run gen`").to.equal(readmeWithTable(readme));
        for (const k of require("../../program/config-keys").CONFIG_KEYS) expect(readme).to.contain(`| \`${k.key}\` |`);
    });
});
