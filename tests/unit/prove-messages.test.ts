/**
 * The messages of `mesh-ratelimit explain` and `replay` that a new user meets, each saying what is
 * wrong and what to do: a module the program cannot find (without Node's require stack), an empty
 * program, a request no rule meets on a gateway whose routes the program does not declare, and a
 * refusal without X-RateLimit-Reset. Each beside the case that must keep the plain message.
 */
import { expect } from "chai";
import * as path from "path";
import { formatDecision } from "../../prove/format";
import { loadFailure } from "../../prove/program-runner";
import { Decision, Simulator } from "../../prove/simulate";

const MAIN = path.join("/work", "shop", "index.ts");

function notFound(spec: string): Error {
    return Object.assign(new Error(`Cannot find module '${spec}'\nRequire stack:\n- ${MAIN}`), { code: "MODULE_NOT_FOUND" });
}

const decision = (over: Partial<Decision>): Decision => ({
    request: { path: "/x", timeMs: 0 },
    gateway: "gw",
    virtualHost: "shop.example.com:8080",
    route: "catch-all",
    allowed: true,
    descriptors: [],
    response: { status: "upstream", headers: {}, body: "" },
    notes: [],
    approximations: [],
    ...over,
});

describe("prove: the messages a new user meets say what to do", () => {
    it("a package the program imports is not installed: named, with what to run, without Node's require stack", () => {
        const m = loadFailure(MAIN, notFound("mesh-ratelimit"));
        expect(m).to.equal(
            `the program ${MAIN} imports 'mesh-ratelimit', which is not installed where the program can find it: run npm install in ${path.dirname(MAIN)} (the program needs mesh-ratelimit and @pulumi/pulumi in its own node_modules)`,
        );
        expect(loadFailure(MAIN, notFound("./limits"))).to.equal(`the program ${MAIN} imports ./limits, which does not exist: check the import's path`);
        // Control: any other failure keeps the program's own message.
        expect(loadFailure(MAIN, new Error("boom"))).to.equal(`the program ${MAIN} failed under Pulumi's mocks: boom`);
    });

    it("an empty program says it holds no rate-limit filter, not 'host undefined'", () => {
        const d = new Simulator([]).decide({ path: "/", timeMs: 0 });
        expect(d.notes).to.deep.equal([
            "the program holds no rate-limit filter on a gateway: no limit of this program applies (does it create a GlobalRateLimit or MeshRateLimit?)",
        ]);
        expect(d.notes.join()).to.not.include("undefined");
    });

    it("no rule on a stand-in gateway says a rule on a named route can never match there; on a declared gateway it does not", () => {
        expect(formatDecision(decision({}), 1, new Set(["gw"]))).to.match(
            /a rule on a named route can never match here: declare the VirtualService in the program/,
        );
        expect(formatDecision(decision({}), 1, new Set())).to.not.match(/named route/);
    });

    it("a 429 without X-RateLimit-Reset does not point to it; with it, it does", () => {
        const refused = (headers: Record<string, string>) =>
            formatDecision(decision({ allowed: false, refusedBy: { by: "pre-limit", envoyFilter: "pre" }, response: { status: 429, headers, body: "" } }), 1);
        expect(refused({})).to.include("no Retry-After and no X-RateLimit-Reset: the filter that refused sends neither");
        expect(refused({})).to.not.include("X-RateLimit-Reset gives");
        expect(refused({ "x-ratelimit-reset": "12" })).to.include("X-RateLimit-Reset gives the seconds to wait");
    });
});
