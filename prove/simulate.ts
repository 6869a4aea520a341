/**
 * Requests in time order through a MODEL of what a program deploys (there is no Envoy here): the
 * gateway that serves the request's host, its pre-limit's buckets, the rate-limit service's
 * fixed-window counters for every descriptor the gateway sends, and the local bucket of the
 * workload the request reaches. Requests given to one Simulator share all that state, so the sixth
 * POST of a 5-a-minute rule is refused. Pure state; time comes with each request.
 *
 * Envoy and envoyproxy/ratelimit behaviour modelled (beyond the gateway model's own):
 * - The pre-limit (a local bucket in front of the rate-limit filter) decides first; what it refuses
 *   never reaches the service and is not counted there. Refusal: 429, its marker header, body
 *   `local_rate_limited`.
 * - Each rate-limit filter with descriptors makes one call, lower stage first; the service counts
 *   every descriptor with a limit (a shadow one too) and answers OVER_LIMIT when any non-shadow one
 *   is over. An OVER_LIMIT stops the request: a later filter makes no call and counts nothing.
 * - Refusal by the service: 429, `x-envoy-ratelimited: true`, the X-RateLimit headers built from the
 *   answer, an empty body, no `Retry-After` (Envoy's rate-limit filter adds none), and no
 *   `RateLimit-Policy` (route and virtual-host `response_headers_to_add` are not applied to a
 *   filter's local reply, envoyproxy/envoy#8944).
 * - A request the gateway lets through reaches its workload, where a LocalRateLimit bucket (one per
 *   pod; on an ambient mesh one per pod of the waypoint that serves the workload's Service) may
 *   refuse it: 429, body `local_rate_limited`, the bucket's `x-local-rate-limit` and `Retry-After`.
 * - One gateway pod and one workload (or waypoint) pod: with N pods each has its own buckets (the
 *   service's counters are shared).
 */
import { plansShareable, sharesPlan, STAND_IN_CLIENT, withClient } from "./client-template";
import { Entry, AppliedLimit, GatewayModel, ModelRequest } from "../gateway-model/model";
import { explainWith } from "../gateway-model/explain";
import { gatewayModel } from "../gateway-model/read-rendered";
import { PreLimitConfigModel, PreLimitPod, preLimitDescriptors, readPreLimit, TokenBucketModel } from "../gateway-model/pre-limit-model";
import { LimitStatus, xRateLimitHeaders } from "../gateway-model/rate-limit-headers";
import { K8sObject } from "../lib/k8s-object";
import { LimitSource } from "../gateway-model/platform-sources";
import { Approximation, EXACT } from "./approximations";
import { chainOf, PlannedFilter, ruleOf } from "./request-chain";
import { identityApproximations, jwtPayloadOf, verifiedIssuers } from "./identity-claims";
import { FixedWindowCounters } from "./counters";
import { gatewayFor, ProgramGateway, programGateways } from "../gateway-model/program-gateways";
import { bucketsOn, LocalBucket, localBuckets } from "../gateway-model/workload-buckets";

import type { ProveRequest } from "./prove-request";
import { ProgramError } from "./program-runner";
import { programRefusal } from "../gateway-model/admission-check";

export type { ProveRequest };

/** One descriptor the gateway sent and what the service's counter says of it. */
export interface CountedDescriptor {
    entries: Entry[];
    /** The rule it belongs to: the `rule` entry's value (GlobalRateLimit), else the config entry. */
    rule: string;
    limit?: AppliedLimit;
    /** The counter key, its window start filled in (absent: no limit, nothing counted). */
    counter?: string;
    count?: number;
    remaining?: number;
    /** Seconds to the end of the counter's window. */
    resetSeconds?: number;
    /** What the request took from the counter when the rule has a cost (Envoy's `hits_addend`); absent: 1. */
    cost?: number;
    over: boolean;
}

export type RefusedBy =
    | { by: "pre-limit"; envoyFilter: string; descriptor?: Entry[] }
    | { by: "service"; rule: string; descriptor: Entry[]; limit: AppliedLimit; source?: LimitSource }
    | { by: "local bucket"; envoyFilter: string }
    | { by: "token check"; reason: string; requestAuthentication?: string };

export interface ProveResponse {
    /** 429 when refused by a limit, 401 by the JWT filter; `upstream` when the request reaches the workload (its status is the workload's). */
    status: 429 | 401 | "upstream";
    headers: Record<string, string>;
    body: string;
}

