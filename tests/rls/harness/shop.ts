/**
 * A user's shop gateway (not bookinfo) limited by GlobalRateLimit's typed rules, for the rls tier:
 * the component rendered under Pulumi's mocks, the gateway MODEL (gateway-model/explain.ts, no Envoy here)
 * turning each request into descriptors, the REAL envoyproxy/ratelimit service and Redis deciding.
 */
import { GlobalRateLimit } from "../../../components/global-ratelimit/component";
import { GlobalRateLimitArgs } from "../../../components/global-ratelimit/args.generated";
import { RateLimitRuleArgs } from "../../../builders/rule-args";
import { ModelRequest } from "../../../gateway-model/model";
import { explain } from "../../../gateway-model/explain";
import type { K8sObject } from "../../../lib/k8s-object";
import { registerComponents } from "../../../render/render";
import { Decision, RlsClient } from "./client";
import { RedisServer } from "./redis";
import { renderedRatelimits } from "./rendered";
import { RateLimitProcess } from "./service";

/** The shop's own Gateway and VirtualService (what the user already has). */
export const USER_OBJECTS: K8sObject[] = [
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "Gateway",
        metadata: { name: "shop-gw", namespace: "shop" },
        spec: { selector: { app: "shop-gateway" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
    },
    {
        apiVersion: "networking.istio.io/v1beta1",
        kind: "VirtualService",
        metadata: { name: "shop", namespace: "shop" },
        spec: { hosts: ["*"], gateways: ["shop-gw"], http: [{ name: "web", match: [{ uri: { prefix: "/" } }], route: [{ destination: { host: "web" } }] }] },
    },
];

export async function renderComponent(rules: RateLimitRuleArgs[], extra: Partial<GlobalRateLimitArgs> = {}): Promise<K8sObject[]> {
    const { objects } = await registerComponents(
        () => {
            new GlobalRateLimit("shop-limits", {
                domain: "shop",
                gateway: { selector: { app: "shop-gateway" }, namespace: "shop", virtualHosts: ["*:80"] },
                namespace: "shop",
                rules,
                ...extra,
            });
        },
        "shop",
        "rls",
    );
    return objects;
}

/**
 * The headers as Envoy's HTTP/1 codec passes them on: lower-case names, values without leading or
 * trailing spaces or tabs. A list is the header sent several times (in that order).
 */
export function envoyHeaders(headers: Record<string, string | string[]> = {}): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    const trim = (v: string) => v.replace(/^[ \t]+|[ \t]+$/g, "");
    for (const [name, value] of Object.entries(headers)) {
        const n = name.toLowerCase();
        if (n in out) throw new Error(`header ${n} given twice`);
        out[n] = Array.isArray(value) ? value.map(trim) : trim(value);
    }
    return out;
}

/**
 * A shop gateway with these rules: the component rendered under mocks, and each service it
 * renders (with counterStore split: the fixed and the per-value counters' services) run with a
 * Redis of its own (started before the describe's tests, flushed before each).
 */
