/**
 * The API server's side of the platform's limits: a `ValidatingAdmissionPolicy` and its binding
 * (admissionregistration.k8s.io/v1, CEL) that refuse, in the gateway's namespace and Istio's root
 * namespace, an EnvoyFilter written by anyone but the platform's identity when it
 * - `platform-filters`: patches, removes, replaces or inserts relative to one of the platform's HTTP
 *   filters, or rewrites the HTTP connection manager or a listener that holds them;
 * - `platform-filters-unanchored`: an HTTP_FILTER patch on the gateway with no `subFilter` (Istio
 *   matches it against every HTTP filter, the platform's among them) removing, replacing, merging or
 *   inserting before, or any INSERT_FIRST;
 * - `platform-per-route`: writes per-route config under the platform's names other than the one
 *   switch a team may write (`FilterConfig { disabled: true }` under the defaults' names), at the top
 *   of a patch value or nested in its `virtual_hosts[]`, their `routes[]` or its `routes[]`;
 * - `defaults-switch-host`: switches the defaults off on a virtual host not assigned to the writer's
 *   namespace (builders/host-ownership-rule.ts, the same assignments written into the CEL);
 * - `platform-names`: takes the platform's names (its EnvoyFilter names, HTTP filter names, domain),
 *   or deletes one of the platform's EnvoyFilters.
 *
 * Each patch-value field a rule judges is read under both spellings Istio's decoder accepts
 * (`typed_per_filter_config` and `typedPerFilterConfig`, `typed_config` and `typedConfig`, ...).
 *
 * The writer's namespace is the namespace of the service account that writes
 * (`system:serviceaccount:<namespace>:<name>`): every team writes into the gateway's namespace, so
 * the object's own namespace says nothing about its writer, and the rate-limit filter name inside
 * it is whatever the writer typed. Any other user owns no host. With route-bound ownership the API
 * server cannot read routes and Gateways, so it admits a switch on a host assigned to no one (the
 * previews check the route's conditions) and still refuses hosts assigned to another team. Pure.
 */
import { HCM_FILTER, ROUTER_FILTER } from "./envoy-types";
import { camelOf, PER_FILTER_CONFIG_PATHS } from "./rendered-config";
import { PLATFORM_DOMAIN, PLATFORM_FILTER_NAMES, PLATFORM_OBJECT_PREFIX, PLATFORM_PRE_LIMIT_NAMES } from "./platform-filters";

/** The API version of the policy and its binding (GA since Kubernetes 1.30). */
export const ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1";

/** What the policy is generated from. */
export interface AdmissionPolicyOptions {
    /** The gateway's namespace (where every team's EnvoyFilters go) and Istio's root namespace. */
    namespaces: readonly string[];
    /** The name of the policy and its binding. */
    name: string;
    /** namespace → hosts, as PlatformRateLimit `teamHosts`. */
    teamHosts: Readonly<Record<string, readonly string[]>>;
    routeBound: boolean;
    /** The platform's own identity: user names and groups the policy never refuses. */
    platformUsers: readonly string[];
    platformGroups: readonly string[];
}

/** A rule of the policy: its name (said in every refusal), the CEL that must hold and the refusal's text. */
export interface AdmissionRule {
    name: string;
    expression: string;
    /** CEL of the refusal's message (the rule's name and its fix in it). */
    messageExpression: string;
}

const lit = (s: string): string => JSON.stringify(s);
const list = (xs: readonly string[]): string => `[${xs.map(lit).join(", ")}]`;
/** `has(a.b) && has(a.b.c) ...` of a path below `root`. */
const hasPath = (root: string, path: readonly string[]): string => path.map((_, i) => `has(${[root, ...path.slice(0, i + 1)].join(".")})`).join(" && ");

/** The platform's HTTP filter names: both filters and their pre-limits. */
const PLATFORM_NAMES = [...Object.values(PLATFORM_FILTER_NAMES), ...Object.values(PLATFORM_PRE_LIMIT_NAMES)];
const DEFAULTS_NAMES = [PLATFORM_FILTER_NAMES.defaults, PLATFORM_PRE_LIMIT_NAMES.defaults];
const OVERRIDES_NAMES = [PLATFORM_FILTER_NAMES.overrides, PLATFORM_PRE_LIMIT_NAMES.overrides];

