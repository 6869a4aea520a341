/**
 * The managed-API service (spec 1.5, 1.6, 2.8, 2.9, 5): Google Cloud Endpoints' ESP in front of an
 * echo backend, injected with include-IP-ranges, exposed by an Ingress of class `istio`.
 *
 * The `current` profile's Ingress names its class (`ingressClassName`). Istio serves such an Ingress
 * only when an IngressClass of that name has controller `istio.io/ingress-controller`; without the
 * object it applies the mesh config's `ingressControllerMode` (STRICT by default) and ignores it.
 * Istio installs no IngressClass, so the stack creates one when the cluster lacks it (program/preflight.ts
 * decides; an existing one is left alone).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { INJECT_LABEL, SKIP_AWAIT, awaitAnnotations, stackLabels } from "../lib/common";
import { isDnsName } from "../lib/dns-names";
import { dnsNameProblems, fieldProblem, oneOfProblems } from "../lib/field-checks";
import { Fix, FixStyle } from "../lib/fix-style";
import { ECHO_UID, restrictedContainerSecurityContext } from "../lib/pod-security";
import { Problem } from "../lib/problems";
import { argsError, unknownFieldProblems } from "./arg-checks";
import { DEFAULTS } from "./defaults";
import { ApiProfileName, EspPortModeName } from "./mesh-enums";

import { isCidr } from "../lib/formats";

/** The controller name Istio serves an IngressClass for. */
export const ISTIO_INGRESS_CONTROLLER = "istio.io/ingress-controller";

export const ESP_NAME = "esp-echo";
export const ESP_HTTP_PORT = 8081;
export const ECHO_PORT = 8080;
export const ESP_SERVICE_PORT = 80;
/** Pod annotation that `istioctl kube-inject --includeIPRanges` sets. */
export const INCLUDE_RANGES_ANNOTATION = "traffic.sidecar.istio.io/includeOutboundIPRanges";
const CREDS_DIR = "/etc/esp/creds";
const CREDS_FILE = "service-account-creds.json";

/** ESP, its backend and the Ingress, as the stack's settings and ManagedApi's args resolve them. */
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

/**
 * ESP's container security. The `endpoints-runtime:1` image must run as root: its start script
 * writes the nginx config under /etc/nginx and starts cron, and nginx's master switches its workers
 * to user `nginx`, which needs the setuid/setgid capabilities. So it meets Pod Security `baseline`,
 * not `restricted` (docs/security.md, "Pod Security"): no privilege escalation, the runtime's seccomp profile,
 * the default capability set.
 */
export const ESP_SECURITY_CONTEXT = { allowPrivilegeEscalation: false, seccompProfile: { type: "RuntimeDefault" } };
/** The echo backend: `restricted`, as an unprivileged user, image read-only with an emptyDir /tmp. */
export const ECHO_SECURITY_CONTEXT = {
    ...restrictedContainerSecurityContext(true),
    runAsUser: ECHO_UID,
    runAsGroup: ECHO_UID,
    seccompProfile: { type: "RuntimeDefault" },
};

/** ESP's arguments (spec 2.9: `--http_port=8081`). */
export function espArgs(m: ManagedApiSettings): string[] {
    return [
        `--http_port=${ESP_HTTP_PORT}`,
        `--backend=127.0.0.1:${ECHO_PORT}`,
        `--service=${m.serviceName}`,
        "--rollout_strategy=managed",
        ...(m.serviceAccountSecret ? [`--service_account_key=${CREDS_DIR}/${CREDS_FILE}`] : []),
    ];
}

/** Spec 2.9: port 80 → 8081, named `http` (mesh mTLS) or `tcp` (sidecar passes bytes through). */
export function espServicePort(m: ManagedApiSettings, profile: ApiProfileName) {
    return {
        port: ESP_SERVICE_PORT,
        targetPort: ESP_HTTP_PORT,
        protocol: "TCP",
        name: m.portMode,
        // Kubernetes' modern spelling of the same protocol choice.
        ...(profile === "current" ? { appProtocol: m.portMode } : {}),
    };
}

/** Spec 2.8 as specified (`seed`) or as served today (`current`). */
export function ingressManifest(m: ManagedApiSettings, profile: ApiProfileName, labels: Record<string, string>) {
    const metadata = { name: m.ingressName, namespace: m.namespace, labels, annotations: SKIP_AWAIT };
    if (profile === "seed") {
        return {
            apiVersion: "extensions/v1beta1",
            kind: "Ingress",
            metadata: { ...metadata, annotations: { ...metadata.annotations, "kubernetes.io/ingress.class": m.ingressClassName } },
            // pathType Prefix: without it the API server defaults a v1beta1 path to ImplementationSpecific,
            // which Istio turns into an exact match of `/echo` (the istio tier shows it); the field
            // exists in extensions/v1beta1 since Kubernetes 1.18.
            spec: {
                rules: [{ http: { paths: [{ path: m.ingressPath, pathType: "Prefix", backend: { serviceName: ESP_NAME, servicePort: ESP_SERVICE_PORT } }] } }],
            },
        };
    }
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata,
        spec: {
            ingressClassName: m.ingressClassName,
            rules: [
                {
                    http: {
                        paths: [{ path: m.ingressPath, pathType: "Prefix", backend: { service: { name: ESP_NAME, port: { number: ESP_SERVICE_PORT } } } }],
                    },
                },
            ],
        },
    };
}

