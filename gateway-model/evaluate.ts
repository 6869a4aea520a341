/**
 * One request through the gateway MODEL: the path normalised as Envoy does, the route selected,
 * the descriptors each `rate_limits` element yields, and the limit of the service's config that
 * answers each. Pure.
 */
import { maskedRemoteAddress } from "../builders/client-cidr";
import { EXPR_DESCRIPTOR_EXTENSION } from "../builders/rules";
import { compileFullMatch } from "../lib/formats";
import { DynamicMetadata, metadataActionValue } from "./jwt-metadata-model";
import { DEFAULT_PATH_NORMALIZATION, DescriptorExplanation, Entry, Explanation, GatewayModel, ModelRoute, PathNormalization, RouteMatch } from "./model";
import { field } from "../builders/rendered-config";

/**
 * The request path as the gateway's Envoy leaves it under Istio's `pathNormalization`, in Envoy's
 * order (ConnectionManagerUtility::maybeNormalizePath): `%2F`/`%5C` decoded to `/` and `\`
 * (DECODE_AND_MERGE_SLASHES only); then (all but NONE) the parameters of a `.` or `..` segment
 * dropped (`/..;x/` is `/../`), and the path canonicalized as Chromium's URL library does
 * (`\` → `/`, `%2E`/`%2e` → `.`, dot segments resolved; every other escape kept as written,
 * letter case and `;` parameters kept); then adjacent slashes merged (MERGE_SLASHES and
 * DECODE_AND_MERGE_SLASHES). The query is kept as sent; a fragment is dropped.
 */
export function normalizePath(path: string, setting: PathNormalization = DEFAULT_PATH_NORMALIZATION): string {
    const hash = path.indexOf("#");
    const noFragment = hash >= 0 ? path.slice(0, hash) : path;
    const q = noFragment.indexOf("?");
    let rawPath = q >= 0 ? noFragment.slice(0, q) : noFragment;
    const query = q >= 0 ? noFragment.slice(q) : "";
    if (setting === "NONE") return `${rawPath}${query}`;
    if (setting === "DECODE_AND_MERGE_SLASHES") rawPath = rawPath.replace(/%2f/gi, "/").replace(/%5c/gi, "\\");
    let p = canonicalPath(stripDotSegmentParameters(rawPath));
    if (setting !== "BASE") p = mergeSlashes(p);
    return `${p}${query}`;
}

/** `..;x` and `.;x` segments without their parameters (Envoy's `strip_dotdot_segments_with_parameters`). */
function stripDotSegmentParameters(path: string): string {
    return path
        .split("/")
        .map((s) => (s.startsWith("..;") ? ".." : s.startsWith(".;") ? "." : s))
        .join("/");
}

/** Chromium's path canonicalization as Envoy uses it: backslashes, `%2E`, dot segments. */
function canonicalPath(rawPath: string): string {
    const p = rawPath.replace(/\\/g, "/").replace(/%2e/gi, ".");
    const out: string[] = [];
    const segs = p.split("/");
    if (segs[0] === "") segs.shift();
    segs.forEach((seg, i) => {
        const last = i === segs.length - 1;
        if (seg === ".") {
            if (last) out.push("");
        } else if (seg === "..") {
            out.pop();
            if (last) out.push("");
        } else out.push(seg);
    });
    return `/${out.join("/")}`;
}

/** Envoy's `merge_slashes`: runs of `/` as one, a leading and a trailing slash kept. */
function mergeSlashes(p: string): string {
    return p.replace(/\/{2,}/g, "/");
}

