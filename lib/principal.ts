/**
 * Istio principals (`<trust domain>/ns/<namespace>/sa/<service account>`): parsing, the problem text
 * and the suggested fix, shared by the stack config and GlobalRateLimit's `accessPolicy`. Pure, no imports.
 */

/** The ingress gateway's identity in a default Istio install. */
export const DEFAULT_GATEWAY_PRINCIPAL = "cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account";

/** `<trust domain>/ns/<namespace>/sa/<name>`, the form AuthorizationPolicy `principals` take. */
const PRINCIPAL = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\/ns\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/sa\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;

export interface Principal {
    trustDomain: string;
    namespace: string;
    serviceAccount: string;
}

/** Parses a principal; undefined when it is not of the form above. */
export function parsePrincipal(p: string): Principal | undefined {
    const m = PRINCIPAL.exec(p);
    return m ? { trustDomain: m[1], namespace: m[3], serviceAccount: m[5] } : undefined;
}

/** What a bad principal is told (the stack's `gatewayPrincipal` key and GlobalRateLimit's `accessPolicy.gatewayPrincipal`). */
export const PRINCIPAL_PROBLEM = "must be an Istio principal '<trust domain>/ns/<namespace>/sa/<service account>' (no spiffe:// prefix)";

/** The principal to suggest for a bad one: without its `spiffe://` prefix when that makes it valid, else the default gateway's. */
export function suggestedPrincipal(given: unknown): string {
    const stripped = typeof given === "string" ? given.replace(/^spiffe:\/\//, "") : "";
    return parsePrincipal(stripped) ? stripped : DEFAULT_GATEWAY_PRINCIPAL;
}

export function principalOf(p: Principal): string {
    return `${p.trustDomain}/ns/${p.namespace}/sa/${p.serviceAccount}`;
}
