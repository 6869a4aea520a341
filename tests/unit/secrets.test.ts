/**
 * Every secret value is secret in what the program registers, so it never reaches Pulumi state in
 * plain text.
 *
 * Pulumi's mock monitor ignores a resource's `additionalSecretOutputs` (the engine applies that
 * option, not the SDK), so a test that only looks at the mocked outputs cannot see it removed. This
 * file looks at the registration requests themselves: it records, for every resource, the option
 * list and the inputs as they go over the wire (secret values still wrapped), and it does what the
 * engine does with the option, i.e. marks the listed outputs secret in the answer. That makes a
 * value derived from such an output (the password in the Secret's `stringData`) arrive wrapped, as
 * in a real `pulumi up`.
 *
 * Note: @pulumi/kubernetes 4.25.0's `Secret` class already wraps `data`/`stringData` inputs in
 * `pulumi.secret` and adds the same `additionalSecretOutputs` itself, so removing the option from
 * components/service/redis.ts alone changes nothing that reaches state today. The program's own option is
 * what keeps the password secret under an SDK that does not do this; one test hides the SDK's
 * addition to check that the program declares it.
 */
import { expect } from "chai";
import * as structproto from "google-protobuf/google/protobuf/struct_pb";
import { PLANNING_MONITOR } from "../../components/common/ownership";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { registerProgram } from "../../render/render";
import { DEV, beforeAllTests } from "./helpers";

interface Seen {
    type: string;
    name: string;
    /** `additionalSecretOutputs` of the request. */
    secretOutputs: string[];
    /** Inputs in wire form: secret values are `{<sig key>: <secret sig>, value}`. */
    inputs: Record<string, unknown>;
    /** Outputs the (mock) engine answered, in wire form. */
    outputs: Record<string, unknown>;
}

const isWrappedSecret = (v: unknown): v is { value: unknown } =>
    typeof v === "object" && v !== null && (v as Record<string, unknown>)[specialSigKey] === specialSecretSig;

/**
 * The value at `path` and whether it is secret: the SDK wraps the innermost Output it serializes,
 * so a secret may sit on the value itself or on any object above it.
 */
function at(obj: unknown, path: string[]): { secret: boolean; value: unknown } {
    let secret = false;
    let v: unknown = obj;
    for (const key of ["", ...path]) {
        if (key !== "") v = (v as Record<string, unknown> | undefined)?.[key];
        if (isWrappedSecret(v)) {
            secret = true;
            v = v.value;
        }
    }
    return { secret, value: v };
}

/** Every string in `v` that is not inside a secret wrapper, with its path. */
function plainStrings(v: unknown, path = ""): { path: string; value: string }[] {
    if (isWrappedSecret(v)) return [];
    if (typeof v === "string") return [{ path, value: v }];
    if (Array.isArray(v)) return v.flatMap((x, i) => plainStrings(x, `${path}[${i}]`));
    if (v && typeof v === "object") return Object.entries(v).flatMap(([k, x]) => plainStrings(x, path ? `${path}.${k}` : k));
    return [];
}

/**
 * @pulumi/kubernetes 4.25.0's `Secret` class adds `additionalSecretOutputs: ["data", "stringData"]`
 * itself (through `pulumi.mergeOptions`). Within `run` that addition is dropped, as
 * with an SDK that does not make it, so what is left is what the program itself declares.
 */
function hidingSdkSecretDefault<T>(run: () => Promise<T>): Promise<T> {
    // The SDK class calls `pulumi.mergeOptions` on the package's index object (a plain, writable property).
    const index = require("@pulumi/pulumi") as { mergeOptions: (a: any, b: any) => any };
    const merge = index.mergeOptions;
    index.mergeOptions = (a: any, b: any) =>
        b && Object.keys(b).join() === "additionalSecretOutputs" && b.additionalSecretOutputs.join() === "data,stringData" ? merge(a, {}) : merge(a, b);
    return run().finally(() => {
        index.mergeOptions = merge;
    });
}

