/**
 * The fields of `clientPrefix` (GlobalRateLimit's, PlatformRateLimit's limits'), each declared once
 * (lib/field-decl.ts); builders/client-prefix-args.generated.ts is generated from this table
 * (`npm run gen`). Pure.
 */
import { ArgInterface, defaultsOf, field, wholeNumberRule } from "../../lib/field-decl";
import { t } from "../../lib/field-types";

/** The fields of `ClientPrefixArgs`. */
export const CLIENT_PREFIX_FIELDS = {
    v4: field({
        doc: "Leading bits of an IPv4 client address that make one client (0-32).",
        type: t.number(),
        default: 32,
        defaultNote: " (each address)",
        rule: wholeNumberRule({ min: 0, max: 32 }),
        goesTo: { envoy: "masked_remote_address's v4_prefix_mask_len" },
        stackKey: "clientPrefixV4",
        stackGroup: "limits",
    }),
    v6: field({
        doc:
            "Leading bits of an IPv6 client address that make one client (0-128). 64: whoever holds a /64 (one subscriber or host) is one " +
            "client, whichever of its addresses it uses; 128 keys each address.",
        type: t.number(),
        default: 64,
        rule: wholeNumberRule({ min: 0, max: 128 }),
        goesTo: { envoy: "masked_remote_address's v6_prefix_mask_len" },
        stackKey: "clientPrefixV6",
        stackGroup: "limits",
    }),
};

/** The default client prefix lengths (the declarations'). */
export const DEFAULT_CLIENT_PREFIX = defaultsOf(CLIENT_PREFIX_FIELDS);

/** The interface generated from this table (builders/client-prefix-args.generated.ts). */
export const CLIENT_PREFIX_ARG_INTERFACES: readonly ArgInterface[] = [
    {
        name: "ClientPrefixArgs",
        doc:
            "How many leading bits of a client's address make one client for the per-client counters (`perClientAddress`, " +
            "`clientCidr.perAddress`, and the per-client fallback counters: long paths, untrusted values, a missing per-value header or " +
            "parameter). Envoy's `masked_remote_address`.",
        fields: CLIENT_PREFIX_FIELDS,
    },
];
