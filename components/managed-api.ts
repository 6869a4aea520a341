/**
 * The managed-API service (spec 1.5, 1.6, 2.8, 2.9, 5): Google Cloud Endpoints' ESP in front of an
 * echo backend, injected with include-IP-ranges, exposed by an Ingress of class `istio`.
 *
 * The `current` profile's Ingress names its class (`ingressClassName`). Istio serves such an Ingress
 * only when an IngressClass of that name has controller `istio.io/ingress-controller`; without the
 * object it applies the mesh config's `ingressControllerMode` (STRICT by default) and ignores it.
 * Istio installs no IngressClass, so the stack creates one when the cluster lacks it (preflight.ts
 * decides; an existing one is left alone).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { INJECT_LABEL, SKIP_AWAIT, awaitAnnotations, stackLabels } from "./common";
import { ECHO_UID, restrictedContainerSecurityContext } from "./pod-security";
import { ISTIO_INGRESS_CONTROLLER } from "./preflight";
import { StackSettings } from "./settings";

export const ESP_NAME = "esp-echo";
export const ESP_HTTP_PORT = 8081;
export const ECHO_PORT = 8080;
export const ESP_SERVICE_PORT = 80;
/** Default ingress class (`ingressClassName`): the mesh config's default `ingressClass`. */
export const INGRESS_CLASS = "istio";
/** Pod annotation that `istioctl kube-inject --includeIPRanges` sets. */
export const INCLUDE_RANGES_ANNOTATION = "traffic.sidecar.istio.io/includeOutboundIPRanges";
const CREDS_DIR = "/etc/esp/creds";
const CREDS_FILE = "service-account-creds.json";

type ManagedApiSettings = NonNullable<StackSettings["managedApi"]>;

/**
 * ESP's container security. The `endpoints-runtime:1` image must run as root: its start script
 * writes the nginx config under /etc/nginx and starts cron, and nginx's master switches its workers
 * to user `nginx`, which needs the setuid/setgid capabilities. So it meets Pod Security `baseline`,
 * not `restricted` (README, "Pod Security"): no privilege escalation, the runtime's seccomp profile,
 * the default capability set.
 */
export const ESP_SECURITY_CONTEXT = { allowPrivilegeEscalation: false, seccompProfile: { type: "RuntimeDefault" } };
/** The echo backend: `restricted`, as an unprivileged user, image read-only with an emptyDir /tmp. */
export const ECHO_SECURITY_CONTEXT = { ...restrictedContainerSecurityContext(true), runAsUser: ECHO_UID, runAsGroup: ECHO_UID, seccompProfile: { type: "RuntimeDefault" } };

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
export function espServicePort(m: ManagedApiSettings, profile: StackSettings["apiProfile"]) {
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
export function ingressManifest(m: ManagedApiSettings, profile: StackSettings["apiProfile"], labels: Record<string, string>) {
    const metadata = { name: m.ingressName, namespace: m.namespace, labels, annotations: SKIP_AWAIT };
    if (profile === "seed") {
        return {
            apiVersion: "extensions/v1beta1",
            kind: "Ingress",
            metadata: { ...metadata, annotations: { ...metadata.annotations, "kubernetes.io/ingress.class": m.ingressClassName } },
            // pathType Prefix: without it the API server defaults a v1beta1 path to ImplementationSpecific,
            // which Istio turns into an exact match of `/echo` (the istio tier shows it); the field
            // exists in extensions/v1beta1 since Kubernetes 1.18.
            spec: { rules: [{ http: { paths: [{ path: m.ingressPath, pathType: "Prefix", backend: { serviceName: ESP_NAME, servicePort: ESP_SERVICE_PORT } }] } }] },
        };
    }
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata,
        spec: {
            ingressClassName: m.ingressClassName,
            rules: [{ http: { paths: [{ path: m.ingressPath, pathType: "Prefix", backend: { service: { name: ESP_NAME, port: { number: ESP_SERVICE_PORT } } } }] } }],
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

export interface ManagedApiArgs {
    settings: StackSettings;
    /**
     * `current` profile: whether the stack creates IngressClass `<ingressClassName>` (false when the
     * cluster already has one for Istio that the stack did not create; see preflight.ts). Default true.
     */
    createIngressClass?: boolean;
}

export class ManagedApi extends pulumi.ComponentResource {
    public readonly deployment: k8s.apps.v1.Deployment;
    public readonly service: k8s.core.v1.Service;
    public readonly ingress: k8s.networking.v1.Ingress | k8s.extensions.v1beta1.Ingress;
    /** Created only when the cluster lacked it (current profile). */
    public readonly ingressClass?: k8s.networking.v1.IngressClass;

    constructor(name: string, args: ManagedApiArgs, opts?: pulumi.ComponentResourceOptions) {
        super("mesh-ratelimit:index:ManagedApi", name, {}, opts);
        const s = args.settings;
        const m = s.managedApi;
        if (!m) throw new Error("ManagedApi needs settings.managedApi (set managedApi=true)");
        const labels = stackLabels("managed-api", { app: ESP_NAME });

        this.deployment = new k8s.apps.v1.Deployment(
            name,
            {
                metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: awaitAnnotations(s) },
                spec: {
                    replicas: 1,
                    selector: { matchLabels: { app: ESP_NAME } },
                    template: {
                        metadata: {
                            labels: { ...labels, ...INJECT_LABEL },
                            // Only these ranges go through the sidecar; ESP reaches Service Control directly (spec 1.6).
                            annotations: { [INCLUDE_RANGES_ANNOTATION]: m.includeIpRanges.join(",") },
                        },
                        spec: {
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
                    },
                },
            },
            { parent: this },
        );

        this.service = new k8s.core.v1.Service(
            name,
            { metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: SKIP_AWAIT }, spec: { selector: { app: ESP_NAME }, ports: [espServicePort(m, s.apiProfile)] } },
            { parent: this },
        );

        if (s.apiProfile === "current" && args.createIngressClass !== false) {
            // Cluster-scoped, so named after the class (not the component): one per cluster.
            this.ingressClass = new k8s.networking.v1.IngressClass(`ingressclass-${m.ingressClassName}`, ingressClassManifest(m, stackLabels("managed-api")) as k8s.networking.v1.IngressClassArgs, { parent: this });
        }
        const ingress = ingressManifest(m, s.apiProfile, labels);
        const dependsOn = [this.service, ...(this.ingressClass ? [this.ingressClass] : [])];
        this.ingress =
            s.apiProfile === "seed"
                ? new k8s.extensions.v1beta1.Ingress(m.ingressName, ingress as k8s.extensions.v1beta1.IngressArgs, { parent: this, dependsOn })
                : new k8s.networking.v1.Ingress(m.ingressName, ingress as k8s.networking.v1.IngressArgs, { parent: this, dependsOn });
        this.registerOutputs({});
    }
}
