/**
 * Both spellings of a patch value: Istio decodes an EnvoyFilter's `patch.value` with protobuf JSON,
 * which takes `typed_per_filter_config` and `typedPerFilterConfig` alike (and `typed_config` /
 * `typedConfig`, `http_filters` / `httpFilters`). The TS rule (builders/host-ownership-rule.ts
 * `teamSwitches`, which the previews and `explain` run) and the admission policy's CEL
 * (builders/admission-policy.ts) must judge a camelCase patch as they judge a snake_case one: each
 * bypass respelt in camelCase is refused, its control (the same object on the team's own host)
 * admitted. The CEL itself runs on the real API server in tests/cluster/admission.test.ts; here its
 * text is checked to read every judged field under both spellings.
 */
import { expect } from "chai";
import { admissionPolicyObjects, admissionRules } from "../../builders/admission-policy";
import { OwnershipView, teamSwitches } from "../../builders/host-ownership-rule";
import { PLATFORM_FILTER_NAMES } from "../../builders/platform-filters";
import { LimitUnit } from "../../builders/rule-args";
import { foreignSwitchMessages } from "../../components/platform-ratelimit/platform-switches";
import { planGlobalRateLimit } from "../../components/global-ratelimit/plan";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { programRefusal } from "../../gateway-model/admission-check";
import { K8sObject } from "../../lib/k8s-object";
import { PLATFORM } from "./platform-fixtures";

/** An object's patch values respelt in camelCase, as a team may write them. */
const camel = <T>(o: T): T =>
    JSON.parse(
        JSON.stringify(o)
            .replaceAll('"typed_per_filter_config"', '"typedPerFilterConfig"')
            .replaceAll('"typed_config"', '"typedConfig"')
            .replaceAll('"http_filters"', '"httpFilters"'),
    );

/** Team a's GlobalRateLimit filters switching the defaults off on `virtualHosts`, as EnvoyFilter objects. */
function teamFilters(virtualHosts: string[]): K8sObject[] {
    const plan = planGlobalRateLimit({
        domain: "a",
        namespace: "team-a",
        gateway: { selector: { istio: "ingressgateway" }, namespace: "istio-system", virtualHosts },
        rules: [{ name: "never", path: { exact: "/never-requested" }, requestsPerUnit: 1, unit: LimitUnit.Minute }],
    });
    expect(plan.problems).to.deep.equal([]);
    return plan.filters.map((f) => ({
        apiVersion: "networking.istio.io/v1alpha3",
        kind: "EnvoyFilter",
        metadata: { namespace: f.namespace, name: f.name },
        spec: f.spec,
    }));
}
const VIEW: OwnershipView = {
    platform: { envoyFilter: "istio-system/platform-ratelimit-defaults", teamHosts: { "team-a": ["a.example.com"] } },
    virtualServices: [],
};
const DISABLED = { "@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", disabled: true };

