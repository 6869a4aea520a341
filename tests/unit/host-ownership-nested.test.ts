/**
 * Per-filter config nested in a patch value, and HTTP_FILTER patches without a subFilter.
 *
 * Istio merges a ROUTE_CONFIGURATION value's `virtual_hosts[]` (and their `routes[]`) and a
 * VIRTUAL_HOST value's `routes[]` into the route configuration, so a `typed_per_filter_config` there
 * switches off or overrides the platform's filter on the routes it reaches, as the top-level form
 * does. The TS rule (builders/host-ownership-rule.ts `teamSwitches`, which the previews and
 * `explain` run) must read it as a switch on the patch's virtual host; the CEL
 * (builders/admission-policy.ts) must read the same paths under both spellings, and refuse an
 * HTTP_FILTER patch with no subFilter that reaches every HTTP filter. The CEL itself runs on the
 * real API server in tests/cluster/admission-nested.test.ts.
 */
import { expect } from "chai";
import { admissionRules } from "../../builders/admission-policy";
import { OwnershipView, teamSwitches } from "../../builders/host-ownership-rule";
import { PLATFORM_FILTER_NAMES } from "../../builders/platform-filters";
import { PER_FILTER_CONFIG_PATHS, patchesOf, perFilterConfigsIn } from "../../builders/rendered-config";
import { LimitUnit } from "../../builders/rule-args";
import { foreignSwitchMessages } from "../../components/platform-ratelimit/platform-switches";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { programRefusal } from "../../gateway-model/admission-check";
import { K8sObject } from "../../lib/k8s-object";
import { PLATFORM } from "./platform-fixtures";

const DISABLED = { "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", disabled: true };
const OFF = { [PLATFORM_FILTER_NAMES.defaults]: DISABLED };
const VIEW: OwnershipView = {
    platform: { envoyFilter: "istio-system/platform-ratelimit-defaults", teamHosts: { "team-a": ["a.example.com"] } },
    virtualServices: [],
};
const WHERE = ["vhost-of-route-config", "route-of-route-config", "route-of-vhost"] as const;
type Where = (typeof WHERE)[number];

/** A patch on `vhost` whose value nests `perFilter` at `where` (snake_case). */
function nested(where: Where, vhost: string, perFilter: unknown): any {
    const match = { context: "GATEWAY", routeConfiguration: { vhost: { name: vhost } } };
    const route = { match: { prefix: "/" }, typed_per_filter_config: perFilter };
    if (where === "route-of-vhost") return { applyTo: "VIRTUAL_HOST", match, patch: { operation: "MERGE", value: { routes: [route] } } };
    const vh = where === "vhost-of-route-config" ? { name: vhost, typed_per_filter_config: perFilter } : { name: vhost, routes: [route] };
    return { applyTo: "ROUTE_CONFIGURATION", match, patch: { operation: "MERGE", value: { virtual_hosts: [vh] } } };
}
const camel = (o: any): any =>
    JSON.parse(JSON.stringify(o).replaceAll('"typed_per_filter_config"', '"typedPerFilterConfig"').replaceAll('"virtual_hosts"', '"virtualHosts"'));

/** Team a's GlobalRateLimit filter (on a.example.com, its own, where it switches the defaults off), with `patch` added: the writer stays team a. */
function teamFilterWith(patch?: any): K8sObject {
    const plan = planGlobalRateLimit({
        domain: "a",
        namespace: "team-a",
        gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts: ["a.example.com:8080"] },
        rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
    });
    expect(plan.problems).to.deep.equal([]);
    const f = plan.filters[0]!;
    const spec = JSON.parse(JSON.stringify(f.spec));
    if (patch) spec.configPatches.push(patch);
    return { apiVersion: "networking.istio.io/v1alpha3", kind: "EnvoyFilter", metadata: { namespace: f.namespace, name: f.name }, spec };
}

