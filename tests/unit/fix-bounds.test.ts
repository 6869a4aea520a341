/**
 * A proposed fix respects the bound it names: for every integer config key, a value past its
 * bounds (or not a whole number) is refused with a `set` fix, and the value that fix proposes is
 * then accepted for that key. A property over the key table (program/config-keys.ts), not one example.
 */
import { expect } from "chai";
import { CONFIG_KEYS } from "../../program/config-keys";
import { PULUMI_FIX } from "../../program/config-problems";
import { resolveSettings } from "../../program/config-args";
import { FixStyle } from "../../lib/fix-style";
import { Problem } from "../../lib/problems";
import { DEV } from "./helpers";

/** Values a user could type that lie past an integer key's bound, or are not whole numbers. */
const PAST_BOUNDS = ["5e9", "99999999999999999999", "4294967296", "1000000001", "65536", "129", "-1", "12.7"];

const INTEGER_KEYS = CONFIG_KEYS.filter((k) => k.kind === "integer").map((k) => k.key);

/**
 * Keys with a second bound that depends on other settings, whose fix takes two steps: the first
 * respects the range it names, the second the other bound (shown in its own test below).
 */
const TWO_STEP: Readonly<Record<string, string>> = {
    perValueNewValuesPerSecond: "its Redis memory bound follows from the rules' windows and key lengths, which its range check does not see",
};

/**
 * The problems the stack config has under `key` (none when it is accepted). Each config is read
 * once: every reading compiles the api route's RE2 expression, and the WebAssembly RE2 never frees
 * one, so a thousand readings would exhaust its memory for the tests that run after these.
 */
const seen = new Map<string, Problem[]>();
function problemsOf(raw: Record<string, string>, key: string): Problem[] {
    const id = JSON.stringify(raw);
    if (!seen.has(id)) {
        try {
            resolveSettings(raw);
            seen.set(id, []);
        } catch (e) {
            const problems = (e as { problems?: Problem[] }).problems;
            if (!problems) throw e;
            seen.set(id, problems);
        }
    }
    return seen.get(id)!.filter((p) => p.key === key);
}

/** The values a problem's fix sets for `key`, read through a style that records each `set`. */
function proposedValues(p: Problem, key: string): string[] {
    const set: string[] = [];
    const recording: FixStyle = { ...PULUMI_FIX, set: (k, v) => (k === key && set.push(v), PULUMI_FIX.set(k, v)) };
    if (p.fixWith) p.fixWith(recording);
    else {
        const m = new RegExp(`pulumi config set ${key} '?([^' ,]+)'?`).exec(typeof p.fix === "string" ? p.fix : "");
        if (m) set.push(m[1]);
    }
    return set;
}

interface Breach {
    key: string;
    given: string;
    proposed: string;
    still: string;
}

/**
 * Every (key, value) refused with no proposed fix that is then accepted for the same key. `propose` reads the
 * fix's values (the negative control swaps it for a naive one).
 */
function fixesRefused(propose: (p: Problem, key: string, given: string) => string[]): { breaches: Breach[]; refused: Map<string, number> } {
    const breaches: Breach[] = [];
    const refused = new Map<string, number>();
    for (const key of INTEGER_KEYS.filter((k) => !TWO_STEP[k])) {
        for (const given of PAST_BOUNDS) {
            const problems = problemsOf({ ...DEV, [key]: given }, key);
            if (!problems.length) continue;
            refused.set(key, (refused.get(key) ?? 0) + 1);
            // Two rules may refuse one value (perValueNewValuesPerSecond: its range and the Redis
            // memory it needs), each with its fix: one of them must be accepted as it stands.
            const values = problems.flatMap((p) => propose(p, key, given));
            const still = values.map((v) =>
                problemsOf({ ...DEV, [key]: v }, key)
                    .map((p) => p.problem)
                    .join("; "),
            );
            if (!still.includes(""))
                breaches.push({
                    key,
                    given,
                    proposed: values.join(" | ") || "(no set fix)",
                    still: still.join(" | ") || problems.map((p) => p.problem).join("; "),
                });
        }
    }
    return { breaches, refused };
}

describe("a proposed fix respects the bound it names (every integer config key)", function () {
    this.timeout(120_000);

    it("every integer key has a bound some of these values pass", () => {
        const { refused } = fixesRefused(proposedValues);
        expect(INTEGER_KEYS.length).to.be.greaterThan(10);
        expect(INTEGER_KEYS.filter((k) => !refused.has(k) && !TWO_STEP[k])).to.deep.equal([]);
    });

    it("for every value refused, the value a fix proposes is accepted for its key", () => {
        const { breaches } = fixesRefused(proposedValues);
        expect(breaches).to.deep.equal([]);
    });

    it("limitedPathLimit=5e9: the fix is the service's most, 4294967295, which is accepted", () => {
        const [p] = problemsOf({ ...DEV, limitedPathLimit: "5e9" }, "limitedPathLimit");
        expect(proposedValues(p, "limitedPathLimit")).to.deep.equal(["4294967295"]);
        expect(problemsOf({ ...DEV, limitedPathLimit: "4294967295" }, "limitedPathLimit")).to.deep.equal([]);
    });

    it("perValueNewValuesPerSecond: the range's fix respects the range, and the fix of the memory it then needs is accepted", () => {
        const key = "perValueNewValuesPerSecond";
        for (const given of ["5e9", "1000001", "12.7e9"]) {
            const first = problemsOf({ ...DEV, [key]: given }, key);
            const ranged = first.find((p) => p.problem === "must be between 0 and 1000000" || p.problem === "must be a whole number")!;
            expect(proposedValues(ranged, key), given).to.deep.equal(["1000000"]);
            // Whole numbers over the range also get the memory problem at once; others at the next step.
            const memory = first.find((p) => p.problem.startsWith("needs ")) ?? problemsOf({ ...DEV, [key]: "1000000" }, key)[0];
            const [fits] = proposedValues(memory, key);
            expect(Number(fits)).to.be.within(1, 1_000_000);
            expect(problemsOf({ ...DEV, [key]: fits }, key), given).to.deep.equal([]);
            expect(problemsOf({ ...DEV, [key]: String(Number(fits) + 1) }, key).length, "the fix is the most that fits").to.equal(1);
        }
    });

    it("negative control: a fix that proposes the typed number unclamped is caught for the keys with an upper bound", () => {
        const naive = (_p: Problem, _key: string, given: string) => [String(Math.round(Number(given)))];
        const { breaches } = fixesRefused(naive);
        const keys = new Set(breaches.map((b) => b.key));
        for (const k of ["limitedPathLimit", "catchAllLimit", "apiLimit", "gatewayPort", "localBucket"]) expect(keys.has(k), k).to.equal(true);
    });
});
