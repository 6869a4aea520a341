/**
 * A rule's verified identity: the counter is keyed by a claim of a JSON Web Token the gateway has
 * verified, never by a value the client writes. Types and constants only; the checks are in
 * components/identity-checks.ts, the Envoy actions, config entries and the token check in
 * builders/identity.ts.
 */

/** What a rule with `identity` does with a request that carries no verified token of its issuer (or whose token lacks the claim). */
export const MissingIdentity = {
    /** Counted per client (`clientPrefix`) at the rule's limit: leaving the token out never escapes the limit. */
    PerClient: "perClient",
    /** Refused (429): the rule's counter for requests without a verified identity allows none. */
    Refuse: "refuse",
} as const;
export type MissingIdentity = (typeof MissingIdentity)[keyof typeof MissingIdentity];

/** The JSON Web Tokens the gateway verifies (an Istio `RequestAuthentication` on the gateway's pods). */
export interface JwtIdentityArgs {
    /** The token's issuer (its `iss` claim), e.g. `https://auth.example.com`. No default. */
    issuer: string;
    /** Where the issuer publishes its signing keys: an `https://` (or `http://`) URL, e.g. `https://auth.example.com/.well-known/jwks.json`. No default. */
    jwksUri: string;
    /**
     * The claim whose value keys the counter, e.g. `sub` (one counter per user): a top-level claim
     * with a string value. Defaults to `sub`.
     */
    claim?: string;
    /** The audiences a token must name (its `aud`), e.g. `["shop-api"]`. Defaults to none (any audience). */
    audiences?: string[];
}

/** A rule's counter keyed by a verified identity. */
export interface IdentityArgs {
    /** The token the gateway verifies, and its claim that keys the counter. No default. */
    jwt: JwtIdentityArgs;
    /**
     * A request without a verified token of `jwt.issuer` (no token, or one without the claim as a
     * string): `MissingIdentity.PerClient` counts it per client at the rule's limit,
     * `MissingIdentity.Refuse` refuses it. A token that does not verify is refused by the gateway
     * (401) before any limit. Defaults to `MissingIdentity.PerClient`.
     */
    missing?: MissingIdentity;
}

/** A rule's `identity` as the builders read it (components/identity-checks.ts `resolveIdentity`): the claim and what a request without a verified identity meets, filled in. */
export interface ResolvedIdentity {
    readonly jwt: Readonly<JwtIdentityArgs> & { readonly claim: string };
    readonly missing: MissingIdentity;
}

/** The claim keying the counter when `jwt.claim` is not given. */
export const DEFAULT_IDENTITY_CLAIM = "sub";

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