export function useShop(rules: RateLimitRuleArgs[], extra: Partial<GlobalRateLimitArgs> = {}, editConfig?: (configYaml: string) => string) {
    const shop = {} as {
        objects: K8sObject[];
        sides: { name: string; redis: RedisServer; service: RateLimitProcess; client: RlsClient }[];
        /** The loaded config of every service (the debug endpoint's view), one after the other. */
        rlconfig: () => Promise<string>;
    };
    before(async () => {
        shop.objects = [...USER_OBJECTS, ...(await renderComponent(rules, extra))];
        shop.sides = [];
        for (const given of renderedRatelimits(shop.objects)) {
            // A negative control may run the services with an edited config (an older layout).
            const file = Object.keys(given.configMap.data).find((k) => given.configMap.data[k] === given.configYaml)!;
            const rendered = editConfig
                ? { ...given, configMap: { ...given.configMap, data: { ...given.configMap.data, [file]: editConfig(given.configYaml) } } }
                : given;
            const redis = await RedisServer.start();
            const service = await RateLimitProcess.start(rendered, { redisAddress: redis.address, redisPassword: redis.password });
            const client = service.client();
            await client.waitForReady();
            shop.sides.push({ name: String(rendered.deployment.metadata.name), redis, service, client });
        }
        shop.rlconfig = async () => (await Promise.all(shop.sides.map((x) => x.service.rlconfig()))).join("\n");
    });
    after(async () => {
        for (const x of shop.sides ?? []) {
            x.client.close();
            await x.service.stop();
            await x.redis.stop();
        }
    });
    beforeEach(async () => {
        for (const x of shop.sides) await x.redis.flushAll();
    });
    /** The per-value counters' side (counterStore split), or the only one. */
    const perValueSide = () => shop.sides.find((x) => x.name.endsWith("-per-value")) ?? shop.sides[0]!;
    /** The side a call goes to: the service its cluster names (`outbound|<port>||<name>.<ns>...`). */
    const sideOf = (cluster: string) => shop.sides.find((x) => x.name === cluster.split("|")[3]?.split(".")[0]) ?? shop.sides[0]!;

    /** What the gateway would send for this request (model), decided by the real service. */
    async function send(path: string, request: ModelRequest) {
        const x = explain(shop.objects, path, { ...request, headers: envoyHeaders(request.headers) });
        if (!x.descriptors.length) return { x, d: undefined };
        // One call per filter that sends descriptors, each to its service; statuses in the order of
        // x.descriptors (the calls' order), OVER_LIMIT when any call says so (as Envoy merges them).
        const answers = await Promise.all(
            x.calls.map((c) =>
                sideOf(c.service).client.shouldRateLimit(
                    c.domain,
                    c.descriptors.map((d) => d.entries),
                    { addends: c.descriptors.map((d) => d.hitsAddend) },
                ),
            ),
        );
        const d: Decision = {
            overallCode: answers.some((a) => a.overallCode === "OVER_LIMIT") ? "OVER_LIMIT" : "OK",
            statuses: answers.flatMap((a) => a.statuses),
        };
        return { x, d };
    }
    const okCount = async (n: number, path: (i: number) => string, request: (i: number) => ModelRequest) => {
        let ok = 0;
        for (let i = 0; i < n; i++) if ((await send(path(i), request(i))).d?.overallCode === "OK") ok++;
        return ok;
    };
    /** One rule's descriptor in an answer: its entries and the service's status for it (undefined: the request sent nothing for that rule). */
    const ruleOf = (r: Awaited<ReturnType<typeof send>>, rule: string) => {
        const i = r.x.descriptors.findIndex((d) => d.entries[0].key === "rule" && d.entries[0].value === rule);
        return i < 0 ? undefined : { entries: r.x.descriptors[i].entries.map((e) => `${e.key}=${e.value}`), status: r.d!.statuses[i] };
    };
    /** The Redis counters of one rule (`<domain>_rule_<name>_..._<window>`, the service's key format). */
    const counters = async (rule: string) =>
        (await Promise.all(shop.sides.map((x) => x.redis.keys())))
            .flat()
            .filter((k) => k.startsWith(`shop_rule_${rule}_`))
            .sort();
    /** The call Envoy makes when the response is done (a response cost), with the cost the response carried. */
    async function sendAfterResponse(x: Awaited<ReturnType<typeof send>>["x"], cost: number) {
        return Promise.all(
            (x.afterResponse ?? []).map((c) =>
                sideOf(c.service).client.shouldRateLimit(
                    c.domain,
                    c.descriptors.map((d) => d.entries),
                    { addends: c.descriptors.map(() => cost) },
                ),
            ),
        );
    }
    return { shop, send, okCount, ruleOf, counters, perValueSide, sendAfterResponse };
}
