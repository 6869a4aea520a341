/**
 * `npm run render -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route]
 *                    [--port-mode http|tcp] [--set key=value ...] [--config FILE] [--out DIR] [--stack NAME]`
 *
 * Writes every Kubernetes object the stack would create or patch as YAML (one file each, plus
 * all.yaml of those that apply as written; placeholders and patches go to not-appliable/) and
 * prints the effective limits. With no flags: the dev stack's config into rendered/.
 */
import { finish, guardPipes } from "../lib/process-output";
import * as path from "path";
import { stringify } from "yaml";
import { effectiveLimits, formatLimits } from "../mesh/limits-table";
import { K8sObject } from "../lib/k8s-object";
import { objectFileName, REDACTED, registerProgram, RenderOptions, toObjects } from "./render";
import { cliError, configSources, parseCli } from "./args";
import { helpText, RENDER_FLAGS } from "./cli-help";
import { WriteResult, writeFilesSafely } from "./write";

const USAGE =
    "usage: npm run render -- [--variant A|B] [--profile seed|current] [--local-placement all-routes|single-route] [--port-mode http|tcp] [--set key=value]... [--config FILE] [--out DIR] [--stack NAME]";

const ABOUT =
    "Renders every Kubernetes object the stack would create, offline (no cluster, no Pulumi CLI): one YAML file each in --out, all.yaml of those that apply as written, and the effective limits.";

export function parseArgs(argv: string[]): { opts: RenderOptions; out: string; help: boolean; sources: string } {
    const a = parseCli(argv, { usage: USAGE, valueFlags: ["--out"] });
    return {
        opts: { overrides: a.overrides, ...(a.stack ? { stack: a.stack } : {}), ...(a.base ? { base: a.base } : {}) },
        out: a.out ?? "rendered",
        help: a.help,
        sources: configSources(a),
    };
}

/** Sub-folder for the objects that must not be applied as written (never part of all.yaml). */
export const NOT_APPLIABLE_DIR = "not-appliable";

function objectRef(o: K8sObject): string {
    return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
}

/**
 * Why an object of the render must not be applied as written, or undefined when it may be: a
 * Secret whose values are placeholders (Pulumi generates them at deploy time), or the seed
 * profile's one-line edit of Istio's own mesh ConfigMap (applying it would replace Istio's whole
 * mesh config with that one line).
 */
export function notAppliable(o: K8sObject): { why: string; instead: string } | undefined {
    const patch = o.metadata.annotations?.["mesh-ratelimit/patch"];
    if (patch) {
        const [dataKey, text] = Object.entries((o.data ?? {}) as Record<string, string>)[0] ?? ["mesh", ""];
        return {
            why: `is a PATCH, not an object: it ${patch}; applying it would replace Istio's whole '${dataKey}' text with this one line`,
            instead: `add the line '${text.trim()}' to data.${dataKey} of ${objectRef(o)} yourself (kubectl -n ${o.metadata.namespace} edit configmap ${o.metadata.name})`,
        };
    }
    const placeholders = ["data", "stringData"].flatMap((f) =>
        Object.entries((o[f] ?? {}) as Record<string, unknown>)
            .filter(([, v]) => v === REDACTED)
            .map(([k]) => `${f}.${k}`),
    );
    if (o.kind === "Secret" && placeholders.length) {
        const key = placeholders[0].split(".")[1];
        return {
            why: `holds PLACEHOLDER values (${placeholders.join(", ")}): \`pulumi up\` generates them and keeps them secret in its state`,
            instead: `create it yourself: kubectl -n ${o.metadata.namespace ?? "default"} create secret generic ${o.metadata.name} --from-literal=${key}="$(openssl rand -hex 16)"`,
        };
    }
    return undefined;
}

