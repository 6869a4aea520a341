/**
 * Consumer tier: the Pulumi SDKs are the user's. The packed package is installed into a user's
 * program on the oldest and on the newest version of each SDK that package.json's
 * `mesh-ratelimit.supported.sdks` states (the ends of its peerDependencies ranges the tier proves);
 * npm must hold one copy of each SDK, the package must load the program's own, and the TypeScript and
 * JavaScript consumers must type-check and run under mocks to the same resources on both. Negative
 * control: the same package with the SDKs as exact dependencies (how it was shipped before) gets a
 * second copy of each SDK nested under it.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { MockRun, SdkEnd, SUPPORTED_SDKS, TSC, copiesOf, installProgram, mockRun, mustRun, packedTarball, programOn, run, sdksAt, workDir } from "./packed";

/** Where `name` resolves from inside the installed package, relative to the program. */
function resolvedFromPackage(app: string, name: string): string {
    const probe = `process.stdout.write(require.resolve(${JSON.stringify(`${name}/package.json`)}, { paths: [require("path").dirname(require.resolve("mesh-ratelimit"))] }))`;
    return path.relative(app, mustRun(process.execPath, ["-e", probe], app));
}

/** The package's tarball with the SDKs as exact dependencies at `pins` and no peerDependencies. */
function repackedWithPinnedSdks(tgz: string, pins: Record<string, string>): string {
    const dir = path.join(workDir(), "pinned");
    fs.mkdirSync(dir);
    mustRun("tar", ["-xzf", tgz, "-C", dir], dir);
    const pkgFile = path.join(dir, "package", "package.json");
    const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
    delete pkg.peerDependencies;
    pkg.dependencies = { ...pkg.dependencies, ...pins };
    fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2));
    const packed = JSON.parse(mustRun("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], path.join(dir, "package")));
    return path.join(dir, packed[0].filename);
}

const resourceKeys = (r: MockRun) => r.registrations.map((x) => `${x.type}::${x.name}`).sort();

describe("consumer: one copy of each Pulumi SDK, on the oldest and the newest versions the package supports", function () {
    this.timeout(600_000);
    const ends: SdkEnd[] = ["oldest", "newest"];
    const runs: Partial<Record<SdkEnd, { ts: MockRun; js: MockRun }>> = {};

    it("package.json declares every SDK it states as supported as a peer, with a range holding both ends, and does not depend on one itself", () => {
        const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
        expect(Object.keys(pkg.peerDependencies).sort()).to.deep.equal(Object.keys(SUPPORTED_SDKS).sort());
        for (const name of Object.keys(SUPPORTED_SDKS)) expect(pkg.dependencies, name).to.not.have.property(name);
        expect(Object.keys(SUPPORTED_SDKS)).to.include.members(["@pulumi/pulumi", "@pulumi/kubernetes"]);
    });

    for (const end of ends)
        describe(`on the ${end} SDKs`, () => {
            let app: string;
            before(() => {
                app = programOn(end);
            });

            it("npm lists one copy of each SDK, the program's own at that version, and no missing or invalid peer", () => {
                for (const [name, version] of Object.entries(sdksAt(end)))
                    expect(copiesOf(app, name), name).to.deep.equal([{ dir: path.join("node_modules", name), version }]);
                const ls = run("npm", ["ls"], app);
                expect(ls.code, ls.out).to.equal(0);
            });

            it("the package loads the program's own SDKs", () => {
                for (const name of Object.keys(SUPPORTED_SDKS))
                    expect(resolvedFromPackage(app, name), name).to.equal(path.join("node_modules", name, "package.json"));
            });

            it("the TypeScript consumer type-checks; it and the JavaScript consumer run under mocks, in the program's @pulumi/pulumi", () => {
                mustRun(process.execPath, [TSC, "-p", "tsconfig.json"], app);
                const ts = mockRun(app, path.join("out", "shop.js"));
                const js = mockRun(app, "shop.js");
                for (const r of [ts, js]) {
                    expect(r.error).to.equal(null);
                    expect(r.samePulumi).to.equal(true);
                    expect(r.spawned).to.deep.equal([]);
                }
                expect(ts.registrations.length).to.be.greaterThan(20);
                runs[end] = { ts, js };
            });
        });

    describe("both ends", () => {
        it("register the same resources with the same Kubernetes objects", function () {
            if (!runs.oldest || !runs.newest) this.skip();
            const objects = (r: MockRun) =>
                r.registrations
                    .filter((x) => x.custom && x.type.startsWith("kubernetes:") && !x.type.startsWith("pulumi:providers:"))
                    .map((x) => JSON.stringify([x.type, x.name, x.inputs]))
                    .sort();
            for (const kind of ["ts", "js"] as const) {
                expect(resourceKeys(runs.newest![kind]), kind).to.deep.equal(resourceKeys(runs.oldest![kind]));
                expect(objects(runs.newest![kind]), kind).to.deep.equal(objects(runs.oldest![kind]));
            }
        });
    });

    it("negative control: with the SDKs as exact dependencies, a program on the newest SDKs gets a second copy of each, nested under the package", () => {
        const app = installProgram("app-pinned", repackedWithPinnedSdks(packedTarball(), sdksAt("oldest")), sdksAt("newest"));
        for (const [name, version] of Object.entries(sdksAt("newest"))) {
            const copies = copiesOf(app, name);
            const nested = { dir: path.join("node_modules", "mesh-ratelimit", "node_modules", name), version: sdksAt("oldest")[name] };
            // An SDK whose two ends are one version has nothing to nest.
            if (version === nested.version) continue;
            expect(copies, name).to.deep.include.members([{ dir: path.join("node_modules", name), version }, nested]);
            expect(resolvedFromPackage(app, name), name).to.equal(path.join(nested.dir, "package.json"));
        }
        expect(mockRun(app, "--import-only").samePulumi).to.equal(false);
    });
});