export interface Decision {
    request: ProveRequest;
    /** The gateway that serves the request; absent when none of the program's does. */
    gateway?: string;
    virtualHost?: string;
    /** The route Envoy picks (absent: none matches, Envoy answers 404). */
    route?: string;
    allowed: boolean;
    refusedBy?: RefusedBy;
    descriptors: CountedDescriptor[];
    response: ProveResponse;
    notes: string[];
    /** What the model could not model of this decision (prove/approximations.ts); empty: exact. */
    approximations: readonly Approximation[];
}

export { ruleOf };

/** Why no gateway serves a request, and what to do. */
function noGatewayNote(gateways: number, host: string | undefined): string {
    if (!gateways)
        return "the program holds no rate-limit filter on a gateway: no limit of this program applies (does it create a GlobalRateLimit or MeshRateLimit?)";
    return `no gateway of the program serves host ${host}: no limit of this program applies (--host names a host of the program's gateways)`;
}

/** A request whose token the gateway's JWT filter rejects: 401 with Envoy's reason as the body, before any rate limit. */
function tokenRefusal(r: ProveRequest, t: NonNullable<ProveRequest["tokenRejected"]>): Decision {
    return {
        request: r,
        allowed: false,
        refusedBy: { by: "token check", ...t },
        descriptors: [],
        response: { status: 401, headers: {}, body: t.reason },
        notes: ["refused by the gateway's JWT filter (Istio's RequestAuthentication) before any rate limit: nothing was counted"],
        approximations: EXACT,
    };
}

/** Request plans kept at most (a log's distinct request shapes beyond it are planned again). */
const PLAN_CACHE_SIZE = 200_000;

/** What the gateway makes of one request shape, before any counter (Simulator.plan). */
interface RequestPlan {
    where?: { gateway: string; virtualHost: string; route?: string };
    state?: GatewayState;
    filters?: PlannedFilter[];
    preDescriptors?: Entry[][];
    policy?: string;
    notes: string[];
    approximations: readonly Approximation[];
}

interface GatewayState {
    model: GatewayModel;
    preLimit?: PreLimitConfigModel;
    pod?: PreLimitPod;
}

export class Simulator {
    readonly gateways: ProgramGateway[];
    readonly buckets: LocalBucket[];
    private readonly counters = new FixedWindowCounters();
    private readonly states = new Map<string, GatewayState>();
    private readonly pods = new Map<LocalBucket, TokenBucketModel>();
    private readonly plans = new Map<string, RequestPlan>();
    /** The shared plans of replayed request shapes (ProveRequest's `shape`). */
    private readonly shapePlans = new Map<number, RequestPlan>();
    private readonly bucketsByUpstream = new Map<string, LocalBucket[]>();
    /** The issuers the program's gateways verify tokens of (its RequestAuthentications). */
    readonly issuers: string[];
    /** Whether one plan serves every client (prove/client-template.ts). */
    private readonly shareable: boolean;

    /** `responses: false` (replay): the response headers are not built, only the decisions. */
    constructor(
        readonly objects: K8sObject[],
        private readonly opts: { responses?: boolean } = {},
    ) {
        // What the cluster would refuse of these objects is not modelled as if it were deployed: said, and stopped.
        const refused = programRefusal(objects);
        if (refused !== undefined) throw new ProgramError(refused);
        this.gateways = programGateways(objects);
        this.buckets = localBuckets(objects);
        this.shareable = plansShareable(objects);
        this.issuers = verifiedIssuers(objects);
    }

    /** The model of the gateway and virtual host serving `host`, read once. */
    private state(g: ProgramGateway, host: string | undefined): GatewayState {
        const id = `${g.name}\n${host ?? ""}`;
        let s = this.states.get(id);
        if (!s) {
            const model = gatewayModel(g.objects, host);
            const preLimit = readPreLimit(g.objects, model);
            s = { model, ...(preLimit ? { preLimit } : {}) };
            this.states.set(id, s);
        }
        return s;
    }

    /**
     * What the gateway makes of a request, before any counter: the route, each filter's descriptors
     * and limits, the pre-limit's descriptors. Pure in the request's shape, so it is kept for
     * requests of the same host, method, path, client and headers (a log repeats them).
     */
    private plan(r: ProveRequest): RequestPlan {
        if (!this.shareable || r.clientAddress === undefined || r.clientAddress === STAND_IN_CLIENT || !sharesPlan(r.clientAddress)) return this.planOf(r);
        // A replayed request's shape names its shared plan without building the key of its fields.
        let shared = r.shape !== undefined ? this.shapePlans.get(r.shape) : undefined;
        if (!shared) {
            shared = this.planOf({ ...r, clientAddress: STAND_IN_CLIENT });
            if (r.shape !== undefined) {
                if (this.shapePlans.size >= PLAN_CACHE_SIZE) this.shapePlans.clear();
                this.shapePlans.set(r.shape, shared);
            }
        }
        return withClient(shared, r.clientAddress);
    }

