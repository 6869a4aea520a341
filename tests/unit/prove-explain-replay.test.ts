/**
 * `mesh-ratelimit explain` and `replay` on a user's own program (examples/login-limit:
 * POST /login at 5 a minute per client on a gateway the program does not declare), through the
 * typed API: the program runs under Pulumi's mocks in this process, requests share counters, and a
 * replayed log's refusals equal an independent oracle's. The service's fixed-window counters are
 * checked against the oracle too, window edges included.
 */
import { expect } from "chai";
import * as path from "path";
import { explainProgram, replayLog } from "../../prove/api";
import { FixedWindowCounters } from "../../prove/counters";
import { fixedWindowStart } from "../../gateway-model/fixed-window";
import { parseCommand, UsageError } from "../../prove/cli-args";
import { expectedLoginRefusals, istioText, loginLog } from "./prove-login-log";

const PROGRAM = path.join(__dirname, "..", "..", "examples", "login-limit");
const NOW = Date.UTC(2026, 10, 27, 16, 0, 10);

describe("prove: explain and replay a user's own program", function () {
    this.timeout(120_000);

    it("explain: the sixth POST from one client is refused by rule login (429, x-envoy-ratelimited, X-RateLimit-*, empty body, no RateLimit-Policy); another client's first is allowed; a GET is not counted", async () => {
        const post = (client: string) => ({ method: "POST", path: "/login", clientAddress: client });
        const x = await explainProgram(
            PROGRAM,
            [...Array.from({ length: 6 }, () => post("203.0.113.7")), post("203.0.113.8"), { method: "GET", path: "/login", clientAddress: "203.0.113.7" }],
            {
                nowMs: NOW,
            },
        );
        const d = x.decisions;
        expect(d.map((v) => v.allowed)).to.deep.equal([true, true, true, true, true, false, true, true]);
        expect(d.slice(0, 6).map((v) => v.descriptors[0]!.count)).to.deep.equal([1, 2, 3, 4, 5, 6]);
        expect(d[5]!.refusedBy).to.deep.include({ by: "service", rule: "login" });
        expect(d[5]!.response).to.deep.equal({
            status: 429,
            headers: { "x-envoy-ratelimited": "true", "x-ratelimit-limit": "5, 5;w=60", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "50" },
            body: "",
        });
        expect(d[4]!.response.headers["x-ratelimit-remaining"]).to.equal("0");
        expect(d[0]!.response.headers["ratelimit-policy"]).to.equal('"login";q=5;w=60');
        expect(d[6]!.descriptors[0]!.entries).to.deep.equal([
            { key: "rule", value: "login" },
            { key: "masked_remote_address", value: "203.0.113.8/32" },
        ]);
        expect(d[6]!.descriptors[0]!.count).to.equal(1);
        // The GET: no descriptor, nothing counted.
        expect(d[7]!.descriptors).to.deep.equal([]);
        expect(x.gateways).to.deep.equal([
            { name: "pods istio=ingressgateway port 8080 (a gateway the program does not declare)", hosts: ["shop.example.com"], standIn: true },
        ]);
    });

    it("explain: the counters start afresh at the next minute (fixed windows aligned to the epoch)", async () => {
        const reqs = Array.from({ length: 6 }, (_, i) => ({ method: "POST", path: "/login", timeMs: Date.UTC(2026, 10, 27, 16, 0, 50 + i * 2) }));
        const x = await explainProgram(PROGRAM, reqs);
        // 16:00:50 .. 16:00:58 are five in one minute, 16:01:00 is the first of the next.
        expect(x.decisions.map((v) => v.allowed)).to.deep.equal([true, true, true, true, true, true]);
        expect(x.decisions.map((v) => v.descriptors[0]!.count)).to.deep.equal([1, 2, 3, 4, 5, 1]);
    });

    it("a host no gateway of the program serves meets no limit", async () => {
        const x = await explainProgram(
            PROGRAM,
            Array.from({ length: 7 }, () => ({ method: "POST", path: "/login", host: "other.example.com" })),
            { nowMs: NOW },
        );
        expect(x.decisions.every((v) => v.allowed && v.descriptors.length === 0)).to.equal(true);
        expect(x.decisions[0]!.notes[0]).to.match(/no gateway of the program serves host other.example.com/);
    });

    it("replay: the refused count of rule login over a 1,000-line log equals the oracle's; bad lines are counted and named", async () => {
        const log = loginLog(1000);
        const oracle = expectedLoginRefusals(log.lines);
        expect(oracle.refused, "the generated log must exercise the limit").to.be.greaterThan(20);
        const text = `${log.text}this is not a log line\n`;
        const r = await replayLog(PROGRAM, text);
        const login = r.rules.find((x) => x.rule === "login")!;
        expect({ requests: login.requests, refused: login.refused }).to.deep.equal({ requests: oracle.requests, refused: oracle.refused });
        expect(r.refused).to.equal(oracle.refused);
        expect(r.requests).to.equal(1000);
        expect(r.bad).to.deep.equal([
            { line: 1001, reason: "neither a text access log line (starting '[<start time>]') nor a JSON one (starting '{')", text: "this is not a log line" },
        ]);
        // The key most refused is the busiest client's address.
        const [top] = Object.entries(oracle.refusedByClient).sort((a, b) => b[1] - a[1]);
        expect(login.topRefusedKeys[0]).to.deep.equal({ key: `masked_remote_address=${top![0]}/32`, refused: top![1] });
    });

    it("replay: lines out of time order are replayed in time order", async () => {
        const l = (s: number) => ({ timeMs: Date.UTC(2026, 10, 27, 9, 0, s), method: "POST", path: "/login", client: "203.0.113.9" });
        // Six POSTs in one minute written in reverse: the sixth by time (line 1) is the refused one.
        const lines = [5, 4, 3, 2, 1, 0].map((s) => l(s));
        const r = await replayLog(PROGRAM, lines.map((x, i) => istioText(x, i)).join("\n"));
        expect(r.outOfOrder).to.equal(5);
        expect(r.rules[0]!.firstRefusedLine).to.equal(1);
        expect(r.rules[0]!.firstRefusedText).to.match(/^\[2026-11-27T09:00:05.000Z\] "POST \/login HTTP\/1.1"/);
    });

    it("replay --compare: a program with the rule off changes exactly the refused requests to allowed", async () => {
        const log = loginLog(300, { seed: 7 });
        const oracle = expectedLoginRefusals(log.lines);
        const r = await replayLog(PROGRAM, log.text, { compare: PROGRAM, config: {} });
        expect(r.changed).to.deep.equal([]);
        const off = await replayLog(PROGRAM, log.text, { compare: path.join(__dirname, "fixtures", "login-program-off") });
        expect(off.compared!.refused).to.equal(0);
        expect(off.changed!.length).to.equal(oracle.refused);
        expect(off.changed!.every((c) => c.before === "refused by login" && c.after === "allowed")).to.equal(true);
    });
});

