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
pulumi.runtime.setMocks(
    {
        newResource: (a) => {
            registrations.push({ type: a.type, name: a.name, custom: a.custom, provider: a.provider ?? null, inputs: a.inputs });
            return { id: `${a.name}-id`, state: a.inputs };
        },
        call: (a) => a.inputs,
    },
    "consumer",
    "test",
    false,
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
