/**
 * Consumer tier, `mesh-ratelimit explain` and `replay` as a user gets them: a fresh folder installs
 * the packed package, holds a TypeScript program (POST /login at 5 a minute per client, through
 * GlobalRateLimit on a gateway it does not declare) and a JavaScript one with the same rule in
 * shadow mode (the rule off: counted, never refused), and runs the installed command with `npx`.
 * The replayed log is generated here and its refusals computed by an independent oracle
 * (tests/unit/prove-login-log.ts).
 */
import { expect } from "chai";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { expectedLoginRefusals, loginLog } from "../unit/prove-login-log";

const ROOT = path.join(__dirname, "..", "..");
const rootPkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

function run(cmd: string, args: string[], cwd: string) {
    const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 256 << 20 });
    return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}
function mustRun(cmd: string, args: string[], cwd: string): string {
    const r = run(cmd, args, cwd);
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.code}:\n${(r.stdout + r.stderr).slice(-4000)}`);
    return r.stdout;
}

const RULE = `{ name: "login", path: { exact: "/login" }, methods: ["POST"], perClientAddress: true, requestsPerUnit: 5, unit: LimitUnit.Minute SHADOW }`;
const GATEWAY = `{ selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["shop.example.com:8080"] }`;

describe("consumer: npx mesh-ratelimit explain and replay on a user's own programs", function () {
    this.timeout(600_000);
    let work: string;
    let app: string;
    const cli = (...args: string[]) => run("npx", ["--no-install", "mesh-ratelimit", ...args], app);

    before(() => {
        work = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-explain-"));
        mustRun("npm", ["run", "-s", "build"], ROOT);
        const packed = JSON.parse(mustRun("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], ROOT));
        app = path.join(work, "app");
        fs.mkdirSync(path.join(app, "shop"), { recursive: true });
        fs.mkdirSync(path.join(app, "shop-off"), { recursive: true });
        fs.writeFileSync(
            path.join(app, "package.json"),
            JSON.stringify({
                name: "shop-infra",
                private: true,
                dependencies: { "mesh-ratelimit": `file:${path.join(work, packed[0].filename)}`, "@pulumi/pulumi": rootPkg.devDependencies["@pulumi/pulumi"] },
            }),
        );
        fs.writeFileSync(path.join(app, "shop", "Pulumi.yaml"), "name: shop\nruntime: nodejs\n");
        fs.writeFileSync(
            path.join(app, "shop", "index.ts"),
            `import { GlobalRateLimit, LimitUnit } from "mesh-ratelimit";\nexport const limits = new GlobalRateLimit("shop-limits", { domain: "shop", namespace: "shop", gateway: ${GATEWAY}, rules: [${RULE.replace(" SHADOW", "")}], awaitRollout: false });\n`,
        );
        fs.writeFileSync(path.join(app, "shop-off", "Pulumi.yaml"), "name: shop-off\nruntime: nodejs\nmain: program.js\n");
        fs.writeFileSync(
            path.join(app, "shop-off", "program.js"),
            `const { GlobalRateLimit, LimitUnit } = require("mesh-ratelimit");\nnew GlobalRateLimit("shop-limits", { domain: "shop", namespace: "shop", gateway: ${GATEWAY}, rules: [${RULE.replace(" SHADOW", ", shadow: true")}], awaitRollout: false });\n`,
        );
        // --ignore-scripts: @pulumi/kubernetes's install script would fetch its provider plugin; the mocks need none.
        mustRun("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], app);
    });

    after(() => {
        if (work && !process.env.MESH_RL_KEEP_CONSUMER) fs.rmSync(work, { recursive: true, force: true });
    });

    it("npx mesh-ratelimit --help and explain --help explain every flag", () => {
        const main = cli("--help");
        expect(main.code).to.equal(0);
        expect(main.stdout).to.match(/explain.*\n.*\n.*replay/s);
        const ex = cli("explain", "--help");
        for (const f of ["--program", "--method", "--header", "--client-address", "--host", "--upstream", "--stack", "--set", "--json"])
            expect(ex.stdout, f).to.include(`  ${f} `);
        const re = cli("replay", "--help");
        for (const f of ["--compare", "--max-refused"]) expect(re.stdout, f).to.include(`  ${f} `);
    });

    it("explain: the sixth POST from one client is refused with a 429 and its headers; the first from another is allowed; a GET is not counted", () => {
        const posts = Array(6).fill("/login");
        const r = cli(
            "explain",
            "--program",
            "shop",
            "--json",
            "--method",
            "POST",
            "--client-address",
            "203.0.113.7",
            ...posts,
            "--client-address",
            "203.0.113.8",
            "/login",
            "--method",
            "GET",
            "--client-address",
            "203.0.113.7",
            "/login",
        );
        expect(r.code, r.stderr).to.equal(0);
        const x = JSON.parse(r.stdout);
        expect(x.decisions.map((d: any) => d.allowed)).to.deep.equal([true, true, true, true, true, false, true, true]);
        const sixth = x.decisions[5];
        expect(sixth.refusedBy).to.deep.include({ by: "service", rule: "login" });
        expect(sixth.response.status).to.equal(429);
        expect(sixth.response.headers).to.include({ "x-envoy-ratelimited": "true", "x-ratelimit-limit": "5, 5;w=60", "x-ratelimit-remaining": "0" });
        expect(Number(sixth.response.headers["x-ratelimit-reset"])).to.be.within(1, 60);
        expect(x.decisions[6].descriptors[0].count, "the other client's counter starts at 1").to.equal(1);
        expect(x.decisions[7].descriptors, "a GET sends no descriptor").to.deep.equal([]);
        // The text output says the same.
        const text = cli("explain", "--program", "shop", "--method", "POST", ...posts);
        expect(text.stdout).to.match(
            /#6 POST \/login[^#]*REFUSED by rule login at the rate-limit service \(5 per minute\)[^#]*status 429[^#]*X-RateLimit-Remaining: 0/,
        );
    });

    it("negative control: the JavaScript program with the rule off (shadow) refuses none of the six", () => {
        const r = cli("explain", "--program", "shop-off", "--json", "--method", "POST", ...Array(6).fill("/login"));
        expect(r.code, r.stderr).to.equal(0);
        const x = JSON.parse(r.stdout);
        expect(x.decisions.map((d: any) => d.allowed)).to.deep.equal(Array(6).fill(true));
        expect(x.decisions[5].descriptors[0].count, "still counted").to.equal(6);
    });

    it("replay of a 1,000-line log: rule login's refusals equal the oracle's; a line the parser cannot read is counted and named", () => {
        const log = loginLog(1000, { seed: 2026 });
        const oracle = expectedLoginRefusals(log.lines);
        expect(oracle.refused).to.be.greaterThan(20);
        const lines = log.text.split("\n");
        lines.splice(500, 0, '[2026-11-27T09:02:00Z] "GET /login HTTP/1.1" 200 - garbled');
        fs.writeFileSync(path.join(app, "access.log"), lines.join("\n"));
        const r = cli("replay", "--program", "shop", "--json", "access.log");
        expect(r.code, r.stderr).to.equal(0);
        const x = JSON.parse(r.stdout);
        const login = x.rules.find((y: any) => y.rule === "login");
        expect({ requests: login.requests, refused: login.refused }).to.deep.equal({ requests: oracle.requests, refused: oracle.refused });
        expect(x.requests).to.equal(1000);
        expect(x.bad).to.have.length(1);
        expect(x.bad[0]).to.deep.include({ line: 501 });
        expect(x.bad[0].reason).to.match(/fields after the start time: Istio's default format has 21/);
        const text = cli("replay", "--program", "shop", "access.log");
        expect(text.stdout).to.include(`rule login: ${oracle.requests} requests, ${oracle.refused} refused, first refused at line`);
        expect(text.stdout).to.match(/line 501: .*fields after the start time/);
        // The rule off: nothing refused; --compare lists every refused request as changed.
        const off = JSON.parse(cli("replay", "--program", "shop", "--compare", "shop-off", "--json", "access.log").stdout);
        expect(off.compared.refused).to.equal(0);
        expect(off.changed).to.have.length(oracle.refused);
    });

    it("replay --max-refused: exit 3 over the gate, 0 under it", () => {
        const x = JSON.parse(cli("replay", "--program", "shop", "--json", "access.log").stdout);
        const over = cli("replay", "--program", "shop", "--max-refused", String(Math.max(0, x.refusedPercent - 0.5)), "access.log");
        expect(over.code).to.equal(3);
        expect(over.stderr).to.match(/gate failed: the program refuses [\d.]+ % of the requests, over --max-refused/);
        expect(cli("replay", "--program", "shop", "--max-refused", String(x.refusedPercent + 0.5), "access.log").code).to.equal(0);
    });

    it("a usage error exits 2 with what to write; a missing program exits 1 naming what was looked for", () => {
        const u = cli("explain", "--program", "shop", "login");
        expect(u.code).to.equal(2);
        expect(u.stderr).to.match(/a request path starts with '\/', got 'login'/);
        const m = cli("explain", "--program", "nowhere", "/login");
        expect(m.code).to.equal(1);
        expect(m.stderr).to.match(/nowhere: no such folder/);
    });
});
