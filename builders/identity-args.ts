/**
 * A rule's verified identity: the counter is keyed by a claim of a JSON Web Token the gateway has
 * verified, never by a value the client writes. Types and constants only; the checks are in
 * components/rules/identity-checks.ts, the Envoy actions, config entries and the token check in
 * builders/identity.ts; the argument types are generated (identity-arg-types.generated.ts) from
 * components/rules/identity-fields.ts.
 */
import { IdentityArgs, JwtIdentityArgs } from "./identity-arg-types.generated";
import { MissingIdentity } from "./missing-identity";

export { IdentityArgs, JwtIdentityArgs, MissingIdentity };

/** A rule's `identity` as the builders read it (components/rules/identity-checks.ts `resolveIdentity`): the claim and what a request without a verified identity meets, filled in. */
export interface ResolvedIdentity {
    readonly jwt: Readonly<JwtIdentityArgs> & { readonly claim: string };
    readonly missing: MissingIdentity;
}

/** Envoy's JWT filter, the dynamic-metadata namespace it writes a verified token's payload to. */
export const JWT_FILTER_NAME = "envoy.filters.http.jwt_authn";
/** The key under which Istio's JWT filter configuration stores every verified payload (`payload_in_metadata`). */
export const JWT_PAYLOAD_KEY = "payload";

/** The descriptor key of the verified token's issuer (its `iss`). */
export const IDENTITY_ISSUER_KEY = "identity_issuer";
/** The descriptor key of the verified token's claim. */
export const IDENTITY_CLAIM_KEY = "identity";
/** The value both keys take when the request has no verified token or the token lacks the claim. */
export const NO_IDENTITY_VALUE = "(none)";
/** The first entry of an identity rule's fallbacks: requests without a verified token of the rule's issuer. */
export const IDENTITY_FALLBACK_KEY = "identity_fallback";
export const UNVERIFIED_VALUE = "unverified";
/** The fallback of a token of the rule's issuer without the claim (`MissingIdentity.PerClient`). */
export const NO_CLAIM_VALUE = "no_claim";
