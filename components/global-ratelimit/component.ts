/**
 * GlobalRateLimit: global limits for any Istio gateway, from typed rules (builders/rules.ts).
 * Deploys the envoyproxy/ratelimit service (ConfigMap, Deployment, Service, PodDisruptionBudget),
 * Redis (or uses an existing one) and the gateway's EnvoyFilters (the rate-limit HTTP filter, the
 * virtual-host actions and the route actions), all derived from the same rules.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { PER_INSTANCE_MIN_ISTIO } from "../../builders/envoy-filters";
import { deployedRedisAuth, redisUrl } from "../../builders/redis-connection";
import { stackLabels } from "../../lib/common";
import { PlannedOptions, argsError, planOrCompute } from "../common/arg-checks";
import { EnvoyFilter } from "../common/crds";
import { RateLimitService } from "../service/ratelimit-service";
import { Redis } from "../service/redis";
import { Problem } from "../../lib/problems";
import { checkedValues, deferInputs, filledText, withFillIn } from "../common/deferred-inputs";

import { GlobalRateLimitArgs } from "./args.generated";
import { GlobalRateLimitPlan, planGlobalRateLimit } from "./plan";
import { OwnershipView } from "../../builders/host-ownership-rule";
import { hostOwnershipProblems } from "./host-ownership";
import { readOwnershipView } from "./host-ownership-lookup";
import { claimListeners, ownNamedObjects } from "./listener-claims";
import { RateLimitMonitoring } from "../service/ratelimit-monitoring";
import { ServiceSettings } from "../service/settings";
import { perValueSizingText } from "./per-value-store";

export class GlobalRateLimit extends pulumi.ComponentResource {
    /** gRPC address of the rate-limit service (what the gateway filter calls). */
    public readonly grpcAddress: string;
    /** The rate-limit domain. */
    public readonly domain: string;
    /** The service's `config.yaml`, derived from the rules. */
    public readonly configYaml: string;
    /** Names of the EnvoyFilters created. */
    public readonly filterNames: string[];
    /** Name of the rate-limit HTTP filter on the gateway (where its per-route config is keyed). */
    public readonly httpFilterName: string;
    /** What the service's `REDIS_URL` says: the Redis, Sentinels or Cluster seeds it uses (an output: the addresses may be outputs). */
    public readonly redisUrl: pulumi.Output<string>;
    /** gRPC address of the per-value counters' service (`counterStore: split` with both kinds of counters); `""` without one. */
    public readonly perValueGrpcAddress: string;
    /** That service's `config.yaml`; `""` without one. */
    public readonly perValueConfigYaml: string;
    /**
     * The per-value store's sizing: its `maxmemory`, the counters of the longest key it holds and the
     * rate of new values it holds for their whole life (`<maxmemory>: <n> counters of <b> B, <r> new values/s
     * for <s> s`); `""` without a per-value store.
     */
    public readonly perValueMaxMemory: string;

    /**
     * `opts.plan`: the `planGlobalRateLimit` of these same `args`, when the caller has it already;
     * `opts.hostOwnership`: what the cluster says of the gateway's hosts (read with kubectl when absent).
     */
    constructor(name: string, args: GlobalRateLimitArgs, opts?: GlobalRateLimitResourceOptions) {
        const { hostOwnership, ...rest } = opts ?? {};
        // Validate before anything is registered: a bad rule creates nothing.
        const { plan, options, values } = planOrThrow(name, args, rest, hostOwnership);
        super("mesh-ratelimit:index:GlobalRateLimit", name, {}, options);
        // What each per-value rule gets from its store: what a flood must send to reset one of its counters
        // (a caller that passes its plan, the stack's program, prints it once itself).
        if (opts?.plan === undefined) for (const line of plan.perValueFigures.lines) void pulumi.log.info(line, this);

        // The access policies first: no pod of the service or Redis runs a moment without them.
        const policies: pulumi.Resource[] = plan.policies.map((m) =>
            m.kind === "NetworkPolicy"
                ? new k8s.networking.v1.NetworkPolicy(`${name}-${m.metadata.name}`, m, { parent: this })
                : new k8s.apiextensions.CustomResource(`${name}-${m.metadata.name}`, m, { parent: this }),
        );
        const side = (suffix: string, settings: ServiceSettings, configText: string) => this.serviceSide(`${name}${suffix}`, settings, configText, policies);
        const { service, address: inClusterAddress } = side("", plan.service, plan.configYaml);
        const services: pulumi.Resource[] = [service];
        if (plan.perValue) services.push(side("-per-value", plan.perValue.service, plan.perValue.configYaml).service);
        // With failure_mode_deny the gateway refuses everything until the service answers: filters last.
        const labels = stackLabels("global-ratelimit");
        for (const f of plan.filters) {
            new EnvoyFilter(
                `${name}-${f.name}`,
                { metadata: { name: f.name, namespace: f.namespace, labels }, spec: f.spec },
                { parent: this, dependsOn: services },
            );
        }
        if (plan.monitoring.dashboard || plan.monitoring.rules) {
            new RateLimitMonitoring(`${name}-monitoring`, { plan: plan.monitoring }, { parent: this, dependsOn: [service] });
        }
        this.grpcAddress = plan.grpcAddress;
        this.domain = args.domain;
        this.configYaml = plan.configYaml;
        this.filterNames = plan.filters.map((f) => f.name);
        this.httpFilterName = plan.httpFilterNames.global;
        this.redisUrl = filledText(redisUrl(plan.service.redis, inClusterAddress), values);
        this.perValueGrpcAddress = plan.perValue?.grpcAddress ?? "";
        this.perValueConfigYaml = plan.perValue?.configYaml ?? "";
        this.perValueMaxMemory = plan.perValue ? perValueSizingText(plan.perValue.sizing) : "";
        this.registerOutputs({
            perValueMaxMemory: this.perValueMaxMemory,
            perValueGrpcAddress: this.perValueGrpcAddress,
            perValueConfigYaml: this.perValueConfigYaml,
            grpcAddress: this.grpcAddress,
            domain: this.domain,
            configYaml: this.configYaml,
            filterNames: this.filterNames,
            httpFilterName: this.httpFilterName,
            redisUrl: this.redisUrl,
        });
    }

    /** One side's Redis (when the component deploys it) and service; children are named after the component, so any number of instances coexist in one program. */
    private serviceSide(prefix: string, settings: ServiceSettings, configText: string, policies: pulumi.Resource[]) {
        const auth = deployedRedisAuth(settings.redis);
        const redis = auth ? new Redis(`${prefix}-redis`, { settings, auth }, { parent: this, dependsOn: policies }) : undefined;
        // The service crash-loops while Redis is unreachable, so Redis comes first.
        const service = new RateLimitService(
            `${prefix}-ratelimit`,
            { settings, redisAddress: redis?.address ?? "", configYaml: configText },
            { parent: this, dependsOn: [...policies, ...(redis ? [redis] : [])] },
        );
        return { service, address: redis?.address ?? "" };
    }
}

