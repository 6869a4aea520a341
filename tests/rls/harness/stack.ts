/** The stack's rendered objects, straight from the lead's renderer (render/render.ts). */
import { renderStack } from "../../../render/render";
import type { K8sObject } from "../../../lib/k8s-object";

export type Variant = "A" | "B";

/**
 * Stack config applied to every render of the tier, from MESH_RL_TEST_OVERRIDES (JSON object of
 * key → value), so the whole tier can be run against non-default settings, e.g.
 * MESH_RL_TEST_OVERRIDES='{"localCacheSizeInBytes":"0"}' npm run test:rls
 */
export function tierOverrides(): Record<string, string> {
    const text = process.env.MESH_RL_TEST_OVERRIDES;
    return text ? (JSON.parse(text) as Record<string, string>) : {};
}

export async function renderVariant(
    variant: Variant,
    overrides: Record<string, string> = {},
    apiProfile: "current" | "seed" = "current",
): Promise<K8sObject[]> {
    return (await renderStack({ variant, apiProfile, overrides: { ...tierOverrides(), ...overrides } })) as K8sObject[];
}