/** The IngressClass that makes Istio serve the `current` profile's Ingress. */
export function ingressClassManifest(m: ManagedApiSettings, labels: Record<string, string>) {
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: m.ingressClassName, labels },
        spec: { controller: ISTIO_INGRESS_CONTROLLER },
    };
}

/** Where ESP runs and how it is reached: ManagedApi's arguments and MeshRateLimit's `managedApi`. Each field documented here once. */
export interface ManagedApiOptions {
    /** Namespace of ESP, the echo backend and the Ingress (must exist). ESP's image runs as root, so it meets Pod Security `baseline` only: a namespace of its own lets the others enforce `restricted` (docs/security.md, Pod Security). Defaults to `default`; MeshRateLimit's to `bookinfo.namespace`. */
    namespace?: string;
    /** Name of an existing Secret with key `service-account-creds.json`, mounted for ESP off GKE. Defaults to none. */
    serviceAccountSecret?: string;
    /** `http`: Service port 80 → 8081 named `http` (mesh mutual TLS, spec 2.9). `tcp`: named `tcp`, the sidecar passes bytes through (spec 5.4, not recommended). Defaults to `EspPortModeName.Http`. */
    portMode?: EspPortModeName;
    /** Name of the Ingress (spec `<ingress_name>`). Defaults to `simple-ingress`. */
    ingressName?: string;
    /** Ingress class Istio serves. `seed` profile: the `kubernetes.io/ingress.class` annotation (Istio serves it when it equals the mesh config's `ingressClass`, `istio` by default). `current`: the Ingress's class; an IngressClass of this name with controller `istio.io/ingress-controller` is created only when the cluster has none (`createIngressClass`), and an existing one is left alone. Defaults to `istio`. */
    ingressClassName?: string;
    /** Path prefix the Ingress routes to ESP. Defaults to `/echo`. */
    ingressPath?: string;
    /** ESP image: a pinned release of ESP v1 (the floating `:1` tag would change under a running stack). Defaults to `gcr.io/endpoints-release/endpoints-runtime:1.57.0`. */
    espImage?: string;
    /** Echo backend image (listens on 8080). Defaults to `gcr.io/google-samples/echo-python:1.0`. */
    echoImage?: string;
}

export interface ManagedApiArgs extends ManagedApiOptions {
    /** Cloud Endpoints service name ESP serves (`--service`), e.g. `echo-api.endpoints.PROJECT.cloud.goog`. */
    serviceName: string;
    /** The cluster's pod and service CIDRs: only these go through the sidecar, so ESP reaches Google Service Control directly. */
    includeIpRanges: string[];
    /** `current`: networking.k8s.io/v1 Ingress and an IngressClass; `seed`: extensions/v1beta1 with the class annotation. Defaults to `ApiProfileName.Current`. */
    apiProfile?: ApiProfileName;
    /**
     * `current` profile: whether the stack creates IngressClass `<ingressClassName>` (false when the
     * cluster already has one for Istio that the stack did not create; see program/preflight.ts). Defaults to `true`.
     */
    createIngressClass?: boolean;
    /**
     * `current` profile, with `createIngressClass`: `pulumi destroy` leaves the IngressClass in place
     * (Pulumi's `retainOnDelete`), for a class that other Ingresses use. Decided at `pulumi up`. Defaults to `false`.
     */
    keepIngressClassOnDestroy?: boolean;
    /** Wait for the Deployment to become ready. Defaults to `true`. */
    awaitRollout?: boolean;
}

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

/** Defaults filled in and checked (pure). */
function planManagedApi(args: ManagedApiArgs): {
    problems: Problem[];
    m: ManagedApiSettings;
    profile: ApiProfileName;
    awaitRollout: boolean;
} {
    const a: Partial<ManagedApiArgs> = args ?? {};
    const d = (k: keyof typeof DEFAULTS) => String(DEFAULTS[k]);
    const m: ManagedApiSettings = {
        namespace: a.namespace ?? d("workloadNamespace"),
        includeIpRanges: a.includeIpRanges ?? [],
        serviceName: a.serviceName ?? "",
        serviceAccountSecret: a.serviceAccountSecret,
        portMode: a.portMode ?? DEFAULTS.espPortMode,
        ingressName: a.ingressName ?? d("ingressName"),
        ingressClassName: a.ingressClassName ?? d("ingressClassName"),
        ingressPath: a.ingressPath ?? d("ingressPath"),
        espImage: a.espImage ?? d("espImage"),
        echoImage: a.echoImage ?? d("echoImage"),
    };
    const profile: ApiProfileName = a.apiProfile ?? DEFAULTS.apiProfile;
    const problems: Problem[] = [
        ...unknownFieldProblems("ManagedApi", args),
        ...managedApiFieldProblems(a),
        ...oneOfProblems("apiProfile", profile, Object.values(ApiProfileName), ApiProfileName.Current),
    ];
    return { problems, m, profile, awaitRollout: a.awaitRollout ?? DEFAULTS.awaitRollout };
}