const SUB_FILTER = `${hasPath("p", ["match", "listener", "filterChain", "filter", "subFilter", "name"])} && p.match.listener.filterChain.filter.subFilter.name in ${list(PLATFORM_NAMES)}`;
/**
 * Istio decodes a patch value with protobuf JSON, which takes a field under its proto name
 * (snake_case) and its JSON name (lowerCamelCase) alike: every field the rules judge is read under
 * both, and a check holds for each spelling written (given both, which one Istio keeps is its
 * decoder's choice, so neither is trusted over the other).
 */
const spellings = (snake: string): string[] => [...new Set([snake, camelOf(snake)])];
/** `p.patch.value.<path>` under every spelling of each of its fields. */
function valuePaths(path: readonly string[]): string[][] {
    return path.reduce<string[][]>((acc, f) => acc.flatMap((prefix) => spellings(f).map((s) => [...prefix, s])), [[]]);
}
/** CEL: `p.patch.value.<path>` is written under some spelling, and `check` (when given) holds of it. */
const anyValueAt = (path: readonly string[], check?: (at: string) => string): string =>
    `(${valuePaths(path)
        .map((ps) => `(${hasPath("p", ["patch", "value", ...ps])}${check ? ` && ${check(["p.patch.value", ...ps].join("."))}` : ""})`)
        .join(" || ")})`;
/** CEL: `check` holds of some value at `path` below `root` (each field under both spellings, `[]`: some element of a list). */
function anyAt(root: string, path: readonly string[], check: (at: string) => string, depth = 0): string {
    if (!path.length) return check(root);
    const [f, ...rest] = path;
    const each = rest[0] === "[]";
    const alts = spellings(f!).map((s) => {
        const at = `${root}.${s}`;
        const v = `e${depth}`;
        return each ? `(has(${at}) && ${at}.exists(${v}, ${anyAt(v, rest.slice(1), check, depth + 1)}))` : `(has(${at}) && ${anyAt(at, rest, check, depth)})`;
    });
    return `(${alts.join(" || ")})`;
}
/**
 * CEL: `check` holds of some per-filter config the patch value writes, under either spelling, at its
 * top or nested in its virtual hosts and routes (PER_FILTER_CONFIG_PATHS, the TS rule's own list).
 */
const anyPerFilter = (check: (m: string) => string): string =>
    `(${hasPath("p", ["patch", "value"])} && (${PER_FILTER_CONFIG_PATHS.map((path) => anyAt("p.patch.value", path, check)).join(" || ")}))`;
// A ROUTE_CONFIGURATION patch is merged into the whole route configuration: Istio ignores its
// vhost match (pilot/pkg/networking/core/envoyfilter/rc_patch.go routeConfigurationMatch), so it is on every host.
const VHOST = `(has(p.applyTo) && p.applyTo == "ROUTE_CONFIGURATION" ? "" : ${hasPath("p", ["match", "routeConfiguration", "vhost", "name"])} ? p.match.routeConfiguration.vhost.name : "")`;
const HOST = `(${VHOST}.contains(":") ? ${VHOST}.substring(0, ${VHOST}.lastIndexOf(":")) : ${VHOST})`;
const IS_SWITCH = anyPerFilter((m) => `${list(DEFAULTS_NAMES)}.exists(n, n in ${m})`);
const NOT_DELETE = `request.operation == "DELETE" || `;
const who = `"EnvoyFilter " + string(variables.f.metadata.name) + " (written by " + request.userInfo.username + ")"`;

/**
 * CEL: an HTTP_FILTER patch that reaches the platform's filters without naming them. Istio matches a
 * patch with no `subFilter` against every HTTP filter of the listener (envoyfilter/listener_patch.go
 * `httpFilterMatch`): MERGE merges its value into each (its name renames each), REMOVE removes each
 * where a release applies it filter by filter, REPLACE has no single target; INSERT_BEFORE without
 * one goes first, as INSERT_FIRST always does (ahead of the platform's filters). ADD and INSERT_AFTER
 * without one append after every filter. Only a context that reaches the gateway (GATEWAY, ANY or
 * none given) is judged.
 */
