/** The stack's rendered objects, straight from the lead's renderer (render/render.ts). */
import { renderStack } from "../../../render/render";
import type { K8sObject } from "../../../render/explain";

export type Variant = "A" | "B";

export async function renderVariant(variant: Variant, overrides: Record<string, string> = {}, apiProfile: "current" | "seed" = "current"): Promise<K8sObject[]> {
    return (await renderStack({ variant, apiProfile, overrides })) as K8sObject[];
}
