/**
 * The fields of GlobalRateLimit's `accessPolicy`, each declared once (lib/field-decl.ts);
 * components/service/access-policy-args.generated.ts is generated from this table (`npm run gen`). Pure.
 */
import { ArgInterface, customRule, field } from "../../lib/field-decl";
import { fieldProblem } from "../../lib/field-checks";
import { PRINCIPAL_PROBLEM, parsePrincipal, suggestedPrincipal } from "../../lib/principal";
import { t } from "../../lib/field-types";

/** The fields of `AccessPolicyArgs`. */
export const ACCESS_POLICY_FIELDS = {
    gatewayPrincipal: field<string>({
        doc:
            "The gateway's mesh identity, `<trust domain>/ns/<namespace>/sa/<service account>` (no `spiffe://` prefix), e.g. " +
            "`cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account`: the only caller the rate-limit service accepts. The " +
            "NetworkPolicy admits the gateway's pods (`gateway.selector`) from that namespace; its trust domain names the rate-limit service's identity.",
        type: t.string(),
        required: true,
        rule: customRule<string>("an Istio principal `<trust domain>/ns/<namespace>/sa/<service account>`", (path, value) =>
            typeof value === "string" && parsePrincipal(value)
                ? []
                : [fieldProblem(path, value, PRINCIPAL_PROBLEM, (s) => s.set(path, suggestedPrincipal(value)))],
        ),
        goesTo: { object: "the AuthorizationPolicy's principal and the NetworkPolicy's namespace" },
    }),
};

/** The interface generated from this table (components/service/access-policy-args.generated.ts). */
export const ACCESS_POLICY_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "AccessPolicyArgs",
        doc: "Who may call the rate-limit service.",
        fields: ACCESS_POLICY_FIELDS,
    },
];
