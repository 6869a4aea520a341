/**
 * Reach: which gateway pods the gateway filters would apply to, the mesh-wide mutual TLS policies
 * already in force, and the other rate-limit filters on the stack's gateway listener. Decided
 * before anything is registered (cluster/cluster-lookup.ts asks kubectl; offline renders skip it).
 */
import { FilterLayout, PER_INSTANCE_MIN_ISTIO } from "../builders/envoy-filters";
import { RenderedPatch, entriesOfStage, field, patchesOf, rateLimitFilterOf, workloadLabelsOf } from "../builders/rendered-config";
import { GlobalRateLimitPlan } from "../components/global-ratelimit/plan";
import { Problem } from "../lib/problems";
import { StackSettings } from "../mesh/settings-types";
import { IstioRouting, StackHosts, hostSharers, idOf } from "./host-sharers";
import { sideDoorReport, sideDoors } from "./side-doors";
import { BookinfoMode } from "../components/common/mesh-enums";
import { gatewayServerHosts } from "../builders/bookinfo";
import { LiveObject, MESH_PEER_AUTHENTICATION } from "./preflight";
import { platformOverridesMessages } from "./platform-overrides";

/** What the program asks the cluster for the reach checks. */
export interface MeshReachQuery {
    /** `key=value` of the gateway pods (`gatewaySelector`), looked up in every namespace. */
    gatewaySelector: string;
    /** Istio's root namespace, where mesh-wide PeerAuthentications live. */
    meshNamespace: string;
    /** Namespaces whose EnvoyFilters reach the gateway's pods (its own and the root namespace). */
    envoyFilterNamespaces: string[];
}

/** The cluster's answer: the gateway pods of every namespace, and the PeerAuthentications of the root namespace. */
export interface MeshReachState {
    gatewayPods: LiveObject[];
    peerAuthentications: LiveObject[];
    /** The EnvoyFilters of `envoyFilterNamespaces` (other stacks', hand-written ones, the stack's own). Absent: not checked. */
    envoyFilters?: LiveObject[];
    /** The Istio Gateways and VirtualServices of every namespace (program/host-sharers.ts). Absent: not checked. */
    gateways?: IstioRouting[];
    virtualServices?: IstioRouting[];
}

export function meshReachQuery(s: StackSettings): MeshReachQuery {
    return {
        gatewaySelector: `${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}`,
        meshNamespace: s.mesh.namespace,
        envoyFilterNamespaces: [...new Set([s.mesh.gatewayNamespace, s.mesh.namespace])],
    };
}

/** A PeerAuthentication without a workload selector: in the root namespace, it governs the whole mesh. */
export function isMeshWide(pa: LiveObject): boolean {
    return Object.keys(pa.spec?.selector?.matchLabels ?? {}).length === 0;
}

/**
 * The reach decisions:
 * - gateway filters in Istio's root namespace (the default install's gateway namespace, or
 *   `filterNamespaces` `root`) apply to pods with the selector's label in **every** namespace: when
 *   such pods also run outside `gatewayNamespace` (another team's gateway deployment with the same
 *   labels), the program stops, naming them. Its filters would reach that gateway, and the
 *   rate-limit service's access policy would refuse that gateway's calls (HTTP 500).
 * - no gateway pod with the selector's label in `gatewayNamespace`: a message (the limits start to
 *   apply when such pods exist).
 * - mesh-wide PeerAuthentications: with `mutualTlsScope` `workloads` a message (they keep governing
 *   everyone else; the stack's own pods are STRICT through their workload-level policies, which win);
 *   with `mesh`, one under another name than `default` is a problem (Istio applies only the oldest
 *   mesh-wide policy, so the stack's would be ignored or would silently replace it).
 */
