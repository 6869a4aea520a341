/**
 * Stack config → MeshRateLimit's arguments, once: each key's text converted to its field's type and
 * set at the field's path (config-keys.ts). Text that is no number or switch where one belongs is
 * passed as it is: MeshRateLimit refuses a value of the wrong type, with the value as the user wrote
 * it. Checked here only what the config has and the arguments have not: JSON text that does not
 * parse, label text that is no list of pairs, a Redis password key without a Secret (the config splits
 * each Secret into two keys). Then MeshRateLimit's plan, its problems phrased for config.
 */
import { FixStyle } from "../lib/fix-style";
import { Problem } from "../lib/problems";
import { LIST_FIELDS, isMeshArgsError } from "../mesh/arg-problems";
import { MeshRateLimitPlan, planMeshRateLimit } from "../mesh/mesh-plan";
import { MeshRateLimitArgs } from "../mesh/mesh-ratelimit-args.generated";
import { ArgPath } from "../mesh/arg-paths";
import { StackSettings } from "../mesh/settings-types";
import { CONFIG_KEYS, CONFIG_KEY_OF_FIELD } from "./config-keys";
import { RawConfig, asConfigProblems, configError, configProblem } from "./config-problems";

/** Keys whose config value is a comma-separated list and whose field is a list of strings. */
export const LIST_KEYS: ReadonlySet<string> = new Set([...LIST_FIELDS].map((f) => CONFIG_KEY_OF_FIELD[f]));

/** Each key that names a Redis Secret, and the field of the password's key inside that Secret. */
const SECRET_KEY_FIELDS = {
    redisPasswordSecret: ["global", "redis", "passwordSecret", "key"],
    redisSentinelPasswordSecret: ["global", "redis", "sentinelPasswordSecret", "key"],
} as const satisfies Record<string, ArgPath>;
/** The one key that names the password's key inside either Redis Secret. */
const SECRET_KEY_KEY = "redisPasswordSecretKey";

function setAt(args: Record<string, unknown>, parts: ArgPath, value: unknown): void {
    let o = args;
    for (const part of parts.slice(0, -1)) {
        if (typeof o[part] !== "object" || o[part] === null) o[part] = {};
        o = o[part] as Record<string, unknown>;
    }
    o[parts[parts.length - 1]] = value;
}

/** `name=value` pairs, comma-separated, as a map; undefined when a pair does not read as one. */
function labelMap(v: string): Record<string, string> | undefined {
    const map: Record<string, string> = {};
    for (const part of v.split(",").filter((t) => t.trim())) {
        const [k, val, ...more] = part.split("=");
        if (more.length || !k?.trim() || val === undefined) return undefined;
        map[k.trim()] = val.trim();
    }
    return map;
}

function argOfText(key: string, kind: string, v: string): unknown {
    if (LIST_KEYS.has(key)) {
        const items = v
            .split(",")
            .map((i) => i.trim())
            .filter(Boolean);
        return items.length ? items : v;
    }
    if (key === "monitoringRuleLabels") return labelMap(v);
    if (kind === "integer") return /^-?\d+$/.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : v;
    if (kind === "boolean") return v.toLowerCase() === "true" ? true : v.toLowerCase() === "false" ? false : v;
    return v;
}

/** A JSON key's value parsed, or the problem of text that is no JSON (the package takes only the parsed list). */
function jsonOfText(key: string, v: string): { value: unknown } | { problem: Problem } {
    try {
        return { value: JSON.parse(v) };
    } catch (e) {
        const fix = (s: FixStyle) => `${s.set(key, "<json>")} (docs/configuration.md gives the shape), or ${s.rm(key)}`;
        return { problem: configProblem(key, v, `is not valid JSON (${(e as Error).message})`, fix) };
    }
}

/** Label text the config holds that is no list of `name=value` pairs (a map in the arguments). */
function labelsProblem(key: string, v: string): Problem {
    const part = v.split(",").find((t) => t.trim() && labelMap(t) === undefined) ?? v;
    return configProblem(key, v, `'${part}' is not a label written name=value`, (s) => s.set(key, "release=kube-prometheus-stack"));
}

/**
 * MeshRateLimit's arguments from stack config (keys without the project prefix; empty value = unset),
 * and the problems only the config can have. Checks nothing else.
 */
export function argsOfConfig(raw: RawConfig): { args: MeshRateLimitArgs; problems: Problem[] } {
    const args: Record<string, unknown> = {};
    // The Pulumi CLI merges the defaults Pulumi.yaml declares into the config a program reads: a
    // key at its declared default is not a value the user gave, and MeshRateLimit's default is the same.
    const given = (key: string) => {
        const v = raw[key]?.trim();
        return v === undefined || v === "" || v === CONFIG_KEYS.find((k) => k.key === key)?.default ? undefined : v;
    };
    const problems: Problem[] = [];
    for (const k of CONFIG_KEYS) {
        const v = given(k.key);
        if (v === undefined || k.key === SECRET_KEY_KEY) continue;
        const json = k.kind === "json" ? jsonOfText(k.key, v) : undefined;
        const arg = json ? ("value" in json ? json.value : undefined) : argOfText(k.key, k.kind, v);
        if (json && "problem" in json) problems.push(json.problem);
        else if (arg === undefined) problems.push(labelsProblem(k.key, v));
        else setAt(args, k.field, arg);
    }
    const secretKey = given(SECRET_KEY_KEY);
    if (secretKey !== undefined) {
        // The key inside whichever Secret is named; without one it names nothing.
        const named = Object.entries(SECRET_KEY_FIELDS).filter(([k]) => given(k) !== undefined);
        for (const [, field] of named) setAt(args, field, secretKey);
        if (!named.length) {
            problems.push(
                configProblem(
                    SECRET_KEY_KEY,
                    secretKey,
                    "names a key of redisPasswordSecret, which is not set",
                    (s) => `${s.set("redisPasswordSecret", "<secret name>")}, or ${s.rm(SECRET_KEY_KEY)}`,
                ),
            );
        }
    }
    return { args: args as MeshRateLimitArgs, problems };
}

/**
 * Stack config → MeshRateLimit's plan: every problem (`extraProblems` first, e.g. unknown keys; then
 * the config's own; then MeshRateLimit's, each under its config key) in one `InputError` of stack config.
 */
export function planOfConfig(raw: RawConfig, extraProblems: Problem[] = []): MeshRateLimitPlan {
    const { args, problems } = argsOfConfig(raw);
    const before = [...extraProblems, ...problems];
    let plan: MeshRateLimitPlan;
    try {
        plan = planMeshRateLimit(args);
    } catch (e) {
        if (!isMeshArgsError(e)) throw e;
        throw configError([...before, ...asConfigProblems(e.problems, raw)]);
    }
    if (before.length) throw configError(before);
    return plan;
}

/** The validated, fully-defaulted settings of a stack config (what the program's checks of the cluster read). */
export function resolveSettings(raw: RawConfig, extraProblems: Problem[] = []): StackSettings {
    return planOfConfig(raw, extraProblems).settings;
}
