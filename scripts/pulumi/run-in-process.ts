/**
 * Runs the Pulumi CLI against a Node.js program served from this process, without Pulumi's Node.js
 * language host (`pulumi-language-nodejs`).
 *
 * The CLI can talk to a language runtime that is already running: `--client=<address>` on
 * `up`/`preview` makes it send the run request there instead of starting a host. `@pulumi/pulumi`
 * ships such a runtime for its Automation API (`automation/server.js`, class `LanguageServer`): it
 * receives the engine's address, the project, the stack and the config the CLI resolved (Pulumi.yaml
 * defaults merged), then runs a program function inside the Pulumi runtime. This script serves that
 * class over gRPC on 127.0.0.1 with a program function that loads the project's main module (as the
 * real host does: its exports become the stack's outputs), and runs the CLI with `--client`.
 *
 *   usage (from the project folder):  node --import tsx <repo>/scripts/pulumi/run-in-process.ts <pulumi args...>
 *
 * Commands that run no program (`destroy`, `stack`, `config`, `refresh` ...) are passed through.
 * The runtime, gRPC and the language protocol are loaded from the project's own `@pulumi/pulumi`,
 * so the program and the server share one Pulumi runtime.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** The CLI commands that run the program. */
const PROGRAM_COMMANDS = new Set(["up", "update", "preview", "pre"]);

/** The first word of the arguments that is not a flag (or a flag's value is not told apart: flags come after the command here). */
export function commandOf(args: string[]): string | undefined {
    return args.find((a) => !a.startsWith("-"));
}

/** The project's main module: Pulumi.yaml `main`, else package.json `main`, else index.ts / index.js. */
export function mainModule(projectDir: string): string {
    const yamlText = fs.readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8");
    const m = /^main:\s*(\S+)\s*$/m.exec(yamlText);
    if (m) return path.resolve(projectDir, m[1]);
    const pkgFile = path.join(projectDir, "package.json");
    if (fs.existsSync(pkgFile)) {
        const pkgMain = JSON.parse(fs.readFileSync(pkgFile, "utf8")).main;
        if (typeof pkgMain === "string") return path.resolve(projectDir, pkgMain);
    }
    for (const f of ["index.ts", "index.js"]) if (fs.existsSync(path.join(projectDir, f))) return path.join(projectDir, f);
    throw new Error(`no main module in ${projectDir}: set 'main' in Pulumi.yaml`);
}

/**
 * Forgets every loaded module of the program (its own files and the packages it brings, such as
 * this project's package installed in a consumer program), so each run starts with fresh module
 * state, as a new host process would. `@pulumi/*` and gRPC stay loaded: the server lives in them.
 */
function forgetProgramModules(keep: string[]) {
    for (const file of Object.keys(require.cache)) {
        if (!keep.some((k) => file.startsWith(k))) delete require.cache[file];
    }
}

async function main() {
    const args = process.argv.slice(2);
    const projectDir = process.cwd();
    const pulumiBin = process.env.PULUMI_BIN ?? "pulumi";
    const cmd = commandOf(args);
    let shutdown = () => {};
    const cliArgs = [...args];

    if (cmd !== undefined && PROGRAM_COMMANDS.has(cmd)) {
        const from = { paths: [projectDir] };
        const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json", from));
        const fromPulumi = { paths: [pulumiDir] };
        const grpc = require(require.resolve("@grpc/grpc-js", fromPulumi));
        const { LanguageServer } = require(path.join(pulumiDir, "automation", "server.js"));
        const langrpc = require(path.join(pulumiDir, "proto", "language_grpc_pb.js"));
        const { grpcChannelOptions } = require(path.join(pulumiDir, "runtime", "index.js"));
        const entry = mainModule(projectDir);
        const keep = [
            pulumiDir,
            path.dirname(require.resolve("@grpc/grpc-js/package.json", fromPulumi)),
            path.join(path.dirname(pulumiDir), "..", "google-protobuf"),
        ];
        const program = async () => {
            forgetProgramModules(keep);
            return require(entry);
        };
        const server = new grpc.Server(grpcChannelOptions);
        server.addService(langrpc.LanguageRuntimeService, new LanguageServer(program));
        const port: number = await new Promise((resolve, reject) =>
            server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err: Error | null, p: number) => (err ? reject(err) : resolve(p))),
        );
        cliArgs.push(`--client=127.0.0.1:${port}`);
        shutdown = () => server.forceShutdown();
    }

    const child = spawn(pulumiBin, cliArgs, { stdio: "inherit" });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("error", (e) => {
        console.error(`could not start ${pulumiBin}: ${e.message}`);
        shutdown();
        process.exit(127);
    });
    child.on("exit", (code, signal) => {
        shutdown();
        process.exit(code ?? (signal ? 128 : 1));
    });
}

if (require.main === module) {
    main().catch((e) => {
        console.error(e instanceof Error ? e.message : String(e));
        process.exit(1);
    });
}
