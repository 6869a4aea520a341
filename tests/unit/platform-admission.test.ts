/**
 * PlatformRateLimit's admission policy and its refusals' headers, as the plan builds them
 * (builders/admission-policy.ts, builders/platform-filters.ts). The policy's behaviour is proven on
 * the real kube-apiserver (tests/cluster/admission.test.ts); here: which objects the arguments give,
 * what is refused at preview, and the header switch, each with its control.
 */
import { expect } from "chai";
import { ROUTE_BOUND_ANNOTATION } from "../../builders/host-ownership-rule";
import { PLATFORM_FILTER_NAMES, PLATFORM_PRE_LIMIT_NAMES, preLimitRetryAfter } from "../../builders/platform-filters";
import { PlatformRateLimitArgs } from "../../components/platform-ratelimit/args.generated";
import { admissionServedProblems } from "../../components/platform-ratelimit/admission-served";
import { planPlatformRateLimit } from "../../components/platform-ratelimit/plan";
import { PLATFORM } from "./platform-fixtures";

const ONE_A_MINUTE = { rules: [{ name: "flat", requestsPerUnit: 6, unit: "minute" as const }] };
/** The typed config of the HTTP filter `name` in the plan's EnvoyFilters. */
function filterConfig(args: PlatformRateLimitArgs, name: string): any {
    const plan = planPlatformRateLimit(args);
    expect(plan.problems).to.deep.equal([]);
    for (const f of plan.filters) for (const p of f.spec.configPatches as any[]) if (p.patch?.value?.name === name) return p.patch.value.typed_config;
    throw new Error(`no filter ${name}`);
}

describe("PlatformRateLimit: the admission policy it installs", () => {
    it("by default: a policy and its binding, bound to the gateway's and Istio's root namespaces, the platform being system:masters", () => {
        const a = planPlatformRateLimit({ ...PLATFORM, gateway: { ...PLATFORM.gateway, namespace: "gateways" } }).admission!;
        expect(a.policy.kind).to.equal("ValidatingAdmissionPolicy");
        expect(a.binding.spec.policyName).to.equal(a.policy.metadata.name);
        expect(a.binding.spec.validationActions).to.deep.equal(["Deny"]);
        expect(a.binding.spec.matchResources.namespaceSelector.matchExpressions[0].values).to.deep.equal(["gateways", "istio-system"]);
        expect(a.policy.spec.matchConditions[0].expression).to.include('"system:masters"');
        expect(a.policy.spec.validations.map((v: any) => v.messageExpression.match(/rule ([a-z-]+):/)[1])).to.deep.equal([
            "platform-names",
            "platform-filters",
            "platform-filters-unanchored",
            "platform-per-route",
            "defaults-switch-host",
        ]);
    });

    it("the assignments in the CEL are the teamHosts given (a host given to team b is in the policy; control: one not given is not)", () => {
        const a = planPlatformRateLimit({ ...PLATFORM, teamHosts: { "team-b": ["b.example.com"] } }).admission!;
        const teamHosts = a.policy.spec.variables.find((v: any) => v.name === "teamHosts").expression;
        expect(teamHosts).to.include('"team-b": ["b.example.com"]');
        expect(teamHosts).to.not.include("c.example.com");
    });

    it("admission.install false: no policy (a cluster whose admin installs it); control: the filters are still planned", () => {
        const plan = planPlatformRateLimit({ ...PLATFORM, admission: { install: false } });
        expect(plan.admission).to.equal(undefined);
        expect(plan.filters.length).to.equal(2);
    });

    it("refuses at preview an identity list that is no list of names, and a misspelt admission field", () => {
        expect(planPlatformRateLimit({ ...PLATFORM, admission: { platformGroups: "admins" as any } }).problems.map((p) => p.key)).to.deep.equal([
            "admission.platformGroups",
        ]);
        expect(planPlatformRateLimit({ ...PLATFORM, admission: { platformUsers: [""] } }).problems.map((p) => p.key)).to.deep.equal([
            "admission.platformUsers",
        ]);
        expect(planPlatformRateLimit({ ...PLATFORM, admission: { instal: false } as any }).problems.map((p) => p.key)).to.deep.equal(["admission.instal"]);
    });

    it("routeBoundOwnership writes its opt-in on the defaults filter (control: not by default)", () => {
        const annotations = (args: PlatformRateLimitArgs) =>
            planPlatformRateLimit(args).filters.find((f) => f.name === "platform-ratelimit-defaults")!.annotations;
        expect(annotations({ ...PLATFORM, routeBoundOwnership: true })?.[ROUTE_BOUND_ANNOTATION]).to.equal("true");
        expect(annotations(PLATFORM)?.[ROUTE_BOUND_ANNOTATION]).to.equal(undefined);
    });
});

describe("PlatformRateLimit: its refusals tell clients where they stand", () => {
    const args: PlatformRateLimitArgs = { ...PLATFORM, defaults: ONE_A_MINUTE, overrides: undefined };

    it("the defaults filter: X-RateLimit-* and, on its 429s, its RateLimit-Policy (6 a minute)", () => {
        const c = filterConfig(args, PLATFORM_FILTER_NAMES.defaults);
        expect(c.enable_x_ratelimit_headers).to.equal("DRAFT_VERSION_03");
        expect(c.response_headers_to_add).to.deep.equal([
            { header: { key: "ratelimit-policy", value: '"flat";q=6;w=60' }, append_action: "APPEND_IF_EXISTS_OR_ADD" },
        ]);
    });

    it("its pre-limit's 429s carry Retry-After: a token of 6 a minute comes back after 10 s", () => {
        const c = filterConfig(args, PLATFORM_PRE_LIMIT_NAMES.defaults);
        const retry = c.response_headers_to_add.find((h: any) => h.header.key === "retry-after");
        expect(retry.header.value).to.equal("10");
        expect(preLimitRetryAfter([{ entries: [], requests: 1, unit: "hour", maxTokens: 2, tokensPerFill: 1, fillInterval: "3600s" }])).to.equal(3600);
    });

    it("negative control: rateLimitHeaders Off gives none of them", () => {
        const off = { ...args, rateLimitHeaders: "off" as const };
        const c = filterConfig(off, PLATFORM_FILTER_NAMES.defaults);
        expect(c.enable_x_ratelimit_headers).to.equal(undefined);
        expect(c.response_headers_to_add).to.equal(undefined);
        const pre = filterConfig(off, PLATFORM_PRE_LIMIT_NAMES.defaults);
        expect(pre.response_headers_to_add.map((h: any) => h.header.key)).to.deep.equal(["x-mesh-ratelimit"]);
    });
});

describe("PlatformRateLimit: a cluster that does not serve the policy", () => {
    it("is refused under admission.install with the fix (Kubernetes 1.30+, or install: false); control: one that serves it is not", () => {
        const ps = admissionServedProblems([
            "mutatingwebhookconfigurations.admissionregistration.k8s.io",
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
        ]);
        expect(ps.map((p) => p.key)).to.deep.equal(["admission.install"]);
        expect(ps[0]!.fix).to.include("admission.install: false");
        expect(
            admissionServedProblems([
                "validatingadmissionpolicies.admissionregistration.k8s.io",
                "validatingadmissionpolicybindings.admissionregistration.k8s.io",
            ]),
        ).to.deep.equal([]);
    });
});
