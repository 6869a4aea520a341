/**
 * The platform's admission policy on the real kube-apiserver, for the two ways around it found in
 * Istio's source (tests/cluster/admission.test.ts holds the rest; same setup, names of its own):
 * - per-filter config nested in a patch value (a ROUTE_CONFIGURATION value's `virtual_hosts[]` and
 *   their `routes[]`, a VIRTUAL_HOST value's `routes[]`; both spellings): Istio merges it into the
 *   route configuration, so it switches off or overrides the platform's filter as the top-level
 *   form does, and is refused as that form is;
 * - an HTTP_FILTER patch with no `subFilter` (Istio matches it against every HTTP filter of the
 *   listener, the platform's among them): refused for REMOVE, REPLACE, MERGE, INSERT_BEFORE, and any
 *   INSERT_FIRST.
 * Controls: the same nested switch on the team's own host, the same patches naming the router, and
 * ADD / INSERT_AFTER without a subFilter (they append after every filter) are admitted.
 */
import { expect } from "chai";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { LimitUnit } from "../../builders/rule-args";
import { PLATFORM_FILTER_NAMES } from "../../builders/platform-filters";
import { deleteNamespace, ensureNamespace, kubectlRaw, waitFor } from "./kube";
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
const GW_NS = `adn-gw-${tag}`;
const TEAM_A = `adn-a-${tag}`;
const LABELS = { istio: `adn-gw-${tag}` };
const PLATFORM_GROUP = `adn-platform-${tag}`;
const ROLE = `adn-envoyfilters-${tag}`;
const TEAM: Identity = { user: `system:serviceaccount:${TEAM_A}:deployer`, groups: [] };

const applyAs = (id: Identity, o: unknown) => applyAsIdentity(id, o, "adn-test");
const selector = { workloadSelector: { labels: LABELS } };
const envoyFilter = (name: string, configPatches: unknown[]) => ({
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name, namespace: GW_NS },
    spec: { ...selector, configPatches },
});

const PLATFORM = planPlatformRateLimit({
    gateway: { selector: LABELS, namespace: GW_NS },
    namespace: GW_NS,
    teamHosts: { [TEAM_A]: ["a.example.com"] },
    admission: { platformGroups: [PLATFORM_GROUP], rootNamespace: GW_NS },
    defaults: { rules: [{ name: "per-client", perClientAddress: true, requestsPerUnit: 2, unit: LimitUnit.Minute }] },
    overrides: { rules: [{ name: "ceiling", perClientAddress: true, requestsPerUnit: 100, unit: LimitUnit.Minute }] },
});
const DISABLED = { "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", disabled: true };
const OFF = { [PLATFORM_FILTER_NAMES.defaults]: DISABLED };
const OVERRIDE_OFF = { [PLATFORM_FILTER_NAMES.overrides]: DISABLED };
const camelKeys = (o: unknown): any =>
    JSON.parse(JSON.stringify(o).replaceAll('"typed_per_filter_config"', '"typedPerFilterConfig"').replaceAll('"virtual_hosts"', '"virtualHosts"'));

/** A patch on `vhost` (its match) whose value nests `perFilter` at `where`, in snake_case. */
function nested(where: "vhost-of-route-config" | "route-of-route-config" | "route-of-vhost", vhost: string, perFilter: unknown) {
    const match = { context: "GATEWAY", routeConfiguration: { vhost: { name: vhost } } };
    const route = { match: { prefix: "/" }, typed_per_filter_config: perFilter };
    if (where === "route-of-vhost") return { applyTo: "VIRTUAL_HOST", match, patch: { operation: "MERGE", value: { routes: [route] } } };
    const vh = where === "vhost-of-route-config" ? { name: vhost, typed_per_filter_config: perFilter } : { name: vhost, routes: [route] };
    return { applyTo: "ROUTE_CONFIGURATION", match, patch: { operation: "MERGE", value: { virtual_hosts: [vh] } } };
}
const WHERE = ["vhost-of-route-config", "route-of-route-config", "route-of-vhost"] as const;