export function planMeshReach(
    s: StackSettings,
    state: MeshReachState,
    global: GlobalRateLimitPlan,
    owner?: string,
): { problems: Problem[]; messages: string[] } {
    const problems: Problem[] = [];
    const messages: string[] = [];
    const sel = `${s.mesh.gatewaySelector.key}=${s.mesh.gatewaySelector.value}`;
    const filterNs = s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace;
    const byNs = new Map<string, string[]>();
    for (const p of state.gatewayPods) {
        const ns = p.metadata.namespace ?? "default";
        byNs.set(ns, [...(byNs.get(ns) ?? []), p.metadata.name]);
    }
    const others = [...byNs.keys()].filter((ns) => ns !== s.mesh.gatewayNamespace).sort();
    if (filterNs === s.mesh.namespace && others.length) {
        const list = others.map((ns) => `${ns} (${byNs.get(ns)!.slice(0, 3).join(", ")}${byNs.get(ns)!.length > 3 ? ", ..." : ""})`).join("; ");
        problems.push({
            key: "gatewaySelector",
            value: sel,
            problem: `also selects gateway pods outside ${s.mesh.gatewayNamespace}: ${list}. The gateway EnvoyFilters live in ${filterNs}, Istio's root namespace, so they would apply to those gateways too (their hosts on port ${s.bookinfo.gatewayPort} with the stack's limits and its outages; with accessPolicies the rate-limit service refuses their calls, HTTP 500)`,
            fix: `give the stack's gateway pods a label no other gateway has and select it: pulumi config set gatewaySelector <key>=<value>; or run the gateway in a namespace of its own (pulumi config set gatewayNamespace <namespace>, filterNamespaces own)`,
        });
    }
    if (!byNs.has(s.mesh.gatewayNamespace)) {
        messages.push(
            `no pod labelled ${sel} runs in ${s.mesh.gatewayNamespace} (gatewayNamespace): the gateway limits apply once the gateway's pods run there`,
        );
    }
    const mtls = meshWidePolicyReport(s, state);
    problems.push(...mtls.problems);
    messages.push(...mtls.messages);
    const neighbours = planListenerNeighbours(s, state, global);
    // With vhostScope all every virtual host of the gateway is limited: no host shares or escapes the stack's.
    const stack = stackHostsOf(s, state, global, owner);
    const sharers = s.mesh.vhostScope === "all" ? [] : hostSharers(stack, state.gateways ?? [], state.virtualServices ?? []);
    const doors =
        s.mesh.vhostScope === "all" || !state.virtualServices
            ? { problems: [], messages: [] }
            : sideDoorReport(s, stack, sideDoors(stack, state.virtualServices));
    return {
        problems: [...problems, ...neighbours.problems, ...doors.problems],
        messages: [
            ...messages,
            ...neighbours.messages,
            ...sharers.map((h) => h.message),
            ...doors.messages,
            // A platform team's overrides on this gateway (program/platform-overrides.ts).
            ...platformOverridesMessages(state.envoyFilters, stack.gatewayPodLabels, s.bookinfo.gatewayPort),
        ],
    };
}

