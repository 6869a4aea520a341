/**
 * `npm run render -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route]
 *                    [--port-mode http|tcp] [--set key=value ...] [--out DIR]`
 *
 * Writes every Kubernetes object the stack would create or patch as YAML (one file each, plus
 * all.yaml) and prints the effective limits. With no flags: the dev stack's config into rendered/.
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { effectiveLimits, formatLimits } from "../components/limits-table";
import { ConfigError } from "../components/settings";
import { K8sObject, objectFileName, registerProgram, RenderOptions, toObjects } from "./render";

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
 * strings such as "no" that YAML 1.1 would otherwise take for booleans.
 */
export function writeRender(objects: K8sObject[], dir: string): void {
    const text = (o: K8sObject) => stringify(o, { lineWidth: 0, version: "1.1" });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const o of objects) fs.writeFileSync(path.join(dir, objectFileName(o)), text(o));
    fs.writeFileSync(path.join(dir, "all.yaml"), objects.map(text).join("---\n"));
}

async function main() {
    const { opts, out } = parseArgs(process.argv.slice(2));
    const { settings, registrations } = await registerProgram(opts);
    const objects = toObjects(registrations);
    const dir = path.resolve(out);
    writeRender(objects, dir);
    console.log(`variant ${settings.variant}, profile ${settings.apiProfile}, local placement ${settings.local.placement}: ${objects.length} objects written to ${path.relative(process.cwd(), dir) || "."}/`);
    console.log();
    console.log(formatLimits(effectiveLimits(settings)));
}

if (require.main === module) main().catch((e) => {
    if (e instanceof ConfigError) console.error(`error: ${e.message}`);
    else console.error(`error: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
});
