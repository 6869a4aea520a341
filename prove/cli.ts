#!/usr/bin/env node
/**
 * The `mesh-ratelimit` command (the package's `bin`): `explain` and `replay` for a user's own Pulumi
 * program, with no cluster and no Pulumi CLI. Exit status: 0 done, 1 the program or the log failed,
 * 2 a usage error, 3 `replay --max-refused` exceeded.
 */
import * as fs from "fs";
import { explainProgram, replayLog } from "./api";
import { parseCommand, UsageError, HELP } from "./cli-args";
import { formatExplanation, formatReplay } from "./format";

async function main(argv: string[]): Promise<number> {
    const c = parseCommand(argv);
    if (c.command === "help") {
        console.log(HELP[c.topic]);
        return 0;
    }
    const render = { ...(c.stack ? { stack: c.stack } : {}), config: c.config };
    if (c.command === "explain") {
        const x = await explainProgram(c.program, c.requests, render);
        console.log(c.json ? JSON.stringify(x, null, 2) : formatExplanation(x));
        return 0;
    }
    if (!fs.existsSync(c.log)) throw new UsageError(`the access log ${c.log} does not exist`);
    const r = await replayLog(c.program, fs.readFileSync(c.log, "utf8"), { ...render, ...(c.compare ? { compare: c.compare } : {}) });
    console.log(c.json ? JSON.stringify(r, null, 2) : formatReplay(r));
    if (c.maxRefused !== undefined && r.refusedPercent > c.maxRefused) {
        console.error(`mesh-ratelimit replay: ${r.refusedPercent.toFixed(2)} % refused, over --max-refused ${c.maxRefused} %`);
        return 3;
    }
    return 0;
}

if (require.main === module) {
    main(process.argv.slice(2)).then(
        (code) => process.exit(code),
        (e) => {
            const usage = e instanceof UsageError;
            console.error(
                `mesh-ratelimit: error: ${e instanceof Error ? e.message : String(e)}${usage ? "\n(mesh-ratelimit --help explains every flag)" : ""}`,
            );
            process.exit(usage ? 2 : 1);
        },
    );
}
