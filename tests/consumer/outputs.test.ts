/**
 * Consumer tier: outputs of the user's own resources as GlobalRateLimit's arguments, on the oldest
 * and newest SDKs the package supports. tests/consumer/app/managed-redis.ts creates a Service that
 * stands in for a managed Redis (its address is known once it exists), a Secret named by Pulumi for
 * the password, and passes them and an image output to the component. Under mocks (app/mock-run.js
 * assigns the address and the name once the objects exist, and leaves them unknown at preview):
 * preview lists every resource `up` registers; `up` puts the values where they belong; a value the
 * checks refuse is refused once known, as an InputPropertiesError with its property path; an output
 * where a plain value is needed is refused at once. Negative control: the component built inside an
 * apply (what a user had to do before) is missing from preview.
 */
import { expect } from "chai";
import * as fs from "fs";
import * as path from "path";
import { MockRun, SdkEnd, TSC, mockRun, mustRun, programOn } from "./packed";

const keys = (r: MockRun) => r.registrations.map((x) => `${x.type}::${x.name}`).sort();
const kinds = (r: MockRun) => r.registrations.filter((x) => x.custom).map((x) => x.inputs?.kind ?? x.type);
const container = (r: MockRun) => r.registrations.find((x) => x.inputs?.kind === "Deployment")?.inputs.spec.template.spec.containers[0];

for (const end of ["oldest", "newest"] as SdkEnd[])
    describe(`consumer: outputs of the user's resources as arguments (a managed Redis, its password Secret, an image), on the ${end} SDKs`, function () {
        this.timeout(600_000);
        let app: string;
        const run = (env: Record<string, string> = {}) => mockRun(app, path.join("out-outputs", "managed-redis.js"), env);
        let up: MockRun;
        before(() => {
            app = programOn(end);
            fs.writeFileSync(
                path.join(app, "tsconfig.outputs.json"),
                JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { outDir: "out-outputs" }, files: ["managed-redis.ts"] }),
            );
            mustRun(process.execPath, [TSC, "-p", "tsconfig.outputs.json"], app);
            up = run();
        });

        it("up: the service's Deployment gets the managed Redis's address, the Secret's assigned name and the image; redisUrl is the address", () => {
            expect(up.error).to.equal(null);
            const c = container(up);
            const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
            expect(env.REDIS_URL).to.equal("10.96.0.42:6379");
            expect(env.REDIS_AUTH).to.deep.equal({ secretKeyRef: { name: "orders-cache-auth-5f3a2c1b", key: "password" } });
            expect(c.image).to.equal("registry.example/ratelimit:from-another-stack");
            expect(JSON.stringify(up.registrations)).to.not.include("mesh-ratelimit-deferred-");
            // No Redis is deployed for an existing one.
            expect(kinds(up).filter((k) => k === "Deployment")).to.have.length(1);
        });

        it("preview, with the address and the Secret's name unknown, lists every resource up registers", () => {
            const preview = run({ MOCK_PREVIEW: "1" });
            expect(preview.error).to.equal(null);
            expect(keys(preview)).to.deep.equal(keys(up));
            expect(kinds(preview)).to.include.members(["Deployment", "ConfigMap", "EnvoyFilter", "Service", "Secret"]);
            expect(JSON.stringify(preview.registrations)).to.not.include("mesh-ratelimit-deferred-");
        });

        it("negative control: built inside an apply of the address, the component is missing from preview", () => {
            const preview = run({ MOCK_PREVIEW: "1", INSIDE_APPLY: "1" });
            expect(preview.error).to.equal(null);
            expect(kinds(preview)).to.not.include.members(["Deployment", "EnvoyFilter"]);
            expect(keys(preview).length).to.be.lessThan(keys(up).length);
        });

        it("an address the checks refuse is refused once known, as Pulumi's input error with its property path; the service is not created", () => {
            const bad = run({ BAD_ADDRESS: "1" });
            expect(bad.error).to.include("GlobalRateLimit shop-limits: invalid arguments");
            expect(bad.error).to.include('redis.addresses = ["10.96.0.42"]: has address(es) that are not host:port');
            expect(bad.error).to.include('fix: set redis.addresses to ["10.96.0.42:6379"]');
            expect(bad.inputProperties).to.deep.equal(["redis.addresses"]);
            expect(kinds(bad)).to.not.include("Deployment");
        });

        it("an output where a plain value is needed (the namespace) is refused at once, naming the field and the reason; nothing of the component is registered", () => {
            const r = run({ OUTPUT_NAMESPACE: "1" });
            expect(r.error).to.include("namespace = ").and.include("must be a plain value: it decides which objects the component creates");
            expect(r.inputProperties).to.deep.equal(["namespace"]);
            expect(r.registrations.filter((x) => x.type.startsWith("mesh-ratelimit:") || x.inputs?.kind === "Deployment")).to.deep.equal([]);
        });
    });
