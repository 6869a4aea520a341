/**
 * MeshRateLimit: the whole specified stack (docs/specification.md) from its typed arguments, one
 * per stack config key: the global limits (GlobalRateLimit with the specification's rules), the
 * local bucket (LocalRateLimit), bookinfo, the managed API and mesh mutual TLS.
 */
import * as pulumi from "@pulumi/pulumi";
import { Bookinfo } from "../components/bookinfo/component";
import { GlobalRateLimit } from "../components/global-ratelimit/component";
import { PlannedOptions, planOrCompute } from "../components/common/arg-checks";
import { checkedValues, deferInputs, withFillIn } from "../components/common/deferred-inputs";
import { meshArgsError } from "./arg-problems";
import { LocalRateLimit } from "../components/local-ratelimit/component";
import { ManagedApi } from "../components/managed-api/component";
import { MeshMutualTls } from "../components/mesh-mtls/component";
import { BookinfoMode } from "../components/common/mesh-enums";
import { effectiveLimits } from "./limits-table";
import { MeshRateLimitArgs } from "./mesh-ratelimit-args.generated";
import { MESH_TOP_FIELDS } from "./mesh-fields";
import { withDefaults } from "../lib/field-decl";
import { MeshRateLimitPlan, localArgsOf, managedApiArgsOf, planMeshRateLimit, stackNamespaces } from "./mesh-plan";

/** One effective limit, as the stack output `limits` shows it. */
export interface LimitRowOutput {
    /** `global` or `local`. */
    scope: string;
    /** What is counted. */
    match: string;
    /** Requests per unit, e.g. `1/minute`. */
    limit: string;
    /** Where it is enforced and how a refusal looks. */
    enforcedBy: string;
}

export class MeshRateLimit extends pulumi.ComponentResource {
    /** The variant deployed. */
    public readonly variant: string;
    /** gRPC address of the rate-limit service (what the gateway filter calls). */
    public readonly rateLimitService: string;
    /** Paths to try through the gateway. */
    public readonly gatewayPaths: string[];
    /** The effective global and local limits, one row each. */
    public readonly limits: LimitRowOutput[];

    /** `opts.plan`: the `planMeshRateLimit` of these same `args`, when the caller has it already (the program does). */
    constructor(name: string, args: MeshRateLimitArgs, opts?: PlannedOptions<MeshRateLimitPlan>) {
        // Every argument is checked (and every problem reported) before anything is registered.
        // Inputs (components/common/deferred-inputs.ts): checked again when known, then put into the children.
        const deferred = deferInputs(args);
        if (deferred.problems.length) throw meshArgsError(deferred.problems);
        const { plan, opts: options } = planOrCompute(`MeshRateLimit ${name}`, deferred.args, opts, planMeshRateLimit);
        const s = plan.settings;
        super(
            "mesh-ratelimit:index:MeshRateLimit",
            name,
            {},
            withFillIn(
                options,
                checkedValues(deferred, args, (a) => void planMeshRateLimit(a)),
            ),
        );

        const global = new GlobalRateLimit("global-ratelimit", plan.global.args, { parent: this, plan: plan.global });
        // An existing bookinfo (`bookinfo: existing`) gets the limits only: its Gateway and VirtualService
        // are the ones the plan names, so the virtual hosts the filters patch are the same.
        if (s.bookinfoMode === BookinfoMode.Deploy) new Bookinfo("bookinfo", plan.bookinfo.args, { parent: this, plan: plan.bookinfo });
        // Ambient: the bucket on the waypoint that serves the app's Service (docs/guide/ambient.md).
        if (s.local.enabled) new LocalRateLimit("local-ratelimit", localArgsOf(s), { parent: this });
        // Its own switches, their declared defaults filled in.
        const top = withDefaults(MESH_TOP_FIELDS, args);
        if (s.managedApi)
            new ManagedApi(
                "managed-api",
                {
                    ...managedApiArgsOf(s),
                    createIngressClass: top.createIngressClass,
                    keepIngressClassOnDestroy: top.keepIngressClassOnDestroy,
                },
                { parent: this },
            );
        if (s.mesh.mutualTls) {
            new MeshMutualTls(
                "mesh-mtls",
                {
                    apiProfile: s.apiProfile,
                    scope: s.mesh.mutualTlsScope,
                    meshNamespace: s.mesh.namespace,
                    namespaces: stackNamespaces(s),
                    kubeContext: args.kubeContext,
                    createPeerAuthentication: top.createPeerAuthentication,
                    keepPeerAuthenticationOnDestroy: top.keepPeerAuthenticationOnDestroy,
                },
                { parent: this },
            );
        }

        const p = s.paths;
        this.variant = s.variant;
        this.gatewayPaths = [p.limited, ...(s.global.apiRoute ? [`${p.apiPrefix}/1`] : []), p.login, p.logout];
        this.limits = effectiveLimits(s);
        this.rateLimitService = global.grpcAddress;
        this.registerOutputs({ variant: this.variant, gatewayPaths: this.gatewayPaths, limits: this.limits, rateLimitService: this.rateLimitService });
    }
}
