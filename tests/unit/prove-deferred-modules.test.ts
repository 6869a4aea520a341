/**
 * Pulumi's closure serialization (the TypeScript compiler and @npmcli/arborist) is loaded by the
 * compiled command only when a program uses it (prove/deferred-modules.ts). Each case has its
 * control: plain Pulumi loads both modules; a program serializing a function gets the real compiler.
 * The memory this saves is a figure (docs/proof/benchmarks.md), never asserted here.
 */
import { strict as assert } from "assert";
import { spawnSync } from "child_process";
import * as path from "path";
import { deferredModule, isDeferred } from "../../prove/deferred-modules";
import { buildCompiledCli, COMPILED_CLI, ROOT } from "./compiled-cli";

const RUNNER = path.join(path.dirname(COMPILED_CLI), "program-runner.js");

/** Runs `script` in a fresh Node process at the checkout's root; its last stdout line parsed as JSON. */
function probe(script: string): { ts: boolean; arborist: boolean; objects?: number; before?: boolean; serialized?: string } {
    const r = spawnSync(process.execPath, ["-e", script], { cwd: ROOT, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

const LOADED = `const ks = () => Object.keys(require.cache);
const loaded = () => ({ ts: ks().some((k) => k.includes("node_modules/typescript/")), arborist: ks().some((k) => k.includes("node_modules/@npmcli/arborist/")) });`;

describe("prove: Pulumi's closure serialization deferred until used", function () {
    this.timeout(300_000);
    before(() => buildCompiledCli());

    it("a program rendered by the compiled runner loads neither the TypeScript compiler nor arborist", () => {
        const got = probe(`${LOADED}
require(${JSON.stringify(RUNNER)}).renderProgram("examples/login-limit").then((p) => console.log(JSON.stringify({ ...loaded(), objects: p.objects.length })));`);
        assert.ok(got.objects! > 0, "the program rendered its objects");
        assert.deepEqual({ ts: got.ts, arborist: got.arborist }, { ts: false, arborist: false });
    });

    it("control: @pulumi/pulumi required plainly loads both (the check above can see them)", () => {
        const got = probe(`${LOADED}
require("@pulumi/pulumi"); console.log(JSON.stringify(loaded()));`);
        assert.deepEqual(got, { ts: true, arborist: true });
    });

    it("a program that serializes a function after the render gets the real compiler, loaded then", () => {
        const got = probe(`${LOADED}
require(${JSON.stringify(RUNNER)}).renderProgram("examples/login-limit").then(async () => {
    const before = loaded().ts;
    const limit = 7;
    const s = await require("@pulumi/pulumi").runtime.serializeFunction(() => limit * 2);
    console.log(JSON.stringify({ ...loaded(), before, serialized: s.text }));
});`);
        assert.equal(got.before, false, "the compiler was not loaded before the serialization");
        assert.equal(got.ts, true, "the compiler was loaded on use");
        // The function's text and its captured variable: what Pulumi's closure serialization writes.
        assert.match(got.serialized!, /return \(\) => limit \* 2;/);
        assert.match(got.serialized!, /with\(\{ limit: 7,/);
    });

    it("a stand-in loads its module on the first read, once, and answers `in` and __esModule", () => {
        let loads = 0;
        const m = deferredModule(() => (loads++, { SyntaxKind: { A: 1 }, f: () => 2 })) as Record<string, any>;
        assert.equal(loads, 0, "nothing loaded before a read (the control of the reads below)");
        assert.equal(m.__esModule, true);
        assert.equal(loads, 0, "__esModule is answered without loading");
        assert.equal(m.SyntaxKind.A, 1);
        assert.equal(m.f(), 2);
        assert.ok("f" in m);
        assert.ok(!("g" in m));
        assert.equal(loads, 1);
    });

    it("only Pulumi's own requests of the two modules are deferred", () => {
        const pulumiFile = path.join(ROOT, "node_modules", "@pulumi", "pulumi", "runtime", "closure", "parseFunction.js");
        assert.equal(isDeferred("../../typescript-shim", pulumiFile), true);
        assert.equal(isDeferred("@npmcli/arborist", path.join(ROOT, "node_modules", "@pulumi", "pulumi", "runtime", "closure", "codePaths.js")), true);
        // Controls: a user's own require of the compiler, and another module Pulumi requires, are loaded as asked.
        assert.equal(isDeferred("typescript", path.join(ROOT, "examples", "login-limit", "index.ts")), false);
        assert.equal(isDeferred("../../typescript-shim", path.join(ROOT, "examples", "x.js")), false);
        assert.equal(isDeferred("@grpc/grpc-js", pulumiFile), false);
        assert.equal(isDeferred("typescript-shim", undefined), false);
    });
});