describe("host ownership, camelCase patch values: the TS rule (teamSwitches, previews and explain)", () => {
    it("a camelCase switch on b.example.com is read and refused as the snake_case one; control: on a.example.com (assigned) it is not", () => {
        const b = camel(teamFilters(["b.example.com:8080"]));
        expect(JSON.stringify(b)).to.include("typedPerFilterConfig").and.not.include("typed_per_filter_config");
        expect(teamSwitches(b)).to.deep.equal(teamSwitches(teamFilters(["b.example.com:8080"])));
        expect(teamSwitches(b)).to.deep.equal([{ envoyFilter: "istio-system/team-a-ratelimit", team: "team-a", virtualHost: "b.example.com:8080" }]);
        expect(foreignSwitchMessages(teamSwitches(b), VIEW)[0]).to.include("assigns b.example.com to no one");
        expect(foreignSwitchMessages(teamSwitches(camel(teamFilters(["a.example.com:8080"]))), VIEW)).to.deep.equal([]);
    });

    it("both spellings in one patch (snake_case harmless, camelCase the switch) is a switch; control: a camelCase map without the defaults' names is none", () => {
        const f = teamFilters(["b.example.com:8080"]);
        for (const p of (f[0]!.spec as any).configPatches)
            if (p.patch.value.typed_per_filter_config?.[PLATFORM_FILTER_NAMES.defaults]) {
                p.patch.value.typedPerFilterConfig = p.patch.value.typed_per_filter_config;
                p.patch.value.typed_per_filter_config = { "team-a.lua": {} };
            }
        expect(teamSwitches(f).map((s) => s.virtualHost)).to.deep.equal(["b.example.com:8080"]);
        for (const p of (f[0]!.spec as any).configPatches)
            if (p.patch.value.typedPerFilterConfig) p.patch.value.typedPerFilterConfig = { "team-a.lua": DISABLED };
        expect(teamSwitches(f)).to.deep.equal([]);
    });

    it("explain refuses a program whose team switches the defaults off in camelCase on a host assigned to no one; control: on its own host it does not", () => {
        const platform = planPlatformRateLimit({ ...PLATFORM, teamHosts: { "team-a": ["a.example.com"] } });
        expect(platform.problems).to.deep.equal([]);
        const platformObjects = platform.filters.map((f): K8sObject => ({
            apiVersion: "networking.istio.io/v1alpha3",
            kind: "EnvoyFilter",
            metadata: { name: f.name, namespace: "istio-system", ...(f.annotations ? { annotations: f.annotations } : {}) },
            spec: f.spec,
        }));
        const refusal = programRefusal([...platformObjects, ...camel(teamFilters(["b.example.com:8080"]))]);
        expect(refusal).to.include("b.example.com:8080").and.include("rule defaults-switch-host");
        expect(programRefusal([...platformObjects, ...camel(teamFilters(["a.example.com:8080"]))])).to.equal(undefined);
    });
});

/** The patch-value paths a CEL text reads (`p.patch.value.a.b`), each with its fields in snake_case. */
function valuePathsRead(cel: string): string[] {
    const snake = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    return [...new Set([...cel.matchAll(/p\.patch\.value((?:\.[A-Za-z_]+)+)/g)].map((m) => m[1]!.slice(1).split(".").map(snake).join(".")))];
}
/** The paths of `cel` read under some but not every combination of their fields' spellings. */
function oneSpellingOnly(cel: string): string[] {
    const camel = (f: string) => f.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    return valuePathsRead(cel).filter((path) => {
        const combos = path
            .split(".")
            .reduce<string[]>((acc, f) => acc.flatMap((pre) => [...new Set([f, camel(f)])].map((s) => (pre ? `${pre}.${s}` : s))), [""]);
        return combos.some((c) => !cel.includes(`p.patch.value.${c}`));
    });
}

describe("admission policy CEL, camelCase patch values (builders/admission-policy.ts)", () => {
    const o = {
        namespaces: ["istio-system"],
        name: "p",
        teamHosts: { "team-a": ["a.example.com"] },
        routeBound: false,
        platformUsers: [],
        platformGroups: ["g"],
    };

    it("every rule and the refused-hosts variable read each judged patch-value field under both spellings", () => {
        const texts = [
            ...admissionRules(o).map((r) => r.expression),
            admissionPolicyObjects(o).policy.spec.variables.find((v: any) => v.name === "refusedHosts").expression,
        ];
        for (const t of texts) expect(oneSpellingOnly(t), t.slice(0, 80)).to.deep.equal([]);
        const read = texts.flatMap(valuePathsRead);
        for (const path of ["typed_per_filter_config", "typed_config.domain", "typed_config.http_filters", "name"]) expect(read).to.include(path);
    });

    it("negative control: the check finds a snake_case-only reading (the policy as it was) and a half-respelt one", () => {
        expect(oneSpellingOnly("has(p.patch.value.typed_per_filter_config) && n in p.patch.value.typed_per_filter_config")).to.deep.equal([
            "typed_per_filter_config",
        ]);
        const half = "has(p.patch.value.typed_config.http_filters) || has(p.patch.value.typedConfig.httpFilters)";
        expect(oneSpellingOnly(half)).to.deep.equal(["typed_config.http_filters"]);
    });

    it("the per-route refusal's fix names both spellings", () => {
        expect(admissionRules(o).find((r) => r.name === "platform-per-route")!.messageExpression).to.include(
            "typed_per_filter_config (or typedPerFilterConfig)",
        );
    });
});
