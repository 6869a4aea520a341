/**
 * The request headers a program's objects can read: replay keeps of each log line only those (and
 * the fields every decision needs: time, method, path, host, client, upstream, claims), so a header
 * logged but read by no rule (a varied X-Forwarded-For, a unique request id) costs nothing.
 *
 * Conservative by construction: a header counts as read when its name (in any case) occurs
 * anywhere in what the model reads, as a whole value, a key, or inside a longer text (a CEL
 * expression, a `%REQ(...)%` of a cost's format), in every object but the access logs' own formats
 * (which name every header they log). A header kept that no rule reads costs memory, never a wrong
 * answer; one dropped that a rule reads would change the answer, and cannot happen here short of a
 * name built at run time, which no rendered object holds. Pure.
 */
import { K8sObject } from "../lib/k8s-object";

/** Every string and key of the objects (lower case), the access logs' formats left out, joined into one text to search. */
function readText(objects: K8sObject[]): string {
    const parts: string[] = [];
    const walk = (v: unknown): void => {
        if (typeof v === "string") parts.push(v.toLowerCase());
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v !== null && typeof v === "object")
            for (const [k, x] of Object.entries(v)) {
                if (k === "access_log" || k === "accessLogFormat") continue;
                parts.push(k.toLowerCase());
                walk(x);
            }
    };
    objects.forEach(walk);
    return parts.join("\n");
}

/** Whether the program's objects can read request header `name` (lower case); answers are kept per name. */
export function headerReader(objects: K8sObject[]): (name: string) => boolean {
    const text = readText(objects);
    const known = new Map<string, boolean>();
    return (name) => {
        let r = known.get(name);
        if (r === undefined) known.set(name, (r = text.includes(name.toLowerCase())));
        return r;
    };
}