/** The path without its query (and fragment): CEL's `request.url_path`. */
export function urlPath(path: string): string {
    return path.split(/[?#]/)[0];
}

function routeMatches(m: RouteMatch, path: string): boolean {
    if (m.kind === "exact") return urlPath(path) === m.value;
    if (m.kind === "prefix") return path.startsWith(m.value);
    return fullMatch(m.value, urlPath(path));
}

export function matchText(m: RouteMatch): string {
    return `${m.kind} ${m.value}`;
}

/** RE2 full match, as Envoy's `safe_regex` (google_re2): the same compiler the config validation uses. */
export function fullMatch(regex: string, s: string): boolean {
    let re = compiled.get(regex);
    if (!re) compiled.set(regex, (re = compileFullMatch(regex)));
    return re.test(s);
}
const compiled = new Map<string, { test(s: string): boolean }>();

/**
 * Envoy's percent-decoding of a query name or value (`PercentEncoding::decode`): each `%` followed
 * by two hex digits becomes that byte, anything else (`%zz`, a trailing `%`, `+`) stays as written.
 * The bytes are read as UTF-8 (the model's one divergence: invalid UTF-8 becomes U+FFFD here).
 */
export function envoyPercentDecode(s: string): string {
    return envoyPercentDecodeBytes(s).toString("utf8");
}

/** The bytes of Envoy's percent-decoding (what reaches the rate-limit service, invalid UTF-8 included). */
export function envoyPercentDecodeBytes(s: string): Buffer {
    const bytes: number[] = [];
    for (let i = 0; i < s.length; i++) {
        if (s[i] === "%" && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
            bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
            i += 2;
        } else bytes.push(...Buffer.from(s[i]!, "utf8"));
    }
    return Buffer.from(bytes);
}

/**
 * The value Envoy's `query_parameters` action reads from `:path`: the query (after the first `?`)
 * split on `&`, each part at its first `=` (no `=`: the value is empty), name and value
 * percent-decoded; the first part whose name is exactly `name`, or undefined.
 */
export function envoyFirstQueryValue(path: string, name: string): string | undefined {
    const q = path.indexOf("?");
    if (q < 0) return undefined;
    for (const part of path.slice(q + 1).split("&")) {
        const eq = part.indexOf("=");
        if (envoyPercentDecode(eq < 0 ? part : part.slice(0, eq)) === name) return eq < 0 ? "" : envoyPercentDecode(part.slice(eq + 1));
    }
    return undefined;
}

/** Route the gateway picks for a normalized `path`, or undefined (404). */
export function selectRoute(m: GatewayModel, path: string): { route: ModelRoute; match: RouteMatch } | undefined {
    for (const route of m.routes) {
        const match = route.matches.find((mt) => routeMatches(mt, path));
        if (match) return { route, match };
    }
    return undefined;
}

/** The entries one `rate_limits` element produces for a request with these headers, or undefined. */
export function descriptorFor(
    rateLimit: any,
    headers: Record<string, string>,
    clientAddress?: string,
    firstValues?: Record<string, string>,
    dynamicMetadata: DynamicMetadata = {},
): Entry[] | undefined {
    const entries: Entry[] = [];
    for (const action of rateLimit.actions ?? []) {
        const rh = field(action, "request_headers");
        const qp = field(action, "query_parameters");
        const hvm = field(action, "header_value_match");
        const gk = field(action, "generic_key");
        const ext = action.extension;
        const ra = field(action, "remote_address");
        const mra = field(action, "masked_remote_address");
        const md = action.metadata;
        if (md) {
            const v = metadataActionValue(md, dynamicMetadata);
            if (v === undefined) return undefined;
            if (v !== "skip") entries.push({ key: field(md, "descriptor_key"), value: v });
        } else if (mra) {
            const masked = maskedAddress(mra, clientAddress);
            if (masked === undefined) return undefined;
            entries.push({ key: "masked_remote_address", value: masked });
        } else if (ra) {
            // The address Envoy trusts (downstream peer or the chosen X-Forwarded-For entry), assumed here.
            if (clientAddress === undefined) return undefined;
            entries.push({ key: "remote_address", value: clientAddress });
        } else if (rh) {
            // A repeated header: `request_headers` sends its first value (router_ratelimit.cc).
            const v = (firstValues ?? headers)[field(rh, "header_name")];
            if (v === undefined) {
                if (field(rh, "skip_if_absent")) continue;
                return undefined;
            }
            entries.push({ key: field(rh, "descriptor_key"), value: v });
        } else if (qp) {
            const v = envoyFirstQueryValue(headers[":path"] ?? "", field(qp, "query_parameter_name"));
            if (v === undefined) {
                if (field(qp, "skip_if_absent")) continue;
                return undefined;
            }
            entries.push({ key: field(qp, "descriptor_key"), value: v });
        } else if (hvm) {
            const all = (hvm.headers ?? []).every((h: any) => headerMatches(h, headers));
            const expect = field(hvm, "expect_match") ?? true;
            if (all !== expect) return undefined;
            entries.push({ key: field(hvm, "descriptor_key") ?? "header_match", value: field(hvm, "descriptor_value") });
        } else if (gk) {
            entries.push({ key: field(gk, "descriptor_key") ?? "generic_key", value: field(gk, "descriptor_value") });
        } else if (ext && ext.name === EXPR_DESCRIPTOR_EXTENSION) {
            entries.push(expressionEntry(ext, headers[":path"]));
        } else {
            throw new Error(`rate-limit action ${JSON.stringify(action)} is not modelled`);
        }
    }
    return entries.length ? entries : undefined;
}

/** `masked_remote_address`: the client's address masked to the action's prefix lengths (Envoy's defaults 32 and 128), or undefined without one. */
function maskedAddress(mra: any, clientAddress: string | undefined): string | undefined {
    if (clientAddress === undefined) return undefined;
    return maskedRemoteAddress(clientAddress, field(mra, "v4_prefix_mask_len") ?? 32, field(mra, "v6_prefix_mask_len") ?? 128);
}

/** The entry of a CEL descriptor expression (the ones this package writes) for a request to `path`. */
function expressionEntry(ext: any, path: string): Entry {
    const tc = field(ext, "typed_config") ?? {};
    const text = tc.text;
    let value: string;
    const bounded = /^size\(request\.url_path\) <= (\d+) \? request\.url_path : "([^"\\]*)"$/.exec(String(text));
    const over = /^size\(request\.url_path\) > (\d+) \? "([^"\\]*)" : "([^"\\]*)"$/.exec(String(text));
    if (text === "request.url_path") value = urlPath(path);
    else if (text === "request.path") value = path;
    // The per-value catch-all's bound: the path, or one shared value when it is longer (CEL
    // `size` counts code points; the normalized path is ASCII).
    else if (bounded) value = [...urlPath(path)].length <= Number(bounded[1]) ? urlPath(path) : bounded[2]!;
    // The long-path marker of the catch-all's per-client entry.
    else if (over) value = [...urlPath(path)].length > Number(over[1]) ? over[2]! : over[3]!;
    else throw new Error(`CEL descriptor expression ${JSON.stringify(text)} is not modelled`);
    return { key: field(tc, "descriptor_key"), value };
}

function headerMatches(h: any, headers: Record<string, string>): boolean {
    // `treat_missing_header_as_empty`: a missing header is matched as the empty value.
    const v = headers[h.name] ?? (field(h, "treat_missing_header_as_empty") === true ? "" : undefined);
    const invert = field(h, "invert_match") === true;
    let ok: boolean;
    const srm = field(h, "safe_regex_match");
    const sm = field(h, "string_match");
    if (v === undefined) {
        // Envoy (HeaderUtility::matchHeaders): a missing header matches only a presence test,
        // `present_match: false`, or `present_match: true` inverted; never an inverted value matcher.
        const present = field(h, "present_match");
        return present !== undefined && present === invert;
    } else if (srm) {
        ok = fullMatch(srm.regex, v);
    } else if (field(h, "exact_match") !== undefined) {
        ok = v === field(h, "exact_match");
    } else if (field(h, "prefix_match") !== undefined) {
        ok = v.startsWith(field(h, "prefix_match"));
    } else if (sm) {
        // `ignore_case` applies to exact/prefix/suffix/contains, not to safe_regex.
        const c = field(sm, "ignore_case") === true ? (s: string) => s.toLowerCase() : (s: string) => s;
        if (sm.exact !== undefined) ok = c(v) === c(sm.exact);
        else if (sm.prefix !== undefined) ok = c(v).startsWith(c(sm.prefix));
        else if (sm.suffix !== undefined) ok = c(v).endsWith(c(sm.suffix));
        else if (sm.contains !== undefined) ok = c(v).includes(c(sm.contains));
        else if (field(sm, "safe_regex")) ok = fullMatch(field(sm, "safe_regex").regex, v);
        else throw new Error(`string_match ${JSON.stringify(sm)} is not modelled`);
    } else if (field(h, "present_match") !== undefined) {
        ok = field(h, "present_match") === true;
    } else {
        throw new Error(`header matcher ${JSON.stringify(h)} is not modelled`);
    }
    return invert ? !ok : ok;
}

/**
 * What the rate-limit service's config says about one descriptor (its lookup, modelled):
 * `key_value`, then a `value` ending in `*` as a prefix, then the key alone.
 */
export function lookupLimit(config: GatewayModel["config"], domain: string, entries: Entry[]): DescriptorExplanation {
    if (config.domain !== domain) return { entries };
    let level: GatewayModel["config"]["descriptors"] = config.descriptors;
    let node: GatewayModel["config"]["descriptors"][number] | undefined;
    const names: string[] = [];
    for (const e of entries) {
        node =
            level.find((d) => d.key === e.key && d.value === e.value) ??
            level.find((d) => d.key === e.key && typeof d.value === "string" && d.value.endsWith("*") && e.value.startsWith(d.value.slice(0, -1))) ??
            level.find((d) => d.key === e.key && d.value === undefined);
        if (!node) return { entries };
        names.push(node.value === undefined ? `${node.key} (catch-all)` : `${node.key}=${node.value}`);
        level = node.descriptors ?? [];
    }
    const rl = node?.rate_limit;
    if (!node || !rl) return { entries };
    const bucket = `${domain}_${entries.map((e) => `${e.key}_${e.value}_`).join("")}{window}`;
    const written = "unlimited" in rl ? undefined : rl;
    return {
        entries,
        limit: {
            entry: names.join(" / "),
            unit: (written?.unit ?? "").toLowerCase(),
            requests: written?.requests_per_unit ?? 0,
            unlimited: "unlimited" in rl && rl.unlimited,
            shadow: node.shadow_mode === true,
        },
        bucket,
    };
}

/**
 * The `rate_limits` the model's filter sends on a route: `RateLimitPerRoute.rate_limits` under its
 * name (the route's, else the virtual host's) alone when present; else the route's and virtual
 * host's own entries of its stage, combined by `vh_rate_limits`.
 */
export function rateLimitsOf(m: GatewayModel, route: ModelRoute): { rateLimits: any[]; level: Explanation["rateLimitsFrom"]["level"]; envoyFilter?: string } {
    if (route.perFilter) return { rateLimits: route.perFilter.rateLimits, level: "route per-filter", envoyFilter: route.perFilter.envoyFilter };
    if (m.vhostPerFilter) return { rateLimits: m.vhostPerFilter.rateLimits, level: "virtual host per-filter", envoyFilter: m.vhostPerFilter.envoyFilter };
    const vh = m.vhostRateLimits.flatMap((r) => r.rateLimits);
    const vhFilters = m.vhostRateLimits.map((r) => r.envoyFilter).join(", ");
    const own = route.rateLimits;
    const useVh = route.vhRateLimits === "INCLUDE" || (route.vhRateLimits === "OVERRIDE" && own.length === 0 && !route.anyRateLimits);
    const level: Explanation["rateLimitsFrom"]["level"] =
        own.length && useVh && vh.length ? "route and virtual host" : own.length ? "route" : useVh && vh.length ? "virtual host" : "none";
    const envoyFilter = [own.length ? route.envoyFilter : undefined, useVh && vh.length ? vhFilters : undefined].filter(Boolean).join(", ") || undefined;
    return { rateLimits: [...own, ...(useVh ? vh : [])], level, ...(envoyFilter ? { envoyFilter } : {}) };
}