/** Mesh-wide PeerAuthentications against the stack's mutual TLS: a problem where the stack's would fail or be ignored, else a message. */
function meshWidePolicyReport(s: StackSettings, state: MeshReachState): { problems: Problem[]; messages: string[] } {
    const problems: Problem[] = [];
    const messages: string[] = [];
    const meshWide = state.peerAuthentications.filter((pa) => isMeshWide(pa) && (pa.metadata.namespace ?? s.mesh.namespace) === s.mesh.namespace);
    if (s.mesh.mutualTls && meshWide.length) {
        const names = meshWide.map((pa) => `${pa.metadata.name} (${pa.spec?.mtls?.mode ?? "mode unset"})`).join(", ");
        const disabled = meshWide.filter((pa) => pa.spec?.mtls?.mode === "DISABLE");
        if (s.mesh.mutualTlsScope === "workloads" && disabled.length) {
            // Clients choose mutual TLS from namespace- and mesh-wide policies only: with a mesh-wide
            // DISABLE they send plain text, which the stack's STRICT pods refuse.
            problems.push({
                key: "mutualTlsScope",
                value: s.mesh.mutualTlsScope,
                problem: `the mesh-wide PeerAuthentication ${disabled.map((pa) => `${s.mesh.namespace}/${pa.metadata.name}`).join(", ")} has mode DISABLE: clients decide from it to send plain text, which the stack's STRICT pods (workload-level policies) would refuse, so the gateway's calls to the rate-limit service and bookinfo's calls would fail`,
                fix: "pulumi config set mutualTls false   (the stack's pods then follow the mesh), or change that policy's mode",
            });
        } else if (s.mesh.mutualTlsScope === "workloads") {
            messages.push(
                `mesh-wide PeerAuthentication in ${s.mesh.namespace}: ${names}; it keeps governing every other workload. The stack's own pods are STRICT through their workload-level PeerAuthentications, which take precedence`,
            );
        } else {
            const foreign = meshWide.filter((pa) => pa.metadata.name !== MESH_PEER_AUTHENTICATION);
            if (foreign.length) {
                problems.push({
                    key: "mutualTlsScope",
                    value: s.mesh.mutualTlsScope,
                    problem: `the mesh already has a mesh-wide PeerAuthentication under another name: ${foreign.map((pa) => `${s.mesh.namespace}/${pa.metadata.name} (${pa.spec?.mtls?.mode ?? "mode unset"})`).join(", ")}. Istio applies only the oldest mesh-wide policy, so PeerAuthentication ${MESH_PEER_AUTHENTICATION} would be ignored or would silently take its place`,
                    fix: `pulumi config set mutualTlsScope workloads   (STRICT for the stack's own pods only), or make the existing policy STRICT yourself and pulumi config set mutualTls false`,
                });
            }
        }
    }
    return { problems, messages };
}

/** The stack's limited virtual hosts on its gateway, for the host-sharing check. */
export function stackHostsOf(
    s: StackSettings,
    state: Pick<MeshReachState, "gatewayPods" | "gateways">,
    global: GlobalRateLimitPlan,
    owner?: string,
): StackHosts {
    const ownGateway = `${s.bookinfo.namespace}/${s.bookinfo.gatewayName}`;
    // An existing bookinfo's Gateway admits what its own server hosts say; the stack's, what the stack gives it.
    const live = s.bookinfoMode === BookinfoMode.Existing ? (state.gateways ?? []).find((g) => idOf(g) === ownGateway) : undefined;
    const liveHosts = ((live?.spec?.servers ?? []) as any[])
        .filter((sv) => Number(sv?.port?.number) === s.bookinfo.gatewayPort)
        .flatMap((sv) => sv.hosts ?? []);
    return {
        virtualHosts: global.args.gateway.virtualHosts ?? [],
        port: s.bookinfo.gatewayPort,
        gatewayPodLabels: gatewayPodLabels(s, state),
        ownGateway,
        ownVirtualService: `${s.bookinfo.namespace}/${s.bookinfo.virtualServiceName}`,
        ownGatewayHosts: live ? liveHosts.map(String) : gatewayServerHosts(s.bookinfo),
        ...(owner !== undefined ? { owner } : {}),
    };
}

/** The labels of the gateway pods in `gatewayNamespace`; without any, the selector's own label stands in. */
function gatewayPodLabels(s: StackSettings, state: Pick<MeshReachState, "gatewayPods">): Record<string, string>[] {
    const podLabels = state.gatewayPods.filter((p) => (p.metadata.namespace ?? "default") === s.mesh.gatewayNamespace).map((p) => p.metadata.labels ?? {});
    return podLabels.length ? podLabels : [{ [s.mesh.gatewaySelector.key]: s.mesh.gatewaySelector.value }];
}

/** Another rate-limit filter found on the stack's gateway pods and listener port, and what it means. */
export interface Neighbour {
    envoyFilter: string;
    httpFilter: string;
    domain: string;
    verdict: "coexists" | "leaks";
    why: string;
}

