/**
 * The stack's rate-limit config against the service's own checker (`config_check_cmd`, built from
 * the same pinned commit) and against the running service's reload.
 *
 * For every config error the stack rejects, the equivalent `config.yaml` is given to the real
 * checker: it must reject it too, or the case is listed here as one where the stack is stricter,
 * with the reason. If the service changes its mind, the table fails and must be updated.
 */
import { expect } from "chai";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, stringify } from "yaml";
import { ratelimitBin } from "./harness/tools";
import { renderVariant } from "./harness/stack";
import { renderedRatelimit } from "./harness/rendered";
import { World } from "./harness/fixture";
import { ensureWindow } from "./harness/window";
import { sleep, waitFor } from "./harness/ports";

function configCheck(yamlText: string): { ok: boolean; output: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-rl-check-"));
    try {
        fs.writeFileSync(path.join(dir, "config.yaml"), yamlText);
        try {
            const out = execFileSync(ratelimitBin("config_check_cmd"), ["-config_dir", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
            return { ok: true, output: out };
        } catch (e: any) {
            return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
        }
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

async function renderedConfig(variant: "A" | "B", profile: "current" | "seed" = "current"): Promise<string> {
    return renderedRatelimit(await renderVariant(variant, {}, profile)).configYaml;
}

interface Case {
    name: string;
    variant: "A" | "B";
    /** Stack config that the stack must refuse. */
    overrides: Record<string, string>;
    /** The same mistake written straight into the rendered config.yaml. */
    mutate(cfg: any): any;
    /** What the real checker does with it; "accepts" needs the reason the stack is stricter. */
    service: "rejects" | { accepts: string };
    /** What the service's own error says, when it rejects (its loader's words). */
    serviceSays?: RegExp;
}

const d = (key: string, value: string | undefined, unit: string, requestsPerUnit: number) => ({
    key,
    ...(value === undefined ? {} : { value }),
    unit,
    requestsPerUnit,
});
const y = (key: string, value: string | undefined, unit: string, rpu: number) => ({
    key,
    ...(value === undefined ? {} : { value }),
    rate_limit: { unit, requests_per_unit: rpu },
});

const CASES: Case[] = [
    {
        // requests_per_unit is a uint32 in the service's config; one more than it holds does not load.
        name: "a limit over the service's uint32 (4294967296 per minute)",
        variant: "B",
        overrides: { limitedPathLimit: "4294967296" },
        mutate: (c) => ({
            ...c,
            descriptors: c.descriptors.map((e: any) => (e.rate_limit ? { ...e, rate_limit: { ...e.rate_limit, requests_per_unit: 4294967296 } } : e)),
        }),
        service: "rejects",
        serviceSays: /cannot unmarshal !!int `4294967296` into uint32/,
    },
    {
        name: "duplicate descriptor value",
        variant: "B",
        overrides: { descriptors: JSON.stringify([d("PATH", "/x", "minute", 1), d("PATH", "/x", "minute", 2)]) },
        mutate: (c) => ({ ...c, descriptors: [y("PATH", "/x", "minute", 1), y("PATH", "/x", "minute", 2)] }),
        service: "rejects",
    },
    {
        name: "duplicate catch-all",
        variant: "B",
        overrides: { descriptors: JSON.stringify([d("PATH", undefined, "minute", 1), d("PATH", undefined, "minute", 2)]) },
        mutate: (c) => ({ ...c, descriptors: [y("PATH", undefined, "minute", 1), y("PATH", undefined, "minute", 2)] }),
        service: "rejects",
    },
    {
        name: "api descriptor value equal to the limited path (two entries PATH=/productpage)",
        variant: "A",
        overrides: { apiDescriptorValue: "/productpage" },
        mutate: (c) => ({ ...c, descriptors: c.descriptors.map((e: any) => (e.value === "api" ? { ...e, value: "/productpage" } : e)) }),
        service: "rejects",
    },
    {
        name: "empty descriptor key",
        variant: "B",
        overrides: { descriptors: JSON.stringify([d("", "/x", "minute", 1)]) },
        mutate: (c) => ({ ...c, descriptors: [y("", "/x", "minute", 1)] }),
        service: "rejects",
    },
    {
        name: "invalid unit",
        variant: "B",
        overrides: { unit: "fortnight" },
        mutate: (c) => ({ ...c, descriptors: c.descriptors.map((e: any) => ({ ...e, rate_limit: { ...e.rate_limit, unit: "fortnight" } })) }),
        service: "rejects",
    },
    {
        name: "unknown descriptor field",
        variant: "B",
        overrides: { descriptors: JSON.stringify([{ ...d("PATH", "/x", "minute", 1), burst: 5 }]) },
        mutate: (c) => ({ ...c, descriptors: [{ ...y("PATH", "/x", "minute", 1), burst: 5 }] }),
        service: "rejects",
    },
    {
        name: "zero requests per unit",
        variant: "B",
        overrides: { catchAllLimit: "0" },
        mutate: (c) => ({
            ...c,
            descriptors: c.descriptors.map((e: any) => (e.value === undefined ? { ...e, rate_limit: { ...e.rate_limit, requests_per_unit: 0 } } : e)),
        }),
        service: { accepts: "0 would refuse every request of that descriptor; the stack asks for at least 1" },
    },
    {
        name: "descriptor key other than PATH",
        variant: "B",
        overrides: { descriptors: JSON.stringify([d("path", "/x", "minute", 1)]) },
        mutate: (c) => ({ ...c, descriptors: [y("path", "/x", "minute", 1)] }),
        service: { accepts: "the gateway filters only send PATH, so any other key would never match (silently no limit)" },
    },
    {
        name: "empty descriptor value",
        variant: "B",
        overrides: { descriptors: JSON.stringify([d("PATH", "", "minute", 1)]) },
        mutate: (c) => ({ ...c, descriptors: [y("PATH", "", "minute", 1)] }),
        service: { accepts: "an empty value reads as a catch-all to the service; the stack wants the catch-all written without 'value'" },
    },
    {
        name: "domain with a space",
        variant: "B",
        overrides: { domain: "bad domain" },
        mutate: (c) => ({ ...c, domain: "bad domain" }),
        service: { accepts: "the stack keeps domains to letters, digits, '_', '.', '-' so the same string is safe in YAML, Envoy and stats names" },
    },
];

describe("rls config check: the stack's config vs the service's own config_check_cmd (real, same commit)", function () {
    for (const variant of ["A", "B"] as const) {
        for (const profile of ["current", "seed"] as const) {
            it(`variant ${variant}, profile ${profile}: the rendered config.yaml passes config_check_cmd`, async () => {
                const r = configCheck(await renderedConfig(variant, profile));
                expect(r.ok, r.output).to.equal(true);
                expect(r.output).to.match(/all rate limit configs ok/);
            });
        }
    }

    it("the largest limit the stack accepts, 4294967295 per minute, loads in the service", async () => {
        const cfg = renderedRatelimit(await renderVariant("B", { limitedPathLimit: "4294967295" })).configYaml;
        expect(cfg).to.include("requests_per_unit: 4294967295");
        const r = configCheck(cfg);
        expect(r.ok, r.output).to.equal(true);
    });

    it("the longer units the stack accepts, week, month and year, render as such and load in the service", async () => {
        for (const unit of ["week", "month", "year"]) {
            const cfg = renderedRatelimit(await renderVariant("B", { unit })).configYaml;
            expect(cfg).to.include(`unit: ${unit}`);
            const r = configCheck(cfg);
            expect(r.ok, `${unit}: ${r.output}`).to.equal(true);
        }
        // Control: a unit the service does not know is rejected by it, so the check above can fail.
        const bad = configCheck(renderedRatelimit(await renderVariant("B", { unit: "week" })).configYaml.replace(/unit: week/g, "unit: fortnight"));
        expect(bad.ok).to.equal(false);
    });

    for (const c of CASES) {
        const verdict = c.service === "rejects" ? "the service rejects it too" : "the service accepts it: stack is stricter (documented)";
        it(`${c.name}: the stack refuses it; ${verdict}`, async () => {
            let refused: Error | undefined;
            try {
                await renderVariant(c.variant, c.overrides);
            } catch (e) {
                refused = e as Error;
            }
            expect(refused, `the stack rendered ${JSON.stringify(c.overrides)}`).to.be.instanceOf(Error);
            expect(refused!.message).to.match(/invalid stack configuration/);
            const yamlText = stringify(c.mutate(parse(await renderedConfig(c.variant))));
            const r = configCheck(yamlText);
            if (c.service === "rejects") {
                expect(r.ok, `config_check_cmd accepted:\n${yamlText}\n${r.output}`).to.equal(false);
                expect(r.output).to.match(/error loading rate limit configs|config error|error loading config file/);
                if (c.serviceSays) expect(r.output).to.match(c.serviceSays);
            } else {
                expect(r.ok, `config_check_cmd now rejects this case; move it to "rejects": ${r.output}`).to.equal(true);
            }
        });
    }

    describe("the running service and ConfigMap updates (rendered env: RUNTIME_WATCH_ROOT=false, RUNTIME_IGNOREDOTFILES=true)", function () {
        let w: World;
        before(async () => {
            w = await World.start("B");
        });
        after(async () => {
            await w?.stop();
        });

        it("a ConfigMap update (symlink swap) reaches the running service without a restart", async () => {
            const cfg = parse(w.rendered.configYaml);
            cfg.descriptors = cfg.descriptors.map((e: any) =>
                e.value === "/productpage" ? { ...e, rate_limit: { ...e.rate_limit, requests_per_unit: 3 } } : e,
            );
            w.services[0].updateConfig({ "config.yaml": stringify(cfg) });
            const ms = await waitFor(
                "the new limit in /rlconfig",
                async () => (await w.services[0].rlconfig()).includes("PATH_/productpage: unit=MINUTE requests_per_unit=3"),
                15_000,
                100,
            );
            console.log(`      new config live after ${ms} ms`);
            await w.redis.flushAll();
            await ensureWindow(5);
            const codes = [];
            for (let i = 0; i < 4; i++) codes.push((await w.send("/productpage"))!.overallCode);
            expect(codes).to.deep.equal(["OK", "OK", "OK", "OVER_LIMIT"]);
        });

        it("a bad update is refused by the service and the previous config stays in force", async () => {
            const lines = async () => (await w.services[0].rlconfig()).trim().split("\n").sort();
            const before = await lines();
            const bad = parse(w.rendered.configYaml);
            bad.descriptors.push(bad.descriptors[0]);
            w.services[0].updateConfig({ "config.yaml": stringify(bad) });
            await sleep(2_000);
            expect(w.services[0].proc.exited()).to.equal(false);
            expect(await lines()).to.deep.equal(before);
            expect(w.services[0].proc.output()).to.match(/duplicate descriptor composite key|error loading new configuration/i);
        });
    });
});
