/**
 * LocalRateLimit's arguments (components/local-ratelimit/component.ts, planLocalRateLimit), check by check:
 * each case starts from valid arguments, changes one thing and compares the WHOLE problem list
 * (field, value, problem, fix). Expected values are written from the doc comments, not read from
 * the code; everything is computed inside each `it` (Stryker's per-test coverage).
 */
import { expect } from "chai";
import { expectGolden } from "../golden/values";
import { Problem } from "../../lib/problems";
import { LocalRateLimit, LocalRateLimitArgs, planLocalRateLimit, resolveLocalRateLimit } from "../../components/local-ratelimit/component";
import { K8sObject } from "../../lib/k8s-object";
import { registerComponents } from "../../render/render";

const LABEL = "must be a Kubernetes DNS-1123 label (lower-case letters, digits, '-')";
const SUBDOMAIN = "must be a Kubernetes DNS-1123 subdomain (lower-case letters, digits, '-', '.')";
const SELECTOR_EMPTY = "must name at least one pod label";
const SELECTOR_EMPTY_FIX = 'give e.g. { istio: "ingressgateway" }';
const LABEL_BAD = "is not a valid label key and value";
const LABEL_BAD_FIX = "use Kubernetes label syntax (letters, digits, '-', '_', '.')";

describe("LocalRateLimit arguments: every validation problem, exactly", () => {
    const BUCKET = "must be between 1 and 1000000000";
    const WHOLE = "must be a whole number";
    const RANGE_PORT = "must be between 1 and 65535";
    const FILL = "must be a protobuf duration: seconds with an 's' suffix (Envoy rejects '60', '1m' or '500ms')";
    const L = (change: Record<string, unknown> = {}): LocalRateLimitArgs =>
        ({ selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop", ...change }) as LocalRateLimitArgs;
    const A = (change: Record<string, unknown> = {}): LocalRateLimitArgs =>
        ({ meshMode: "ambient", service: "orders", port: 8080, bucket: 10, namespace: "shop", ...change }) as LocalRateLimitArgs;
    const cases: [string, LocalRateLimitArgs, Problem[]][] = [
        ["the valid base arguments", L(), []],
        ["selector {}", L({ selector: {} }), [{ key: "selector", value: {}, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
        ["selector null", L({ selector: null }), [{ key: "selector", value: null, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
        ["selector a list", L({ selector: [] }), [{ key: "selector", value: [], problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
        [
            "selector with a bad key",
            L({ selector: { "app name": "orders" } }),
            [{ key: "selector.app name", value: "orders", problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        [
            "selector with a 64-character value",
            L({ selector: { app: "o".repeat(64) } }),
            [{ key: "selector.app", value: "o".repeat(64), problem: LABEL_BAD, fix: LABEL_BAD_FIX }],
        ],
        ["port 1", L({ port: 1 }), []],
        ["port 65535", L({ port: 65535 }), []],
        ...(
            [
                [0, RANGE_PORT, 1],
                [65536, RANGE_PORT, 65535],
                [80.5, WHOLE, 81],
                ["8080", WHOLE, 8080],
                [undefined, WHOLE, 8080],
            ] as const
        ).map(([port, says, fixed]): [string, LocalRateLimitArgs, Problem[]] => [
            `port ${JSON.stringify(port)}: the fix is ${fixed}`,
            L({ port }),
            [{ key: "port", value: port, problem: says, fix: `set port to ${fixed}` }],
        ]),
        ["bucket 1", L({ bucket: 1 }), []],
        ["bucket 1e9", L({ bucket: 1e9 }), []],
        ...(
            [
                [0, BUCKET, 1],
                [1e9 + 1, BUCKET, 1_000_000_000],
                [1.5, WHOLE, 2],
                [-1, BUCKET, 1],
                ["10", WHOLE, 10],
                [undefined, WHOLE, 10],
            ] as const
        ).map(([bucket, says, fixed]): [string, LocalRateLimitArgs, Problem[]] => [
            `bucket ${JSON.stringify(bucket)}: the fix is ${fixed}`,
            L({ bucket }),
            [{ key: "bucket", value: bucket, problem: says, fix: `set bucket to ${fixed}` }],
        ]),
        ["fillInterval 0.05s", L({ fillInterval: "0.05s" }), []],
        ["fillInterval 1s", L({ fillInterval: "1s" }), []],
        [
            "fillInterval 0.04s",
            L({ fillInterval: "0.04s" }),
            [{ key: "fillInterval", value: "0.04s", problem: "must be at least 0.05s", fix: 'set fillInterval to "0.05s"' }],
        ],
        [
            'fillInterval "60" (seconds without s): the fix adds the s',
            L({ fillInterval: "60" }),
            [{ key: "fillInterval", value: "60", problem: FILL, fix: 'set fillInterval to "60s"' }],
        ],
        [
            "fillInterval 60 (a number): the fix adds the s",
            L({ fillInterval: 60 }),
            [{ key: "fillInterval", value: 60, problem: FILL, fix: 'set fillInterval to "60s"' }],
        ],
        [
            'fillInterval "1": the fix adds the s',
            L({ fillInterval: "1" }),
            [{ key: "fillInterval", value: "1", problem: FILL, fix: 'set fillInterval to "1s"' }],
        ],
        [
            'fillInterval "0": the shortest Envoy takes',
            L({ fillInterval: "0" }),
            [{ key: "fillInterval", value: "0", problem: FILL, fix: 'set fillInterval to "0.05s"' }],
        ],
        [
            "fillInterval 1m: the same length in seconds",
            L({ fillInterval: "1m" }),
            [{ key: "fillInterval", value: "1m", problem: FILL, fix: 'set fillInterval to "60s"' }],
        ],
        ['fillInterval "60s "', L({ fillInterval: "60s " }), [{ key: "fillInterval", value: "60s ", problem: FILL, fix: 'set fillInterval to "60s"' }]],
        ["fillInterval empty: the default", L({ fillInterval: "" }), [{ key: "fillInterval", value: "", problem: FILL, fix: 'set fillInterval to "60s"' }]],
        ["routes []", L({ routes: [] }), []],
        ["routes named", L({ routes: ["a", "b"] }), []],
        [
            "routes not a list",
            L({ routes: "orders-api" }),
            [{ key: "routes", value: "orders-api", problem: "must be a list of route names", fix: "give [] for every route, or names" }],
        ],
        [
            "routes with an empty name, a number and null",
            L({ routes: ["a", "", 5, null] }),
            [
                { key: "routes[1]", value: "", problem: "must be a route name", fix: "remove it, or name the route" },
                { key: "routes[2]", value: 5, problem: "must be a route name", fix: "remove it, or name the route" },
                { key: "routes[3]", value: null, problem: "must be a route name", fix: "remove it, or name the route" },
            ],
        ],
        ["namespace not a DNS label", L({ namespace: "Shop_NS" }), [{ key: "namespace", value: "Shop_NS", problem: LABEL, fix: 'use "shop-ns"' }]],
        ["namespace with a dot", L({ namespace: "shop.ns" }), [{ key: "namespace", value: "shop.ns", problem: LABEL, fix: 'use "shop-ns"' }]],
        ["filterName with a dot", L({ filterName: "orders.bucket" }), []],
        [
            "filterName not a DNS subdomain",
            L({ filterName: "Orders_Bucket" }),
            [{ key: "filterName", value: "Orders_Bucket", problem: SUBDOMAIN, fix: 'use "orders-bucket"' }],
        ],
        [
            "null arguments: selector, port, bucket and namespace",
            null as unknown as LocalRateLimitArgs,
            [
                { key: "selector", value: undefined, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX },
                { key: "port", value: undefined, problem: WHOLE, fix: "set port to 8080" },
                { key: "bucket", value: undefined, problem: WHOLE, fix: "set bucket to 10" },
                {
                    key: "namespace",
                    value: undefined,
                    problem: "is required: the workload's namespace (the filter then reaches only that namespace's pods)",
                    fix: 'give the workload\'s namespace, e.g. "shop"',
                },
            ],
        ],
        [
            "Istio's root namespace without reachAllNamespaces",
            L({ namespace: "istio-system" }),
            [
                {
                    key: "namespace",
                    value: "istio-system",
                    problem:
                        'is Istio\'s root namespace: the bucket would apply to every pod labelled {"app":"orders"} in every namespace, other teams\' included',
                    fix: "give the workload's own namespace, or set reachAllNamespaces: true if that reach is intended",
                },
            ],
        ],
        [
            "a root namespace of another name",
            L({ namespace: "mesh-root", rootNamespace: "mesh-root" }),
            [
                {
                    key: "namespace",
                    value: "mesh-root",
                    problem:
                        'is Istio\'s root namespace: the bucket would apply to every pod labelled {"app":"orders"} in every namespace, other teams\' included',
                    fix: "give the workload's own namespace, or set reachAllNamespaces: true if that reach is intended",
                },
            ],
        ],
        ["the root namespace on purpose (reachAllNamespaces)", L({ namespace: "istio-system", reachAllNamespaces: true }), []],
        ["ambient: a Service instead of a selector", A(), []],
        ["ambient: in the root namespace (the filter names one waypoint: no reach to widen)", A({ namespace: "istio-system" }), []],
        [
            "ambient without a Service",
            A({ service: undefined }),
            [
                {
                    key: "service",
                    value: undefined,
                    problem: "is required with meshMode ambient: the waypoint serves a Service, and the bucket goes on that Service's chain only",
                    fix: 'give the workload\'s Service in namespace, e.g. service: "orders" (and label it istio.io/use-waypoint: <waypoint>)',
                },
            ],
        ],
        ["ambient: a bad Service name", A({ service: "Orders" }), [{ key: "service", value: "Orders", problem: LABEL, fix: 'use "orders"' }]],
        ["ambient: a bad waypoint name", A({ waypoint: "my_wp" }), [{ key: "waypoint", value: "my_wp", problem: LABEL, fix: 'use "my-wp"' }]],
        [
            "ambient: createWaypoint not a switch",
            A({ createWaypoint: "no" }),
            [{ key: "createWaypoint", value: "no", problem: "must be true or false", fix: "set createWaypoint to false" }],
        ],
        [
            "ambient with a selector",
            A({ selector: { app: "orders" } }),
            [
                {
                    key: "selector",
                    value: { app: "orders" },
                    problem: "is set with meshMode ambient: a waypoint serves a Service, not pods by label, so a selector would place nothing",
                    fix: "remove selector and name the workload's Service in service",
                },
            ],
        ],
        [
            "sidecar with the ambient fields",
            L({ service: "orders", createWaypoint: false }),
            ["service", "createWaypoint"].map((k) => ({
                key: k,
                value: k === "service" ? "orders" : false,
                problem: "is set without meshMode ambient: it places the bucket on a waypoint, and the sidecar mode uses selector",
                fix: `remove ${k}, or set meshMode: MeshMode.Ambient`,
            })),
        ],
        ["sidecar without a selector", L({ selector: undefined }), [{ key: "selector", value: undefined, problem: SELECTOR_EMPTY, fix: SELECTOR_EMPTY_FIX }]],
    ];
    for (const [name, args, want] of cases) {
        it(name, () => {
            expect(planLocalRateLimit("orders-bucket", args).problems.map(({ fixWith: _f, problemWith: _p, ...p }) => p)).to.deep.equal(want);
        });
    }

    it("the filter name defaults to the component's name, and is checked", () => {
        expect(planLocalRateLimit("Orders Bucket", L()).problems).to.deep.equal([
            { key: "filterName", value: "Orders Bucket", problem: SUBDOMAIN, fix: 'use "orders-bucket"' },
        ]);
        const plan = planLocalRateLimit("orders-bucket", L());
        expect([plan.value!.filterName, plan.value!.namespace]).to.deep.equal(["orders-bucket", "shop"]);
        const given = planLocalRateLimit("orders-bucket", L({ filterName: "my-bucket", namespace: "orders" }));
        expect([given.value!.filterName, given.value!.namespace]).to.deep.equal(["my-bucket", "orders"]);
        // The bucket on the workload's port only.
        expect((plan.spec!.configPatches[0] as any).match.listener.portNumber).to.equal(8080);
    });

    it("defaults: the whole filter on the inbound chain, refilled every 60s", () => {
        const spec = planLocalRateLimit("orders-bucket", L()).spec as any;
        expect(spec.workloadSelector).to.deep.equal({ labels: { app: "orders" } });
        expect(spec.configPatches).to.have.length(1);
        expect(spec.configPatches[0].patch.value.typed_config.value.token_bucket).to.deep.equal({ max_tokens: 10, tokens_per_fill: 10, fill_interval: "60s" });
    });

    it("routes: [] sets the bucket on every route of inbound|http|<port>; names on those routes", () => {
        const every = planLocalRateLimit("b", L({ routes: [], fillInterval: "0.05s" })).spec as any;
        expect(every.configPatches.slice(1).map((p: any) => p.match.routeConfiguration.vhost)).to.deep.equal([
            { name: "inbound|http|8080", route: { action: "ANY" } },
        ]);
        expect(every.configPatches[0].patch.value.name).to.equal("envoy.filters.http.local_ratelimit/shop/b");
        expect(
            every.configPatches[1].patch.value.typed_per_filter_config["envoy.filters.http.local_ratelimit/shop/b"].value.token_bucket.fill_interval,
        ).to.equal("0.05s");
        const named = planLocalRateLimit("b", L({ routes: ["a", "b"], port: 9000 })).spec as any;
        expect(named.configPatches.slice(1).map((p: any) => p.match.routeConfiguration.vhost)).to.deep.equal([
            { name: "inbound|http|9000", route: { name: "a", action: "ANY" } },
            { name: "inbound|http|9000", route: { name: "b", action: "ANY" } },
        ]);
        // routes that are not a list: reported above (no TypeError), and nothing is built from them.
        const notList = planLocalRateLimit("b", L({ routes: "a" }));
        expect(notList.problems.map((p) => p.key)).to.deep.equal(["routes"]);
        expect(notList.spec).to.equal(undefined);
    });
});

describe("LocalRateLimit resolved once: problems, or a read-only value with every default filled in", () => {
    const L = (change: Record<string, unknown> = {}): LocalRateLimitArgs =>
        ({ selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop", ...change }) as LocalRateLimitArgs;

    it("the defaults written in the arguments' doc comments are filled in: 60s, draft-03 headers (off in shadow), enforced, the per-instance HTTP filter name", () => {
        const r = resolveLocalRateLimit("orders-bucket", L());
        expect(r.problems).to.deep.equal([]);
        expectGolden("local-ratelimit/resolved-defaults", r.value);
        expect(r.value!.bucket).to.deep.include({ fillInterval: "60s", httpFilterName: "envoy.filters.http.local_ratelimit/shop/orders-bucket" });
        expect(r.value!.bucket.behaviour).to.deep.equal({ rateLimitHeaders: "draft-03", shadow: false });
        expect(resolveLocalRateLimit("b", L({ shadow: true })).value!.bucket.behaviour).to.deep.equal({ rateLimitHeaders: "off", shadow: true });
        expect(resolveLocalRateLimit("b", L({ filterLayout: "shared" })).value!.bucket.httpFilterName).to.equal("envoy.filters.http.local_ratelimit");
    });

    it("read-only: the resolved value cannot be changed after resolving, nor through the caller's own arrays", () => {
        const routes = ["a"];
        const v = resolveLocalRateLimit("b", L({ routes })).value!;
        routes.push("b");
        expect(v.bucket.routes).to.deep.equal(["a"]);
        expect(() => ((v.bucket as { port: number }).port = 1)).to.throw(TypeError);
        expect(() => ((v as { namespace: string }).namespace = "other")).to.throw(TypeError);
    });

    it("NEGATIVE CONTROL: with any problem there is no value, so nothing is built from unchecked arguments", () => {
        const bad = resolveLocalRateLimit("b", L({ bucket: 0 }));
        expect(bad.problems.map((p) => p.key)).to.deep.equal(["bucket"]);
        expect(bad.value).to.equal(undefined);
        expect(planLocalRateLimit("b", L({ bucket: 0 })).spec).to.equal(undefined);
        expect(planLocalRateLimit("b", L()).spec).to.not.equal(undefined);
    });
});

describe("LocalRateLimit on ambient: what it registers", () => {
    const A: LocalRateLimitArgs = { meshMode: "ambient", service: "orders", port: 8080, bucket: 10, namespace: "shop" };
    const kinds = (objects: K8sObject[]) => objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort();

    it("the waypoint Gateway (istio-waypoint, mesh 15008 HBONE) and the EnvoyFilter aimed at it; createWaypoint false: the filter alone", async () => {
        const made = await registerComponents(() => new LocalRateLimit("orders-bucket", A));
        expect(kinds(made.objects)).to.deep.equal(["EnvoyFilter/shop/orders-bucket", "Gateway/shop/waypoint"]);
        const gw = made.objects.find((o) => o.kind === "Gateway")!;
        expect(gw.apiVersion).to.equal("gateway.networking.k8s.io/v1");
        expect(gw.spec).to.deep.equal({ gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] });
        const ef = made.objects.find((o) => o.kind === "EnvoyFilter")!;
        expect(ef.spec.targetRefs).to.deep.equal([{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }]);
        const taken = await registerComponents(() => new LocalRateLimit("orders-bucket", { ...A, waypoint: "shop-wp", createWaypoint: false }));
        expect(kinds(taken.objects)).to.deep.equal(["EnvoyFilter/shop/orders-bucket"]);
        expect(taken.objects[0]!.spec.targetRefs[0].name).to.equal("shop-wp");
        // Control: the sidecar's bucket makes no Gateway and names pods.
        const side = await registerComponents(
            () => new LocalRateLimit("orders-bucket", { selector: { app: "orders" }, port: 8080, bucket: 10, namespace: "shop" }),
        );
        expect(kinds(side.objects)).to.deep.equal(["EnvoyFilter/shop/orders-bucket"]);
        expect(side.objects[0]!.spec).to.have.property("workloadSelector").and.not.have.property("targetRefs");
    });

    it("refused arguments register nothing: no waypoint without its filter", async () => {
        let made: K8sObject[] = [];
        let error: unknown;
        try {
            made = (await registerComponents(() => new LocalRateLimit("orders-bucket", { ...A, service: undefined }))).objects;
        } catch (e) {
            error = e;
        }
        expect(String(error)).to.match(/service = \(not set\): is required with meshMode ambient/);
        expect(made).to.deep.equal([]);
    });
});
