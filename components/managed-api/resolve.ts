/**
 * ManagedApi's arguments resolved once: every problem under its property path (the rules of its own
 * fields, which MeshRateLimit reports under `managedApi.`), or a read-only value with every default
 * filled in (`ResolvedManagedApi`, what builders/managed-api.ts builds from). Pure.
 */
import { givenProblems, withDefaults } from "../../lib/field-decl";
import { Fix } from "../../lib/fix-style";
import { Problem } from "../../lib/problems";
import { ResolvedManagedApi } from "../../builders/managed-api";
import { componentFieldProblems } from "../common/arg-checks";
import { MANAGED_API_ARG_TYPES } from "./arg-types";
import { ManagedApiArgs } from "./args.generated";
import { MANAGED_API_ARGS_FIELDS, MANAGED_API_OPTIONS_FIELDS, espServiceNameProblems, ipRangesProblems } from "./fields";
import { EspPortModeName } from "../common/mesh-enums";

/** ESP, its backend and the Ingress as the stack's settings hold them (MeshRateLimit's `managedApi`, defaults filled in). */
export interface ManagedApiSettings {
    namespace: string;
    includeIpRanges: string[];
    serviceName: string;
    serviceAccountSecret?: string;
    portMode: EspPortModeName;
    ingressName: string;
    ingressClassName: string;
    ingressPath: string;
    espImage: string;
    echoImage: string;
}

const { serviceAccountSecret, namespace, portMode, ingressName, ingressClassName, ingressPath } = MANAGED_API_OPTIONS_FIELDS;
/** The options' fields with a rule, in the order their problems are reported. */
const CHECKED_OPTIONS = { serviceAccountSecret, namespace, portMode, ingressName, ingressClassName, ingressPath };
/** ManagedApi's declared defaults. */
/** Its fields' declarations, one table. */
const MANAGED_API_FIELDS = { ...MANAGED_API_OPTIONS_FIELDS, ...MANAGED_API_ARGS_FIELDS };

/**
 * Every rule of ManagedApi's own fields, on the fields as given (defaults are valid).
 * `alternative`: what else fixes a required field.
 */
export function managedApiFieldProblems(a: Partial<ManagedApiArgs>, alternative?: Fix): Problem[] {
    return [
        // The required fields' rules, with what else fixes them.
        ...ipRangesProblems(a.includeIpRanges, alternative),
        ...espServiceNameProblems(a.serviceName, alternative),
        ...Object.entries(CHECKED_OPTIONS).flatMap(([k, d]) => givenProblems(d, k, a[k as keyof ManagedApiArgs])),
    ];
}

/** Every problem of ManagedApi's arguments, each under its property path, or the resolved value (pure). */
export function resolveManagedApi(args: ManagedApiArgs): { problems: Problem[]; value?: ResolvedManagedApi } {
    const a: Partial<ManagedApiArgs> = args ?? {};
    const d = withDefaults(MANAGED_API_FIELDS, a);
    const apiProfile = d.apiProfile;
    const problems: Problem[] = [
        ...componentFieldProblems(MANAGED_API_ARG_TYPES, "ManagedApi", args),
        ...managedApiFieldProblems(a),
        ...givenProblems(MANAGED_API_ARGS_FIELDS.apiProfile, "apiProfile", apiProfile),
    ];
    if (problems.length) return { problems };
    const value: ResolvedManagedApi = {
        namespace: d.namespace,
        // A list, or the one CIDR the checks accept on its own.
        includeIpRanges: Object.freeze(([] as string[]).concat(a.includeIpRanges!)),
        serviceName: a.serviceName!,
        ...(a.serviceAccountSecret !== undefined ? { serviceAccountSecret: a.serviceAccountSecret } : {}),
        portMode: d.portMode,
        ingressName: d.ingressName,
        ingressClassName: d.ingressClassName,
        ingressPath: d.ingressPath,
        espImage: d.espImage,
        echoImage: d.echoImage,
        apiProfile,
        // The `current` profile's IngressClass: created unless told not to (`false`), kept on destroy only when asked (`true`).
        createIngressClass: d.createIngressClass !== false,
        keepIngressClassOnDestroy: d.keepIngressClassOnDestroy === true,
        awaitRollout: d.awaitRollout,
    };
    return { problems, value: Object.freeze(value) };
}
