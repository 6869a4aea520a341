/** Shared inputs of the stack config tests (stack-config-errors.test.ts, config-values.test.ts): the dev stack's config, problem helpers and the problem texts they expect (written here, not read from the code). */
import { FixStyle } from "../../lib/fix-style";
import { isStackConfigError, Problem } from "../../lib/problems";
import { RawConfig } from "../../program/config-problems";
import { resolveSettings } from "../../program/config-args";

/** The dev stack's config (as in config-errors.test.ts): valid, so each case fails only for what it changes. */
export const BASE: RawConfig = {
    variant: "A",
    apiProfile: "current",
    includeIpRanges: "10.4.0.0/14,10.7.240.0/20",
    espServiceName: "echo-api.endpoints.example-project.cloud.goog",
};

/** A style whose every command is visibly its own. */
export const STYLE: FixStyle = {
    set: (k, v) => `SET ${k}=${v}`,
    rm: (k) => `RM ${k}`,
    rename: (from, to, v) => `MV ${from}->${to}=${v}`,
    header: (n) => `H(${n})`,
};

export type Plain = Omit<Problem, "fixWith" | "problemWith">;
export const P = (key: string, value: string | undefined, text: string, fix: string): Plain => ({ key, value, problem: text, fix });
export const plain = ({ fixWith: _f, problemWith: _p, ...p }: Problem): Plain => p;

/** The problems of BASE + `set`, without the style functions; [] when the config is accepted. */
export function problemsOf(set: RawConfig): Plain[] {
    try {
        resolveSettings({ ...BASE, ...set });
    } catch (e) {
        if (!isStackConfigError(e)) throw e;
        return e.problems.map(plain);
    }
    return [];
}

/** The config after applying every fix, when each is one `pulumi config set K V` or `rm K`; else undefined. */
export function withFixesApplied(set: RawConfig, problems: Plain[]): RawConfig | undefined {
    const next: RawConfig = { ...set };
    for (const p of problems) {
        const m = /^pulumi config (?:set (\S+) ('(?:[^']|'\\'')*'|[^\s']+)|rm (\S+))$/.exec(p.fix);
        if (!m) return undefined;
        if (m[3] !== undefined) next[m[3]] = undefined;
        else next[m[1]] = m[2].startsWith("'") ? m[2].slice(1, -1).replace(/'\\''/g, "'") : m[2];
    }
    return next;
}

export const INT = "must be a whole number";
export const BOOL = "must be true or false";
export const PATH = "must be a URL path starting with '/' and without spaces";
export const PROTO = "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')";
export const GO = "must be a Go duration such as '0', '150us' or '2ms'";
export const LABEL = "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')";
export const SUBDOMAIN = "must be a Kubernetes DNS-1123 subdomain (lower-case letters, digits, '-', '.')";
export const WINDOW_CLUSTER_ONLY =
    "has no effect with redisMode in-cluster: the pinned service applies REDIS_PIPELINE_WINDOW to Redis Cluster only (its single and Sentinel clients pipeline each request's commands already)";
export const ROUTES_FIX = `pulumi config set virtualServiceRoutes '[{"exact":["/productpage"],"prefix":["/static"]},{"name":"api","prefix":["/api/v1/products"]}]'`;
export const DESC_FIX = `pulumi config set descriptors '[{"key":"PATH","value":"/productpage","unit":"minute","requestsPerUnit":1},{"key":"PATH","unit":"minute","requestsPerUnit":100}]'`;
export const NEEDS = (i: number) => `route #${i} needs 'exact' and/or 'prefix': non-empty lists of paths starting with '/'`;
export const API_ROUTE = '{"name":"api","prefix":["/api/v1/products"]}';
export const D = (fields: string) => `{"key":"PATH","unit":"minute","requestsPerUnit":1${fields}}`;