/** Files of a render: relative path → text (writeRender writes them). */
function renderFiles(
    objects: K8sObject[],
    title = "mesh-ratelimit offline render",
): { files: Map<string, string>; appliable: K8sObject[]; held: { object: K8sObject; file: string; why: string; instead: string }[] } {
    const text = (o: K8sObject) => stringify(o, { lineWidth: 0, version: "1.1" });
    const files = new Map<string, string>();
    const appliable: K8sObject[] = [];
    const held: { object: K8sObject; file: string; why: string; instead: string }[] = [];
    for (const o of objects) {
        const na = notAppliable(o);
        if (!na) {
            appliable.push(o);
            files.set(objectFileName(o), text(o));
            continue;
        }
        const file = `${NOT_APPLIABLE_DIR}/${objectFileName(o)}`;
        held.push({ object: o, file, ...na });
        const header = [
            `# NOT APPLIABLE AS WRITTEN: ${objectRef(o)} ${na.why}.`,
            `# Instead: ${na.instead}.`,
            "# `pulumi up` does this itself. Left out of all.yaml.",
        ];
        files.set(file, `${header.join("\n")}\n${text(o)}`);
    }
    const head = [
        `# ${title}: every object that applies as written (${appliable.length}), for review, diffs and validation.`,
        '# The stack is deployed with `pulumi up`, which also does what this file cannot (docs/operations.md, "The offline render").',
        ...(held.length
            ? [
                  `# NOT in this file (${NOT_APPLIABLE_DIR}/), so it is not the whole stack; to apply it by hand, first:`,
                  ...held.map((h) => `#   - ${objectRef(h.object)}: ${h.instead}`),
              ]
            : []),
    ];
    files.set("all.yaml", `${head.join("\n")}\n${appliable.map(text).join("---\n")}`);
    return { files, appliable, held };
}

/**
 * Writes one file per object plus all.yaml. YAML 1.1 is what kubectl and istioctl read: it quotes
 * strings such as "no" that YAML 1.1 would otherwise take for booleans. Objects that must not be
 * applied as written go to not-appliable/ with a header saying why and what to do instead, and are
 * left out of all.yaml. Never deletes a folder: see render/write.ts for what may be replaced or removed.
 */
export function writeRender(
    objects: K8sObject[],
    dir: string,
    opts: { cwd?: string; home?: string; title?: string } = {},
): WriteResult & { held: ReturnType<typeof renderFiles>["held"]; appliable: number } {
    const { files, appliable, held } = renderFiles(objects, opts.title);
    return { ...writeFilesSafely(dir, files, opts), held, appliable: appliable.length };
}

async function main() {
    const { opts, out, help, sources } = parseArgs(process.argv.slice(2));
    if (help) {
        console.log(helpText(ABOUT, USAGE, RENDER_FLAGS));
        return;
    }
    console.error(sources);
    const { settings, registrations, figures } = await registerProgram(opts);
    const objects = toObjects(registrations);
    const dir = path.resolve(out);
    const what = `variant ${settings.variant}, profile ${settings.apiProfile}, local placement ${settings.local.placement}`;
    const result = writeRender(objects, dir, { title: `mesh-ratelimit offline render (${what})` });
    const shown = path.relative(process.cwd(), dir) || ".";
    console.log(`${what}: ${objects.length} objects written to ${shown}/ (for review and validation; deploy with pulumi up)`);
    console.log(`  all.yaml: the ${result.appliable} objects that apply as written`);
    for (const h of result.held) console.log(`  ${h.file}: NOT APPLIABLE AS WRITTEN, ${objectRef(h.object)} ${h.why}`);
    if (result.removed.length)
        console.log(`removed ${result.removed.length} file(s) of the previous render there that this one no longer writes: ${result.removed.join(", ")}`);
    console.log();
    console.log(formatLimits(effectiveLimits(settings)));
    // What each per-value rule gets from its store: what a flood must send to reset one of its counters.
    if (figures.length) console.log(`\n${figures.join("\n")}`);
}

if (require.main === module) {
    guardPipes();
    main().catch((e) => {
        const { message, code } = cliError(e, "nothing was rendered");
        console.error(message);
        return finish(code);
    });
}
