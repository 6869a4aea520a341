/**
 * Compiles source snippets ("probes") against the repository's own files, in memory, and gives each
 * probe's own compile errors: how the unit tests show that a wrong use of a type does not compile.
 */
import * as path from "path";
import * as ts from "typescript";

const ROOT = path.join(__dirname, "..", "..");

/** Each probe's compile errors (its own file only), by probe name. */
export function compileProbes(probes: Record<string, string>): Record<string, string[]> {
    const files = Object.fromEntries(Object.entries(probes).map(([name, text]) => [path.join(ROOT, `__probe_${name}.ts`), text]));
    const options: ts.CompilerOptions = {
        strict: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        noEmit: true,
        skipLibCheck: true,
        types: [],
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    const exists = host.fileExists.bind(host);
    host.readFile = (f) => files[path.resolve(f)] ?? read(f);
    host.fileExists = (f) => path.resolve(f) in files || exists(f);
    const program = ts.createProgram(Object.keys(files), options, host);
    const out: Record<string, string[]> = {};
    for (const [file] of Object.entries(files)) {
        const name = path.basename(file, ".ts").replace(/^__probe_/, "");
        out[name] = ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    }
    return out;
}