/** GlobalRateLimit's options: the plan it may be given, and the cluster's view of host ownership. */
export interface GlobalRateLimitResourceOptions extends PlannedOptions<GlobalRateLimitPlan> {
    /** What the cluster says of the gateway's hosts; when absent, read with kubectl (not under Pulumi's mocks). */
    hostOwnership?: OwnershipView;
}

/** The hosts on which the plan turns a platform's defaults off that its namespace does not own (none to check: none). */
function ownershipProblems(plan: GlobalRateLimitPlan, given: OwnershipView | undefined) {
    if (!plan.platformDefaultsOff.length) return [];
    const gatewayNamespace = plan.filters[0]!.namespace;
    const view = given ?? readOwnershipView(gatewayNamespace, (m) => void pulumi.log.warn(m));
    return view ? hostOwnershipProblems(plan.service.ratelimit.namespace, plan.platformDefaultsOff, view) : [];
}

/**
 * The plan of `args`, with a placeholder for each of their Inputs (deferred-inputs.ts), or a throw on
 * any problem; the options for `super`, with the Inputs' values put into the children once known
 * and checked (the same refusal then); those values, for the outputs that hold them.
 */
function planOrThrow(name: string, args: GlobalRateLimitArgs, opts: PlannedOptions<GlobalRateLimitPlan> | undefined, hostOwnership: OwnershipView | undefined) {
    const refuse = (problems: Problem[]) => {
        if (problems.length) throw argsError(`GlobalRateLimit ${name}`, problems);
    };
    const deferred = deferInputs(args);
    refuse(deferred.problems);
    const { plan, opts: options } = planOrCompute(`GlobalRateLimit ${name}`, deferred.args, opts, planGlobalRateLimit);
    refuse(plan.problems);
    // The platform's defaults go off only on hosts this team owns (components/global-ratelimit/host-ownership.ts).
    refuse(ownershipProblems(plan, hostOwnership));
    claimOrThrow(name, args, plan);
    const values = checkedValues(deferred, args, (a) => refuse(planGlobalRateLimit(a).problems));
    return { plan, options: withFillIn(options, values), values };
}

/**
 * Claims the instance's gateway listeners and its named objects in this program, or throws: a
 * second instance on one listener (shared layout) or writing the same objects is refused.
 */
function claimOrThrow(name: string, args: GlobalRateLimitArgs, plan: GlobalRateLimitPlan): void {
    // One rate-limit filter per gateway listener: a second instance there would read the first's
    // descriptors too (Envoy's filter sends every rate_limits entry of the route to its service).
    const holder = claimListeners(name, plan.listenerKeys);
    if (holder !== undefined) {
        throw argsError(`GlobalRateLimit ${name}`, [
            {
                key: "gateway",
                value: args.gateway,
                problem: `the same gateway pods and listener port as GlobalRateLimit ${holder}, both with filterLayout "shared": two rate-limit filters on one listener would each send every descriptor of its routes to their own service`,
                fix: `use filterLayout: FilterLayout.PerInstance (the default; Istio ${PER_INSTANCE_MIN_ISTIO} or later) on both, or put both sets of rules into GlobalRateLimit ${holder}, or target another gateway or port`,
            },
        ]);
    }
    // Objects under fixed or argument-given names in its namespace: two instances of one program
    // there would write the same objects (the first's would be overwritten, and destroyed with the second).
    const objects = ownNamedObjects([plan.service, ...(plan.perValue ? [plan.perValue.service] : [])]);
    const sharer = claimListeners(name, objects.keys, `${pulumi.getProject()}/${pulumi.getStack()}|objects`);
    if (sharer !== undefined) {
        throw argsError(`GlobalRateLimit ${name}`, [
            {
                key: "namespace",
                value: plan.service.ratelimit.namespace,
                problem: `GlobalRateLimit ${sharer} of this program already writes ${objects.names} in namespace ${plan.service.ratelimit.namespace}: two instances there would overwrite each other's service, config and Redis`,
                fix: `give this instance a namespace of its own (namespace), or service.name and service.configName of its own with an existing Redis (redis.address); or put both sets of rules into GlobalRateLimit ${sharer}`,
            },
        ]);
    }
}
