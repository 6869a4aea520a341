/**
 * ManagedApi's arguments resolved once: every problem under its property path (the rules of its own
 * fields, which MeshRateLimit reports under `managedApi.`), or a read-only value with every default
 * filled in (`ResolvedManagedApi`, what builders/managed-api.ts builds from). Pure.
 */
import { isDnsName } from "../lib/dns-names";
import { dnsNameProblems, fieldProblem, oneOfProblems } from "../lib/field-checks";
import { Fix, FixStyle } from "../lib/fix-style";
import { isCidr } from "../lib/formats";
import { Problem } from "../lib/problems";
import { ResolvedManagedApi } from "../builders/managed-api";
import { unknownFieldProblems } from "./arg-checks";
import { DEFAULTS } from "./defaults";
import { ManagedApiArgs } from "./managed-api-args";
import { ApiProfileName, EspPortModeName } from "./mesh-enums";

/*
 * ManagedApi's rules for its own fields, each with one message and a fix in every style;
 * MeshRateLimit reports them under `managedApi.`. `alternative`: what else fixes a required field
 * (MeshRateLimit: turning the managed API off), joined to the fix.
 */

const EXAMPLE_SERVICE = "echo-api.endpoints.MY_PROJECT.cloud.goog";
const EXAMPLE_RANGES = "10.4.0.0/14,10.7.240.0/20";

/** What else fixes a required field, joined to its fix (nothing when there is no alternative). */
function orAlternative(alternative: Fix | undefined): (s: FixStyle) => string {
    return (s) => (alternative === undefined ? "" : `, or ${typeof alternative === "string" ? alternative : alternative(s)}`);
}

/** `serviceName`: required, the Cloud Endpoints service ESP serves (a DNS name). */
export function espServiceNameProblems(serviceName: unknown, alternative?: Fix): Problem[] {
    const or = orAlternative(alternative);
    if (serviceName === undefined || serviceName === "")
        return [
            fieldProblem(
                "serviceName",
                undefined,
                "is required: ESP needs the Cloud Endpoints service it serves (--service)",
                (s) => `${s.set("serviceName", EXAMPLE_SERVICE)}${or(s)}`,
            ),
        ];
    return isDnsName(serviceName, "subdomain")
        ? []
        : [fieldProblem("serviceName", serviceName, `must be a DNS name such as ${EXAMPLE_SERVICE}`, (s) => s.set("serviceName", EXAMPLE_SERVICE))];
}

/** `includeIpRanges`: required (the cluster's pod and service CIDRs cannot be guessed), each a CIDR. */
export function ipRangesProblems(ranges: unknown, alternative?: Fix): Problem[] {
    const or = orAlternative(alternative);
    if (ranges === undefined || (Array.isArray(ranges) && ranges.length === 0) || ranges === "")
        return [
            fieldProblem(
                "includeIpRanges",
                undefined,
                "is required: the cluster's pod and service CIDRs differ per cluster and cannot be guessed (spec 1.6)",
                (s) => `${s.set("includeIpRanges", EXAMPLE_RANGES)}   (your cluster's pod and service CIDRs)${or(s)}`,
            ),
        ];
    const list = Array.isArray(ranges) ? ranges : [ranges];
    const bad = list.filter((c) => typeof c !== "string" || !isCidr(c));
    const shown = bad
        .map(String)
        .filter((c) => c.replace(/[\s,]/g, ""))
        .join(", ");
    return bad.length
        ? [
              fieldProblem(
                  "includeIpRanges",
                  ranges,
                  `has invalid CIDR(s): ${shown || "(empty)"}`,
                  (s) => `${s.set("includeIpRanges", EXAMPLE_RANGES)}   (your cluster's pod and service CIDRs)`,
              ),
          ]
        : [];
}

/** `ingressPath`: a URL path. */
export function ingressPathProblems(path: unknown): Problem[] {
    const v = String(path);
    return typeof path === "string" && path.startsWith("/") && !/\s/.test(path)
        ? []
        : [
              fieldProblem("ingressPath", path, "must be a URL path starting with '/' and without spaces", (s) =>
                  s.set("ingressPath", `/${v.replace(/^\/*/, "").replace(/\s+/g, "")}`),
              ),
          ];
}

/** `portMode`: how ESP is reached. */
export function espPortModeProblems(portMode: unknown): Problem[] {
    return oneOfProblems("portMode", portMode, Object.values(EspPortModeName), EspPortModeName.Http);
}

/**
 * Every rule of ManagedApi's own fields, on the fields as given (defaults are valid).
 * `alternative`: what else fixes a required field.
 */
export function managedApiFieldProblems(a: Partial<ManagedApiArgs>, alternative?: Fix): Problem[] {
    const given = (k: keyof ManagedApiArgs, kind: "label" | "subdomain") => (a[k] !== undefined ? dnsNameProblems(k, a[k], kind) : []);
    return [
        ...ipRangesProblems(a.includeIpRanges, alternative),
        ...espServiceNameProblems(a.serviceName, alternative),
        ...given("serviceAccountSecret", "subdomain"),
        ...given("namespace", "label"),
        ...(a.portMode !== undefined ? espPortModeProblems(a.portMode) : []),
        ...given("ingressName", "subdomain"),
        ...given("ingressClassName", "subdomain"),
        ...(a.ingressPath !== undefined ? ingressPathProblems(a.ingressPath) : []),
    ];
}

/** Every problem of ManagedApi's arguments, each under its property path, or the resolved value (pure). */
export function resolveManagedApi(args: ManagedApiArgs): { problems: Problem[]; value?: ResolvedManagedApi } {
    const a: Partial<ManagedApiArgs> = args ?? {};
    const apiProfile: ApiProfileName = a.apiProfile ?? DEFAULTS.apiProfile;
    const problems: Problem[] = [
        ...unknownFieldProblems("ManagedApi", args),
        ...managedApiFieldProblems(a),
        ...oneOfProblems("apiProfile", apiProfile, Object.values(ApiProfileName), ApiProfileName.Current),
    ];
    if (problems.length) return { problems };
    const d = (k: keyof typeof DEFAULTS) => String(DEFAULTS[k]);
    const value: ResolvedManagedApi = {
        namespace: a.namespace ?? d("workloadNamespace"),
        // A list, or the one CIDR the checks accept on its own.
        includeIpRanges: Object.freeze(([] as string[]).concat(a.includeIpRanges!)),
        serviceName: a.serviceName!,
        ...(a.serviceAccountSecret !== undefined ? { serviceAccountSecret: a.serviceAccountSecret } : {}),
        portMode: a.portMode ?? DEFAULTS.espPortMode,
        ingressName: a.ingressName ?? d("ingressName"),
        ingressClassName: a.ingressClassName ?? d("ingressClassName"),
        ingressPath: a.ingressPath ?? d("ingressPath"),
        espImage: a.espImage ?? d("espImage"),
        echoImage: a.echoImage ?? d("echoImage"),
        apiProfile,
        // The `current` profile's IngressClass: created unless told not to, kept on destroy only when asked.
        createIngressClass: a.createIngressClass !== false,
        keepIngressClassOnDestroy: a.keepIngressClassOnDestroy === true,
        awaitRollout: a.awaitRollout ?? DEFAULTS.awaitRollout,
    };
    return { problems, value: Object.freeze(value) };
}