/** Runs the program under the mocks while recording every registration request. */
async function registrations(overrides: Record<string, string>, hideSdkSecretDefault = false): Promise<Seen[]> {
    const seen: Seen[] = [];
    const proto = MockMonitor.prototype as any;
    const original = proto.registerResource;
    proto.registerResource = function (req: any, callback: (err: any, resp: any) => void) {
        // The ownership check's construction against its own in-memory monitor (components/common/ownership.ts
        // plannedObjects) reaches no engine: only the program's own registrations are recorded.
        if (this[PLANNING_MONITOR]) return original.call(this, req, callback);
        const entry: Seen = {
            type: req.getType(),
            name: req.getName(),
            secretOutputs: req.getAdditionalsecretoutputsList(),
            inputs: (req.getObject()?.toJavaScript() ?? {}) as Record<string, unknown>,
            outputs: {},
        };
        seen.push(entry);
        return original.call(this, req, (err: any, resp: any) => {
            if (resp) {
                const out = (resp.getObject()?.toJavaScript() ?? {}) as Record<string, any>;
                for (const k of entry.secretOutputs) {
                    if (k in out && !isWrappedSecret(out[k])) out[k] = { [specialSigKey]: specialSecretSig, value: out[k] };
                }
                resp.setObject(structproto.Struct.fromJavaScript(out));
                entry.outputs = out;
            }
            callback(err, resp);
        });
    };
    try {
        const run = () => registerProgram({ base: DEV, overrides });
        await (hideSdkSecretDefault ? hidingSdkSecretDefault(run) : run());
    } finally {
        proto.registerResource = original;
    }
    return seen;
}

describe("secret values stay secret (what the program registers)", function () {
    this.timeout(120_000);

    for (const [label, overrides] of [
        ["variant A, current", { variant: "A", apiProfile: "current" }],
        ["variant B, seed", { variant: "B", apiProfile: "seed" }],
    ] as const) {
        describe(label, () => {
            let seen: Seen[];
            let password: string;
            beforeAllTests(async () => {
                seen = await registrations(overrides);
                const pw = seen.filter((s) => s.type === "random:index/randomPassword:RandomPassword");
                // One per deployed Redis: the fixed counters' (first) and the per-path counters'.
                expect(pw, "one RandomPassword per Redis").to.have.length(2);
                const result = pw[0].outputs.result;
                expect(isWrappedSecret(result), "the password's result is answered as a secret").to.equal(true);
                password = (result as { value: string }).value;
                expect(password).to.be.a("string").with.length.greaterThan(8);
            });

            it("the Redis password is a RandomPassword whose result (and hash) are secret outputs", () => {
                // A RandomString, or a RandomPassword with its secret outputs dropped, would store the
                // password in plain text.
                const [pw] = seen.filter((s) => s.type === "random:index/randomPassword:RandomPassword");
                expect(pw.secretOutputs).to.include.members(["result", "bcryptHash"]);
            });

            it("Secret redis-auth: data and stringData are additionalSecretOutputs, the password input is secret", () => {
                const secrets = seen.filter((s) => s.type === "kubernetes:core/v1:Secret");
                const auth = secrets.find((s) => (s.inputs.metadata as any)?.name === "redis-auth");
                expect(auth, "Secret redis-auth registered").to.not.equal(undefined);
                expect(auth!.secretOutputs).to.include.members(["data", "stringData"]);
                const { secret, value } = at(auth!.inputs, ["stringData", "password"]);
                expect(value).to.equal(password);
                expect(secret, "stringData.password goes over the wire as a secret").to.equal(true);
            });

            it("the program itself declares the Secret's data and stringData secret (not only the SDK's Secret class)", async () => {
                const hidden = await registrations(overrides, true);
                const all = hidden.filter((s) => s.type === "kubernetes:core/v1:Secret");
                expect(all.length).to.be.greaterThan(0);
                for (const s of all) expect(s.secretOutputs, `Secret ${s.name}`).to.include.members(["data", "stringData"]);
            });

            it("every Kubernetes Secret the program registers marks data and stringData secret", () => {
                const secrets = seen.filter((s) => s.type === "kubernetes:core/v1:Secret");
                expect(secrets.length).to.be.greaterThan(0);
                for (const s of secrets) expect(s.secretOutputs, `Secret ${s.name}`).to.include.members(["data", "stringData"]);
            });

            it("the password appears in no registered input or output except inside a secret wrapper", () => {
                const leaks = seen.flatMap((s) =>
                    [...plainStrings(s.inputs, "inputs"), ...plainStrings(s.outputs, "outputs")]
                        .filter((x) => x.value.includes(password))
                        .map((x) => `${s.type} ${s.name}: ${x.path}`),
                );
                expect(leaks).to.deep.equal([]);
                // The check above would pass vacuously if the walk saw nothing: it does see the
                // wrapped copy in the Secret.
                const wrapped = seen.filter((s) => JSON.stringify(s.inputs).includes(password));
                expect(wrapped.map((s) => s.type)).to.include("kubernetes:core/v1:Secret");
            });
        });
    }
});