/**
 * The other rate-limit filters on the stack's gateway pods and listener port (other stacks'
 * EnvoyFilters, hand-written ones) and whether they coexist with the stack's filters or leak:
 * - a filter reads the route and virtual-host `rate_limits` of its `stage` on every host of the
 *   listener, and per-route config under its own name only (docs/proof/upstream.md);
 * - per-instance layout (stage 10, descriptors under its own name): another filter leaks into the
 *   stack's hosts only when its own patches put `rate_limits` of its stage (or config under its
 *   name) on them: a virtual host named `""` or not named, or one of the stack's. Then requests to
 *   the stack's hosts also call that filter's service (and fail with it when it fails closed): a
 *   message naming it and the fix for its owner;
 * - shared layout (the specification's: canonical name, stage 0): another filter at stage 0 reads
 *   the stack's `rate_limits` on the stack's hosts, so each request calls both services: a problem,
 *   fixed by the per-instance layout.
 */
export function classifyNeighbours(s: StackSettings, state: MeshReachState, plan: GlobalRateLimitPlan): Neighbour[] {
    const ownHosts = new Set(s.mesh.vhostScope === "all" ? [] : (plan.args.gateway.virtualHosts ?? []));
    const port = s.bookinfo.gatewayPort;
    const shared = s.global.filterLayout === FilterLayout.Shared;
    const ownStage = shared ? 0 : 10;
    const out: Neighbour[] = [];
    const reaching = reachingFilters(s, state, plan);
    // Every descriptor patch of those filters, wherever it sits (a filter and its rate_limits are often in separate objects).
    const allPatches = reaching.flatMap(patchesOf);
    for (const f of reaching) {
        const id = `${f.metadata.namespace}/${f.metadata.name}`;
        for (const p of patchesOf(f)) {
            const rl = rateLimitFilterOf(p);
            if (!rl || (p.port !== undefined && p.port !== port)) continue;
            const stage = rl.stage;
            const name = rl.name!;
            const base = { envoyFilter: id, httpFilter: name, domain: String(rl.domain ?? "") };
            if (name === plan.httpFilterNames.global) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `it has the stack's own HTTP filter name ${name}: it reads the stack's per-route config and the stack reads its`,
                });
                continue;
            }
            if (shared && stage === ownStage) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `both run at stage 0 on listener ${port}: it reads the stack's route and virtual-host rate_limits, so every request to the stack's hosts also calls its service (domain ${base.domain}), and the stack's filter reads its`,
                });
                continue;
            }
            const reached = patchesOnOurHosts(
                allPatches,
                name,
                stage,
                (vh) => vh === undefined || vh === "" || ownHosts.has(vh) || s.mesh.vhostScope === "all",
            );
            if (reached.length) {
                out.push({
                    ...base,
                    verdict: "leaks",
                    why: `its descriptors reach the stack's virtual hosts (a patch names ${[...new Set(reached.map((q) => JSON.stringify(q.virtualHost ?? "(none)")))].join(", ")}): requests to them also call its service (domain ${base.domain})${rl.failureModeDeny ? " and get 500 when it is down (failure_mode_deny)" : ""}`,
                });
            } else {
                out.push({
                    ...base,
                    verdict: "coexists",
                    why: shared
                        ? `it runs at stage ${stage} and its descriptors sit on its own hosts: it never reads the stack's stage-0 rate_limits`
                        : `it reads only ${stage === ownStage ? "" : `stage-${stage} `}rate_limits and config under its own name, on its own hosts; the stack's descriptors are RateLimitPerRoute under ${plan.httpFilterNames.global}`,
                });
            }
        }
    }
    return out;
}

/** The EnvoyFilters that reach the stack's gateway: not its own, in a namespace whose filters reach the gateway, selecting its pods. */
function reachingFilters(s: StackSettings, state: MeshReachState, plan: GlobalRateLimitPlan): LiveObject[] {
    const gatewayNs = s.mesh.filterNamespaces === "root" ? s.mesh.namespace : s.mesh.gatewayNamespace;
    const ownObjects = new Set(plan.filters.map((f) => `${gatewayNs}/${f.name}`));
    const known = gatewayPodLabels(s, state);
    return (state.envoyFilters ?? []).filter((f) => {
        if (ownObjects.has(`${f.metadata.namespace}/${f.metadata.name}`)) return false;
        if (![s.mesh.gatewayNamespace, s.mesh.namespace].includes(String(f.metadata.namespace))) return false;
        const sel = workloadLabelsOf(f);
        return known.some((labels) => Object.entries(sel).every(([k, v]) => labels[k] === v));
    });
}

