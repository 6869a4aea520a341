/**
 * The checks of a rule's `identity` (builders/identity-args.ts): the token's issuer, its keys' URL,
 * the claim, the audiences, what a request without a verified identity meets, the rule fields it
 * does not combine with, and one issuer said the same way by every rule. Pure; collects problems.
 */
import { fieldProblem } from "../../lib/field-checks";
import { fieldProblems, givenProblems, withDefaults } from "../../lib/field-decl";
import { Problem } from "../../lib/problems";
import { IdentityArgs, ResolvedIdentity } from "../../builders/identity-args";
import { IDENTITY_FIELDS, JWT_IDENTITY_FIELDS } from "./identity-fields";
import { EXAMPLE_ISSUER, EXAMPLE_JWKS } from "./identity-field-checks";

/** The rule fields that already key the counter: `identity` replaces them. */
const KEYED_BY: readonly (readonly [string, (r: any) => boolean, string])[] = [
    ["header.perValue", (r) => r.header?.perValue === true, "one counter per header value"],
    ["query.perValue", (r) => r.query?.perValue === true, "one counter per query value"],
    ["perClientAddress", (r) => r.perClientAddress === true, "one counter per client"],
    ["clientCidr", (r) => r.clientCidr !== undefined, "one counter per CIDR"],
];

/** Rule `at`'s `identity`: every field, and no other field keying the counter. */
export function checkIdentity(at: string, r: any, problems: Problem[]): void {
    const id = r.identity;
    const key = `${at}.identity`;
    if (typeof id !== "object" || id === null || typeof id.jwt !== "object" || id.jwt === null) {
        problems.push(
            fieldProblem(key, id, "must be { jwt: { issuer, jwksUri, claim?, audiences? }, missing? }", (s) =>
                s.set(`${key}.jwt`, `{ issuer: "${EXAMPLE_ISSUER}", jwksUri: "${EXAMPLE_JWKS}" }`),
            ),
        );
        return;
    }
    for (const [k, d] of Object.entries(JWT_IDENTITY_FIELDS)) problems.push(...fieldProblems(d, `${key}.jwt.${k}`, id.jwt[k]));
    problems.push(...givenProblems(IDENTITY_FIELDS.missing, `${key}.missing`, id.missing));
    for (const [field, has, what] of KEYED_BY) {
        if (has(r)) {
            problems.push(
                fieldProblem(
                    `${at}.${field}`,
                    field === "clientCidr" ? r.clientCidr : true,
                    `cannot be combined with identity (${what}, where identity keys the counter by the verified claim)`,
                    (s) => `${s.rm(`${at}.${field}`)}, or make it a rule of its own`,
                ),
            );
        }
    }
}

/** Every rule naming one issuer says the same of it (one RequestAuthentication rule per issuer). */
export function checkIssuersAgree(rules: readonly any[], problems: Problem[]): void {
    const first = new Map<string, { i: number; text: string }>();
    rules.forEach((r, i) => {
        const jwt = r?.identity?.jwt;
        if (typeof jwt?.issuer !== "string") return;
        const text = JSON.stringify({ jwksUri: jwt.jwksUri, audiences: [...(Array.isArray(jwt.audiences) ? jwt.audiences : [])].sort() });
        const seen = first.get(jwt.issuer);
        if (!seen) first.set(jwt.issuer, { i, text });
        else if (seen.text !== text) {
            const at = `rules[${i}].identity.jwt`;
            problems.push(
                fieldProblem(
                    at,
                    jwt,
                    `names issuer ${JSON.stringify(jwt.issuer)} as rules[${seen.i}] does, with another jwksUri or audiences: the gateway verifies each issuer's tokens one way`,
                    (s) =>
                        `give it the jwksUri and audiences of rules[${seen.i}].identity.jwt (${s.set(`${at}.jwksUri`, String(rules[seen.i].identity.jwt.jwksUri))})`,
                ),
            );
        }
    });
}

/** A checked `identity` with its defaults filled in from the declarations: the claim and `missing`. */
export function resolveIdentity(id: IdentityArgs): ResolvedIdentity {
    return { jwt: { ...id.jwt, claim: withDefaults(JWT_IDENTITY_FIELDS, id.jwt).claim }, missing: withDefaults(IDENTITY_FIELDS, id).missing };
}