function unanchoredHttpFilter(op: string, applyTo: string): string {
    const ctx = `(${hasPath("p", ["match", "context"])} ? p.match.context : "ANY")`;
    const noSub = `!(${hasPath("p", ["match", "listener", "filterChain", "filter", "subFilter", "name"])})`;
    return `(${applyTo} == "HTTP_FILTER" && ${ctx} in ["GATEWAY", "ANY"] && ((${op} in ["REMOVE", "REPLACE", "MERGE", "INSERT_BEFORE"] && ${noSub}) || ${op} == "INSERT_FIRST"))`;
}

/** The CEL of a host the writer may switch the defaults off on. */
function hostAllowed(routeBound: boolean): string {
    const own = `${VHOST} != "" && ${HOST} in variables.ownHosts`;
    return routeBound ? `${VHOST} != "" && variables.team != "" && (${HOST} in variables.ownHosts || !(${HOST} in variables.assigned))` : own;
}

/** The policy's rules, in the order the API server reports them. Exported for testing. */
export function admissionRules(o: AdmissionPolicyOptions): AdmissionRule[] {
    const hcm = `${hasPath("p", ["match", "listener", "filterChain", "filter", "name"])} && p.match.listener.filterChain.filter.name == ${lit(HCM_FILTER)}`;
    // Every field read is guarded: an expression that fails refuses the object (failurePolicy Fail).
    const op = `(${hasPath("p", ["patch", "operation"])} ? p.patch.operation : "")`;
    const applyTo = `(has(p.applyTo) ? p.applyTo : "")`;
    const rewrites =
        `(${applyTo} == "NETWORK_FILTER" && ${hcm} && (${op} in ["REMOVE", "REPLACE"] || ` +
        `${anyValueAt(["typed_config", "http_filters"])})) || ` +
        `(${applyTo} in ["LISTENER", "FILTER_CHAIN"] && ${op} == "REPLACE")`;
    const everyFilter = unanchoredHttpFilter(op, applyTo);
    const perRouteBad = anyPerFilter(
        (m) =>
            `(${list(OVERRIDES_NAMES)}.exists(n, n in ${m}) || ` +
            `${list(DEFAULTS_NAMES)}.exists(n, n in ${m} && !(has(${m}[n].disabled) && ${m}[n].disabled == true)))`,
    );
    const namesBad =
        `variables.f.metadata.name.startsWith(${lit(PLATFORM_OBJECT_PREFIX)}) || variables.patches.exists(p, ` +
        `(${hasPath("p", ["patch", "value", "name"])} && p.patch.value.name in ${list(PLATFORM_NAMES)}) || ` +
        `${anyValueAt(["typed_config", "domain"], (d) => `${d} == ${lit(PLATFORM_DOMAIN)}`)} || ` +
        `${anyPerFilter((m) => `${m}.exists(k, has(${m}[k].domain) && ${m}[k].domain == ${lit(PLATFORM_DOMAIN)})`)})`;
    // The first host refused, and how many more (a list of dyn has no join).
    const off = "variables.refusedHosts";
    const named = `string(${off}[0]) + (size(${off}) > 1 ? " and " + string(size(${off}) - 1) + " more" : "")`;
    const ownerFix = o.routeBound
        ? "ask the platform team to assign the host to your namespace (PlatformRateLimit teamHosts), write as a service account of your namespace, or keep the defaults (platformDefaults: merge)"
        : "ask the platform team to assign the host to your namespace (PlatformRateLimit teamHosts) and write as a service account of that namespace, or keep the defaults (platformDefaults: merge)";
    return [
        {
            name: "platform-names",
            expression: `!(${namesBad})`,
            messageExpression: `"rule platform-names: " + ${who} + (request.operation == "DELETE" ? " deletes" : " takes") + " the platform's names (EnvoyFilters ${PLATFORM_OBJECT_PREFIX}*, HTTP filters ${PLATFORM_NAMES.join(", ")}, domain ${PLATFORM_DOMAIN}), which only the platform's identity writes; fix: use names and a domain of your own"`,
        },
        {
            name: "platform-filters",
            expression: `${NOT_DELETE}!variables.patches.exists(p, (${SUB_FILTER}) || ${rewrites})`,
            messageExpression: `"rule platform-filters: " + ${who} + " removes, replaces, patches or reorders the platform's rate-limit filters (a patch anchored on one of them, or one that rewrites the HTTP connection manager or the listener holding them); fix: anchor your own filter on envoy.filters.http.router and leave the platform's filters and listeners as they are"`,
        },
        {
            name: "platform-filters-unanchored",
            expression: `${NOT_DELETE}!variables.patches.exists(p, ${everyFilter})`,
            messageExpression: `"rule platform-filters-unanchored: " + ${who} + " has an HTTP_FILTER patch on the gateway with no subFilter, which Istio matches against every HTTP filter of the listener, the platform's rate-limit filters among them (MERGE merges into each, REMOVE and REPLACE reach them, INSERT_BEFORE without one is INSERT_FIRST: before them); fix: name the HTTP filter it applies to in match.listener.filterChain.filter.subFilter.name (one of your own, or ${ROUTER_FILTER} to insert before the router), or use ADD or INSERT_AFTER"`,
        },
        {
            name: "platform-per-route",
            expression: `${NOT_DELETE}!variables.patches.exists(p, ${perRouteBad})`,
            messageExpression: `"rule platform-per-route: " + ${who} + " writes per-route config under the platform's filter names other than the defaults switch (FilterConfig disabled: true under the defaults' names); the overrides cannot be turned off or loosened; fix: remove that typed_per_filter_config (or typedPerFilterConfig) entry, at the top of the patch value or nested in its virtual_hosts[] or routes[]"`,
        },
        {
            name: "defaults-switch-host",
            expression: `${NOT_DELETE}size(variables.refusedHosts) == 0`,
            messageExpression: `"rule defaults-switch-host: " + ${who} + " switches the platform's defaults off on " + ${named} + ", not assigned to " + (variables.team == "" ? "its writer (not a service account, so of no namespace)" : "namespace " + variables.team) + "; fix: ${ownerFix}"`,
        },
    ];
}

