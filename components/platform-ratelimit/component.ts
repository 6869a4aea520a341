/**
 * PlatformRateLimit: a platform team's limits for a gateway that many teams share. `defaults` apply
 * on every host and route that no team's GlobalRateLimit covers; `overrides` apply everywhere, on
 * top of every team's limits. Deploys its own rate-limit service and Redis (GlobalRateLimit's
 * machinery) and two rate-limit filters of its own on the gateway (builders/platform-filters.ts).
 * It reads no team's objects and no team's stack reads its own: they deploy and destroy in any order.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { deployedRedisAuth } from "../../builders/redis-connection";
import { PLATFORM_DOMAIN, PLATFORM_FILTER_NAMES } from "../../builders/platform-filters";
import { stackLabels } from "../../lib/common";
import { PlannedOptions, argsError, planOrCompute } from "../common/arg-checks";
import { checkedValues, deferInputs, withFillIn } from "../common/deferred-inputs";
import { EnvoyFilter } from "../common/crds";
import { claimListeners } from "../global-ratelimit/listener-claims";
import { readAdmissionServed } from "./admission-served";
import { readUncoveredServers, uncoveredMessage } from "./platform-coverage";
import { readForeignSwitches } from "./platform-switches";
import { PlatformRateLimitArgs } from "./args.generated";
import { PlatformRateLimitPlan, planPlatformRateLimit } from "./plan";
import { resolvePlatformRateLimit } from "./resolve";
import { RateLimitMonitoring } from "../service/ratelimit-monitoring";
import { RateLimitService } from "../service/ratelimit-service";
import { Redis } from "../service/redis";

export class PlatformRateLimit extends pulumi.ComponentResource {
    /** gRPC address of the platform's rate-limit service. */
    public readonly grpcAddress: string;
    /** The rate-limit domain of both sources (their descriptor keys keep them apart). */
    public readonly domain: string;
    /** The service's `config.yaml`. */
    public readonly configYaml: string;
    /** Names of the EnvoyFilters created. */
    public readonly filterNames: string[];
    /** The HTTP filter names on the gateway: `defaults` (what a team's GlobalRateLimit turns off on its hosts) and `overrides`. */
    public readonly httpFilterNames: string[];

    /** `opts.plan`: the `planPlatformRateLimit` of these same `args`, when the caller has it already. */
    constructor(name: string, args: PlatformRateLimitArgs, opts?: PlannedOptions<PlatformRateLimitPlan>) {
        // Validate before anything is registered: a bad rule creates nothing.
        const deferred = deferInputs(args);
        if (deferred.problems.length) throw argsError(`PlatformRateLimit ${name}`, deferred.problems);
        const { plan, opts: options } = planOrCompute(`PlatformRateLimit ${name}`, deferred.args, opts, planPlatformRateLimit);
        if (plan.problems.length) throw argsError(`PlatformRateLimit ${name}`, plan.problems);
        // Inputs (deferred-inputs.ts): checked again when known, then put into the children.
        const values = checkedValues(deferred, args, (a) => {
            const known = resolvePlatformRateLimit(a).problems;
            if (known.length) throw argsError(`PlatformRateLimit ${name}`, known);
        });
        // The admission policy needs an API the cluster serves (Kubernetes 1.30+): refused before anything is registered.
        const unserved = plan.admission ? readAdmissionServed((m) => void pulumi.log.warn(m)) : [];
        if (unserved.length) throw argsError(`PlatformRateLimit ${name}`, unserved);
        // The filter names are fixed per gateway: a second instance there would insert the same filters.
        const holder = claimListeners(name, [plan.gatewayKey]);
        if (holder !== undefined) {
            throw argsError(`PlatformRateLimit ${name}`, [
                {
                    key: "gateway",
                    value: args.gateway,
                    problem: `PlatformRateLimit ${holder} of this program already sets the platform's limits of this gateway`,
                    fix: `put both sets of limits into PlatformRateLimit ${holder}`,
                },
            ]);
        }
        super("mesh-ratelimit:index:PlatformRateLimit", name, {}, withFillIn(options, values));
        // Said at preview, refused nowhere: the servers on these pods no HTTP filter reaches.
        for (const s of readUncoveredServers(plan.gatewayPodLabels, (m) => void pulumi.log.warn(m, this))) pulumi.log.warn(uncoveredMessage(s), this);
        // And the teams' switches of the defaults on hosts they do not own (teams deployed before this platform).
        const teamHosts = (args.teamHosts ?? {}) as Record<string, string[]>;
        const routeBound = args.routeBoundOwnership === true;
        for (const m of readForeignSwitches(plan.filters[0]?.namespace ?? "", teamHosts, routeBound, (w) => void pulumi.log.warn(w, this)))
            pulumi.log.warn(m, this);
        // What each per-value rule gets from the platform's store: what a flood must send to reset one of its counters.
        for (const line of plan.perValueFigures.lines) void pulumi.log.info(line, this);
        this.createChildren(name, plan);
        this.grpcAddress = plan.grpcAddress;
        this.domain = PLATFORM_DOMAIN;
        this.configYaml = plan.configYaml;
        this.filterNames = plan.filters.map((f) => f.name);
        this.httpFilterNames = plan.sources.map((s) => PLATFORM_FILTER_NAMES[s.source]);
        this.registerOutputs({
            grpcAddress: this.grpcAddress,
            domain: this.domain,
            configYaml: this.configYaml,
            filterNames: this.filterNames,
            httpFilterNames: this.httpFilterNames,
        });
    }

    /** The ValidatingAdmissionPolicy and its binding (builders/admission-policy.ts), the binding after its policy. */
    private admissionPolicy(name: string, objects: NonNullable<PlatformRateLimitPlan["admission"]>, labels: Record<string, string>): pulumi.Resource[] {
        const meta = (m: { name: string }) => ({ ...m, labels });
        const policy = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            `${name}-admission`,
            { metadata: meta(objects.policy.metadata), spec: objects.policy.spec },
            { parent: this },
        );
        const binding = new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            `${name}-admission-binding`,
            { metadata: meta(objects.binding.metadata), spec: objects.binding.spec },
            { parent: this, dependsOn: [policy] },
        );
        return [policy, binding];
    }

    /** Redis (when the component deploys it), the service, the gateway's filters and the monitoring, in the order they must come up. */
    private createChildren(name: string, plan: PlatformRateLimitPlan): void {
        const settings = plan.service;
        const auth = deployedRedisAuth(settings.redis);
        const redis = auth ? new Redis(`${name}-redis`, { settings, auth }, { parent: this }) : undefined;
        // The service crash-loops while Redis is unreachable, so Redis comes first.
        const service = new RateLimitService(
            `${name}-ratelimit`,
            { settings, redisAddress: redis?.address ?? "", configYaml: plan.configYaml },
            { parent: this, dependsOn: redis ? [redis] : [] },
        );
        // Filters last: a fail-closed filter would refuse everything until the service answers.
        const labels = stackLabels("platform-ratelimit");
        // The admission policy first: from then on the API server refuses what would switch these filters off.
        const admission = plan.admission ? this.admissionPolicy(name, plan.admission, labels) : [];
        for (const f of plan.filters) {
            new EnvoyFilter(
                `${name}-${f.name}`,
                { metadata: { name: f.name, namespace: f.namespace, labels, ...(f.annotations ? { annotations: f.annotations } : {}) }, spec: f.spec },
                { parent: this, dependsOn: [service, ...admission] },
            );
        }
        if (plan.monitoring.dashboard || plan.monitoring.rules) {
            new RateLimitMonitoring(`${name}-monitoring`, { plan: plan.monitoring }, { parent: this, dependsOn: [service] });
        }
    }
}
