/**
 * The fields of a rule's `clientCidr`, each declared once (lib/field-decl.ts);
 * builders/client-cidr-args.generated.ts is generated from this table (`npm run gen`).
 * client-cidr-checks.ts runs the rules; the CIDRs (exactly one of `cidr`, `cidrs`, none
 * overlapping another) stay checked there, together. Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { ArgInterface, booleanRule, field } from "../../lib/field-decl";
import { t } from "../../lib/field-types";

/** `cidr` and `cidrs` together (client-cidr-checks.ts `checkClientCidr`). */
export const CLIENT_CIDR_CHECK = crossCheck("client CIDR", ["cidr", "cidrs"], "exactly one of cidr, cidrs; no CIDR overlapping another");

/** The fields of `ClientCidrArgs`. */
export const CLIENT_CIDR_FIELDS = {
    cidr: field<string>({
        doc: "One CIDR, e.g. `10.0.0.0/8` or `2001:db8::/32` (the network's first address: no host bits set).",
        type: t.string(),
        rule: checkedWith(CLIENT_CIDR_CHECK, "a CIDR"),
        goesTo: { envoy: "a masked_remote_address descriptor value" },
    }),
    cidrs: field<string[]>({
        doc: "Several CIDRs, IPv4 and IPv6 mixed, none overlapping another; each has its own counter at the rule's limit.",
        type: t.list(t.string()),
        rule: checkedWith(CLIENT_CIDR_CHECK, "a non-empty list of CIDRs"),
        goesTo: { envoy: "masked_remote_address descriptor values, one a CIDR" },
    }),
    perAddress: field({
        doc: "Each client address within a CIDR its own counter.",
        type: t.boolean(),
        default: false,
        defaultNote: " (one counter shared by every address of the CIDR)",
        rule: booleanRule(),
        goesTo: { envoy: "a remote_address action beside the CIDR's" },
    }),
};

/** The interface generated from this table (builders/client-cidr-args.generated.ts). */
export const CLIENT_CIDR_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "ClientCidrArgs", doc: "Client addresses a rule applies to. Exactly one of `cidr`, `cidrs`.", fields: CLIENT_CIDR_FIELDS },
];
