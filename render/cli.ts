/**
 * `npm run render -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route]
 *                    [--port-mode http|tcp] [--set key=value ...] [--out DIR]`
 *
 * Writes every Kubernetes object the stack would create or patch as YAML (one file each, plus
 * all.yaml) and prints the effective limits. With no flags: the dev stack's config into rendered/.
 */
import * as path from "path";
import { stringify } from "yaml";
import { effectiveLimits, formatLimits } from "../components/limits-table";
import { ConfigError } from "../components/settings";
import { K8sObject, objectFileName, registerProgram, RenderOptions, toObjects } from "./render";
import { OutDirError, WriteResult, writeFilesSafely } from "./write";

const USAGE = "usage: npm run render -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route] [--port-mode http|tcp] [--set key=value]... [--out DIR]";

export function parseArgs(argv: string[]): { opts: RenderOptions; out: string } {
    const overrides: Record<string, string> = {};
    const opts: RenderOptions = { overrides };
    let out = "rendered";
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i];
        const value = argv[i + 1];
        const need = () => {
            if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value\n${USAGE}`);
            i++;
            return value;
        };
        switch (flag) {
            case "--variant": overrides.variant = need(); break;
            case "--profile": overrides.apiProfile = need(); break;
            case "--local-placement": overrides.localPlacement = need(); break;
            case "--port-mode": overrides.espPortMode = need(); break;
            case "--out": out = need(); break;
            case "--set": {
                const kv = need();
                const eq = kv.indexOf("=");
                if (eq < 1) throw new Error(`--set takes key=value, got '${kv}'\n${USAGE}`);
                overrides[kv.slice(0, eq)] = kv.slice(eq + 1);
                break;
            }
            case "-h":
            case "--help":
                console.log(USAGE);
                process.exit(0);
            default:
                throw new Error(`unknown argument '${flag}'\n${USAGE}`);
        }
    }
    return { opts, out };
}

/**
 * Writes one file per object plus all.yaml. YAML 1.1 is what kubectl and istioctl read: it quotes
 * strings such as "no" that YAML 1.1 would otherwise take for booleans. Never deletes a folder:
 * see render/write.ts for what may be replaced or removed.
 */
export function writeRender(objects: K8sObject[], dir: string, opts: { cwd?: string; home?: string } = {}): WriteResult {
    const text = (o: K8sObject) => stringify(o, { lineWidth: 0, version: "1.1" });
    const files = new Map<string, string>();
    for (const o of objects) files.set(objectFileName(o), text(o));
    files.set("all.yaml", objects.map(text).join("---\n"));
    return writeFilesSafely(dir, files, opts);
}

async function main() {
    const { opts, out } = parseArgs(process.argv.slice(2));
    const { settings, registrations } = await registerProgram(opts);
    const objects = toObjects(registrations);
    const dir = path.resolve(out);
    const result = writeRender(objects, dir);
    console.log(`variant ${settings.variant}, profile ${settings.apiProfile}, local placement ${settings.local.placement}: ${objects.length} objects written to ${path.relative(process.cwd(), dir) || "."}/`);
    if (result.removed.length) console.log(`removed ${result.removed.length} file(s) of the previous render there that this one no longer writes: ${result.removed.join(", ")}`);
    console.log();
    console.log(formatLimits(effectiveLimits(settings)));
}

if (require.main === module) main().catch((e) => {
    if (e instanceof ConfigError || e instanceof OutDirError) {
        console.error(`error: ${e.message}`);
        process.exit(2);
    }
    console.error(`error: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
});