    /** The plan of one request shape (client included), kept for the next request of that shape. */
    private planOf(r: ProveRequest): RequestPlan {
        const key = `${r.host ?? ""}\n${r.method ?? "GET"}\n${r.path}\n${r.clientAddress ?? ""}\n${r.headers ? JSON.stringify(r.headers) : ""}\n${r.claims ? JSON.stringify(r.claims) : ""}\n${r.claimsUnknown ?? ""}`;
        let p = this.plans.get(key);
        if (p) return p;
        const found = gatewayFor(this.gateways, r.host);
        if (!found) p = { notes: [noGatewayNote(this.gateways.length, r.host)], approximations: EXACT };
        else {
            const s = this.state(found.gateway, r.host);
            const jwtPayload = jwtPayloadOf(r, this.issuers);
            const request: ModelRequest = {
                method: r.method ?? "GET",
                headers: r.headers ?? {},
                ...(r.clientAddress ? { clientAddress: r.clientAddress } : {}),
                ...(jwtPayload ? { jwtPayload } : {}),
            };
            const where = { gateway: found.gateway.name, virtualHost: s.model.virtualHost };
            const own = explainWith({ ...s.model, others: undefined }, r.path, request);
            if (!own.route) p = { where, notes: ["no route matches: Envoy answers 404 and asks no rate-limit service"], approximations: EXACT };
            else {
                const routeName = own.route.name ?? own.route.match;
                const chain = chainOf(found.gateway.objects, s.model, routeName, r, request);
                const filters = chain.filters;
                const approximations = [...chain.approximations, ...identityApproximations(r, filters)];
                p = {
                    where: { ...where, route: own.route.name ?? own.route.match },
                    state: s,
                    filters,
                    ...(s.preLimit ? { preDescriptors: preLimitDescriptors(s.model, s.preLimit, r.path, request) } : {}),
                    ...(own.rateLimitPolicy?.length ? { policy: own.rateLimitPolicy.join(", ") } : {}),
                    notes: chain.notes,
                    approximations: approximations.length ? approximations : EXACT,
                };
            }
        }
        if (this.plans.size >= PLAN_CACHE_SIZE) this.plans.clear();
        this.plans.set(key, p);
        return p;
    }

    /** One request through the model; state (counters, buckets) carries over to the next. */
    decide(r: ProveRequest): Decision {
        if (r.tokenRejected) return tokenRefusal(r, r.tokenRejected);
        const p = this.plan(r);
        // Built field by field: object spread here costs more than the whole decision (replay makes millions).
        const out = (rest: Omit<Decision, "request" | "gateway" | "virtualHost" | "route" | "approximations">): Decision => {
            const d: Decision = {
                request: r,
                allowed: rest.allowed,
                descriptors: rest.descriptors,
                response: rest.response,
                notes: rest.notes,
                approximations: p.approximations,
            };
            if (p.where) {
                d.gateway = p.where.gateway;
                d.virtualHost = p.where.virtualHost;
                if (p.where.route !== undefined) d.route = p.where.route;
            }
            if (rest.refusedBy) d.refusedBy = rest.refusedBy;
            return d;
        };
        if (!p.state || !p.filters) return out({ allowed: true, descriptors: [], response: { status: "upstream", headers: {}, body: "" }, notes: p.notes });
        const pre = this.preLimit(p.state, p.preDescriptors, r);
        if (pre) return out(pre);
        const service = this.callServices(p.filters, r);
        if (p.notes.length) service.notes.unshift(...p.notes);
        if (!service.allowed) return out(service);
        const local = this.localBucket(r);
        if (local) return out({ ...local, descriptors: service.descriptors, notes: service.notes });
        if (p.policy && this.opts.responses !== false) service.response.headers["ratelimit-policy"] = p.policy;
        return out(service);
    }

