/**
 * render/args.ts `--config <file>`: a stack config file read as the program would read its
 * config, for a configuration too large for the command line (2,000 descriptors do not fit in
 * one `--set`: the shell refuses the argument list).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { UsageError, configFileOverrides, parseCli } from "../../render/args";

const ROOT = path.join(__dirname, "..", "..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-config-file-"));
const file = (name: string, doc: unknown) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, typeof doc === "string" ? doc : stringify(doc));
    return f;
};
const usageOf = (fn: () => unknown) => {
    try {
        fn();
    } catch (e) {
        expect(e).to.be.instanceOf(UsageError);
        return (e as Error).message.split("\n")[0];
    }
    throw new Error("accepted");
};

describe("render --config <file>: a stack config file (render/args.ts)", function () {
    this.timeout(120_000);
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("reads the dev stack's own file as the program reads its config", () => {
        expect(configFileOverrides(path.join(ROOT, "Pulumi.dev.yaml"), "u")).to.deep.equal({
            variant: "A",
            apiProfile: "current",
            includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
            espServiceName: "echo-api.endpoints.example-project.cloud.goog",
        });
    });

    it("structured values: a list of a comma-separated key joined, a list of objects as JSON, a number and a boolean as text", () => {
        const f = file("structured.yaml", {
            config: {
                "mesh-ratelimit:gatewayHosts": ["a.example", "b.example"],
                "mesh-ratelimit:descriptors": [{ key: "PATH", unit: "minute", requestsPerUnit: 7 }],
                "mesh-ratelimit:catchAllLimit": 50,
                preLimit: false,
            },
        });
        expect(configFileOverrides(f, "u")).to.deep.equal({
            gatewayHosts: "a.example,b.example",
            descriptors: '[{"key":"PATH","unit":"minute","requestsPerUnit":7}]',
            catchAllLimit: "50",
            preLimit: "false",
        });
    });

    it("refuses a secret (not readable offline), another project's key, a file without config, and YAML it cannot parse", () => {
        expect(usageOf(() => configFileOverrides(file("s.yaml", { config: { "mesh-ratelimit:redisPassword": { secure: "AAAB" } } }), "u"))).to.include(
            "mesh-ratelimit:redisPassword is a secret, which the offline render cannot decrypt: give a stand-in with --set redisPassword=...",
        );
        expect(usageOf(() => configFileOverrides(file("o.yaml", { config: { "shop:variant": "A" } }), "u"))).to.include(
            "shop:variant is another project's key",
        );
        expect(usageOf(() => configFileOverrides(file("n.yaml", { variant: "A" }), "u"))).to.include("not a stack config file");
        expect(usageOf(() => configFileOverrides(file("b.yaml", "config: [unclosed"), "u"))).to.match(/^--config .*b\.yaml: /);
    });

    it("flags apply in the order typed: a --set after --config wins, one before it loses", () => {
        const f = file("order.yaml", { config: { "mesh-ratelimit:catchAllLimit": 50 } });
        expect(parseCli(["--config", f, "--set", "catchAllLimit=60"], { usage: "u" }).overrides.catchAllLimit).to.equal("60");
        expect(parseCli(["--set", "catchAllLimit=60", "--config", f], { usage: "u" }).overrides.catchAllLimit).to.equal("50");
    });

    it("2,000 descriptors, too many for one --set, render from a file (the dashboard refused first, with its fix)", () => {
        const descriptors = Array.from({ length: 2000 }, (_, i) => ({ key: "PATH", value: `/p/${i}`, unit: "minute", requestsPerUnit: 5 }));
        const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
        const render = (cfg: Record<string, unknown>, out: string) =>
            spawnSync(tsx, [path.join(ROOT, "render", "cli.ts"), "--config", file(`${out}.yaml`, { config: cfg }), "--out", path.join(dir, out)], {
                cwd: ROOT,
                encoding: "utf8",
            });
        const refused = render({ "mesh-ratelimit:descriptors": descriptors }, "big");
        expect(refused.status).to.equal(2);
        expect(refused.stderr).to.include("mesh-ratelimit:monitoringDashboard");
        expect(refused.stderr).to.include("fix: --set monitoringDashboard=false");
        const ok = render({ "mesh-ratelimit:descriptors": descriptors, "mesh-ratelimit:monitoringDashboard": false }, "big-ok");
        expect(ok.status, ok.stderr).to.equal(0);
        const config = fs.readFileSync(path.join(dir, "big-ok", "configmap_default_ratelimit-config.yaml"), "utf8");
        expect(config).to.include("value: /p/1999");
    });
});
