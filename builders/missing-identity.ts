/** The choice of `identity.missing` (its own file: the generated argument types and builders/identity-args.ts both import it). Pure. */
/** What a rule with `identity` does with a request that carries no verified token of its issuer (or whose token lacks the claim). */
export const MissingIdentity = {
    /** Counted per client (`clientPrefix`) at the rule's limit: leaving the token out never escapes the limit. */
    PerClient: "perClient",
    /** Refused (429): the rule's counter for requests without a verified identity allows none. */
    Refuse: "refuse",
} as const;
export type MissingIdentity = (typeof MissingIdentity)[keyof typeof MissingIdentity];
