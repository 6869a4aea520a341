/**
 * The program body, shared by `index.ts` (the Pulumi program) and the offline renderer:
 * config → validated settings → components.
 */
import { MeshRateLimit } from "./mesh-ratelimit";
import { ConfigError, ConfigProblem, StackSettings, rawConfigFromAll, resolveSettings } from "./settings";

export interface ProgramOptions {
    /** Extra checks against the live cluster (skipped by the offline renderer and unit tests). */
    checkCluster?: (s: StackSettings) => ConfigProblem[];
    kubeContext?: string;
}

/** Validates the whole config (throws `ConfigError` before any resource is registered) and builds the stack. */
export function buildProgram(allConfig: Record<string, string>, opts: ProgramOptions = {}): { settings: StackSettings; stack: MeshRateLimit } {
    const { raw, unknown } = rawConfigFromAll(allConfig);
    const settings = resolveSettings(raw, unknown);
    const clusterProblems = opts.checkCluster?.(settings) ?? [];
    if (clusterProblems.length) throw new ConfigError(clusterProblems);
    const stack = new MeshRateLimit("mesh-ratelimit", { settings, kubeContext: opts.kubeContext });
    return { settings, stack };
}
