/**
 * The platform's admission policy on the real kube-apiserver (builders/admission-policy.ts, as
 * PlatformRateLimit renders it): the ValidatingAdmissionPolicy and its binding are applied, then,
 * impersonating a team's service account (`kubectl --as=system:serviceaccount:<ns>:deployer`, RBAC
 * allowing it to write EnvoyFilters in the gateway's namespace), every way around the platform's
 * limits the previews could not stop is tried with kubectl itself, so no preview runs: each is
 * refused at admission, naming its rule and fix.
 *
 * Controls: the platform's identity writes the same objects and is admitted (the policy never
 * refuses the platform's stack); a team's switch on a host assigned to it, and an EnvoyFilter of its
 * own anchored on the router, are admitted (a policy that refused every EnvoyFilter fails them).
 */
import { expect } from "chai";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { readForeignSwitches } from "../../components/platform-ratelimit/platform-switches";
import { LimitUnit } from "../../builders/rule-args";
import { PLATFORM_FILTER_NAMES } from "../../builders/platform-filters";
import { deleteNamespace, ensureNamespace, kubectl, kubectlRaw, waitFor } from "./kube";
import {
    Identity,
    apply,
    applyAs as applyAsIdentity,
    deployerSubject,
    expectAdmitted,
    expectRefused as expectRefusedBy,
    grantEnvoyFilterWrites,
} from "./admission-kit";

const tag = `${process.pid}`;
const GW_NS = `adm-gw-${tag}`;
const TEAM_A = `adm-a-${tag}`;
const TEAM_B = `adm-b-${tag}`;
const LABELS = { istio: `adm-gw-${tag}` };
const PLATFORM_GROUP = `platform-admins-${tag}`;
const ROLE = `adm-envoyfilters-${tag}`;
const sa = (ns: string) => `system:serviceaccount:${ns}:deployer`;
const PLATFORM_ID = { user: `platform-deployer-${tag}`, groups: [PLATFORM_GROUP] };
const teamId = (ns: string) => ({ user: sa(ns), groups: [] as string[] });

const applyAs = (id: Identity, o: unknown) => applyAsIdentity(id, o, "adm-test");
const deleteAs = (id: Identity, name: string) =>
    kubectlRaw(["--as", id.user, ...id.groups.flatMap((g) => ["--as-group", g]), "delete", "envoyfilter.networking.istio.io", name, "-n", GW_NS]);
const envoyFilter = (name: string, spec: unknown, annotations?: Record<string, string>) => ({
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name, namespace: GW_NS, ...(annotations ? { annotations } : {}) },
    spec,
});

const PLATFORM = planPlatformRateLimit({
    gateway: { selector: LABELS, namespace: GW_NS },
    namespace: GW_NS,
    teamHosts: { [TEAM_A]: ["a.example.com"] },
    admission: { platformGroups: [PLATFORM_GROUP], rootNamespace: GW_NS },
    defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 2, unit: LimitUnit.Minute }] },
    overrides: { rules: [{ name: "ceiling", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Minute }] },
});

/** A team's GlobalRateLimit filters (namespace `ns`) that switch the defaults off on `virtualHosts`, as its plan renders them. */
function teamFilters(ns: string, virtualHosts: string[]) {
    const plan = planGlobalRateLimit({
        domain: ns,
        namespace: ns,
        gateway: { selector: LABELS, namespace: GW_NS, virtualHosts },
        rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
    });
    expect(plan.problems).to.deep.equal([]);
    return plan.filters.map((f) => envoyFilter(f.name, f.spec));
}

/** Team b's GlobalRateLimit switch on b.example.com (assigned to no one), deployed before the policy. */
function earlyFilter() {
    const [f] = teamFilters(TEAM_B, ["b.example.com:8080"]);
    return { ...f!, metadata: { ...f!.metadata, name: "team-b-early" } };
}

/** The patch of a hand-written EnvoyFilter: a virtual host's per-filter config. */
const vhostPatch = (vhost: string, perFilter: Record<string, unknown>) => ({
    applyTo: "VIRTUAL_HOST",
    match: { context: "GATEWAY", routeConfiguration: { vhost: { name: vhost, route: { action: "ANY" } } } },
    patch: { operation: "MERGE", value: { typed_per_filter_config: perFilter } },
});
/** The same patch with its value in protobuf JSON's camelCase, which Istio takes as well (the bypasses below are refused in it too). */
const camelPatch = (vhost: string, perFilter: Record<string, unknown>) => {
    const p = vhostPatch(vhost, perFilter);
    return { ...p, patch: { operation: "MERGE", value: { typedPerFilterConfig: perFilter } } };
};
/** An object's patch values respelt in camelCase (`typed_config` → `typedConfig`, ...), as a team may write them. */
const camelValues = (o: unknown): any =>
    JSON.parse(
        JSON.stringify(o)
            .replaceAll('"typed_per_filter_config"', '"typedPerFilterConfig"')
            .replaceAll('"typed_config"', '"typedConfig"')
            .replaceAll('"http_filters"', '"httpFilters"'),
    );
