/**
 * The fields of a rule's `identity` and of its `jwt`, each declared once (lib/field-decl.ts);
 * builders/identity-arg-types.generated.ts is generated from these tables (`npm run gen`).
 * identity-checks.ts runs the rules (the checks of each field are there) and `resolveIdentity`
 * fills the defaults from here. Pure.
 */
import { ArgInterface, customRule, field, nested, oneOfRule } from "../../lib/field-decl";
import { MissingIdentity } from "../../builders/missing-identity";
import { Problem } from "../../lib/problems";
import { checkAudiences, checkClaim, checkIssuer, checkJwksUri } from "./identity-field-checks";
import { t } from "../../lib/field-types";

/** A rule of one of identity-field-checks.ts's checks. */
const ruleOf = <T>(text: string, check: (at: string, v: unknown, problems: Problem[], fallback: T) => void) =>
    customRule<T>(text, (path, value, fallback) => {
        const problems: Problem[] = [];
        check(path, value, problems, fallback as T);
        return problems;
    });

/** The fields of `JwtIdentityArgs`. */
export const JWT_IDENTITY_FIELDS = {
    issuer: field<string>({
        doc: "The token's issuer (its `iss` claim), e.g. `https://auth.example.com`. No default.",
        type: t.string(),
        required: true,
        rule: ruleOf("1 to 256 characters, no spaces or control characters", checkIssuer),
        goesTo: { object: "the RequestAuthentication's issuer, and the identity_issuer descriptor value" },
    }),
    jwksUri: field<string>({
        doc: "Where the issuer publishes its signing keys: an `https://` (or `http://`) URL, e.g. `https://auth.example.com/.well-known/jwks.json`. No default.",
        type: t.string(),
        required: true,
        rule: ruleOf("an http(s) URL with a host, without credentials or fragment", checkJwksUri),
        goesTo: { object: "the RequestAuthentication's jwksUri" },
    }),
    claim: field({
        doc: "The claim whose value keys the counter, e.g. `sub` (one counter per user): a top-level claim with a string value.",
        type: t.string(),
        default: "sub",
        rule: ruleOf<string>("a top-level claim name with a string value", checkClaim),
        goesTo: { envoy: "the metadata action's path (the verified payload's claim)" },
    }),
    audiences: field<string[]>({
        doc: 'The audiences a token must name (its `aud`), e.g. `["shop-api"]`.',
        type: t.list(t.string()),
        defaultNote: "none (any audience)",
        rule: ruleOf("a non-empty list of audiences", checkAudiences),
        goesTo: { object: "the RequestAuthentication's audiences" },
    }),
};

/** The fields of `IdentityArgs`. */
export const IDENTITY_FIELDS = {
    jwt: nested({ doc: "The token the gateway verifies, and its claim that keys the counter. No default.", type: t.ref("JwtIdentityArgs"), required: true }),
    missing: field({
        doc:
            "A request without a verified token of `jwt.issuer` (no token, or one without the claim as a string): `MissingIdentity.PerClient` " +
            "counts it per client at the rule's limit, `MissingIdentity.Refuse` refuses it. A token that does not verify is refused by the " +
            "gateway (401) before any limit.",
        type: t.enum(MissingIdentity, "MissingIdentity"),
        default: MissingIdentity.PerClient as MissingIdentity,
        rule: oneOfRule(MissingIdentity, "MissingIdentity"),
        goesTo: { envoy: "the rule's fallback descriptors for a request without a verified identity" },
    }),
};

/** The interfaces generated from these tables (builders/identity-arg-types.generated.ts). */
export const IDENTITY_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "JwtIdentityArgs",
        doc: "The JSON Web Tokens the gateway verifies (an Istio `RequestAuthentication` on the gateway's pods).",
        fields: JWT_IDENTITY_FIELDS,
    },
    { name: "IdentityArgs", doc: "A rule's counter keyed by a verified identity.", fields: IDENTITY_FIELDS },
];

/** The imports of the generated file. */
export const IDENTITY_ARG_IMPORTS: Readonly<Record<string, readonly string[]>> = { "./missing-identity": ["MissingIdentity"] };