/** ESP's pod: ESP in front of the echo backend, only the listed ranges through the sidecar. */
function espPodTemplate(m: ReturnType<typeof planManagedApi>["m"], labels: Record<string, string>) {
    return {
        metadata: {
            labels: { ...labels, ...INJECT_LABEL },
            // Only these ranges go through the sidecar; ESP reaches Service Control directly (spec 1.6).
            annotations: { [INCLUDE_RANGES_ANNOTATION]: m.includeIpRanges.join(",") },
        },
        spec: {
            // ESP talks to Google's Service Control with its own key (serviceAccountSecret),
            // never to the Kubernetes API: no ServiceAccount token in its pod.
            automountServiceAccountToken: false,
            containers: [
                {
                    name: "esp",
                    image: m.espImage,
                    args: espArgs(m),
                    ports: [{ name: "http", containerPort: ESP_HTTP_PORT }],
                    ...(m.serviceAccountSecret ? { volumeMounts: [{ name: "esp-creds", mountPath: CREDS_DIR, readOnly: true }] } : {}),
                    resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } },
                    securityContext: ESP_SECURITY_CONTEXT,
                },
                {
                    name: "echo",
                    image: m.echoImage,
                    ports: [{ name: "echo", containerPort: ECHO_PORT }],
                    volumeMounts: [{ name: "echo-tmp", mountPath: "/tmp" }],
                    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
                    securityContext: ECHO_SECURITY_CONTEXT,
                },
            ],
            volumes: [
                { name: "echo-tmp", emptyDir: {} },
                ...(m.serviceAccountSecret ? [{ name: "esp-creds", secret: { secretName: m.serviceAccountSecret } }] : []),
            ],
        },
    };
}

export class ManagedApi extends pulumi.ComponentResource {
    /** In-cluster address of ESP's Service (`esp-echo.<namespace>.svc.cluster.local:80`). */
    public readonly serviceAddress: string;
    /** Name of the Ingress. */
    public readonly ingressName: string;
    /** Whether the component created IngressClass `<ingressClassName>` (current profile, when the cluster lacked it). */
    public readonly createdIngressClass: boolean;

    constructor(name: string, args: ManagedApiArgs, opts?: pulumi.ComponentResourceOptions) {
        const plan = planManagedApi(args);
        if (plan.problems.length) throw argsError(`ManagedApi ${name}`, plan.problems);
        super("mesh-ratelimit:index:ManagedApi", name, {}, opts);
        const m = plan.m;
        const s = { apiProfile: plan.profile, awaitRollout: plan.awaitRollout };
        const labels = stackLabels("managed-api", { app: ESP_NAME });

        new k8s.apps.v1.Deployment(
            name,
            {
                metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: awaitAnnotations(s) },
                spec: {
                    replicas: 1,
                    selector: { matchLabels: { app: ESP_NAME } },
                    template: espPodTemplate(m, labels),
                },
            },
            { parent: this },
        );

        const service = new k8s.core.v1.Service(
            name,
            {
                metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: SKIP_AWAIT },
                spec: { selector: { app: ESP_NAME }, ports: [espServicePort(m, s.apiProfile)] },
            },
            { parent: this },
        );

        let ingressClass: k8s.networking.v1.IngressClass | undefined;
        if (s.apiProfile === "current" && args.createIngressClass !== false) {
            // Cluster-scoped, so named after the class (not the component): one per cluster.
            ingressClass = new k8s.networking.v1.IngressClass(
                `ingressclass-${m.ingressClassName}`,
                ingressClassManifest(m, stackLabels("managed-api")) as k8s.networking.v1.IngressClassArgs,
                { parent: this, retainOnDelete: args.keepIngressClassOnDestroy === true },
            );
        }
        const ingress = ingressManifest(m, s.apiProfile, labels);
        const dependsOn = [service, ...(ingressClass ? [ingressClass] : [])];
        if (s.apiProfile === "seed")
            new k8s.extensions.v1beta1.Ingress(m.ingressName, ingress as k8s.extensions.v1beta1.IngressArgs, { parent: this, dependsOn });
        else new k8s.networking.v1.Ingress(m.ingressName, ingress as k8s.networking.v1.IngressArgs, { parent: this, dependsOn });
        this.serviceAddress = `${ESP_NAME}.${m.namespace}.svc.cluster.local:${ESP_SERVICE_PORT}`;
        this.ingressName = m.ingressName;
        this.createdIngressClass = ingressClass !== undefined;
        this.registerOutputs({ serviceAddress: this.serviceAddress, ingressName: this.ingressName, createdIngressClass: this.createdIngressClass });
    }
}