    /** The pre-limit's decision; a refusal ends the request there. */
    private preLimit(
        s: GatewayState,
        descriptors: Entry[][] | undefined,
        r: ProveRequest,
    ): Omit<Decision, "request" | "gateway" | "virtualHost" | "route" | "approximations"> | undefined {
        if (!s.preLimit || !descriptors) return undefined;
        const now = r.timeMs / 1000;
        s.pod ??= new PreLimitPod(s.preLimit, now);
        const d = s.pod.decide(descriptors, now);
        if (d.allowed) return undefined;
        const header = s.preLimit.header;
        return {
            allowed: false,
            refusedBy: { by: "pre-limit", envoyFilter: s.preLimit.envoyFilter, ...(d.refusedBy ? { descriptor: d.refusedBy } : {}) },
            descriptors: [],
            response: { status: 429, headers: header ? { [header.key]: header.value } : {}, body: "local_rate_limited" },
            notes: ["refused by the gateway's pre-limit: the rate-limit service was not asked and counted nothing"],
        };
    }

    /** Every rate-limit filter's call, lower stage first, until one answers OVER_LIMIT. */
    private callServices(filters: PlannedFilter[], r: ProveRequest) {
        const descriptors: CountedDescriptor[] = [];
        const headers: Record<string, string> = {};
        const notes: string[] = [];
        for (const f of filters) {
            const counted = f.descriptors.map((d) => this.count(d.entries, d.limit, d.bucket, r.timeMs, d.hitsAddend));
            descriptors.push(...counted);
            const statuses: LimitStatus[] =
                this.opts.responses === false
                    ? []
                    : counted.map((c) =>
                          c.limit && !c.limit.unlimited
                              ? {
                                    currentLimit: { requests: c.limit.requests, unit: c.limit.unit },
                                    limitRemaining: c.remaining ?? 0,
                                    durationUntilResetSeconds: c.resetSeconds,
                                }
                              : { limitRemaining: 0 },
                      );
            if (this.opts.responses !== false)
                Object.assign(
                    headers,
                    xRateLimitHeaders(
                        statuses,
                        f.descriptors.map((d) => d.headersOption),
                        f.rateLimitHeaders,
                    ),
                );
            const over = counted.find((c) => c.over && c.limit && !c.limit.shadow);
            for (const c of counted.filter((c) => c.over && c.limit?.shadow))
                notes.push(`rule ${c.rule} is over its limit in shadow mode: counted and reported, not refused`);
            if (over) {
                return {
                    allowed: false as const,
                    refusedBy: {
                        by: "service" as const,
                        rule: over.rule,
                        descriptor: over.entries,
                        limit: over.limit!,
                        ...(f.source ? { source: f.source } : {}),
                    },
                    descriptors,
                    response: { status: 429 as const, headers: { "x-envoy-ratelimited": "true", ...headers, ...(f.refusalHeaders ?? {}) }, body: "" },
                    notes,
                };
            }
        }
        return { allowed: true as const, descriptors, response: { status: "upstream" as const, headers, body: "" }, notes };
    }

    /** The service's counter for one descriptor (nothing counted without a limit or with an unlimited one). */
    private count(entries: Entry[], limit: AppliedLimit | undefined, bucket: string | undefined, timeMs: number, cost?: number): CountedDescriptor {
        const rule = ruleOf(entries, limit);
        if (!limit || limit.unlimited || !bucket) return { entries, rule, ...(limit ? { limit } : {}), over: false };
        const h = this.counters.hit(bucket, limit.unit, limit.requests, timeMs, cost ?? 1);
        const out: CountedDescriptor = {
            entries,
            rule,
            limit,
            counter: h.key,
            count: h.count,
            remaining: h.remaining,
            resetSeconds: h.resetSeconds,
            over: h.over,
        };
        if (cost !== undefined) out.cost = cost;
        return out;
    }

    /** The local bucket of the workload the request reaches, when one refuses it. */
    private localBucket(r: ProveRequest): Pick<Decision, "allowed" | "refusedBy" | "response"> | undefined {
        if (!this.buckets.length || !r.upstream) return undefined;
        let on = this.bucketsByUpstream.get(r.upstream);
        if (!on) this.bucketsByUpstream.set(r.upstream, (on = bucketsOn(this.objects, this.buckets, r.upstream)));
        for (const b of on) {
            let pod = this.pods.get(b);
            if (!pod) this.pods.set(b, (pod = new TokenBucketModel(b.maxTokens, b.tokensPerFill, b.fillSeconds, r.timeMs / 1000)));
            if (pod.consume(r.timeMs / 1000) || !b.enforced) continue;
            return {
                allowed: false,
                refusedBy: { by: "local bucket", envoyFilter: b.envoyFilter },
                response: { status: 429, headers: b.refusalHeaders, body: "local_rate_limited" },
            };
        }
        return undefined;
    }
}
