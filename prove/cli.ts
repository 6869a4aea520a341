#!/usr/bin/env node
/**
 * The `mesh-ratelimit` command (the package's `bin`): `explain` and `replay` for a user's own Pulumi
 * program, with no cluster and no Pulumi CLI. Exit statuses: EXIT in cli-args.ts (the help prints
 * them). Every byte of the output reaches a pipe before the process ends (lib/process-output.ts).
 */
import * as fs from "fs";
import * as path from "path";
import { emitLine, finish, guardPipes } from "../lib/process-output";
import { explainProgram, ProgramReplay, replayLogFile } from "./api";
import { LogInputError } from "./log-input";
import { openLog } from "./log-source";
import { ApproximationCount, approximationText } from "./approximations";
import { parseCommand, UsageError, HELP, EXIT, Command } from "./cli-args";
import { formatExplanation, formatReplay } from "./format";
import { jwksKeys } from "./jwt-verify";

/** The package's version, from its package.json (two folders up when built into dist/, one up from source). */
function version(): string {
    for (const up of ["..", "../.."]) {
        const file = path.join(__dirname, up, "package.json");
        if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, "utf8")).version;
    }
    return "unknown";
}

/** The gates of a replay: a message per gate failed (the proposed program's answer when --compare is given). */
export function gateFailures(c: { maxRefused?: number; maxNewRefusals?: number }, r: ProgramReplay): string[] {
    const out: string[] = [];
    const judged = r.compared ?? r;
    const whose = r.compared ? "the --compare program" : "the program";
    if (c.maxRefused !== undefined && judged.refusedPercent > c.maxRefused)
        out.push(`${whose} refuses ${judged.refusedPercent.toFixed(2)} % of the requests, over --max-refused ${c.maxRefused} %`);
    const newRefusals = r.newRefusals ?? 0;
    if (c.maxNewRefusals !== undefined && newRefusals > c.maxNewRefusals)
        out.push(`the --compare program refuses ${newRefusals} requests the current one allows, over --max-new-refusals ${c.maxNewRefusals}`);
    return out;
}

/** The status of an answer beyond its gates: nothing modelled (5), then approximate under --refuse-approximate (6); messages for standard error. */
export function answerStatus(
    c: { refuseApproximate: boolean },
    a: { nothingModelled?: string; approximations: ApproximationCount[] },
): { status: number; failures: string[] } {
    if (a.nothingModelled) return { status: EXIT.nothing, failures: [a.nothingModelled] };
    if (c.refuseApproximate && a.approximations.length)
        return {
            status: EXIT.approximate,
            failures: a.approximations.map((x) => `--refuse-approximate: ${x.requests} decisions rest on an approximation: ${approximationText(x)}`),
        };
    return { status: EXIT.ok, failures: [] };
}

/** Prints the answer (text, or JSON with the status and failures), the failures on standard error; returns the status. */
function answer(c: { json: boolean; command: string }, text: () => string, value: object, status: number, failures: string[]): number {
    emitLine(c.json ? JSON.stringify({ ...value, status, failures }, null, 2) : text());
    for (const f of failures) emitLine(`mesh-ratelimit ${c.command}: ${status === EXIT.gate ? "gate failed: " : ""}${f}`, process.stderr);
    return status;
}

async function replay(c: Extract<Command, { command: "replay" }>, render: { stack?: string; config: Record<string, string> }): Promise<number> {
    const opts = { ...render, ...(c.compare ? { compare: c.compare } : {}), ...(c.logFormat !== undefined ? { logFormat: c.logFormat } : {}) };
    const log = await openLog(c.log);
    let r: ProgramReplay;
    try {
        r = await replayLogFile(c.program, log.file, opts).catch((e) => {
            throw e instanceof LogInputError
                ? new LogInputError(e.message.split(log.file).join(log.label).replace("the access log:", `the access log ${log.label}:`))
                : e;
        });
    } finally {
        log.close();
    }
    const judged = r.compared ?? r;
    const gates = gateFailures(c, r);
    const other = answerStatus(c, { ...judged, approximations: [...r.approximations, ...(r.compared?.approximations ?? [])] });
    const status = other.status !== EXIT.ok ? other.status : gates.length ? EXIT.gate : EXIT.ok;
    return answer(c, () => formatReplay(r), r, status, [...other.failures, ...gates]);
}

/**
 * `explain` without `--program` for a command that knows a stack of its own (the repository's
 * `mesh-ratelimit`, render/mesh-ratelimit-cli.ts): gets what follows `explain`, prints its answer
 * and returns the exit status.
 */
export type OwnStackExplain = (argv: string[]) => Promise<number>;

/** Whether `argv` asks the command's own stack: `explain` without `--program` (help included, it says both). */
function asksOwnStack(argv: string[]): boolean {
    return argv[0] === "explain" && !argv.some((a) => a === "--program" || a.startsWith("--program="));
}

async function main(argv: string[], ownStack?: OwnStackExplain): Promise<number> {
    if (ownStack && asksOwnStack(argv)) return ownStack(argv.slice(1));
    const c = parseCommand(argv);
    if (c.command === "help") {
        emitLine(HELP[c.topic]);
        return EXIT.ok;
    }
    if (c.command === "version") {
        emitLine(version());
        return EXIT.ok;
    }
    const render = { ...(c.stack ? { stack: c.stack } : {}), config: c.config };
    if (c.command === "replay") return replay(c, render);
    const x = await explainProgram(c.program, c.requests, { ...render, ...(c.jwks ? { jwks: readJwks(c.jwks) } : {}) });
    const { status, failures } = answerStatus(c, x);
    return answer(c, () => formatExplanation(x, c.detail), x, status, failures);
}

/** The keys of `--jwks`'s file; one that cannot be read is a usage error saying why. */
function readJwks(file: string): JsonWebKey[] {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch (e) {
        throw new UsageError(
            `--jwks ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give the path of a JWKS JSON file`,
        );
    }
    try {
        return jwksKeys(text, `--jwks ${file}`);
    } catch (e) {
        throw new UsageError((e as Error).message);
    }
}

/** The status and the message of an error. */
function failure(e: unknown): { status: number; message: string } {
    const message = e instanceof Error ? e.message : String(e);
    if (e instanceof UsageError) return { status: EXIT.usage, message: `${message}\n(mesh-ratelimit --help explains every flag)` };
    if (e instanceof LogInputError) return { status: EXIT.input, message };
    return { status: EXIT.program, message };
}

/** Runs the command on `argv` and ends the process with its exit status once every byte is out. */
export function runCommand(argv: string[], ownStack?: OwnStackExplain): void {
    if (ownStack) guardPipes();
    main(argv, ownStack).then(finish, (e) => {
        const { status, message } = failure(e);
        // With --json a CI job reads standard output: the error is a JSON object there too.
        if (argv.includes("--json")) emitLine(JSON.stringify({ error: { status, message } }, null, 2));
        emitLine(`mesh-ratelimit: error: ${message}`, process.stderr);
        return finish(status);
    });
}

if (require.main === module) runCommand(process.argv.slice(2));