/** An HTTP_FILTER patch with `operation`, anchored on `subFilter` (none: every HTTP filter). */
function httpFilterPatch(operation: string, subFilter?: string) {
    const filter = { name: "envoy.filters.network.http_connection_manager", ...(subFilter ? { subFilter: { name: subFilter } } : {}) };
    const value = { name: "team-a.lua", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua" } };
    return {
        applyTo: "HTTP_FILTER",
        match: { context: "GATEWAY", listener: { filterChain: { filter } } },
        patch: { operation, ...(operation === "REMOVE" ? {} : { value }) },
    };
}

const expectRefused = (r: { status: number; stderr: string }, rule: string) => expectRefusedBy(r, rule, PLATFORM.admission!.policy.metadata.name);

describe("cluster: the platform's admission policy on the real kube-apiserver: nested per-filter config, HTTP_FILTER patches without a subFilter", function () {
    this.timeout(180_000);
    before(async () => {
        for (const ns of [GW_NS, TEAM_A]) ensureNamespace(ns);
        grantEnvoyFilterWrites(ROLE, GW_NS, [deployerSubject(TEAM_A)]);
        expect(PLATFORM.problems).to.deep.equal([]);
        apply(PLATFORM.admission!.policy);
        apply(PLATFORM.admission!.binding);
        await waitFor("the admission policy in force", () => applyAs(TEAM, envoyFilter("platform-ratelimit-probe", [])).status !== 0, 60_000, 1000);
    });
    after(async () => {
        kubectlRaw(["delete", "validatingadmissionpolicybinding", PLATFORM.admission!.binding.metadata.name, "--ignore-not-found"]);
        kubectlRaw(["delete", "validatingadmissionpolicy", PLATFORM.admission!.policy.metadata.name, "--ignore-not-found"]);
        kubectlRaw(["delete", "clusterrole", ROLE, "--ignore-not-found"]);
        await deleteNamespace(GW_NS);
        await deleteNamespace(TEAM_A);
    });

    for (const where of WHERE)
        for (const spelling of ["snake_case", "camelCase"] as const) {
            const as = (o: unknown) => (spelling === "camelCase" ? camelKeys(o) : o);
            const name = (what: string) =>
                `n-${where
                    .split("-")
                    .map((w) => w[0])
                    .join("")}-${spelling[0]}-${what}`;
            it(`per-filter config nested (${where}, ${spelling}): the defaults switch on b.example.com and an override disabled are refused; on a.example.com admitted within one virtual host only`, () => {
                const onOne = where === "route-of-vhost";
                const own = applyAs(TEAM, envoyFilter(name("own"), [as(nested(where, "a.example.com:8080", OFF))]));
                // A ROUTE_CONFIGURATION patch is merged into every virtual host whatever its match names (Istio's
                // rc_patch.go): refused on the team's own host too; a VIRTUAL_HOST patch there is the control.
                if (onOne) expectAdmitted(own);
                else expectRefused(own, "defaults-switch-host");
                const r = applyAs(TEAM, envoyFilter(name("b"), [as(nested(where, "b.example.com:8080", OFF))]));
                expectRefused(r, "defaults-switch-host");
                expect(r.stderr).to.include(onOne ? "b.example.com:8080" : "every virtual host");
                expectRefused(applyAs(TEAM, envoyFilter(name("over"), [as(nested(where, "a.example.com:8080", OVERRIDE_OFF))])), "platform-per-route");
            });
        }

    it("HTTP_FILTER without a subFilter: REMOVE, REPLACE, MERGE, INSERT_BEFORE (and INSERT_FIRST anchored or not) are refused; controls: the same naming the router, ADD and INSERT_AFTER without one", () => {
        for (const op of ["REMOVE", "REPLACE", "MERGE", "INSERT_BEFORE", "INSERT_FIRST"]) {
            const r = applyAs(TEAM, envoyFilter(`u-${op.toLowerCase().replace("_", "-")}`, [httpFilterPatch(op)]));
            expectRefused(r, "platform-filters-unanchored");
            expect(r.stderr).to.include("subFilter.name");
        }
        expectRefused(
            applyAs(TEAM, envoyFilter("u-first-router", [httpFilterPatch("INSERT_FIRST", "envoy.filters.http.router")])),
            "platform-filters-unanchored",
        );
        for (const op of ["REMOVE", "REPLACE", "MERGE", "INSERT_BEFORE"])
            expectAdmitted(applyAs(TEAM, envoyFilter(`r-${op.toLowerCase().replace("_", "-")}`, [httpFilterPatch(op, "envoy.filters.http.router")])));
        for (const op of ["ADD", "INSERT_AFTER"]) expectAdmitted(applyAs(TEAM, envoyFilter(`u-${op.toLowerCase().replace("_", "-")}`, [httpFilterPatch(op)])));
    });

    it("HTTP_FILTER without a subFilter in a context that does not reach the gateway (SIDECAR_INBOUND) is admitted; in context ANY (or none) it is refused", () => {
        const at = (context: string | undefined) => {
            const p: any = httpFilterPatch("MERGE");
            if (context) p.match.context = context;
            else delete p.match.context;
            return p;
        };
        expectAdmitted(applyAs(TEAM, envoyFilter("u-inbound", [at("SIDECAR_INBOUND")])));
        expectRefused(applyAs(TEAM, envoyFilter("u-any", [at("ANY")])), "platform-filters-unanchored");
        expectRefused(applyAs(TEAM, envoyFilter("u-none", [at(undefined)])), "platform-filters-unanchored");
    });
});