describe("host ownership, per-filter config nested in a patch value: the TS rule (teamSwitches, previews and explain)", () => {
    /** The switches the filter holds of itself (its own, on a.example.com), before a patch is added. */
    const own = () => teamSwitches([teamFilterWith()]);
    it("control: the team's own filter switches the defaults off on a.example.com only, and no preview names it", () => {
        expect(own().map((s) => s.virtualHost)).to.deep.equal(["a.example.com:8080"]);
        expect(foreignSwitchMessages(own(), VIEW)).to.deep.equal([]);
    });
    for (const where of WHERE)
        for (const spelling of ["snake_case", "camelCase"] as const) {
            const as = (o: any) => (spelling === "camelCase" ? camel(o) : o);
            it(`${where}, ${spelling}: a switch on b.example.com is read and refused; on a.example.com (assigned) only within one virtual host`, () => {
                const b = teamFilterWith(as(nested(where, "b.example.com:8080", OFF)));
                const onOne = where === "route-of-vhost";
                expect(teamSwitches([b])).to.deep.equal([
                    ...own(),
                    { envoyFilter: "istio-system/team-a-ratelimit", team: "team-a", virtualHost: onOne ? "b.example.com:8080" : "" },
                ]);
                const messages = foreignSwitchMessages(teamSwitches([b]), VIEW);
                expect(messages).to.have.length(1);
                if (onOne) expect(messages[0]).to.include("b.example.com:8080").and.include("assigns b.example.com to no one");
                else expect(messages[0]).to.include("ROUTE_CONFIGURATION patch");
                const a = teamFilterWith(as(nested(where, "a.example.com:8080", OFF)));
                if (where === "route-of-vhost") {
                    expect(teamSwitches([a]).map((s) => s.virtualHost)).to.deep.equal(["a.example.com:8080", "a.example.com:8080"]);
                    expect(foreignSwitchMessages(teamSwitches([a]), VIEW)).to.deep.equal([]);
                } else {
                    // Istio merges a ROUTE_CONFIGURATION patch into the whole route configuration, whatever its vhost
                    // match names (rc_patch.go routeConfigurationMatch): naming the team's own host does not keep it there.
                    expect(teamSwitches([a]).map((s) => s.virtualHost)).to.deep.equal(["a.example.com:8080", ""]);
                    expect(foreignSwitchMessages(teamSwitches([a]), VIEW)).to.have.length(1);
                }
            });
        }

    it("explain refuses a program whose team switches the defaults off nested in a route of b.example.com; control: of a.example.com it does not", () => {
        const platform = planPlatformRateLimit({ ...PLATFORM, teamHosts: { "team-a": ["a.example.com"] } });
        expect(platform.problems).to.deep.equal([]);
        const platformObjects = platform.filters.map((f): K8sObject => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: "istio-system", ...(f.annotations ? { annotations: f.annotations } : {}) },
            spec: f.spec,
        }));
        const refusal = programRefusal([...platformObjects, teamFilterWith(camel(nested("route-of-vhost", "b.example.com:8080", OFF)))]);
        expect(refusal).to.include("b.example.com:8080").and.include("rule defaults-switch-host");
        expect(programRefusal([...platformObjects, teamFilterWith(camel(nested("route-of-vhost", "a.example.com:8080", OFF)))])).to.equal(undefined);
        // A route configuration patch is on every host, whatever host its match names.
        expect(programRefusal([...platformObjects, teamFilterWith(camel(nested("route-of-route-config", "a.example.com:8080", OFF)))])).to.include(
            "rule defaults-switch-host",
        );
    });

    it("negative control: the top-level reading alone (what the rule judged before) finds no per-filter config in a nested patch", () => {
        for (const where of WHERE) {
            const [p] = patchesOf({ metadata: { name: "x" }, spec: { configPatches: [nested(where, "b.example.com:8080", OFF)] } });
            expect(p!.typedPerFilterConfigSpellings, where).to.deep.equal([]);
            expect(p!.perFilterConfigs, where).to.deep.equal([OFF]);
        }
    });

    it("a nested map without the defaults' names is no switch, and a non-list virtual_hosts is read as none", () => {
        expect(teamSwitches([teamFilterWith(nested("route-of-vhost", "b.example.com:8080", { "team-a.lua": DISABLED }))])).to.deep.equal(own());
        expect(perFilterConfigsIn({ virtual_hosts: { typed_per_filter_config: OFF } })).to.deep.equal([]);
    });
});

