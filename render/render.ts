/**
 * Offline render: evaluates the real program under Pulumi's mocks (no cluster, no Pulumi CLI) and
 * returns every Kubernetes object the stack would create or patch, as plain objects.
 */
import * as pulumi from "@pulumi/pulumi";
import type { LiveObjectMeta, ObjectRef } from "../components/common/ownership";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { PROJECT } from "../program/config-keys";
import { LiveObject } from "../program/preflight";
import { MeshReachState } from "../program/mesh-reach";
import { StackSettings } from "../mesh/settings-types";
import { K8sObject } from "../lib/k8s-object";

export interface Registration {
    type: string;
    name: string;
    inputs: Record<string, any>;
}

export interface RenderOptions {
    variant?: "A" | "B";
    apiProfile?: "seed" | "current";
    /** Config keys (without project prefix) that override the base config. */
    overrides?: Record<string, string>;
    /** Base config (without project prefix). Defaults to the dev stack's `Pulumi.dev.yaml`. */
    base?: Record<string, string>;
    /** Called for each resource as it is registered (tests use it to prove nothing was registered). */
    onRegister?: (r: Registration) => void;
    /**
     * Objects the cluster already has, for the shared-object preflight (program/preflight.ts).
     * Absent: the cluster lacks every one of them (the offline default).
     */
    cluster?: LiveObject[];
    /** The cluster's gateway pods and root-namespace PeerAuthentications for the reach checks (program/preflight.ts); absent: not checked. */
    meshReach?: MeshReachState;
    /** Receives the preflight's messages (what `pulumi preview` would print). */
    onReport?: (message: string) => void;
    /**
     * The cluster's answer for every object the stack would create (the ownership check,
     * program/preflight.ts ownershipProblems). Absent: not asked (the cluster lacks all of them).
     */
    objects?: LiveObjectMeta[];
    /** The stack name the program runs as (default `render`): the objects' owner annotation names it. */
    stack?: string;
    /** Receives the objects the ownership check asked about. */
    onLookupObjects?: (refs: ObjectRef[]) => void;
    /** The namespaces with sidecars, as the program's lookup answers (kept-on-destroy.ts). Absent: not looked up. */
    lookupMeshNamespaces?: () => string[];
    /** Without the `stackId` key: `render` (the default: the render's placeholder id) or `refuse`, as the Pulumi program does. */
    missingStackId?: "refuse" | "render";
}

export const REPO_ROOT = path.resolve(__dirname, "..");
export const REDACTED = "<redacted: generated at deploy time, secret in Pulumi state>";
/** Dynamic resources register as `pulumi-nodejs:dynamic/<Name>:Resource`. */
const DYNAMIC_TYPE_PREFIX = "pulumi-nodejs:dynamic";
/** Marker key of a serialized secret value in resource inputs. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** Config of a stack file (`Pulumi.<stack>.yaml`), keys without the project prefix, values as strings. */
export function stackFileConfig(stack = "dev"): Record<string, string> {
    const file = path.join(REPO_ROOT, `Pulumi.${stack}.yaml`);
    const doc = parse(fs.readFileSync(file, "utf8")) ?? {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries<unknown>(doc.config ?? {})) {
        if (k.startsWith(`${PROJECT}:`)) out[k.slice(PROJECT.length + 1)] = typeof v === "string" ? v : JSON.stringify(v);
    }
    return out;
}

/**
 * The config values Pulumi.yaml declares as defaults, as the Pulumi CLI hands them to a program
 * (strings; booleans and numbers in their text form), keyed `namespace:key`. The CLI merges them
 * under the stack's own values, so the render does the same.
 */
export function declaredDefaults(): Record<string, string> {
    const doc = parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8")) ?? {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries<unknown>(doc.config ?? {})) {
        const value = v !== null && typeof v === "object" ? (v as { default?: unknown }).default : v;
        if (value !== undefined) out[k] = typeof value === "string" ? value : JSON.stringify(value);
    }
    return out;
}

/** Builds the full `project:key` config map the program reads: Pulumi.yaml's declared defaults, then the stack's values. */
export function programConfig(opts: RenderOptions): Record<string, string> {
    const merged: Record<string, string> = {
        ...(opts.base ?? stackFileConfig()),
        ...(opts.variant ? { variant: opts.variant } : {}),
        ...(opts.apiProfile ? { apiProfile: opts.apiProfile } : {}),
        ...(opts.overrides ?? {}),
    };
    return { ...declaredDefaults(), ...Object.fromEntries(Object.entries(merged).map(([k, v]) => [`${PROJECT}:${k}`, v])) };
}

let queue: Promise<unknown> = Promise.resolve();

/** The organization the render's stacks run in: the one Pulumi's self-managed backends report. */
export const RENDER_ORGANIZATION = "organization";

/**
 * Runs the program under mocks and returns what it registered. Calls are serialized: the Pulumi
 * runtime is process-global.
 */