describe("prove/counters: the service's fixed windows against an oracle", () => {
    it("counts per key and per epoch-aligned window, over when the count passes the limit, remaining and reset as the service answers", () => {
        const c = new FixedWindowCounters();
        const t0 = Date.UTC(2026, 10, 27, 16, 59, 58, 500);
        const hits = [0, 100, 200, 1400, 1600, 3000].map((dt) => c.hit("d_k_v_{window}", "minute", 3, t0 + dt));
        // Oracle: 16:59:58.5, .6, .7 and 16:59:59.9 are in the minute starting 16:59:00; 17:00:00.1 and 17:00:01.5 in the next.
        const w1 = Date.UTC(2026, 10, 27, 16, 59) / 1000;
        const w2 = w1 + 60;
        expect(hits.map((h) => [h.key, h.count, h.over, h.remaining])).to.deep.equal([
            [`d_k_v_${w1}`, 1, false, 2],
            [`d_k_v_${w1}`, 2, false, 1],
            [`d_k_v_${w1}`, 3, false, 0],
            [`d_k_v_${w1}`, 4, true, 0],
            [`d_k_v_${w2}`, 1, false, 2],
            [`d_k_v_${w2}`, 2, false, 1],
        ]);
        expect(hits.map((h) => h.resetSeconds)).to.deep.equal([2, 2, 2, 1, 60, 59]);
    });

    it("windows of every unit start on a multiple of the unit since the epoch", () => {
        for (const [unit, s] of [
            [1, 1_795_795_213],
            [60, 1_795_795_200],
            [3600, 1_795_795_200],
            [86400, 1_795_737_600],
        ] as const)
            expect(fixedWindowStart(unit, 1_795_795_213_999), `unit ${unit}`).to.equal(s);
    });

    it("a random stream: the counters agree with a naive per-(key, minute) count", () => {
        const c = new FixedWindowCounters();
        const naive = new Map<string, number>();
        let t = Date.UTC(2026, 10, 27, 8, 0, 0);
        let seed = 1;
        for (let i = 0; i < 5000; i++) {
            seed = (seed * 48271) % 2147483647;
            t += seed % 900;
            const k = `k${seed % 7}`;
            const minute = new Date(t).toISOString().slice(0, 16);
            naive.set(`${k}@${minute}`, (naive.get(`${k}@${minute}`) ?? 0) + 1);
            const h = c.hit(`d_${k}_{window}`, "minute", 40, t);
            expect(h.count).to.equal(naive.get(`${k}@${minute}`));
            expect(h.over).to.equal(h.count > 40);
        }
    });
});