/** The nested paths of PER_FILTER_CONFIG_PATHS under every combination of their fields' spellings, as CEL reads them (`e0`, `e1`: list elements). */
function celReadsOf(path: readonly string[]): string[][] {
    const camelOf = (f: string) => f.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    return path.reduce<string[][]>(
        (acc, f) => acc.flatMap((pre) => (f === "[]" ? [[...pre, f]] : [...new Set([f, camelOf(f)])].map((s) => [...pre, s]))),
        [[]],
    );
}
/** Whether `cel` reads `path` (one spelling combination): each field after its root (`p.patch.value` or the element of the list before it). */
function celReads(cel: string, path: string[]): boolean {
    let root = "p.patch.value";
    let depth = 0;
    for (let i = 0; i < path.length; i++) {
        if (path[i] === "[]") {
            root = `e${depth++}`;
            continue;
        }
        const at = `${root}.${path[i]}`;
        if (!cel.includes(`has(${at})`)) return false;
        if (path[i + 1] === "[]" && !cel.includes(`${at}.exists(e${depth},`)) return false;
        root = at;
    }
    return true;
}

describe("admission policy CEL, nested per-filter config and HTTP_FILTER without a subFilter (builders/admission-policy.ts)", () => {
    const o = {
        namespaces: ["istio-system"],
        name: "p",
        teamHosts: { "team-a": ["a.example.com"] },
        routeBound: false,
        platformUsers: [],
        platformGroups: ["g"],
    };
    const rule = (name: string) => admissionRules(o).find((r) => r.name === name)!;

    it("the per-route, names and switch checks read every nested path under every spelling combination", () => {
        const perRoute = rule("platform-per-route").expression;
        for (const path of PER_FILTER_CONFIG_PATHS) for (const combo of celReadsOf(path)) expect(celReads(perRoute, combo), combo.join(".")).to.equal(true);
        expect(celReadsOf(["virtual_hosts", "[]", "routes", "[]", "typed_per_filter_config"])).to.have.length(4);
    });

    it("negative control: the check finds a policy reading only the top-level per-filter config, and one reading nested routes in snake_case only", () => {
        const topOnly = "has(p.patch.value.typed_per_filter_config) || has(p.patch.value.typedPerFilterConfig)";
        expect(celReads(topOnly, ["virtual_hosts", "[]", "typed_per_filter_config"])).to.equal(false);
        const snakeRoutes = "has(p.patch.value.routes) && p.patch.value.routes.exists(e0, has(e0.typed_per_filter_config))";
        expect(celReads(snakeRoutes, ["routes", "[]", "typed_per_filter_config"])).to.equal(true);
        expect(celReads(snakeRoutes, ["routes", "[]", "typedPerFilterConfig"])).to.equal(false);
    });

    it("the unanchored rule refuses REMOVE, REPLACE, MERGE, INSERT_BEFORE without a subFilter and any INSERT_FIRST, on GATEWAY or ANY; its fix names the subFilter", () => {
        const r = rule("platform-filters-unanchored");
        expect(r.expression).to.include('["REMOVE", "REPLACE", "MERGE", "INSERT_BEFORE"]').and.include('== "INSERT_FIRST"');
        expect(r.expression).to.include('in ["GATEWAY", "ANY"]').and.include("has(p.match.listener.filterChain.filter.subFilter.name)");
        expect(r.expression).to.not.include('"ADD"').and.not.include('"INSERT_AFTER"');
        expect(r.messageExpression).to.include("fix: name the HTTP filter").and.include("subFilter.name");
    });
});