export function registerProgram(opts: RenderOptions): Promise<{ settings: StackSettings; registrations: Registration[]; figures: string[] }> {
    const run = async () => {
        const registrations: Registration[] = [];
        const figures: string[] = [];
        await pulumi.runtime.setMocks(
            {
                newResource(args: pulumi.runtime.MockResourceArgs) {
                    const state = { ...args.inputs };
                    if (args.type === "random:index/randomPassword:RandomPassword") state.result = "mock-password-0123456789";
                    const reg = { type: args.type, name: args.name, inputs: args.inputs };
                    opts.onRegister?.(reg);
                    if (args.custom !== false) registrations.push(reg);
                    return { id: `${args.name}-id`, state };
                },
                call: (args: pulumi.runtime.MockCallArgs) => args.inputs,
            },
            PROJECT,
            opts.stack ?? "render",
            false,
            RENDER_ORGANIZATION,
        );
        pulumi.runtime.setAllConfig(programConfig(opts));
        // Loaded after the mocks are in place.
        const { buildProgram } = require("../program/program") as typeof import("../program/program");
        const { settings } = buildProgram(pulumi.runtime.allConfig(), {
            figures: (line) => figures.push(line),
            ...(opts.missingStackId ? { missingStackId: opts.missingStackId } : {}),
            ...(opts.lookupMeshNamespaces ? { lookupMeshNamespaces: opts.lookupMeshNamespaces } : {}),
            ...(opts.cluster ? { lookupShared: () => opts.cluster!, report: opts.onReport } : {}),
            ...(opts.meshReach ? { lookupMeshReach: () => opts.meshReach!, report: opts.onReport } : {}),
            ...(opts.objects
                ? {
                      lookupObjects: (refs: ObjectRef[]) => {
                          opts.onLookupObjects?.(refs);
                          return opts.objects!;
                      },
                      report: opts.onReport,
                  }
                : {}),
        });
        await (require("@pulumi/pulumi/runtime/settings") as { waitForRPCs(): Promise<void> }).waitForRPCs();
        return { settings, registrations, figures };
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
}

/**
 * Runs `build` (which creates the package's components directly, as a user's program would) under
 * mocks and returns every registration, components included (`custom` false), and the Kubernetes
 * objects. Serialized with registerProgram: the Pulumi runtime is process-global.
 */
export function registerComponents(build: () => void, project = "components", stack = "render"): Promise<{ all: Registration[]; objects: K8sObject[] }> {
    const run = async () => {
        const all: Registration[] = [];
        await pulumi.runtime.setMocks(
            {
                newResource(args: pulumi.runtime.MockResourceArgs) {
                    all.push({ type: args.type, name: args.name, inputs: args.inputs });
                    return {
                        id: `${args.name}-id`,
                        state: { ...args.inputs, ...(args.type === "random:index/randomPassword:RandomPassword" ? { result: "mock" } : {}) },
                    };
                },
                call: (args: pulumi.runtime.MockCallArgs) => args.inputs,
            },
            project,
            stack,
            false,
            RENDER_ORGANIZATION,
        );
        build();
        await (require("@pulumi/pulumi/runtime/settings") as { waitForRPCs(): Promise<void> }).waitForRPCs();
        return { all, objects: toObjects(all) };
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
}

function redactSecret(obj: K8sObject): K8sObject {
    const out: K8sObject = { ...obj };
    for (const field of ["data", "stringData"]) {
        const values = obj[field] as Record<string, unknown> | undefined;
        if (values) out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
    }
    return out;
}

/** Registrations → Kubernetes objects (drops non-Kubernetes resources such as the random password). */
export function toObjects(registrations: Registration[]): K8sObject[] {
    const objects: K8sObject[] = [];
    for (const r of registrations) {
        if (r.type.startsWith(DYNAMIC_TYPE_PREFIX) && r.inputs.configMap) {
            // The seed profile's edit of Istio's mesh ConfigMap, shown as the one line it sets.
            const i = r.inputs;
            objects.push({
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: {
                    name: i.configMap,
                    namespace: i.namespace,
                    annotations: {
                        "mesh-ratelimit/patch": `sets the top-level line '${i.setting}: ${i.value}' inside data.${i.dataKey}; the original text is restored on destroy`,
                    },
                },
                data: { [i.dataKey]: `${i.setting}: ${i.value}\n` },
            });
            continue;
        }
        if (!r.type.startsWith("kubernetes:")) continue;
        const { apiVersion, kind, metadata, ...rest } = r.inputs;
        let obj: K8sObject = { apiVersion, kind, metadata: stripUndefined(metadata), ...stripUndefined(rest) };
        if (kind === "Secret") obj = redactSecret(obj);
        objects.push(obj);
    }
    return objects;
}

/** Drops undefined fields and unwraps serialized secrets to their values (redacted later). */
function stripUndefined<T>(v: T): T {
    return JSON.parse(JSON.stringify(v ?? {}), (_k, val) => (val && typeof val === "object" && SECRET_SIG in val ? val.value : val));
}

/** Every Kubernetes object the stack would create or patch. */
export async function renderStack(opts: RenderOptions = {}): Promise<K8sObject[]> {
    const { registrations } = await registerProgram(opts);
    return toObjects(registrations);
}

export function objectFileName(o: K8sObject): string {
    return `${o.kind.toLowerCase()}_${o.metadata.namespace ?? "cluster"}_${o.metadata.name}.yaml`;
}
