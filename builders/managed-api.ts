/**
 * The managed-API service (spec 1.5, 1.6, 2.8, 2.9, 5) as Kubernetes objects: Google Cloud Endpoints'
 * ESP in front of an echo backend, injected with include-IP-ranges, exposed by an Ingress of class
 * `istio`, built from ManagedApi's resolved arguments (components/managed-api/resolve.ts).
 * Pure: nothing here checks an argument or fills a default.
 *
 * The `current` profile's Ingress names its class (`ingressClassName`). Istio serves such an Ingress
 * only when an IngressClass of that name has controller `istio.io/ingress-controller`; without the
 * object it applies the mesh config's `ingressControllerMode` (STRICT by default) and ignores it.
 * Istio installs no IngressClass, so the stack creates one when the cluster lacks it (program/preflight.ts
 * decides; an existing one is left alone).
 */
import type * as k8s from "@pulumi/kubernetes";
import { INJECT_LABEL, SKIP_AWAIT } from "../lib/common";
import { ECHO_UID, restrictedContainerSecurityContext } from "../lib/pod-security";

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

/** ManagedApi's arguments resolved once (components/managed-api/resolve.ts): read-only, every default filled in. */
export interface ResolvedManagedApi {
    readonly namespace: string;
    /** The CIDRs that go through the sidecar. */
    readonly includeIpRanges: readonly string[];
    /** Cloud Endpoints service name ESP serves. */
    readonly serviceName: string;
    /** Secret with ESP's service-account key; absent: none mounted. */
    readonly serviceAccountSecret?: string;
    /** How ESP's Service port is named (components/common/mesh-enums.ts `EspPortModeName`). */
    readonly portMode: "http" | "tcp";
    readonly ingressName: string;
    readonly ingressClassName: string;
    readonly ingressPath: string;
    readonly espImage: string;
    readonly echoImage: string;
    /** Which API versions (components/common/mesh-enums.ts `ApiProfileName`). */
    readonly apiProfile: "current" | "seed";
    /** `current` profile: whether the stack creates the IngressClass. */
    readonly createIngressClass: boolean;
    /** Whether `pulumi destroy` leaves that IngressClass in place. */
    readonly keepIngressClassOnDestroy: boolean;
    readonly awaitRollout: boolean;
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
export function espArgs(m: Pick<ResolvedManagedApi, "serviceName" | "serviceAccountSecret">): string[] {
    return [
        `--http_port=${ESP_HTTP_PORT}`,
        `--backend=127.0.0.1:${ECHO_PORT}`,
        `--service=${m.serviceName}`,
        "--rollout_strategy=managed",
        ...(m.serviceAccountSecret ? [`--service_account_key=${CREDS_DIR}/${CREDS_FILE}`] : []),
    ];
}

/** Spec 2.9: port 80 → 8081, named `http` (mesh mTLS) or `tcp` (sidecar passes bytes through). */
export function espServicePort(m: Pick<ResolvedManagedApi, "portMode" | "apiProfile">): k8s.types.input.core.v1.ServicePort {
    return {
        port: ESP_SERVICE_PORT,
        targetPort: ESP_HTTP_PORT,
        protocol: "TCP",
        name: m.portMode,
        // Kubernetes' modern spelling of the same protocol choice.
        ...(m.apiProfile === "current" ? { appProtocol: m.portMode } : {}),
    };
}

/** ESP's Service: its one port, by the `app` label. */
export function espServiceSpec(m: Pick<ResolvedManagedApi, "portMode" | "apiProfile">): k8s.types.input.core.v1.ServiceSpec {
    return { selector: { app: ESP_NAME }, ports: [espServicePort(m)] };
}

/** The Ingress's metadata, in either profile. */
function ingressMetadata(
    m: Pick<ResolvedManagedApi, "ingressName" | "namespace">,
    labels: Readonly<Record<string, string>>,
): { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> } {
    return { name: m.ingressName, namespace: m.namespace, labels: { ...labels }, annotations: SKIP_AWAIT };
}

/** Spec 2.8 as specified (`seed` profile): extensions/v1beta1, the class as an annotation. */
export function seedIngressManifest(
    m: Pick<ResolvedManagedApi, "ingressName" | "namespace" | "ingressClassName" | "ingressPath">,
    labels: Readonly<Record<string, string>>,
): k8s.extensions.v1beta1.IngressArgs {
    const metadata = ingressMetadata(m, labels);
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

/** Spec 2.8 as served today (`current` profile): networking.k8s.io/v1, the class by name. */
export function currentIngressManifest(
    m: Pick<ResolvedManagedApi, "ingressName" | "namespace" | "ingressClassName" | "ingressPath">,
    labels: Readonly<Record<string, string>>,
): k8s.networking.v1.IngressArgs {
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: ingressMetadata(m, labels),
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
export function ingressClassManifest(
    m: Pick<ResolvedManagedApi, "ingressClassName">,
    labels: Readonly<Record<string, string>>,
): k8s.networking.v1.IngressClassArgs {
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: m.ingressClassName, labels: { ...labels } },
        spec: { controller: ISTIO_INGRESS_CONTROLLER },
    };
}

/** ESP's Deployment: one pod of ESP in front of the echo backend, only the listed ranges through the sidecar. */
export function espDeploymentSpec(m: ResolvedManagedApi, labels: Readonly<Record<string, string>>): k8s.types.input.apps.v1.DeploymentSpec {
    return { replicas: 1, selector: { matchLabels: { app: ESP_NAME } }, template: espPodTemplate(m, labels) };
}

/** ESP's pod: ESP in front of the echo backend, only the listed ranges through the sidecar. */
function espPodTemplate(m: ResolvedManagedApi, labels: Readonly<Record<string, string>>): k8s.types.input.core.v1.PodTemplateSpec {
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
