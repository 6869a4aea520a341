/**
 * The managed-API service: the Pulumi component, which resolves its arguments
 * (managed-api-resolve.ts) and registers what builders/managed-api.ts builds of them.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SKIP_AWAIT, awaitAnnotations, stackLabels } from "../../lib/common";
import { argsError } from "../common/arg-checks";
import { ManagedApiArgs } from "./args.generated";
import { resolveManagedApi } from "./resolve";
import {
    ESP_NAME,
    ESP_SERVICE_PORT,
    ResolvedManagedApi,
    currentIngressManifest,
    espDeploymentSpec,
    espServiceSpec,
    ingressClassManifest,
    seedIngressManifest,
} from "../../builders/managed-api";

export class ManagedApi extends pulumi.ComponentResource {
    /** In-cluster address of ESP's Service (`esp-echo.<namespace>.svc.cluster.local:80`). */
    public readonly serviceAddress: string;
    /** Name of the Ingress. */
    public readonly ingressName: string;
    /** Whether the component created IngressClass `<ingressClassName>` (current profile, when the cluster lacked it). */
    public readonly createdIngressClass: boolean;

    constructor(name: string, args: ManagedApiArgs, opts?: pulumi.ComponentResourceOptions) {
        const { problems, value: m } = resolveManagedApi(args);
        if (!m) throw argsError(`ManagedApi ${name}`, problems);
        super("mesh-ratelimit:index:ManagedApi", name, {}, opts);
        const labels = stackLabels("managed-api", { app: ESP_NAME });

        new k8s.apps.v1.Deployment(
            name,
            { metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: awaitAnnotations(m) }, spec: espDeploymentSpec(m, labels) },
            { parent: this },
        );
        const service = new k8s.core.v1.Service(
            name,
            { metadata: { name: ESP_NAME, namespace: m.namespace, labels, annotations: SKIP_AWAIT }, spec: espServiceSpec(m) },
            { parent: this },
        );
        const ingressClass = this.ingressClass(m);
        const dependsOn = [service, ...(ingressClass ? [ingressClass] : [])];
        if (m.apiProfile === "seed") new k8s.extensions.v1beta1.Ingress(m.ingressName, seedIngressManifest(m, labels), { parent: this, dependsOn });
        else new k8s.networking.v1.Ingress(m.ingressName, currentIngressManifest(m, labels), { parent: this, dependsOn });
        this.serviceAddress = `${ESP_NAME}.${m.namespace}.svc.cluster.local:${ESP_SERVICE_PORT}`;
        this.ingressName = m.ingressName;
        this.createdIngressClass = ingressClass !== undefined;
        this.registerOutputs({ serviceAddress: this.serviceAddress, ingressName: this.ingressName, createdIngressClass: this.createdIngressClass });
    }

    /** The `current` profile's IngressClass, when the stack creates it. */
    private ingressClass(m: ResolvedManagedApi): k8s.networking.v1.IngressClass | undefined {
        if (m.apiProfile !== "current" || !m.createIngressClass) return undefined;
        // Cluster-scoped, so named after the class (not the component): one per cluster.
        return new k8s.networking.v1.IngressClass(`ingressclass-${m.ingressClassName}`, ingressClassManifest(m, stackLabels("managed-api")), {
            parent: this,
            retainOnDelete: m.keepIngressClassOnDestroy,
        });
    }
}
