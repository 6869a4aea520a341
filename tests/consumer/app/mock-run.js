// Runs a program (or only imports the package) under Pulumi's mocks, in the consumer's own
// node_modules, and prints one JSON line: every registration, every child process started, and
// which @pulumi/pulumi the package resolved. Usage: node mock-run.js <program.js | --import-only>
"use strict";
const cp = require("child_process");
const spawned = [];
for (const f of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
    const orig = cp[f];
    cp[f] = function (...args) {
        spawned.push(`${f} ${String(args[0])}`);
        return orig.apply(this, args);
    };
}
const pulumi = require("@pulumi/pulumi");
const registrations = [];
// MOCK_PREVIEW=1: a preview, where outputs of resources not yet created are unknown.
const preview = process.env.MOCK_PREVIEW === "1";
// How a mock says "not known yet" (the value Pulumi's RPC layer uses for an unknown).
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
pulumi.runtime.setMocks(
    {
        newResource: (a) => {
            registrations.push({ type: a.type, name: a.name, custom: a.custom, provider: a.provider ?? null, inputs: a.inputs });
            // What the cluster assigns a Service once it exists: not known at preview.
            // What the cluster and the provider assign once an object exists (unknown at preview): a
            // Service's address, the name of an object given none (Pulumi's auto-naming).
            const assigned = {};
            if (a.type === "kubernetes:core/v1:Service") assigned.spec = { ...a.inputs.spec, clusterIP: preview ? UNKNOWN : "10.96.0.42" };
            if (a.custom && a.inputs.metadata && !a.inputs.metadata.name)
                assigned.metadata = { ...a.inputs.metadata, name: preview ? UNKNOWN : `${a.name}-5f3a2c1b` };
            return { id: `${a.name}-id`, state: { ...a.inputs, ...assigned } };
        },
        call: (a) => a.inputs,
    },
    "consumer",
    "test",
    preview,
);
const target = process.argv[2];
let error = null;
// How the package's refusal arrives: Pulumi's InputPropertiesError (one entry per property), or not.
let inputProperties = null;
try {
    if (target === "--import-only") {
        // Config a stack program would choke on: the package must not read it.
        pulumi.runtime.setAllConfig({ "mesh-ratelimit:variant": "not-a-variant", "consumer:anything": "x" });
        require("mesh-ratelimit");
    } else {
        // The e2e tier's shop program reads its Redis password from its own stack config.
        pulumi.runtime.setAllConfig({ "consumer:redisPassword": "mock-password" }, ["consumer:redisPassword"]);
        require(require("path").resolve(target));
    }
} catch (e) {
    refused(e);
}
// A refusal raised once an output is known arrives later, as Pulumi's run harness would see it.
process.on("unhandledRejection", refused);
function refused(e) {
    if (error !== null) return;
    error = String((e && e.message) || e);
    inputProperties = pulumi.InputPropertiesError.isInstance(e) ? e.errors.map((x) => x.propertyPath) : null;
}
setTimeout(() => {
    const pkgPulumi = require.resolve("@pulumi/pulumi", { paths: [require("path").dirname(require.resolve("mesh-ratelimit"))] });
    process.stdout.write(
        JSON.stringify({
            error,
            inputProperties,
            spawned,
            registrations,
            samePulumi: pkgPulumi === require.resolve("@pulumi/pulumi"),
            entry: require.resolve("mesh-ratelimit"),
        }) + "\n",
    );
}, 1500);
