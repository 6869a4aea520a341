/**
 * ManagedApi's arguments (each field documented here once) and the settings the stack resolves them to.
 */
import { ApiProfileName, EspPortModeName } from "./mesh-enums";

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
