/**
 * MeshRateLimit's typed arguments: the stack config they are mapped from (`rawToArgs`, lenient:
 * mesh/config-problems.ts `argsOfConfig`), and their checks (`settingsFromArgs`, the same
 * `validateMeshArgs` the program's config goes through), with fixes phrased for arguments. Pure.
 */
import { unknownFieldProblems } from "../components/arg-checks";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args";
import { ArgValues } from "./config-reader";
import { validateMeshArgs } from "./settings";
import { LIST_KEYS, RawConfig, argsOfConfig, formatProblems, problem, shellQuote, configError } from "./config-problems";
import { CONFIG_KEY_OF_FIELD } from "./config-schema";
import { Problem, isStackConfigError } from "../lib/problems";
import { FixStyle } from "../lib/fix-style";
import { StackSettings } from "./settings-types";

/** Fixes phrased as argument changes (what a user of the component edits). */
export const ARGS_FIX: FixStyle = {
    set: (k, v) =>
        `set ${k}: ${LIST_KEYS.has(k) ? JSON.stringify(v.split(",")) : /^(\d+|true|false)$/.test(v) || /^[[{]/.test(v) ? v : JSON.stringify(v)} in MeshRateLimit's args`,
    rm: (k) => `remove ${k} from MeshRateLimit's args`,
    rename: (from, to, v) => `rename ${from} to ${to} (value ${shellQuote(v)})`,
    header: (n) => `MeshRateLimit: invalid arguments (${n} problem${n === 1 ? "" : "s"}); nothing was created:`,
};

/** MeshRateLimit's arguments from stack config (keys without the project prefix; empty value = unset). Checks nothing. */
export function rawToArgs(raw: RawConfig): MeshRateLimitArgs {
    return argsOfConfig(raw) as MeshRateLimitArgs;
}

/**
 * The problems only the components' plans show (an object over the API server's bound), under the
 * argument that sets each field, phrased as the argument checks' are (a stack-config InputError, so
 * the program phrases its fixes for config).
 */
export function planProblemsError(problems: Problem[]): Error {
    const asArgs = problems.map((p) => {
        // A field no config key sets is reported under its own name, with the component's fix.
        const key = CONFIG_KEY_OF_FIELD[p.key] ?? p.key;
        if (key === "monitoringDashboard") return problem(key, String(p.value), p.problem, (s) => s.set(key, "false"));
        if (key === "descriptors") return problem(key, undefined, p.problem, "give fewer descriptors");
        return problem(key, p.value === undefined ? undefined : String(p.value), p.problem, p.fix);
    });
    const err = configError(asArgs);
    err.message = formatProblems(asArgs, ARGS_FIX).replace(/mesh-ratelimit:/g, "");
    return err;
}

/**
 * Validated settings of MeshRateLimit's arguments; throws an `InputError` with argument-phrased fixes
 * (its problems keep every style: the program renders them for stack config). `extraProblems` are reported with the rest.
 */
export function settingsFromArgs(args: MeshRateLimitArgs, extraProblems: Problem[] = []): StackSettings {
    // Unknown arguments, and unknown fields of the route list (the descriptor list checks its own, as stack config does).
    const unknown: Problem[] = unknownFieldProblems("MeshRateLimit", args)
        .filter((p) => !p.key.startsWith("descriptors["))
        .map((p) => (p.key.includes(".") ? p : { ...p, value: String(p.value), fix: p.fix.startsWith("rename") ? p.fix : ARGS_FIX.rm(p.key) }));
    try {
        return validateMeshArgs((args ?? {}) as ArgValues, [...unknown, ...extraProblems]);
    } catch (e) {
        if (!isStackConfigError(e)) throw e;
        const err = configError(e.problems);
        err.message = formatProblems(e.problems, ARGS_FIX).replace(/mesh-ratelimit:/g, "");
        throw err;
    }
}