describe("prove/cli-args: the command line", () => {
    it("explain reads method, repeated headers, client address, host and paths", () => {
        const c = parseCommand([
            "explain",
            "--program",
            "p",
            "--method",
            "POST",
            "--header",
            "X-A=1",
            "--header",
            "x-a=2",
            "--client-address",
            "203.0.113.7",
            "--host",
            "h",
            "/a",
            "/b",
        ]);
        expect(c).to.deep.include({ command: "explain", program: "p", json: false });
        expect((c as any).requests).to.deep.equal(
            ["/a", "/b"].map((p) => ({ path: p, method: "POST", clientAddress: "203.0.113.7", headers: { "x-a": ["1", "2"] }, host: "h" })),
        );
    });

    const BAD: [string[], RegExp][] = [
        [["frob"], /unknown command 'frob'/],
        [["explain", "/a"], /--program <dir> is required/],
        [["explain", "--program", "p"], /at least one request path/],
        [["explain", "--program", "p", "a"], /starts with '\/', got 'a'/],
        [["explain", "--program", "p", "--method", "PO ST", "/a"], /--method takes an HTTP method/],
        [["explain", "--program", "p", "--client-address", "1.2.3", "/a"], /--client-address takes an IPv4 or IPv6 address, got '1.2.3'/],
        [["explain", "--program", "p", "--header", "novalue", "/a"], /--header takes <key>=<value>/],
        [["explain", "--program", "p", "--compare", "q", "/a"], /explain has no flag --compare/],
        [["replay", "--program", "p"], /one access log file, got 0/],
        [["replay", "--program", "p", "--max-refused", "120", "log"], /--max-refused takes a percentage from 0 to 100, got '120'/],
        [["replay", "--program"], /--program needs a value/],
    ];
    for (const [argv, message] of BAD)
        it(`refuses ${argv.join(" ")} with what to write`, () => {
            expect(() => parseCommand(argv))
                .to.throw(UsageError)
                .with.property("message")
                .that.matches(message);
        });

    it("--help at every level explains every flag of the command", () => {
        expect(parseCommand([])).to.deep.equal({ command: "help", topic: "main" });
        expect(parseCommand(["replay", "--help"])).to.deep.equal({ command: "help", topic: "replay" });
        const { HELP } = require("../../prove/cli-args");
        for (const f of [
            "--program",
            "--stack",
            "--set",
            "--json",
            "--method",
            "--header",
            "--client-address",
            "--claim",
            "--jwks",
            "--host",
            "--upstream",
            "--refuse-approximate",
        ])
            expect(HELP.explain).to.include(f);
        for (const f of ["--program", "--stack", "--set", "--json", "--compare", "--max-refused", "--refuse-approximate"]) expect(HELP.replay).to.include(f);
    });

    it("replay reads --compare and --max-refused (a trailing % allowed)", () => {
        expect(parseCommand(["replay", "--program", "p", "--compare", "q", "--max-refused", "2.5%", "--json", "access.log"])).to.deep.equal({
            command: "replay",
            program: "p",
            config: {},
            json: true,
            refuseApproximate: false,
            log: "access.log",
            compare: "q",
            maxRefused: 2.5,
        });
    });
});

describe("prove/cli-args: request flags apply to the paths after them", () => {
    it("six POSTs from one client, then another client's POST, then a GET", () => {
        const c = parseCommand([
            "explain",
            "--program",
            "p",
            "--method",
            "POST",
            "--client-address",
            "203.0.113.7",
            ...Array(6).fill("/login"),
            "--client-address",
            "203.0.113.8",
            "/login",
            "--method",
            "GET",
            "/login",
        ]);
        expect((c as any).requests.map((r: any) => `${r.method} ${r.path} ${r.clientAddress}`)).to.deep.equal([
            ...Array(6).fill("POST /login 203.0.113.7"),
            "POST /login 203.0.113.8",
            "GET /login 203.0.113.8",
        ]);
    });

    it("flags after the last path apply to every path", () => {
        const c = parseCommand(["explain", "--program", "p", "/a", "--method", "GET", "/b", "--method", "PUT", "--json"]);
        expect((c as any).requests.map((r: any) => `${r.method} ${r.path}`)).to.deep.equal(["PUT /a", "PUT /b"]);
    });
});
