/**
 * A Kubernetes object as plain JSON: what the offline render returns (render/render.ts) and what the
 * gateway model reads (gateway-model/). Pure, no imports.
 */
export interface K8sObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
    /** Every other field (`spec`, `data`, ...): untyped JSON, read by path. */
    [field: string]: any;
}