/** The patches that put descriptors of the filter `name` at `stage` (or config under its name) on a virtual host `ours` accepts. */
function patchesOnOurHosts(patches: RenderedPatch[], name: string, stage: number, ours: (vhost: string | undefined) => boolean): RenderedPatch[] {
    return patches.filter((q) => {
        const per = field(q.typedPerFilterConfig[name], "rate_limits");
        return ours(q.virtualHost) && (entriesOfStage(q.rateLimits, stage).length > 0 || (Array.isArray(per) && per.length > 0));
    });
}

/** `major.minor` of an image tag such as `1.24.3` or `1.26.0-distroless`; undefined for other tags. */
export function istioVersionOfImage(image: string | undefined): string | undefined {
    const m = /:(\d+)\.(\d+)(?:\.\d+)?(?:-[\w.]+)?$/.exec(image ?? "");
    return m ? `${m[1]}.${m[2]}` : undefined;
}

function atLeast(version: string, min: string): boolean {
    const [a, b] = version.split(".").map(Number);
    const [c, d] = min.split(".").map(Number);
    return a! > c! || (a === c && b! >= d!);
}

/** The Istio version of each gateway pod in `gatewayNamespace`, read from its `istio-proxy` container's image tag (pods with another tag are skipped). */
export function gatewayProxyVersions(s: StackSettings, state: MeshReachState): { pod: string; version: string }[] {
    return state.gatewayPods
        .filter((p) => (p.metadata.namespace ?? "default") === s.mesh.gatewayNamespace)
        .flatMap((p) => {
            const c = (p.spec?.containers ?? []).find((x: any) => x.name === "istio-proxy");
            const version = istioVersionOfImage(c?.image);
            return version ? [{ pod: p.metadata.name, version }] : [];
        });
}

/** The neighbours as preview lines: a message for each, a problem when the stack's own layout leaks. */
export function planListenerNeighbours(s: StackSettings, state: MeshReachState, global: GlobalRateLimitPlan): { problems: Problem[]; messages: string[] } {
    const problems: Problem[] = [];
    const messages: string[] = [];
    const shared = s.global.filterLayout === FilterLayout.Shared;
    if (!shared) {
        const old = gatewayProxyVersions(s, state).filter((v) => !atLeast(v.version, PER_INSTANCE_MIN_ISTIO));
        if (old.length) {
            problems.push({
                key: "filterLayout",
                value: s.global.filterLayout,
                problem: `the gateway's proxies run Istio ${[...new Set(old.map((v) => v.version))].join(", ")} (${old
                    .slice(0, 3)
                    .map((v) => v.pod)
                    .join(
                        ", ",
                    )}): per-instance filters need Istio ${PER_INSTANCE_MIN_ISTIO} or later (Envoy 1.33's RateLimitPerRoute.rate_limits); there the limits would not apply`,
                fix: `pulumi config set filterLayout shared   (the specification's layout, one stack per gateway listener), or upgrade the gateway to Istio ${PER_INSTANCE_MIN_ISTIO} or later`,
            });
        }
    }
    for (const n of classifyNeighbours(s, state, global)) {
        const head = `rate-limit filter ${n.httpFilter} (EnvoyFilter ${n.envoyFilter}) on the gateway's listener ${s.bookinfo.gatewayPort}`;
        if (n.verdict === "coexists") messages.push(`${head}: coexists safely: ${n.why}`);
        else if (shared)
            problems.push({
                key: "filterLayout",
                value: s.global.filterLayout,
                problem: `${head} would leak: ${n.why}`,
                fix: `pulumi config set filterLayout per-instance   (needs Istio ${PER_INSTANCE_MIN_ISTIO} or later; descriptors under the stack's own filter name)`,
            });
        else
            messages.push(
                `${head} would leak into the stack's hosts: ${n.why}. The fix is its owner's: name its own virtual hosts in its patches (vhost name <host>:<port>, never ""), or move to per-filter RateLimitPerRoute config under a filter name of its own`,
            );
    }
    return { problems, messages };
}