const DISABLED = { "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", disabled: true };
const selector = { workloadSelector: { labels: LABELS } };

/** The refusal of one kubectl call: its rule named, with a fix (the test fails on an admitted call). */
const expectRefused = (r: { status: number; stderr: string }, rule: string) => expectRefusedBy(r, rule, PLATFORM.admission!.policy.metadata.name);

describe("cluster: the platform's admission policy on the real kube-apiserver (impersonating teams)", function () {
    this.timeout(180_000);
    before(async () => {
        for (const ns of [GW_NS, TEAM_A, TEAM_B]) ensureNamespace(ns);
        grantEnvoyFilterWrites(ROLE, GW_NS, [
            deployerSubject(TEAM_A),
            deployerSubject(TEAM_B),
            { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" },
            { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: PLATFORM_GROUP },
        ]);
        expect(PLATFORM.problems).to.deep.equal([]);
        // A team deployed before the policy: its switch on a host assigned to no one is written while nothing refuses it.
        expectAdmitted(applyAs(teamId(TEAM_B), earlyFilter()));
        apply(PLATFORM.admission!.policy);
        apply(PLATFORM.admission!.binding);
        // The API server takes the binding up within a few seconds: wait until a refusal comes back.
        await waitFor(
            "the admission policy in force",
            () => applyAs(teamId(TEAM_A), envoyFilter("platform-ratelimit-probe", selector)).status !== 0,
            60_000,
            1000,
        );
    });
    after(async () => {
        kubectlRaw(["delete", "validatingadmissionpolicybinding", PLATFORM.admission!.binding.metadata.name, "--ignore-not-found"]);
        kubectlRaw(["delete", "validatingadmissionpolicy", PLATFORM.admission!.policy.metadata.name, "--ignore-not-found"]);
        kubectlRaw(["delete", "clusterrole", ROLE, "--ignore-not-found"]);
        await Promise.all([GW_NS, TEAM_A, TEAM_B].map((ns) => deleteNamespace(ns)));
    });

    it("the API server holds the policy and its binding as rendered (five rules, Deny, the gateway's namespace)", () => {
        const p = JSON.parse(kubectl(["get", "validatingadmissionpolicy", PLATFORM.admission!.policy.metadata.name, "-o", "json"]));
        expect(p.spec.validations.map((v: any) => v.expression)).to.deep.equal(PLATFORM.admission!.policy.spec.validations.map((v: any) => v.expression));
        const b = JSON.parse(kubectl(["get", "validatingadmissionpolicybinding", PLATFORM.admission!.binding.metadata.name, "-o", "json"]));
        expect(b.spec.validationActions).to.deep.equal(["Deny"]);
        expect(b.spec.matchResources.namespaceSelector.matchExpressions[0].values).to.deep.equal([GW_NS]);
    });

    it("control: the platform's identity creates its own filters (the policy never refuses the platform's stack)", () => {
        for (const f of PLATFORM.filters) expectAdmitted(applyAs(PLATFORM_ID, envoyFilter(f.name, f.spec, f.annotations)));
    });

    it("control: team a's GlobalRateLimit switches the defaults off on a.example.com, assigned to it", () => {
        for (const f of teamFilters(TEAM_A, ["a.example.com:8080"])) expectAdmitted(applyAs(teamId(TEAM_A), f));
    });

    it("refused: team a switching them off on b.example.com, assigned to no one, even with its own VirtualService binding it to a Gateway that does not exist", () => {
        apply({
            apiVersion: "networking.istio.io/v1",
            kind: "VirtualService",
            metadata: { namespace: TEAM_A, name: "b-claim" },
            spec: { hosts: ["b.example.com"], gateways: [`${GW_NS}/no-such-gateway`], http: [{ route: [{ destination: { host: "web" } }] }] },
        });
        const [f] = teamFilters(TEAM_A, ["b.example.com:8080"]);
        const r = applyAs(teamId(TEAM_A), { ...f, metadata: { ...f!.metadata, name: "team-a-b-switch" } });
        expectRefused(r, "defaults-switch-host");
        expect(r.stderr).to.include("b.example.com:8080").and.include(`namespace ${TEAM_A}`);
    });

    it("refused: team b switching them off on a.example.com, assigned to team a; control: team a's own switch stays", () => {
        const [f] = teamFilters(TEAM_B, ["a.example.com:8080"]);
        expectRefused(applyAs(teamId(TEAM_B), f), "defaults-switch-host");
        expect(
            kubectlRaw(["get", "envoyfilter.networking.istio.io", "-n", GW_NS, teamFilters(TEAM_A, ["a.example.com:8080"])[0]!.metadata.name]).status,
        ).to.equal(0);
    });

    it("refused: a switch on every host (no virtual host named), and a user that is no service account (of no namespace) on an assigned host", () => {
        const every = envoyFilter("every-host", { ...selector, configPatches: [vhostPatch("", { [PLATFORM_FILTER_NAMES.defaults]: DISABLED })] });
        expectRefused(applyAs(teamId(TEAM_A), every), "defaults-switch-host");
        const alice = envoyFilter("alice", { ...selector, configPatches: [vhostPatch("a.example.com:8080", { [PLATFORM_FILTER_NAMES.defaults]: DISABLED })] });
        expectRefused(applyAs({ user: "alice", groups: [] }, alice), "defaults-switch-host");
    });

    it("refused: a hand-written EnvoyFilter that disables an override on a team's own host (control: the platform's identity may)", () => {
        const off = envoyFilter("override-off", {
            ...selector,
            configPatches: [vhostPatch("a.example.com:8080", { [PLATFORM_FILTER_NAMES.overrides]: DISABLED })],
        });
        expectRefused(applyAs(teamId(TEAM_A), off), "platform-per-route");
        expectAdmitted(applyAs(PLATFORM_ID, off));
        kubectl(["delete", "envoyfilter.networking.istio.io", "override-off", "-n", GW_NS]);
    });

    it("refused: an update that turns an admitted EnvoyFilter into a switch on another team's host", () => {
        const mine = envoyFilter("team-a-own", {
            ...selector,
            configPatches: [vhostPatch("a.example.com:8080", { [PLATFORM_FILTER_NAMES.defaults]: DISABLED })],
        });
        expectAdmitted(applyAs(teamId(TEAM_A), mine));
        const changed = envoyFilter("team-a-own", {
            ...selector,
            configPatches: [vhostPatch("c.example.com:8080", { [PLATFORM_FILTER_NAMES.defaults]: DISABLED })],
        });
        expectRefused(applyAs(teamId(TEAM_A), changed), "defaults-switch-host");
    });

    it("refused: removing, replacing or inserting before the platform's overrides filter, and replacing the connection manager", () => {
        const anchored = (operation: string) =>
            envoyFilter(`anchor-${operation.toLowerCase().replace("_", "-")}`, {
                ...selector,
                configPatches: [
                    {
                        applyTo: "HTTP_FILTER",
                        match: {
                            context: "GATEWAY",
                            listener: {
                                filterChain: {
                                    filter: { name: "envoy.filters.network.http_connection_manager", subFilter: { name: PLATFORM_FILTER_NAMES.overrides } },
                                },
                            },
                        },
                        patch: {
                            operation,
                            ...(operation === "REMOVE"
                                ? {}
                                : { value: { name: "x.lua", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua" } } }),
                        },
                    },
                ],
            });
        for (const op of ["REMOVE", "REPLACE", "INSERT_BEFORE"]) expectRefused(applyAs(teamId(TEAM_A), anchored(op)), "platform-filters");
        const hcm = envoyFilter("hcm-replace", {
            ...selector,
            configPatches: [
                {
                    applyTo: "NETWORK_FILTER",
                    match: { context: "GATEWAY", listener: { filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } } },
                    patch: { operation: "REPLACE", value: { name: "envoy.filters.network.http_connection_manager", typed_config: {} } },
                },
            ],
        });
        expectRefused(applyAs(teamId(TEAM_A), hcm), "platform-filters");
    });

    it("refused: the platform's names (an EnvoyFilter name, an HTTP filter name, the domain) and deleting the platform's filter", () => {
        expectRefused(applyAs(teamId(TEAM_A), envoyFilter("platform-ratelimit-overrides", selector)), "platform-names");
        const named = teamFilters(TEAM_A, ["a.example.com:8080"])[0]!;
        const asPlatform = JSON.parse(JSON.stringify(named).replaceAll(`envoy.filters.http.ratelimit/${TEAM_A}/ratelimit`, PLATFORM_FILTER_NAMES.overrides));
        expectRefused(applyAs(teamId(TEAM_A), { ...asPlatform, metadata: { ...asPlatform.metadata, name: "shadow" } }), "platform-names");
        const domain = JSON.parse(JSON.stringify(named).replaceAll(`"domain":"${TEAM_A}"`, '"domain":"mesh-ratelimit-platform"'));
        expectRefused(applyAs(teamId(TEAM_A), { ...domain, metadata: { ...domain.metadata, name: "domain" } }), "platform-names");
        expectRefused(deleteAs(teamId(TEAM_A), "platform-ratelimit-overrides"), "platform-names");
        expect(kubectlRaw(["get", "envoyfilter.networking.istio.io", "-n", GW_NS, "platform-ratelimit-overrides"]).status).to.equal(0);
    });

    it("a team deployed before the policy is reported, not broken: its switch stays, the platform's preview names it, its next update is refused", () => {
        expect(kubectlRaw(["get", "envoyfilter.networking.istio.io", "-n", GW_NS, "team-b-early"]).status).to.equal(0);
        const warned: string[] = [];
        const lines = readForeignSwitches(GW_NS, { [TEAM_A]: ["a.example.com"] }, false, (m) => warned.push(m));
        expect(warned).to.deep.equal([]);
        const early = lines.filter((l) => l.includes(`${GW_NS}/team-b-early`));
        expect(early).to.have.length(1);
        expect(early[0]).to.include(`namespace ${TEAM_B}'s GlobalRateLimit`).and.include("assigns b.example.com to no one");
        // Control: team a's admitted switch on its assigned host is not named.
        expect(lines.some((l) => l.includes(`namespace ${TEAM_A}'s`))).to.equal(false);
        const changed = earlyFilter();
        (changed.spec as any).priority = 11;
        expectRefused(applyAs(teamId(TEAM_B), changed), "defaults-switch-host");
    });

    it("camelCase (typedPerFilterConfig): a switch on b.example.com, on every host, and an override disabled are refused; control: the switch on a.example.com is admitted", () => {
        const on = (name: string, vhost: string, key: string) => envoyFilter(name, { ...selector, configPatches: [camelPatch(vhost, { [key]: DISABLED })] });
        expectAdmitted(applyAs(teamId(TEAM_A), on("camel-own", "a.example.com:8080", PLATFORM_FILTER_NAMES.defaults)));
        const r = applyAs(teamId(TEAM_A), on("camel-b", "b.example.com:8080", PLATFORM_FILTER_NAMES.defaults));
        expectRefused(r, "defaults-switch-host");
        expect(r.stderr).to.include("b.example.com:8080");
        expectRefused(applyAs(teamId(TEAM_A), on("camel-every", "", PLATFORM_FILTER_NAMES.defaults)), "defaults-switch-host");
        expectRefused(applyAs(teamId(TEAM_A), on("camel-override", "a.example.com:8080", PLATFORM_FILTER_NAMES.overrides)), "platform-per-route");
        // A defaults entry that loosens rather than disables, in camelCase, on the team's own host.
        const loosen = { "@type": "type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute", domain: TEAM_A };
        const loosened = envoyFilter("camel-loosen", {
            ...selector,
            configPatches: [camelPatch("a.example.com:8080", { [PLATFORM_FILTER_NAMES.defaults]: loosen })],
        });
        expectRefused(applyAs(teamId(TEAM_A), loosened), "platform-per-route");
    });

    it("both spellings in one patch (snake_case harmless, camelCase the switch): refused, whichever one Istio keeps", () => {
        const both = vhostPatch("b.example.com:8080", {});
        (both.patch.value as any).typedPerFilterConfig = { [PLATFORM_FILTER_NAMES.defaults]: DISABLED };
        expectRefused(applyAs(teamId(TEAM_A), envoyFilter("camel-both", { ...selector, configPatches: [both] })), "defaults-switch-host");
        const over = vhostPatch("a.example.com:8080", { [PLATFORM_FILTER_NAMES.defaults]: DISABLED });
        (over.patch.value as any).typedPerFilterConfig = { [PLATFORM_FILTER_NAMES.overrides]: DISABLED };
        expectRefused(applyAs(teamId(TEAM_A), envoyFilter("camel-both-over", { ...selector, configPatches: [over] })), "platform-per-route");
    });

    it("camelCase (typedConfig): the platform's domain is refused, and an HCM merge with httpFilters; controls: the team's own domain, an HCM merge without them", () => {
        const own = camelValues(teamFilters(TEAM_A, ["a.example.com:8080"])[0]!);
        expect(JSON.stringify(own)).to.include('"typedConfig"').and.not.include('"typed_config"');
        expectAdmitted(applyAs(teamId(TEAM_A), { ...own, metadata: { ...own.metadata, name: "camel-domain-own" } }));
        const domain = JSON.parse(JSON.stringify(own).replaceAll(`"domain":"${TEAM_A}"`, '"domain":"mesh-ratelimit-platform"'));
        expectRefused(applyAs(teamId(TEAM_A), { ...domain, metadata: { ...domain.metadata, name: "camel-domain" } }), "platform-names");
        const perRouteDomain = envoyFilter("camel-per-route-domain", {
            ...selector,
            configPatches: [camelPatch("a.example.com:8080", { "team-a.lua": { domain: "mesh-ratelimit-platform" } })],
        });
        expectRefused(applyAs(teamId(TEAM_A), perRouteDomain), "platform-names");
        const hcm = (name: string, typedConfig: Record<string, unknown>) =>
            envoyFilter(name, {
                ...selector,
                configPatches: [
                    {
                        applyTo: "NETWORK_FILTER",
                        match: { context: "GATEWAY", listener: { filterChain: { filter: { name: "envoy.filters.network.http_connection_manager" } } } },
                        patch: { operation: "MERGE", value: { typedConfig } },
                    },
                ],
            });
        const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
        expectAdmitted(applyAs(teamId(TEAM_A), hcm("camel-hcm-ok", { "@type": HCM_TYPE, serverName: "team-a" })));
        for (const key of ["httpFilters", "http_filters"])
            expectRefused(applyAs(teamId(TEAM_A), hcm(`camel-hcm-${key.length}`, { "@type": HCM_TYPE, [key]: [] })), "platform-filters");
    });

    it("the CRD keeps no snake_case match field (server-side apply refuses `filter_chain`, a create without validation drops it), so the match has one spelling; control: filterChain is kept", () => {
        // ADD: admitted with or without a subFilter (a REMOVE whose subFilter is dropped would match every HTTP filter, below).
        const anchored = (listener: unknown, operation = "ADD") =>
            JSON.stringify(
                envoyFilter("match-spelling", {
                    ...selector,
                    configPatches: [{ applyTo: "HTTP_FILTER", match: { context: "GATEWAY", listener }, patch: { operation } }],
                }),
            );
        const snake = { filter_chain: { filter: { sub_filter: { name: "envoy.filters.http.router" } } } };
        const ssa = kubectlRaw(["apply", "--server-side", "--field-manager=adm-test", "-f", "-"], anchored(snake));
        expect(ssa.status).to.not.equal(0);
        expect(ssa.stderr).to.include("filter_chain: field not declared in schema");
        const stored = (listener: unknown) => {
            kubectl(["create", "--validate=false", "-f", "-"], anchored(listener));
            const spec = JSON.stringify(JSON.parse(kubectl(["get", "envoyfilter.networking.istio.io", "-n", GW_NS, "match-spelling", "-o", "json"])).spec);
            kubectl(["delete", "envoyfilter.networking.istio.io", "match-spelling", "-n", GW_NS]);
            return spec;
        };
        expect(stored(snake)).to.not.include("filter_chain");
        const removeAll = kubectlRaw(["create", "--validate=false", "-f", "-"], anchored(snake, "REMOVE"));
        expect(removeAll.status, "a REMOVE whose snake_case subFilter is dropped was admitted").to.not.equal(0);
        expect(removeAll.stderr).to.include("rule platform-filters-unanchored:");
        expect(stored({ filterChain: { filter: { subFilter: { name: "envoy.filters.http.router" } } } })).to.include("subFilter");
    });

    it("control: a team's EnvoyFilter of its own (a Lua filter before the router) is admitted, and deleting its own objects is", () => {
        const lua = envoyFilter("team-a-lua", {
            ...selector,
            configPatches: [
                {
                    applyTo: "HTTP_FILTER",
                    match: {
                        context: "GATEWAY",
                        listener: {
                            filterChain: {
                                filter: { name: "envoy.filters.network.http_connection_manager", subFilter: { name: "envoy.filters.http.router" } },
                            },
                        },
                    },
                    patch: {
                        operation: "INSERT_BEFORE",
                        value: { name: "team-a.lua", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua" } },
                    },
                },
            ],
        });
        expectAdmitted(applyAs(teamId(TEAM_A), lua));
        expectAdmitted(deleteAs(teamId(TEAM_A), "team-a-lua"));
    });
});
