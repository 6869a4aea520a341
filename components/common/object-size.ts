/**
 * The size bound of one Kubernetes object: the API server refuses a ConfigMap whose data holds more
 * than 1 MiB (1,048,576 bytes), and etcd stores no request much larger. A component checks the
 * objects its arguments grow (config.yaml, the dashboard, the EnvoyFilters) before registering
 * any of them, so a long rule list is refused at preview instead of half-way through `pulumi up`.
 */
import { Problem } from "../../lib/problems";

/** The most bytes one object may hold (a ConfigMap's data; the same bound is kept for every object). */
export const MAX_OBJECT_BYTES = 1_048_576;

/** One object an argument grows: what it is, its text, the field reported, its value, why it grows (`by`) and the fix. */
export interface SizedObject {
    what: string;
    text: string;
    key: string;
    value: unknown;
    by: string;
    fix: string;
}

/** A problem for each object over `MAX_OBJECT_BYTES`. */
export function oversizeProblems(objects: SizedObject[]): Problem[] {
    return objects
        .map((o) => ({ o, bytes: Buffer.byteLength(o.text, "utf8") }))
        .filter(({ bytes }) => bytes > MAX_OBJECT_BYTES)
        .map(({ o, bytes }) => ({
            key: o.key,
            value: o.value,
            problem: `${o.by} makes ${o.what} ${bytes} bytes, more than the ${MAX_OBJECT_BYTES} bytes the Kubernetes API server stores in one object`,
            fix: o.fix,
        }));
}
