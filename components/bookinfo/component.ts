/**
 * Istio's bookinfo sample (the workloads the limits protect), its Gateway and VirtualService: the
 * Pulumi component, which resolves its arguments (bookinfo-resolve.ts) and registers what
 * builders/bookinfo.ts builds of them.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SKIP_AWAIT, awaitAnnotations, stackLabels } from "../../lib/common";
import { Gateway, KubernetesGateway, VirtualService } from "../common/crds";
import { PlannedOptions, planOrCompute, argsError } from "../common/arg-checks";
import { BookinfoArgs } from "./args.generated";
import { BookinfoPlan, planBookinfo } from "./resolve";
import {
    BOOKINFO_APPS,
    ResolvedBookinfo,
    ambientIngressSpec,
    bookinfoDeploymentSpec,
    bookinfoGatewaySpec,
    bookinfoServiceMeshLabels,
    bookinfoServiceSpec,
    bookinfoVirtualHosts,
    virtualServiceSpec,
} from "../../builders/bookinfo";

export class Bookinfo extends pulumi.ComponentResource {
    /** Namespace of the sample. */
    public readonly namespace: string;
    /** Name of its Gateway (what a VirtualService's `gateways` names). */
    public readonly gatewayName: string;
    /** Name of its VirtualService. */
    public readonly virtualServiceName: string;
    /** Istio's names (`<host>:<port>`) of the gateway virtual hosts its Gateway and VirtualService make. */
    public readonly virtualHosts: string[];

    /** `opts.plan`: the `planBookinfo` of these same `args`, when the caller has it already. */
    constructor(name: string, args: BookinfoArgs, opts?: PlannedOptions<BookinfoPlan>) {
        const { plan, opts: options } = planOrCompute(`Bookinfo ${name}`, args, opts, planBookinfo);
        const b = plan.value;
        if (!b) throw argsError(`Bookinfo ${name}`, plan.problems);
        super("mesh-ratelimit:index:Bookinfo", name, {}, options);
        this.workloads(b);
        const labels = stackLabels("bookinfo");
        if (b.meshMode === "ambient") {
            const meta = { name: b.gatewayName, namespace: b.gatewayApiNamespace, labels };
            new KubernetesGateway(`${b.gatewayName}-ingress`, { metadata: meta, spec: ambientIngressSpec(b) }, { parent: this });
        }
        new Gateway(b.gatewayName, { metadata: { name: b.gatewayName, namespace: b.namespace, labels }, spec: bookinfoGatewaySpec(b) }, { parent: this });
        new VirtualService(
            b.virtualServiceName,
            { metadata: { name: b.virtualServiceName, namespace: b.namespace, labels }, spec: virtualServiceSpec(b) },
            { parent: this },
        );
        this.namespace = b.namespace;
        this.gatewayName = b.gatewayName;
        this.virtualServiceName = b.virtualServiceName;
        this.virtualHosts = bookinfoVirtualHosts(b);
        this.registerOutputs({
            namespace: this.namespace,
            gatewayName: this.gatewayName,
            virtualServiceName: this.virtualServiceName,
            virtualHosts: this.virtualHosts,
        });
    }

    /** Each app's ServiceAccount and Service, and a Deployment per version. */
    private workloads(b: ResolvedBookinfo): void {
        const ns = b.namespace;
        for (const { app, versions } of BOOKINFO_APPS) {
            const labels = stackLabels("bookinfo", { app });
            new k8s.core.v1.ServiceAccount(`bookinfo-${app}`, { metadata: { name: `bookinfo-${app}`, namespace: ns, labels } }, { parent: this });
            new k8s.core.v1.Service(
                app,
                {
                    metadata: { name: app, namespace: ns, labels: { ...labels, service: app, ...bookinfoServiceMeshLabels(b, app) }, annotations: SKIP_AWAIT },
                    spec: bookinfoServiceSpec(app),
                },
                { parent: this },
            );
            for (const version of versions) {
                new k8s.apps.v1.Deployment(
                    `${app}-${version}`,
                    {
                        metadata: { name: `${app}-${version}`, namespace: ns, labels: { ...labels, version }, annotations: awaitAnnotations(b) },
                        spec: bookinfoDeploymentSpec(b, app, version, labels),
                    },
                    { parent: this },
                );
            }
        }
    }
}
