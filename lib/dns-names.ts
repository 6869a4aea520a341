/**
 * Kubernetes names: DNS-1123 names (the check, the problem text and a suggested valid name) and
 * label keys and values, shared by the stack config, the component arguments and the Redis Secret
 * names. Pure, no imports.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Whether `v` is a Kubernetes DNS-1123 label (63 characters at most) or subdomain (253). */
export function isDnsName(v: unknown, kind: "label" | "subdomain"): v is string {
    return typeof v === "string" && (kind === "label" ? DNS1123_LABEL : DNS1123_SUBDOMAIN).test(v) && v.length <= (kind === "label" ? 63 : 253);
}

/** The problem text of a bad DNS name (stack config and component arguments alike). */
export function dnsNameProblem(kind: "label" | "subdomain"): string {
    return `must be a Kubernetes DNS-1123 ${kind} (lower-case letters, digits, '-'${kind === "subdomain" ? ", '.'" : ""})`;
}

/**
 * A valid DNS name close to a bad one, for the fix: lower case, other characters (and, in a label,
 * dots) made '-', empty parts dropped, cut to the length limit; "name" when nothing is left.
 */
export function suggestedDnsName(v: unknown, kind: "label" | "subdomain"): string {
    const max = kind === "label" ? 63 : 253;
    const parts = String(v ?? "")
        .toLowerCase()
        .replace(kind === "label" ? /[^a-z0-9-]/g : /[^a-z0-9.-]/g, "-")
        .split(".");
    const joined = parts
        .map((p) => p.replace(/^-+|-+$/g, ""))
        .filter(Boolean)
        .join(".");
    return joined.slice(0, max).replace(/[-.]+$/, "") || "name";
}

/** A label key: an optional DNS-subdomain prefix and `/`, then a name of letters, digits, `-`, `_`, `.`. */
export const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** A label value (63 characters at most, checked apart): empty, or letters and digits at both ends. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
