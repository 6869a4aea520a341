/**
 * The versions the package states it supports (package.json `mesh-ratelimit.supported`, its
 * peerDependencies and the README) equal what the tiers prove: the consumer tier installs the two
 * ends of each SDK (tests/consumer/packed.ts reads them from that field), the e2e tier runs the
 * pinned CLI and providers (scripts/lib/common.sh), the istio tier runs Istio's generator at the
 * versions program/istio-range.ts names (tests/istio/xdscheck and tests/istio/versions).
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { PROVEN_ISTIO } from "../../program/istio-range";

const ROOT = path.join(__dirname, "..", "..");
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");
const pkg = JSON.parse(read("package.json"));
interface Supported {
    sdks: Record<string, { oldest: string; newest: string }>;
    engine: { pulumiCli: string; kubernetesProvider: string; randomProvider: string };
    istio: { releases: string[]; development: string[] };
}
const supported: Supported = pkg["mesh-ratelimit"].supported;

/** A pinned tool version of scripts/lib/common.sh (`NAME=${NAME:-v1.2.3}`), without its `v`. */
function commonPin(name: string): string {
    const m = new RegExp(`^${name}=\\$\\{${name}:-v?([^}]+)\\}$`, "m").exec(read("scripts/lib/common.sh"));
    if (!m) throw new Error(`no ${name} pin in scripts/lib/common.sh`);
    return m[1];
}

const parts = (v: string) => v.split(".").map(Number);
function compare(a: string, b: string): number {
    const [x, y] = [parts(a), parts(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
}
/** Whether `version` is in a peer range of the form `>=X.Y.Z <M` (the only form the package uses). */
function inRange(range: string, version: string): boolean {
    const m = /^>=(\d+\.\d+\.\d+) <(\d+)$/.exec(range);
    if (!m) throw new Error(`peer range ${range} is not of the form >=X.Y.Z <M`);
    return compare(version, m[1]) >= 0 && parts(version)[0] < Number(m[2]);
}

/** The supported versions a README text does not state: each SDK's ends, the engine pins, the Istio releases. */
function readmeMissing(readme: string, s: Supported): string[] {
    const text = readme.replace(/\s+/g, " ");
    const wanted = [
        ...Object.entries(s.sdks).map(([n, v]) => `\`${n}\` ${v.oldest} to ${v.newest}`),
        `Pulumi CLI ${s.engine.pulumiCli}`,
        `kubernetes provider ${s.engine.kubernetesProvider}`,
        ...s.istio.releases.map((r) => `Istio ${r}`),
        ...s.istio.development.map((d) => `${d} development builds`),
    ];
    return wanted.filter((w) => !text.includes(w));
}

describe("supported versions: what package.json and the README state is what the tiers prove", () => {
    it("each SDK is a peer dependency whose range holds both proven ends; the oldest is the dev pin the other tiers run", () => {
        expect(Object.keys(pkg.peerDependencies).sort()).to.deep.equal(Object.keys(supported.sdks).sort());
        for (const [name, { oldest, newest }] of Object.entries(supported.sdks)) {
            expect(inRange(pkg.peerDependencies[name], oldest), `${name} ${oldest}`).to.equal(true);
            expect(inRange(pkg.peerDependencies[name], newest), `${name} ${newest}`).to.equal(true);
            expect(compare(oldest, newest), name).to.be.at.most(0);
            expect(pkg.devDependencies[name], name).to.equal(oldest);
            expect(pkg.dependencies[name], `${name} is not a dependency of its own`).to.equal(undefined);
            // The range starts at the proven oldest: nothing older is claimed.
            expect(pkg.peerDependencies[name].startsWith(`>=${oldest} `), name).to.equal(true);
        }
    });

    it("negative control: a version outside a range is refused by the range check", () => {
        expect(inRange(">=3.248.0 <4", "3.247.9")).to.equal(false);
        expect(inRange(">=3.248.0 <4", "4.0.0")).to.equal(false);
        expect(inRange(">=3.248.0 <4", "3.276.0")).to.equal(true);
    });

    it("the engine versions are the e2e tier's pins, and the SDKs' oldest ends match the providers the e2e tier runs", () => {
        expect(supported.engine).to.deep.equal({
            pulumiCli: commonPin("PULUMI_VERSION"),
            kubernetesProvider: commonPin("PULUMI_K8S_VERSION"),
            randomProvider: commonPin("PULUMI_RANDOM_VERSION"),
        });
        expect(supported.sdks["@pulumi/pulumi"].oldest).to.equal(supported.engine.pulumiCli);
        expect(supported.sdks["@pulumi/kubernetes"].oldest).to.equal(supported.engine.kubernetesProvider);
        expect(supported.sdks["@pulumi/random"].oldest).to.equal(supported.engine.randomProvider);
    });

    it("the Istio versions are the istio tier's: the proven minors by kind, each build's commit the generator the tier compiles", () => {
        const minors = (kind: string) => PROVEN_ISTIO.filter((p) => p.kind === kind).map((p) => p.minor);
        expect(supported.istio).to.deep.equal({ releases: minors("release"), development: minors("development") });
        const goMods = [
            read("tests/istio/xdscheck/go.mod"),
            ...fs.readdirSync(path.join(ROOT, "tests/istio/versions")).map((d) => read(`tests/istio/versions/${d}/go.mod`)),
        ];
        const built = goMods.map((m) => /^\s*istio\.io\/istio v\S+-([0-9a-f]{12})$/m.exec(m)?.[1]);
        const named = PROVEN_ISTIO.flatMap((p) => [...p.builds.matchAll(/\b[0-9a-f]{12}\b/g)].map((m) => m[0]));
        expect(named.length).to.be.greaterThan(0);
        expect(named.sort()).to.deep.equal(built.sort());
    });

    it("the README states every supported version; negative control: a stale one is named", () => {
        expect(readmeMissing(read("README.md"), supported)).to.deep.equal([]);
        const stale = { ...supported, sdks: { ...supported.sdks, "@pulumi/pulumi": { oldest: "3.248.0", newest: "3.999.0" } } };
        expect(readmeMissing(read("README.md"), stale)).to.deep.equal(["`@pulumi/pulumi` 3.248.0 to 3.999.0"]);
    });
});
