/**
 * The fields of GlobalRateLimit's `accessLog` and of its secret headers, each declared once
 * (lib/field-decl.ts); components/global-ratelimit/gateway-access-log-args.generated.ts is generated from these tables
 * (`npm run gen`). gateway-access-log.ts runs the rules and reads the defaults; the header
 * lists, checked against each other, stay checked there. Pure.
 */
import { checkedWith, crossCheck } from "../../lib/cross-checks";
import { ArgInterface, customRule, field, nested } from "../../lib/field-decl";
import { t } from "../../lib/field-types";

/** How a header that carries a secret is written to the access log. */
export const SecretHeaderForm = {
    /** Not at all: its key is left out of the format. */
    Omit: "omit",
} as const;
export type SecretHeaderForm = (typeof SecretHeaderForm)[keyof typeof SecretHeaderForm];

/** The logged headers judged together: a credential or secret header logged only when accepted (gateway-access-log.ts). */
export const ACCESS_LOG_HEADERS_CHECK = crossCheck(
    "logged headers",
    ["name", "headers", "acceptLoggedSecrets"],
    "no credential or secret header logged unless accepted",
);

/** The fields of `SecretHeaderArgs`. */
export const SECRET_HEADER_FIELDS = {
    name: field<string>({
        doc: "The header's name in lower case, e.g. `x-api-key`.",
        type: t.string(),
        required: true,
        rule: checkedWith(ACCESS_LOG_HEADERS_CHECK, "a request header name in lower case"),
        goesTo: { envoy: "left out of the access log's json_format" },
    }),
    as: field<string>({
        doc:
            'How it is logged: `SecretHeaderForm.Omit` (`"omit"`), not at all, is the only form; a keyed hash is refused, as stock Envoy ' +
            "cannot write one (docs/explain-and-replay.md). A string, for the package schema.",
        type: t.string(),
        default: SecretHeaderForm.Omit,
        rule: {
            ...customRule<string>("`omit`", (key, value) =>
                value === SecretHeaderForm.Omit
                    ? []
                    : [
                          {
                              key,
                              value,
                              problem:
                                  "is not a form the gateway can write: stock Envoy has no access-log operator, CEL function or Lua call that computes a keyed hash",
                              fix: `use SecretHeaderForm.Omit ("omit"), or leave "as" out`,
                          },
                      ],
            ),
            show: (v) => (v === SecretHeaderForm.Omit ? "SecretHeaderForm.Omit" : v),
        },
        goesTo: { envoy: "the access log's json_format (the header's key left out)" },
    }),
};

/** The fields of `GatewayAccessLogArgs`. */
export const ACCESS_LOG_FIELDS = {
    path: field({
        doc: "The file the gateway pods write it to.",
        type: t.string(),
        default: "/dev/stdout",
        defaultNote: " (their container log)",
        rule: customRule<string>("an absolute file path", (key, value, fallback) =>
            typeof value === "string" && value.startsWith("/") && !/\s/.test(value)
                ? []
                : [
                      {
                          key,
                          value,
                          problem: "is not an absolute file path",
                          fix: `use "${fallback}" (the pods' container log) or a path such as "/var/log/gateway/access.json"`,
                      },
                  ],
        ),
        goesTo: { envoy: "the file access log's path" },
    }),
    headers: field<string[]>({
        doc: "Request headers logged beside those the rules read (names in lower case).",
        type: t.list(t.string()),
        defaultNote: "none",
        rule: checkedWith(ACCESS_LOG_HEADERS_CHECK, "a list of request header names in lower case"),
        goesTo: { envoy: "the access log's json_format (one key each)" },
    }),
    secretHeaders: nested({ doc: "Headers never logged, even when a rule reads them. Defaults to none.", type: t.list(t.ref("SecretHeaderArgs")) }),
    acceptLoggedSecrets: field<string[]>({
        doc:
            "Headers that carry credentials (`authorization`, `cookie`, `proxy-authorization`) or are in `secretHeaders`, logged all the same: " +
            "each is refused in `headers` (and when a rule reads it) unless named here, as anyone who reads the log can then replay its " +
            "tokens. Names in lower case.",
        type: t.list(t.string()),
        defaultNote: "none",
        rule: checkedWith(ACCESS_LOG_HEADERS_CHECK, "a list of request header names in lower case"),
        goesTo: { envoy: "the access log's json_format (the headers named logged)" },
    }),
};

/** The interfaces generated from these tables (components/global-ratelimit/gateway-access-log-args.generated.ts). */
export const ACCESS_LOG_ARG_INTERFACES: readonly ArgInterface[] = [
    { name: "SecretHeaderArgs", doc: "A request header that carries a secret (an API key, a token).", fields: SECRET_HEADER_FIELDS },
    {
        name: "GatewayAccessLogArgs",
        doc: "The gateway's access log in the format `mesh-ratelimit replay` reads (one JSON object a line).",
        fields: ACCESS_LOG_FIELDS,
    },
];