/** The ValidatingAdmissionPolicy and its binding, as plain objects (Pulumi creates them; the cluster tier applies them). */
export function admissionPolicyObjects(o: AdmissionPolicyOptions): { policy: Record<string, any>; binding: Record<string, any> } {
    const users = o.platformUsers.length ? `request.userInfo.username in ${list(o.platformUsers)}` : "false";
    const groups = o.platformGroups.length ? `(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${list(o.platformGroups)}))` : "false";
    const teamHosts = `{${Object.entries(o.teamHosts)
        .map(([ns, hosts]) => `${lit(ns)}: ${list(hosts)}`)
        .join(", ")}}`;
    const assigned = [...new Set(Object.values(o.teamHosts).flat())].sort();
    const policy = {
        apiVersion: ADMISSION_API_VERSION,
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: o.name },
        spec: {
            failurePolicy: "Fail",
            matchConstraints: {
                resourceRules: [
                    { apiGroups: ["networking.istio.io"], apiVersions: ["*"], operations: ["CREATE", "UPDATE", "DELETE"], resources: ["envoyfilters"] },
                ],
            },
            // The platform's own identity is never refused (its stack creates, updates and deletes its filters).
            matchConditions: [{ name: "not-the-platform", expression: `!(${users} || ${groups})` }],
            variables: [
                { name: "f", expression: `request.operation == "DELETE" ? oldObject : object` },
                { name: "patches", expression: `${hasPath("variables.f", ["spec", "configPatches"])} ? variables.f.spec.configPatches : []` },
                {
                    name: "team",
                    expression: `request.userInfo.username.startsWith("system:serviceaccount:") ? request.userInfo.username.split(":")[2] : ""`,
                },
                { name: "teamHosts", expression: teamHosts },
                { name: "ownHosts", expression: `variables.team in variables.teamHosts ? variables.teamHosts[variables.team] : []` },
                { name: "assigned", expression: list(assigned) },
                // The virtual hosts the writer switches the defaults off on and may not (builders/host-ownership-rule.ts, said in CEL).
                {
                    name: "refusedHosts",
                    expression: `variables.patches.filter(p, ${IS_SWITCH} && !(${hostAllowed(o.routeBound)})).map(p, ${VHOST} == "" ? "every virtual host" : ${VHOST})`,
                },
            ],
            validations: admissionRules(o).map((r) => ({ expression: r.expression, messageExpression: r.messageExpression, reason: "Forbidden" })),
        },
    };
    const binding = {
        apiVersion: ADMISSION_API_VERSION,
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: o.name },
        spec: {
            policyName: o.name,
            validationActions: ["Deny"],
            matchResources: {
                namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...new Set(o.namespaces)] }] },
            },
        },
    };
    return { policy, binding };
}
