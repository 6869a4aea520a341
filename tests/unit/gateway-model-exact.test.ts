/**
 * The gateway MODEL (gateway-model/explain.ts), function by function, with exact expectations.
 *
 * Every expectation is reasoned from how the real components behave (docs/upstream.md, docs/rls.md
 * and the functions' doc comments): Envoy's path normalization (Istio's default `BASE`, RFC 3986),
 * route matching (`path`/`safe_regex` without the query, `prefix` on the whole `:path`), the
 * rate-limit actions and header matchers (route_components.proto), `vh_rate_limits`, and the
 * lookup and counter keys of envoyproxy/ratelimit. Inputs are small hand-written objects, built
 * inside each test (no results computed while the file loads, so per-test coverage sees them).
 */
import { expect } from "chai";
import { DEFAULT_CLIENT_ADDRESS, GatewayModel, VhRateLimits } from "../../gateway-model/model";
import { descriptorFor, fullMatch, lookupLimit, normalizePath, selectRoute, urlPath } from "../../gateway-model/evaluate";
import { explain, explainWith } from "../../gateway-model/explain";
import { gatewayModel, HostNotServed, pickHost } from "../../gateway-model/read-rendered";
import { gatewayModelFromEnvoy } from "../../gateway-model/read-envoy";
import { K8sObject } from "../../lib/k8s-object";
import {
    RL,
    PER_ROUTE_TYPE,
    SELECTOR,
    celUrlPath,
    literalPath,
    apiMatch,
    bookinfoConfig,
    route,
    bookinfoModel,
    entries,
    gatewayObj,
    virtualServiceObj,
    envoyFilterObj,
    globalFilterPatch,
    vhostPatch,
    routePatch,
    configMapObj,
    BOOKINFO_CONFIG_YAML,
    BOOKINFO_HTTP,
    bookinfoObjects,
} from "./gateway-model-fixtures";

// ---------------------------------------------------------------------------------------------

describe("the gateway model (gateway-model/explain.ts): normalizePath, Envoy's RFC 3986 normalization (Istio BASE)", () => {
    it("resolves `.` and `..` segments as RFC 3986 remove_dot_segments does", () => {
        const table: [string, string][] = [
            ["/a/b/c/./../../g", "/a/g"], // RFC 3986 5.2.4
            ["/a/b/../c", "/a/c"],
            ["/a/./b/./c", "/a/b/c"],
            ["/static/../productpage", "/productpage"],
            ["/./productpage", "/productpage"],
            ["/a/b/..", "/a/"], // a trailing `..` leaves the directory's slash
            ["/a/b/.", "/a/b/"], // so does a trailing `.`
            ["/a/..", "/"],
            ["/..", "/"],
            ["/.", "/"],
            ["/../../a", "/a"], // `..` never climbs above the root
            ["/a/../..", "/"],
            ["/a/../", "/"],
            ["/a/./", "/a/"],
            ["/a/b/../../..", "/"],
        ];
        for (const [input, want] of table) expect(normalizePath(input), input).to.equal(want);
    });

    it("leaves segments that only contain dots, or start with them, alone", () => {
        for (const p of ["/a/.../b", "/a/..b/c", "/a/b../c", "/.well-known/x", "/a/.b", "/v1.2/x", "/..."]) expect(normalizePath(p), p).to.equal(p);
    });

    it("decodes %2E/%2e (an encoded dot), so encoded dot segments are resolved too", () => {
        const table: [string, string][] = [
            ["/a/%2e/b", "/a/b"],
            ["/a/%2E/b", "/a/b"],
            ["/a/%2E%2e/b", "/b"],
            ["/a/.%2e/b", "/b"],
            ["/a/%2e./b", "/b"],
            ["/%2e/productpage", "/productpage"],
            ["/static/%2E%2E/productpage", "/productpage"],
            ["/a%2eb", "/a.b"],
        ];
        for (const [input, want] of table) expect(normalizePath(input), input).to.equal(want);
    });

    it("turns backslashes into slashes before resolving dot segments", () => {
        expect(normalizePath("\\productpage")).to.equal("/productpage");
        expect(normalizePath("/static\\..\\productpage")).to.equal("/productpage");
        expect(normalizePath("\\a\\b\\")).to.equal("/a/b/");
    });

    it("keeps repeated slashes (BASE does not merge them) but `..` still removes one segment, empty or not", () => {
        expect(normalizePath("//productpage")).to.equal("//productpage");
        expect(normalizePath("/api//v1/products//7")).to.equal("/api//v1/products//7");
        expect(normalizePath("/a//../b")).to.equal("/a/b");
        expect(normalizePath("//../a")).to.equal("/a");
    });

    it("keeps other percent-encodings as sent: an encoded slash, '?' or '%' is not decoded", () => {
        for (const p of ["/a/%2F/b", "/api/v1/products%2F7", "/api/v1/products%2f7", "/productpage%3Fx=1", "/x%252e", "/a%25/b", "/a%20b"]) {
            expect(normalizePath(p), p).to.equal(p);
        }
    });

    it("never touches the query (dot segments and encodings in it stay) and drops a fragment", () => {
        const table: [string, string][] = [
            ["/a/../b?x=/../y&z=%2e", "/b?x=/../y&z=%2e"],
            ["/productpage?x=1", "/productpage?x=1"],
            ["/productpage?", "/productpage?"],
            ["/a?b?c", "/a?b?c"],
            ["/a?x=\\", "/a?x=\\"],
            ["/a/..?x", "/?x"],
            ["/productpage#top", "/productpage"],
            ["/a?x#f", "/a?x"],
            ["/a#f?x", "/a"], // after '#', a '?' belongs to the fragment
            ["/a/..#x/../y", "/"],
            ["#frag", "/"],
            ["?/../x", "/?/../x"], // an empty path with a query: the query is not a path
            ["?x", "/?x"],
        ];
        for (const [input, want] of table) expect(normalizePath(input), input).to.equal(want);
    });

    it("gives a path without a leading slash one, an empty path becomes `/`, and the case is kept", () => {
        expect(normalizePath("")).to.equal("/");
        expect(normalizePath("/")).to.equal("/");
        expect(normalizePath("productpage")).to.equal("/productpage");
        expect(normalizePath("a/b/../c")).to.equal("/a/c");
        expect(normalizePath("/PRODUCTPAGE")).to.equal("/PRODUCTPAGE");
        expect(normalizePath("/productpage/")).to.equal("/productpage/");
        expect(normalizePath("/productpage;jsessionid=1")).to.equal("/productpage;jsessionid=1");
    });
});

describe("the gateway model (gateway-model/explain.ts): urlPath, CEL's request.url_path", () => {
    it("is the path without its query and fragment", () => {
        const table: [string, string][] = [
            ["/a/b?c=d#e", "/a/b"],
            ["/a?b", "/a"],
            ["/a#b", "/a"],
            ["/a#b?c", "/a"],
            ["/a/b?c?d", "/a/b"],
            ["/a", "/a"],
            ["/a/", "/a/"],
            ["/a%3Fb", "/a%3Fb"],
            ["?x", ""],
        ];
        for (const [input, want] of table) expect(urlPath(input), input).to.equal(want);
    });
});

describe("the gateway model (gateway-model/explain.ts): fullMatch, RE2 full match as Envoy's safe_regex", () => {
    it("must match the whole string, not a part of it", () => {
        const re = "/api/v1/products/[1-9][0-9]?";
        expect(fullMatch(re, "/api/v1/products/7")).to.equal(true);
        expect(fullMatch(re, "/api/v1/products/99")).to.equal(true);
        expect(fullMatch(re, "/api/v1/products/100")).to.equal(false);
        expect(fullMatch(re, "/api/v1/products/0")).to.equal(false);
        expect(fullMatch(re, "/api/v1/products/")).to.equal(false);
        expect(fullMatch(re, "x/api/v1/products/7")).to.equal(false);
        expect(fullMatch(re, "/api/v1/products/7/reviews")).to.equal(false);
        // Against `:path`, the query is part of the value.
        expect(fullMatch(re, "/api/v1/products/7?x=1")).to.equal(false);
    });

    it("anchors an alternation as a whole: `a|b` matches neither `ab` nor a prefix or suffix of it", () => {
        expect(fullMatch("a|b", "a")).to.equal(true);
        expect(fullMatch("a|b", "b")).to.equal(true);
        expect(fullMatch("a|b", "ab")).to.equal(false);
        expect(fullMatch("ab|b", "abb")).to.equal(false);
        expect(fullMatch("a|ab", "ab")).to.equal(true);
        expect(fullMatch("/login|/logout", "/login/x")).to.equal(false);
    });

    it("a query-tolerant regex accepts the path with or without a query, nothing else", () => {
        const re = "/productpage(\\?.*)?";
        expect(fullMatch(re, "/productpage")).to.equal(true);
        expect(fullMatch(re, "/productpage?")).to.equal(true);
        expect(fullMatch(re, "/productpage?x=1")).to.equal(true);
        expect(fullMatch(re, "/productpage/")).to.equal(false);
        expect(fullMatch(re, "/productpagex")).to.equal(false);
    });

    it("is case-sensitive, answers the same on a second call, and refuses an invalid RE2 expression", () => {
        expect(fullMatch("/productpage", "/PRODUCTPAGE")).to.equal(false);
        expect(fullMatch("/productpage", "/productpage")).to.equal(true);
        expect(fullMatch("/productpage", "/productpage")).to.equal(true);
        expect(fullMatch("/productpage", "/PRODUCTPAGE")).to.equal(false);
        expect(fullMatch("", "")).to.equal(true);
        expect(fullMatch("", "x")).to.equal(false);
        expect(() => fullMatch("(", "x")).to.throw();
    });
});

describe("the gateway model (gateway-model/explain.ts): selectRoute, Envoy's route matching", () => {
    function routed(): GatewayModel {
        const m = bookinfoModel();
        m.routes = [
            route("pages", 0, [
                { kind: "exact", value: "/productpage" },
                { kind: "exact", value: "/login" },
            ]),
            route("static", 1, [{ kind: "prefix", value: "/static" }]),
            route("item", 2, [{ kind: "regex", value: "/api/v1/products/[0-9]+" }]),
            route("api", 3, [{ kind: "prefix", value: "/api" }]),
            route("never", 4, []),
        ];
        return m;
    }
    const pick = (m: GatewayModel, p: string) => {
        const s = selectRoute(m, p);
        return s && [s.route.name, s.match.kind, s.match.value];
    };

    it("exact compares the path without its query; the match that applied is returned", () => {
        const m = routed();
        expect(pick(m, "/productpage")).to.deep.equal(["pages", "exact", "/productpage"]);
        expect(pick(m, "/productpage?x=1")).to.deep.equal(["pages", "exact", "/productpage"]);
        expect(pick(m, "/login")).to.deep.equal(["pages", "exact", "/login"]);
        expect(pick(m, "/login?next=/productpage")).to.deep.equal(["pages", "exact", "/login"]);
        const s = selectRoute(m, "/login");
        expect(s?.route).to.equal(m.routes[0]);
        expect(s?.match).to.equal(m.routes[0].matches[1]);
    });

    it("an exact route refuses every variant of its path (404 unless another route takes it)", () => {
        const m = routed();
        for (const p of ["/productpage/", "//productpage", "/PRODUCTPAGE", "/productpagex", "/productpage%3Fx=1", "/x/productpage", "/"]) {
            expect(selectRoute(m, p), p).to.equal(undefined);
        }
    });

    it("prefix is a plain string prefix of the whole :path (no segment boundary, query included)", () => {
        const m = routed();
        expect(pick(m, "/static")).to.deep.equal(["static", "prefix", "/static"]);
        expect(pick(m, "/static/app.css")).to.deep.equal(["static", "prefix", "/static"]);
        expect(pick(m, "/staticx")).to.deep.equal(["static", "prefix", "/static"]);
        expect(pick(m, "/static?v=1")).to.deep.equal(["static", "prefix", "/static"]);
        expect(selectRoute(m, "/stati")).to.equal(undefined);
        const q = routed();
        q.routes = [route("q", 0, [{ kind: "prefix", value: "/login?admin" }]), route("e", 1, [{ kind: "exact", value: "/login?admin" }])];
        expect(pick(q, "/login?admin=1")).to.deep.equal(["q", "prefix", "/login?admin"]);
        q.routes.reverse();
        // An exact match compares the path without its query, which never contains '?'.
        expect(pick(q, "/login?admin")).to.deep.equal(["q", "prefix", "/login?admin"]);
    });

    it("regex is a full match of the path without its query; the first route that matches wins", () => {
        const m = routed();
        expect(pick(m, "/api/v1/products/12")).to.deep.equal(["item", "regex", "/api/v1/products/[0-9]+"]);
        expect(pick(m, "/api/v1/products/12?x=1")).to.deep.equal(["item", "regex", "/api/v1/products/[0-9]+"]);
        expect(pick(m, "/api/v1/products/12/reviews")).to.deep.equal(["api", "prefix", "/api"]);
        expect(pick(m, "/api/v1/products/x")).to.deep.equal(["api", "prefix", "/api"]);
        expect(pick(m, "/api/v1/products/%31")).to.deep.equal(["api", "prefix", "/api"]);
        m.routes = [m.routes[3], m.routes[2]];
        expect(pick(m, "/api/v1/products/12")).to.deep.equal(["api", "prefix", "/api"]);
    });

    it("no routes, or a route without matches, select nothing", () => {
        const m = routed();
        expect(selectRoute(m, "/nothing")).to.equal(undefined);
        m.routes = [];
        expect(selectRoute(m, "/productpage")).to.equal(undefined);
    });
});

describe("the gateway model (gateway-model/explain.ts): descriptorFor, one rate_limits entry → one descriptor", () => {
    it("request_headers sends the header's value under descriptor_key; `:path` is the value with its query", () => {
        expect(descriptorFor({ actions: [{ request_headers: { header_name: "x-user", descriptor_key: "USER" } }] }, { "x-user": "alice" })).to.deep.equal([
            { key: "USER", value: "alice" },
        ]);
        expect(descriptorFor({ actions: [literalPath()] }, { ":path": "/productpage?x=1" })).to.deep.equal([{ key: "PATH", value: "/productpage?x=1" }]);
        // A header that is present but empty still yields an entry.
        expect(descriptorFor({ actions: [{ request_headers: { header_name: "x-user", descriptor_key: "USER" } }] }, { "x-user": "" })).to.deep.equal([
            { key: "USER", value: "" },
        ]);
    });

    it("a missing header drops the whole descriptor, unless skip_if_absent leaves just that entry out", () => {
        const rl = () => ({
            actions: [
                { generic_key: { descriptor_key: "K", descriptor_value: "v" } },
                { request_headers: { header_name: "x-user", descriptor_key: "USER" } },
                { remote_address: {} },
            ],
        });
        expect(descriptorFor(rl(), {}, "198.51.100.7")).to.equal(undefined);
        const skip = rl();
        (skip.actions[1] as any).request_headers.skip_if_absent = true;
        expect(descriptorFor(skip, {}, "198.51.100.7")).to.deep.equal([
            { key: "K", value: "v" },
            { key: "remote_address", value: "198.51.100.7" },
        ]);
        expect(descriptorFor(skip, { "x-user": "bob" }, "198.51.100.7")).to.deep.equal([
            { key: "K", value: "v" },
            { key: "USER", value: "bob" },
            { key: "remote_address", value: "198.51.100.7" },
        ]);
        // camelCase (protobuf JSON) is the same field.
        expect(
            descriptorFor(
                {
                    actions: [
                        { requestHeaders: { headerName: "x-user", descriptorKey: "USER", skipIfAbsent: true } },
                        { generic_key: { descriptor_value: "g" } },
                    ],
                },
                {},
            ),
        ).to.deep.equal([{ key: "generic_key", value: "g" }]);
    });

    it("a descriptor with no entry at all is not sent (skip_if_absent on every action, or no actions)", () => {
        expect(descriptorFor({ actions: [{ request_headers: { header_name: "x-user", descriptor_key: "USER", skip_if_absent: true } }] }, {})).to.equal(
            undefined,
        );
        expect(descriptorFor({ actions: [] }, {})).to.equal(undefined);
        expect(descriptorFor({}, {})).to.equal(undefined);
    });

    it("the first action that yields nothing drops the entries already built by earlier actions", () => {
        const rl = {
            actions: [
                { generic_key: { descriptor_key: "A", descriptor_value: "1" } },
                { request_headers: { header_name: "x-absent", descriptor_key: "B" } },
                { generic_key: { descriptor_key: "C", descriptor_value: "3" } },
            ],
        };
        expect(descriptorFor(rl, { ":path": "/" })).to.equal(undefined);
    });

    it("generic_key sends its value under descriptor_key, by default `generic_key`; entries keep the actions' order", () => {
        expect(descriptorFor({ actions: [{ generic_key: { descriptor_value: "checkout" } }] }, {})).to.deep.equal([{ key: "generic_key", value: "checkout" }]);
        expect(descriptorFor({ actions: [{ genericKey: { descriptorKey: "route", descriptorValue: "checkout" } }] }, {})).to.deep.equal([
            { key: "route", value: "checkout" },
        ]);
        expect(
            descriptorFor({ actions: [{ remote_address: {} }, { generic_key: { descriptor_key: "rule", descriptor_value: "r" } }] }, {}, "203.0.113.9"),
        ).to.deep.equal([
            { key: "remote_address", value: "203.0.113.9" },
            { key: "rule", value: "r" },
        ]);
    });

    it("remote_address sends the client address under the key `remote_address`; without an address, nothing", () => {
        expect(descriptorFor({ actions: [{ remote_address: {} }] }, {}, "192.0.2.44")).to.deep.equal([{ key: "remote_address", value: "192.0.2.44" }]);
        expect(descriptorFor({ actions: [{ remoteAddress: {} }] }, {}, "2001:db8::1")).to.deep.equal([{ key: "remote_address", value: "2001:db8::1" }]);
        expect(descriptorFor({ actions: [{ remote_address: {} }] }, {})).to.equal(undefined);
    });

    it("the CEL extension: request.url_path is the path without its query, request.path with it", () => {
        const headers = { ":path": "/productpage?x=1" };
        expect(descriptorFor({ actions: [celUrlPath()] }, headers)).to.deep.equal([{ key: "PATH", value: "/productpage" }]);
        const withQuery = { extension: { name: "envoy.rate_limit_descriptors.expr", typedConfig: { descriptorKey: "P", text: "request.path" } } };
        expect(descriptorFor({ actions: [withQuery] }, headers)).to.deep.equal([{ key: "P", value: "/productpage?x=1" }]);
    });

    it("refuses what it does not model instead of guessing: another CEL expression, extension or action", () => {
        const cel = { extension: { name: "envoy.rate_limit_descriptors.expr", typed_config: { descriptor_key: "P", text: "request.host" } } };
        expect(() => descriptorFor({ actions: [cel] }, { ":path": "/" })).to.throw('CEL descriptor expression "request.host" is not modelled');
        expect(() => descriptorFor({ actions: [{ extension: { name: "other.extension", typed_config: {} } }] }, { ":path": "/" })).to.throw(
            /^rate-limit action \{"extension".* is not modelled$/,
        );
        expect(() => descriptorFor({ actions: [{ extension: { name: "envoy.rate_limit_descriptors.expr" } }] }, { ":path": "/" })).to.throw(
            "CEL descriptor expression undefined is not modelled",
        );
        expect(() => descriptorFor({ actions: [{ destination_cluster: {} }] }, {})).to.throw('rate-limit action {"destination_cluster":{}} is not modelled');
    });
});

describe("the gateway model (gateway-model/explain.ts): descriptorFor, header_value_match and its header matchers", () => {
    const hvm = (headers: any[], extra: Record<string, unknown> = {}) => ({
        actions: [{ header_value_match: { descriptor_key: "rule", descriptor_value: "r", headers, ...extra } }],
    });
    const yes = [{ key: "rule", value: "r" }];
    /** Whether one header matcher matches these request headers (via expect_match: true). */
    const matches = (h: any, headers: Record<string, string>) => descriptorFor(hvm([h]), headers) !== undefined;

    it("safe_regex_match is an RE2 full match of the whole value (`:path` with its query)", () => {
        const h = { name: ":path", safe_regex_match: { google_re2: {}, regex: "/api/v1/products/[1-9][0-9]?" } };
        expect(descriptorFor(hvm([h]), { ":path": "/api/v1/products/10" })).to.deep.equal(yes);
        expect(descriptorFor(hvm([h]), { ":path": "/api/v1/products/10?x=1" })).to.equal(undefined);
        expect(descriptorFor(hvm([h]), { ":path": "/api/v1/products/100" })).to.equal(undefined);
        expect(matches({ name: ":path", safeRegexMatch: { regex: "/a|/b" } }, { ":path": "/a/b" })).to.equal(false);
    });

    it("exact_match, prefix_match and string_match exact/prefix/suffix/contains/safe_regex", () => {
        const v = { "x-plan": "gold-annual" };
        expect(matches({ name: "x-plan", exact_match: "gold-annual" }, v)).to.equal(true);
        expect(matches({ name: "x-plan", exact_match: "gold" }, v)).to.equal(false);
        expect(matches({ name: "x-plan", exactMatch: "gold-annual" }, v)).to.equal(true);
        expect(matches({ name: "x-plan", prefix_match: "gold" }, v)).to.equal(true);
        expect(matches({ name: "x-plan", prefix_match: "annual" }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { exact: "gold-annual" } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { exact: "Gold-annual" } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { prefix: "gold-" } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { prefix: "-annual" } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { suffix: "-annual" } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { suffix: "gold-" } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { contains: "d-a" } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { contains: "silver" } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { safe_regex: { regex: "gold-[a-z]+" } } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { safe_regex: { regex: "gold" } } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", stringMatch: { safeRegex: { regex: "[a-z]+-annual" } } }, v)).to.equal(true);
        // An empty string value is still a value (the header is present).
        expect(matches({ name: "x-plan", string_match: { exact: "" } }, { "x-plan": "" })).to.equal(true);
    });

    it("present_match: true matches a present header, whatever its value", () => {
        expect(matches({ name: "authorization", present_match: true }, { authorization: "Bearer x" })).to.equal(true);
        expect(matches({ name: "authorization", present_match: true }, { authorization: "" })).to.equal(true);
        expect(matches({ name: "authorization", present_match: true }, {})).to.equal(false);
    });

    it("present_match: false matches when the header is absent (route_components.proto)", () => {
        expect(matches({ name: "authorization", present_match: false }, {})).to.equal(true);
        expect(matches({ name: "authorization", presentMatch: false }, { authorization: "Bearer x" })).to.equal(false);
        // Inverted: "absent" becomes "present".
        expect(matches({ name: "authorization", present_match: false, invert_match: true }, { authorization: "Bearer x" })).to.equal(true);
        expect(matches({ name: "authorization", present_match: false, invert_match: true }, {})).to.equal(false);
    });

    it("a header that is absent matches no value matcher, whatever the matcher", () => {
        for (const h of [
            { name: "x-plan", exact_match: "" },
            { name: "x-plan", prefix_match: "g" },
            { name: "x-plan", string_match: { suffix: "" } },
            { name: "x-plan", string_match: { contains: "" } },
            { name: "x-plan", safe_regex_match: { regex: ".*" } },
        ]) {
            expect(matches(h, { "x-other": "gold" }), JSON.stringify(h)).to.equal(false);
        }
    });

    it("invert_match inverts the result for a present header", () => {
        const v = { "x-plan": "gold" };
        expect(matches({ name: "x-plan", string_match: { exact: "gold" }, invert_match: true }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { exact: "silver" }, invert_match: true }, v)).to.equal(true);
        expect(matches({ name: "x-plan", safe_regex_match: { regex: "\\d{3}" }, invertMatch: true }, { "x-plan": "1234" })).to.equal(true);
        expect(matches({ name: "x-plan", present_match: true, invert_match: true }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { exact: "gold" }, invert_match: false }, v)).to.equal(true);
    });

    it("invert_match on an absent header: a value matcher still does not match; an inverted presence test does", () => {
        // route_components.proto: "the header is not present and the header matcher rule ... will be
        // ignored so it will not match" (without treat_missing_header_as_empty); Envoy's
        // HeaderUtility::matchHeaders returns `present_match && invert` for a missing header.
        expect(matches({ name: "x-plan", string_match: { exact: "gold" }, invert_match: true }, {})).to.equal(false);
        expect(matches({ name: "x-plan", safe_regex_match: { regex: "\\d{3}" }, invert_match: true }, {})).to.equal(false);
        expect(matches({ name: "x-plan", present_match: true, invert_match: true }, {})).to.equal(true);
    });

    it("several headers must all match; an empty list always matches", () => {
        const both = [
            { name: "x-plan", string_match: { exact: "gold" } },
            { name: ":method", string_match: { exact: "GET" } },
        ];
        expect(descriptorFor(hvm(both), { "x-plan": "gold", ":method": "GET" })).to.deep.equal(yes);
        expect(descriptorFor(hvm(both), { "x-plan": "gold", ":method": "POST" })).to.equal(undefined);
        expect(descriptorFor(hvm(both), { "x-plan": "silver", ":method": "GET" })).to.equal(undefined);
        expect(descriptorFor(hvm([]), {})).to.deep.equal(yes);
        expect(descriptorFor({ actions: [{ header_value_match: { descriptor_value: "r" } }] }, {})).to.deep.equal([{ key: "header_match", value: "r" }]);
    });

    it("expect_match: false yields the entry only when the headers do not match", () => {
        const h = [{ name: "x-plan", string_match: { exact: "gold" } }];
        expect(descriptorFor(hvm(h, { expect_match: false }), { "x-plan": "silver" })).to.deep.equal(yes);
        expect(descriptorFor(hvm(h, { expect_match: false }), {})).to.deep.equal(yes);
        expect(descriptorFor(hvm(h, { expect_match: false }), { "x-plan": "gold" })).to.equal(undefined);
        expect(descriptorFor(hvm(h, { expect_match: true }), { "x-plan": "gold" })).to.deep.equal(yes);
        expect(descriptorFor(hvm(h, { expectMatch: false }), { "x-plan": "gold" })).to.equal(undefined);
    });

    it("the default descriptor key is `header_match`; camelCase fields are read too", () => {
        const a = { actions: [{ headerValueMatch: { descriptorValue: "api", headers: [{ name: ":path", safeRegexMatch: { regex: "/api/.*" } }] } }] };
        expect(descriptorFor(a, { ":path": "/api/x" })).to.deep.equal([{ key: "header_match", value: "api" }]);
        expect(descriptorFor(a, { ":path": "/apix" })).to.equal(undefined);
    });

    it("string_match ignore_case compares exact/prefix/suffix/contains case-insensitively, not safe_regex (StringMatcher)", () => {
        const v = { "x-plan": "Gold-Annual" };
        expect(matches({ name: "x-plan", string_match: { exact: "gold-annual", ignore_case: true } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { exact: "gold-annual" } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { prefix: "GOLD", ignoreCase: true } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { suffix: "annual", ignore_case: true } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { contains: "D-a", ignore_case: true } }, v)).to.equal(true);
        expect(matches({ name: "x-plan", string_match: { contains: "silver", ignore_case: true } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { exact: "gold-annual", ignore_case: false } }, v)).to.equal(false);
        expect(matches({ name: "x-plan", string_match: { safe_regex: { regex: "gold-annual" }, ignore_case: true } }, v)).to.equal(false);
    });

    it("refuses a matcher or string_match it does not model", () => {
        expect(() => descriptorFor(hvm([{ name: "x-plan", range_match: { start: 0, end: 9 } }]), { "x-plan": "1" })).to.throw(
            'header matcher {"name":"x-plan","range_match":{"start":0,"end":9}} is not modelled',
        );
        expect(() => descriptorFor(hvm([{ name: "x-plan", string_match: { ignore_case: true } }]), { "x-plan": "1" })).to.throw(
            'string_match {"ignore_case":true} is not modelled',
        );
    });
});

describe("the gateway model (gateway-model/explain.ts): lookupLimit, envoyproxy/ratelimit's config lookup", () => {
    const config = () => ({
        domain: "d",
        descriptors: [
            // The catch-all first: the service looks `key_value` up before the key alone, whatever the order.
            { key: "PATH", rate_limit: { unit: "minute", requests_per_unit: 100 } },
            { key: "PATH", value: "/api/*", rate_limit: { unit: "hour", requests_per_unit: 50 } },
            { key: "PATH", value: "/productpage", rate_limit: { unit: "minute", requests_per_unit: 1 } },
            { key: "PATH", value: "/api/special", rate_limit: { unit: "second", requests_per_unit: 9 } },
            { key: "rule", value: "login", descriptors: [{ key: "remote_address", rate_limit: { unit: "second", requests_per_unit: 5 } }] },
            { key: "rule", value: "beta", shadow_mode: true, rate_limit: { unit: "MINUTE", requests_per_unit: 3 } },
            { key: "rule", value: "free", rate_limit: { unlimited: true } },
            { key: "rule", value: "bare" },
        ],
    });
    const e = (...kv: [string, string][]) => kv.map(([key, value]) => ({ key, value }));

    it("key and value: that entry's limit; the counter key is <domain>_<key>_<value>_<window>", () => {
        const entries = e(["PATH", "/productpage"]);
        expect(lookupLimit(config(), "d", entries)).to.deep.equal({
            entries,
            limit: { entry: "PATH=/productpage", unit: "minute", requestsPerUnit: 1, unlimited: false, shadow: false },
            bucket: "d_PATH_/productpage_{window}",
        });
    });

    it("the key's catch-all answers any other value, and counts each value apart", () => {
        const a = lookupLimit(config(), "d", e(["PATH", "/login"]));
        const b = lookupLimit(config(), "d", e(["PATH", "/login?x=1"]));
        expect(a.limit).to.deep.equal({ entry: "PATH (catch-all)", unit: "minute", requestsPerUnit: 100, unlimited: false, shadow: false });
        expect(a.bucket).to.equal("d_PATH_/login_{window}");
        expect(b.limit?.entry).to.equal("PATH (catch-all)");
        expect(b.bucket).to.equal("d_PATH_/login?x=1_{window}");
    });

    it("a value ending in `*` matches by prefix, after an exact value and before the catch-all; each value counts apart", () => {
        const w = lookupLimit(config(), "d", e(["PATH", "/api/v1/products/7"]));
        expect(w.limit).to.deep.equal({ entry: "PATH=/api/*", unit: "hour", requestsPerUnit: 50, unlimited: false, shadow: false });
        expect(w.bucket).to.equal("d_PATH_/api/v1/products/7_{window}");
        expect(lookupLimit(config(), "d", e(["PATH", "/api/"])).limit?.entry).to.equal("PATH=/api/*");
        expect(lookupLimit(config(), "d", e(["PATH", "/api/special"])).limit?.entry).to.equal("PATH=/api/special");
        expect(lookupLimit(config(), "d", e(["PATH", "/api"])).limit?.entry).to.equal("PATH (catch-all)");
        expect(lookupLimit(config(), "d", e(["PATH", "/x/api/7"])).limit?.entry).to.equal("PATH (catch-all)");
        // A request value that is literally the wildcard string is an exact hit.
        expect(lookupLimit(config(), "d", e(["PATH", "/api/*"])).limit?.entry).to.equal("PATH=/api/*");
    });

    it("nested descriptors: every entry walks one level down; the limit is the last level's", () => {
        const entries = e(["rule", "login"], ["remote_address", "192.0.2.1"]);
        expect(lookupLimit(config(), "d", entries)).to.deep.equal({
            entries,
            limit: { entry: "rule=login / remote_address (catch-all)", unit: "second", requestsPerUnit: 5, unlimited: false, shadow: false },
            bucket: "d_rule_login_remote_address_192.0.2.1_{window}",
        });
    });

    it("no limit when the request stops above the level that has one, or goes deeper than the config", () => {
        expect(lookupLimit(config(), "d", e(["rule", "login"]))).to.deep.equal({ entries: e(["rule", "login"]) });
        expect(lookupLimit(config(), "d", e(["PATH", "/productpage"], ["x", "y"]))).to.deep.equal({ entries: e(["PATH", "/productpage"], ["x", "y"]) });
        // A leaf has no level below it, even for a key that exists at the top.
        expect(lookupLimit(config(), "d", e(["PATH", "/productpage"], ["PATH", "/login"]))).to.deep.equal({
            entries: e(["PATH", "/productpage"], ["PATH", "/login"]),
        });
        expect(lookupLimit(config(), "d", e(["rule", "login"], ["other", "1"]))).to.deep.equal({ entries: e(["rule", "login"], ["other", "1"]) });
        expect(lookupLimit(config(), "d", e(["rule", "bare"]))).to.deep.equal({ entries: e(["rule", "bare"]) });
    });

    it("no limit for an unknown key, an unknown value without catch-all, a key of another case, or no entries", () => {
        for (const entries of [e(["OTHER", "x"]), e(["rule", "unknown"]), e(["path", "/productpage"]), []]) {
            expect(lookupLimit(config(), "d", entries), JSON.stringify(entries)).to.deep.equal({ entries });
        }
    });

    it("a domain the config does not have is answered OK: no limit at all", () => {
        const entries = e(["PATH", "/productpage"]);
        expect(lookupLimit(config(), "other", entries)).to.deep.equal({ entries });
        expect(lookupLimit(config(), "D", entries)).to.deep.equal({ entries });
    });

    it("shadow_mode and unlimited are reported; the unit is read case-insensitively", () => {
        expect(lookupLimit(config(), "d", e(["rule", "beta"])).limit).to.deep.equal({
            entry: "rule=beta",
            unit: "minute",
            requestsPerUnit: 3,
            unlimited: false,
            shadow: true,
        });
        const free = lookupLimit(config(), "d", e(["rule", "free"]));
        expect(free.limit).to.deep.equal({ entry: "rule=free", unit: "", requestsPerUnit: 0, unlimited: true, shadow: false });
        expect(free.bucket).to.equal("d_rule_free_{window}");
    });
});

describe("the gateway model (gateway-model/explain.ts): explainWith, what the gateway sends for a request", () => {
    it("a request to the limited path, with any query, fragment or dot segments, sends PATH=/productpage (1 per minute)", () => {
        for (const p of [
            "/productpage",
            "/productpage?x=1",
            "/productpage?",
            "/productpage#top",
            "/static/../productpage?x",
            "/./productpage",
            "/%2e/productpage",
            "\\productpage",
        ]) {
            const x = explainWith(bookinfoModel(), p);
            expect(x.route?.name, p).to.equal("pages");
            expect(entries(x), p).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
            expect(x.descriptors[0].limit?.entry, p).to.equal("PATH=/productpage");
            expect(x.descriptors[0].bucket, p).to.equal("ratelimit_PATH_/productpage_{window}");
            expect(x.limited, p).to.equal(true);
        }
    });

    it("the whole explanation of one request, field by field", () => {
        const x = explainWith(bookinfoModel(), "/static/../productpage?x=1#f");
        expect(x).to.deep.equal({
            path: "/static/../productpage?x=1#f",
            normalizedPath: "/productpage?x=1",
            virtualHost: "*:8080",
            domain: "ratelimit",
            route: { name: "pages", index: 0, match: "exact /productpage", virtualService: "VirtualService bookinfo" },
            rateLimitsFrom: { level: "virtual host", envoyFilter: "filter-ratelimit-svc" },
            descriptors: [
                {
                    entries: [{ key: "PATH", value: "/productpage" }],
                    limit: { entry: "PATH=/productpage", unit: "minute", requestsPerUnit: 1, unlimited: false, shadow: false },
                    bucket: "ratelimit_PATH_/productpage_{window}",
                },
            ],
            // One call, from the model's one filter (a hand-built model names no service cluster).
            calls: [
                {
                    filter: "envoy.filters.http.ratelimit",
                    service: "",
                    domain: "ratelimit",
                    descriptors: [
                        {
                            entries: [{ key: "PATH", value: "/productpage" }],
                            limit: { entry: "PATH=/productpage", unit: "minute", requestsPerUnit: 1, unlimited: false, shadow: false },
                            bucket: "ratelimit_PATH_/productpage_{window}",
                        },
                    ],
                },
            ],
            limited: true,
        });
    });

    it("no route matches: Envoy answers 404 without asking the service (no descriptor, not limited)", () => {
        for (const p of ["/nope?x=1", "/productpage/", "//productpage", "/PRODUCTPAGE", "/productpage%3Fx=1", "/api/v1/product"]) {
            const x = explainWith(bookinfoModel(), p);
            expect(x, p).to.deep.equal({
                path: p,
                normalizedPath: normalizePath(p),
                virtualHost: "*:8080",
                domain: "ratelimit",
                route: undefined,
                rateLimitsFrom: { level: "none" },
                descriptors: [],
                calls: [],
                limited: false,
            });
        }
        expect(explainWith(bookinfoModel(), "/nope?x=1#f").normalizedPath).to.equal("/nope?x=1");
    });

    it("INCLUDE on the api route: its own PATH=api first, then the virtual host's per-path catch-all", () => {
        const x = explainWith(bookinfoModel(), "/api/v1/products/10?x=1");
        expect(x.route).to.deep.equal({ name: "api", index: 1, match: "prefix /api/v1/products", virtualService: "VirtualService bookinfo" });
        expect(x.rateLimitsFrom).to.deep.equal({ level: "route and virtual host", envoyFilter: "filter-ratelimit-svc-api, filter-ratelimit-svc" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "api" }], [{ key: "PATH", value: "/api/v1/products/10" }]]);
        expect(x.descriptors.map((d) => [d.limit?.entry, d.limit?.requestsPerUnit, d.bucket])).to.deep.equal([
            ["PATH=api", 2, "ratelimit_PATH_api_{window}"],
            ["PATH (catch-all)", 100, "ratelimit_PATH_/api/v1/products/10_{window}"],
        ]);
        expect(x.limited).to.equal(true);
    });

    it("INCLUDE: api paths the regex refuses still count against the catch-all (each path its own counter)", () => {
        for (const [p, value] of [
            ["/api/v1/products/100", "/api/v1/products/100"],
            ["/api/v1/products", "/api/v1/products"],
            ["/api/v1/products/0?x", "/api/v1/products/0"],
            ["/api/v1/products%2F10", "/api/v1/products%2F10"],
            ["/api/v1/products/7/reviews", "/api/v1/products/7/reviews"],
        ]) {
            const x = explainWith(bookinfoModel(), p);
            expect(x.route?.name, p).to.equal("api");
            expect(x.rateLimitsFrom.level, p).to.equal("route and virtual host");
            expect(entries(x), p).to.deep.equal([[{ key: "PATH", value }]]);
            expect(x.descriptors[0].limit?.entry, p).to.equal("PATH (catch-all)");
            expect(x.limited, p).to.equal(true);
        }
    });

    it("OVERRIDE (Envoy's default): the route's own rate_limits replace the virtual host's", () => {
        const m = bookinfoModel({ apiMode: "OVERRIDE" });
        const x = explainWith(m, "/api/v1/products/7");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "api" }]]);
        // A path the regex refuses sends nothing at all: never limited globally.
        const y = explainWith(m, "/api/v1/products/100");
        expect(y.route?.name).to.equal("api");
        expect(y.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(y.descriptors).to.deep.equal([]);
        expect(y.limited).to.equal(false);
        // A route without its own list uses the virtual host's.
        expect(explainWith(m, "/login").rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc" });
    });

    it("IGNORE: only the route's own list; a route without one sends nothing", () => {
        const m = bookinfoModel({ apiMode: "IGNORE" });
        expect(explainWith(m, "/api/v1/products/7").rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
        expect(entries(explainWith(m, "/api/v1/products/7"))).to.deep.equal([[{ key: "PATH", value: "api" }]]);
        m.routes[0].vhRateLimits = "IGNORE";
        const x = explainWith(m, "/productpage");
        expect(x.route?.name).to.equal("pages");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "none", envoyFilter: undefined });
        expect(x.descriptors).to.deep.equal([]);
        expect(x.limited).to.equal(false);
    });

    it("INCLUDE on a route without its own list, and no virtual-host list at all", () => {
        const m = bookinfoModel();
        m.routes[0].vhRateLimits = "INCLUDE";
        expect(explainWith(m, "/login").rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc" });
        m.vhostRateLimits = [];
        const x = explainWith(m, "/login");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "none", envoyFilter: undefined });
        expect(x.descriptors).to.deep.equal([]);
        const api = explainWith(m, "/api/v1/products/7");
        expect(api.rateLimitsFrom).to.deep.equal({ level: "route", envoyFilter: "filter-ratelimit-svc-api" });
    });

    it("several virtual-host lists (two EnvoyFilters) are all applied, in order, and both filters are named", () => {
        const m = bookinfoModel();
        m.vhostRateLimits.push({ rateLimits: [{ actions: [{ generic_key: { descriptor_key: "PATH", descriptor_value: "api" } }] }], envoyFilter: "second" });
        const x = explainWith(m, "/login");
        expect(x.rateLimitsFrom).to.deep.equal({ level: "virtual host", envoyFilter: "filter-ratelimit-svc, second" });
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "/login" }], [{ key: "PATH", value: "api" }]]);
    });

    it("pathKey=literal (request_headers :path): a query string escapes the /productpage limit (istio/istio#36153)", () => {
        const m = bookinfoModel({ vhActions: [literalPath()] });
        expect(entries(explainWith(m, "/productpage"))).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
        const x = explainWith(m, "/productpage?x=1");
        expect(entries(x)).to.deep.equal([[{ key: "PATH", value: "/productpage?x=1" }]]);
        expect(x.descriptors[0].limit?.entry).to.equal("PATH (catch-all)");
        expect(x.descriptors[0].bucket).to.equal("ratelimit_PATH_/productpage?x=1_{window}");
        // The fragment is gone before the descriptor is built.
        expect(entries(explainWith(m, "/productpage#x"))).to.deep.equal([[{ key: "PATH", value: "/productpage" }]]);
    });

    it("the request's headers reach the actions; `:path` and `:method` are set by the model", () => {
        const m = bookinfoModel({
            vhActions: [
                { request_headers: { header_name: ":path", descriptor_key: "P" } },
                { request_headers: { header_name: ":method", descriptor_key: "M" } },
                { request_headers: { header_name: "x-user", descriptor_key: "U" } },
            ],
        });
        const x = explainWith(m, "/login?a=1", { headers: { ":path": "/evil", ":method": "POST", "x-user": "alice" } });
        expect(entries(x)).to.deep.equal([
            [
                { key: "P", value: "/login?a=1" },
                { key: "M", value: "GET" },
                { key: "U", value: "alice" },
            ],
        ]);
        // Without the header the descriptor is dropped, the route still matches.
        const y = explainWith(m, "/login");
        expect(y.route?.name).to.equal("pages");
        expect(y.descriptors).to.deep.equal([]);
        expect(y.limited).to.equal(false);
    });

    it("remote_address uses the given client address, else DEFAULT_CLIENT_ADDRESS (192.0.2.1)", () => {
        expect(DEFAULT_CLIENT_ADDRESS).to.equal("192.0.2.1");
        const m = bookinfoModel({
            vhActions: [{ remote_address: {} }],
            config: { domain: "ratelimit", descriptors: [{ key: "remote_address", rate_limit: { unit: "second", requests_per_unit: 10 } }] },
        });
        const a = explainWith(m, "/login", { clientAddress: "198.51.100.7" });
        expect(entries(a)).to.deep.equal([[{ key: "remote_address", value: "198.51.100.7" }]]);
        expect(a.descriptors[0].bucket).to.equal("ratelimit_remote_address_198.51.100.7_{window}");
        expect(entries(explainWith(m, "/login"))).to.deep.equal([[{ key: "remote_address", value: "192.0.2.1" }]]);
    });

    it("limited: only a descriptor with a real limit counts (not unlimited, not shadow, not missing)", () => {
        const config = {
            domain: "ratelimit",
            descriptors: [
                { key: "rule", value: "shadow", shadow_mode: true, rate_limit: { unit: "minute", requests_per_unit: 1 } },
                { key: "rule", value: "free", rate_limit: { unlimited: true } },
                { key: "rule", value: "real", rate_limit: { unit: "minute", requests_per_unit: 1 } },
            ],
        };
        const gk = (v: string) => ({ actions: [{ generic_key: { descriptor_key: "rule", descriptor_value: v } }] });
        const m = bookinfoModel({ config });
        m.vhostRateLimits = [{ rateLimits: [gk("shadow"), gk("free"), gk("none")], envoyFilter: "f" }];
        const x = explainWith(m, "/login");
        expect(x.descriptors.map((d) => [d.entries[0].value, d.limit?.shadow, d.limit?.unlimited])).to.deep.equal([
            ["shadow", true, false],
            ["free", false, true],
            ["none", undefined, undefined],
        ]);
        expect(x.limited).to.equal(false);
        m.vhostRateLimits[0].rateLimits.push(gk("real"));
        expect(explainWith(m, "/login").limited).to.equal(true);
    });

    it("a filter domain the ConfigMap does not have: descriptors are sent but nothing is ever limited", () => {
        const x = explainWith(bookinfoModel({ domain: "typo" }), "/productpage");
        expect(x.domain).to.equal("typo");
        expect(x.descriptors).to.deep.equal([{ entries: [{ key: "PATH", value: "/productpage" }] }]);
        expect(x.limited).to.equal(false);
    });

    it("an unnamed route keeps `name: undefined`, with its index and match", () => {
        const m = bookinfoModel();
        m.routes = [route(undefined, 3, [{ kind: "regex", value: "/r/[0-9]+" }])];
        expect(explainWith(m, "/r/1?q").route).to.deep.equal({
            name: undefined,
            index: 3,
            match: "regex /r/[0-9]+",
            virtualService: "VirtualService bookinfo",
        });
    });
});

describe("the gateway model (gateway-model/explain.ts): gatewayModel, reading the rendered objects", () => {
    it("reads variant A's objects into the model: gateway, virtual host, routes, filters, domain and config", () => {
        const m = gatewayModel(bookinfoObjects());
        expect(m).to.deep.equal({
            source: "VirtualService bookinfo",
            gateway: { name: "bookinfo-gateway", port: 8080, selector: SELECTOR },
            virtualHost: "*:8080",
            virtualHosts: [{ name: "*:8080", limited: true }],
            routes: [
                {
                    name: undefined,
                    index: 0,
                    matches: [
                        { kind: "exact", value: "/productpage" },
                        { kind: "exact", value: "/login" },
                        { kind: "exact", value: "/logout" },
                        { kind: "prefix", value: "/static" },
                    ],
                    rateLimits: [],
                    vhRateLimits: "OVERRIDE",
                },
                {
                    name: "api",
                    index: 1,
                    matches: [{ kind: "prefix", value: "/api/v1/products" }],
                    rateLimits: [{ actions: [apiMatch()] }],
                    anyRateLimits: true,
                    vhRateLimits: "INCLUDE",
                    envoyFilter: "filter-ratelimit-svc-api",
                },
            ],
            domain: "ratelimit",
            failureModeDeny: true,
            filterNames: ["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api"],
            vhostRateLimits: [{ rateLimits: [{ actions: [celUrlPath()] }], envoyFilter: "filter-ratelimit-svc" }],
            // The stack's default layout is the specification's: the canonical name at stage 0.
            httpFilterName: "envoy.filters.http.ratelimit",
            stage: 0,
            config: bookinfoConfig(),
        });
    });

    it("explain(objects, path) is explainWith(gatewayModel(objects), path)", () => {
        const objs = bookinfoObjects();
        for (const p of ["/productpage?x=1", "/api/v1/products/7", "/nope"]) expect(explain(objs, p), p).to.deep.equal(explainWith(gatewayModel(objs), p));
        expect(entries(explain(objs, "/api/v1/products/7", { headers: { "x-a": "b" } }))).to.deep.equal([
            [{ key: "PATH", value: "api" }],
            [{ key: "PATH", value: "/api/v1/products/7" }],
        ]);
    });

    it("VirtualService matches: no match list or no uri is prefix `/`; exact, prefix and regex map one to one", () => {
        const objs = bookinfoObjects();
        objs[1] = virtualServiceObj([
            { name: "a", match: [{ uri: { exact: "/x" } }, { name: "named", uri: { regex: "/r/[0-9]+" } }] },
            { name: "b", match: [{ name: "only-a-name" }] },
            { name: "c" },
            { name: "d", match: [{ uri: { prefix: "/p" } }] },
            // Istio: `len(http.Match) == 0` is the catch-all, an empty list included.
            { name: "e", match: [] },
            { name: "f", match: [{}] },
        ]);
        expect(gatewayModel(objs).routes.map((r) => [r.name, r.matches])).to.deep.equal([
            [
                "a",
                [
                    { kind: "exact", value: "/x" },
                    { kind: "regex", value: "/r/[0-9]+" },
                ],
            ],
            ["b", [{ kind: "prefix", value: "/" }]],
            ["c", [{ kind: "prefix", value: "/" }]],
            ["d", [{ kind: "prefix", value: "/p" }]],
            ["e", [{ kind: "prefix", value: "/" }]],
            ["f", [{ kind: "prefix", value: "/" }]],
        ]);
    });

    it("refuses VirtualService matches it does not model", () => {
        const withHttp = (http: any[]) => {
            const objs = bookinfoObjects();
            objs[1] = virtualServiceObj(http);
            return objs;
        };
        expect(() => gatewayModel(withHttp([{ match: [{ uri: { exact: "/x" }, headers: { a: { exact: "b" } } }] }]))).to.throw(
            "VirtualService match fields uri, headers are not modelled",
        );
        expect(() => gatewayModel(withHttp([{ match: [{ uri: { suffix: ".css" } }] }]))).to.throw('VirtualService uri match {"suffix":".css"} is not modelled');
    });

    it("the Gateway: exactly one, its HTTP server's port (any case of `http`) names the virtual host", () => {
        const objs = bookinfoObjects();
        objs[0] = gatewayObj("bookinfo-gateway", [
            { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["*"] },
            { port: { number: "80", name: "http", protocol: "http" }, hosts: ["*"] },
        ]);
        const m = gatewayModel(objs);
        expect(m.gateway).to.deep.equal({ name: "bookinfo-gateway", port: 80, selector: SELECTOR });
        expect(m.virtualHost).to.equal("*:80");
        // The route patch names *:8080, which no longer exists: it does not land.
        expect(m.routes[1].rateLimits).to.deep.equal([]);
        expect(m.routes[1].vhRateLimits).to.equal("OVERRIDE");

        const noHttp = bookinfoObjects();
        noHttp[0] = gatewayObj("bookinfo-gateway", [{ port: { number: 443, name: "https", protocol: "HTTPS" } }]);
        expect(() => gatewayModel(noHttp)).to.throw("Gateway bookinfo-gateway has no HTTP server");
        const http2 = bookinfoObjects();
        http2[0] = gatewayObj("bookinfo-gateway", [{ port: { number: 80, name: "h2", protocol: "HTTP2" } }]);
        expect(() => gatewayModel(http2)).to.throw("Gateway bookinfo-gateway has no HTTP server");
        expect(() => gatewayModel(bookinfoObjects().slice(1))).to.throw("expected one Gateway in the rendered objects, found 0");
        expect(() => gatewayModel(bookinfoObjects([gatewayObj("second")]))).to.throw("expected one Gateway in the rendered objects, found 2");
    });

    it("the VirtualService: exactly one bound to the Gateway (by name or namespace/name), with at least one host", () => {
        const other = virtualServiceObj([{ match: [{ uri: { prefix: "/" } }] }], ["other-gateway", "mesh"], ["*"], "other");
        const meshOnly: K8sObject = {
            apiVersion: "networking.istio.io/v1beta1",
            kind: "VirtualService",
            metadata: { name: "mesh-only" },
            spec: { hosts: ["reviews"], http: [] },
        };
        expect(gatewayModel(bookinfoObjects([other, meshOnly])).source).to.equal("VirtualService bookinfo");
        const qualified = bookinfoObjects();
        qualified[1] = virtualServiceObj(BOOKINFO_HTTP(), ["default/bookinfo-gateway"], ["*"], "qualified");
        expect(gatewayModel(qualified).source).to.equal("VirtualService qualified");
        const none = bookinfoObjects();
        none[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway-x"]);
        expect(() => gatewayModel(none)).to.throw("expected one VirtualService bound to Gateway bookinfo-gateway, found 0");
        expect(() => gatewayModel(bookinfoObjects([virtualServiceObj([], ["bookinfo-gateway"], ["*"], "dup")]))).to.throw(
            "expected one VirtualService bound to Gateway bookinfo-gateway, found 2",
        );
        const noHost = bookinfoObjects();
        noHost[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], []);
        expect(() => gatewayModel(noHost)).to.throw("VirtualService bookinfo has no host");
        const host = bookinfoObjects();
        host[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["shop.example"]);
        expect(gatewayModel(host).virtualHost).to.equal("shop.example:8080");
    });

    it("several hosts: the request's Host picks the virtual host (exact, then the longest wildcard, then '*'); a host none serves is not the stack's", () => {
        const objs = bookinfoObjects();
        objs[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["a.example", "*.shop.example", "*"]);
        expect(gatewayModel(objs).virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "a.example").virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "A.example:8080").virtualHost).to.equal("a.example:8080");
        expect(gatewayModel(objs, "x.shop.example").virtualHost).to.equal("*.shop.example:8080");
        expect(gatewayModel(objs, "other.example").virtualHost).to.equal("*:8080");
        expect(pickHost(["a.example", "*.example", "*.b.example"], "x.b.example")).to.equal("*.b.example");
        expect(pickHost(["a.example"], "b.example")).to.equal(undefined);
        const one = bookinfoObjects();
        one[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["bookinfo.example"]);
        expect(() => gatewayModel(one, "shop.example.com")).to.throw(
            HostNotServed,
            "no host of VirtualService bookinfo (bookinfo.example) serves host shop.example.com",
        );
    });

    it("which virtual hosts are limited: a patch naming one host limits that host only; '' (or no name) limits every one", () => {
        const objs = bookinfoObjects().filter((o) => !(o.kind === "EnvoyFilter" && o.metadata.name !== "filter-ratelimit"));
        objs[1] = virtualServiceObj(BOOKINFO_HTTP(), ["bookinfo-gateway"], ["a.example", "b.example"]);
        const named = [...objs, envoyFilterObj("only-a", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "a" } }] }], "a.example:8080")])];
        expect(gatewayModel(named).virtualHosts).to.deep.equal([
            { name: "a.example:8080", limited: true },
            { name: "b.example:8080", limited: false },
        ]);
        // Requests to b.example send nothing: the patch on a.example does not reach them.
        expect(explainWith(gatewayModel(named, "b.example"), "/productpage").descriptors).to.deep.equal([]);
        const all = [...objs, envoyFilterObj("every-host", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "a" } }] }], "")])];
        expect(gatewayModel(all).virtualHosts).to.deep.equal([
            { name: "a.example:8080", limited: true },
            { name: "b.example:8080", limited: true },
        ]);
    });

    it("the rate-limit filter on another listener port is not on the Gateway's listener (no filter: the model refuses)", () => {
        const objs = bookinfoObjects().map((o) =>
            o.kind === "EnvoyFilter" && o.metadata.name === "filter-ratelimit"
                ? {
                      ...o,
                      spec: {
                          ...o.spec,
                          configPatches: o.spec.configPatches.map((p: any) => ({
                              ...p,
                              match: { ...p.match, listener: { ...p.match.listener, portNumber: 9090 } },
                          })),
                      },
                  }
                : o,
        );
        expect(() => gatewayModel(objs)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods on port 8080");
    });

    it("only EnvoyFilters selecting the gateway's pods act on it; the local bucket of a sidecar does not", () => {
        const local = envoyFilterObj(
            "filter-local-ratelimit-svc",
            [
                {
                    applyTo: "HTTP_FILTER",
                    match: { context: "SIDECAR_INBOUND", listener: {} },
                    patch: { operation: "INSERT_BEFORE", value: { name: "envoy.filters.http.local_ratelimit" } },
                },
            ],
            { app: "productpage" },
        );
        const otherPods = envoyFilterObj("other-pods", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "x" } }] }])], { app: "productpage" });
        // Every label of the selector must be on the gateway's pods, not just one.
        const moreLabels = envoyFilterObj("more-labels", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "w" } }] }])], {
            istio: "ingressgateway",
            app: "productpage",
        });
        const sidecar = envoyFilterObj("sidecar-ctx", [
            vhostPatch([{ actions: [{ generic_key: { descriptor_value: "y" } }] }], "", undefined, "SIDECAR_INBOUND"),
        ]);
        expect(gatewayModel(bookinfoObjects([local, otherPods, moreLabels, sidecar]))).to.deep.equal(gatewayModel(bookinfoObjects()));
        // Without a workloadSelector the filter applies to every workload, the gateway included.
        const everyone = envoyFilterObj("everyone", [vhostPatch([{ actions: [{ generic_key: { descriptor_value: "z" } }] }])], undefined);
        const m = gatewayModel(bookinfoObjects([everyone]));
        expect(m.vhostRateLimits.map((v) => v.envoyFilter)).to.deep.equal(["filter-ratelimit-svc", "everyone"]);
        expect(m.filterNames).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc", "filter-ratelimit-svc-api", "everyone"]);
    });

    it("a patch without a context, or with context ANY, applies to gateways too (Istio's default is ANY)", () => {
        const objs = bookinfoObjects();
        objs[2] = envoyFilterObj("filter-ratelimit", [globalFilterPatch("ratelimit", true, null)]);
        objs[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", undefined, "ANY")]);
        expect(gatewayModel(objs)).to.deep.equal(gatewayModel(bookinfoObjects()));
    });

    it('virtual-host patches land on `*:<port>`, `""` or no vhost name; another name is ignored', () => {
        const named = bookinfoObjects();
        named[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "*:8080")]);
        expect(gatewayModel(named).vhostRateLimits).to.deep.equal([{ rateLimits: [{ actions: [celUrlPath()] }], envoyFilter: "filter-ratelimit-svc" }]);
        const anyVhost = bookinfoObjects();
        anyVhost[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], undefined)]);
        expect(gatewayModel(anyVhost).vhostRateLimits).to.have.length(1);
        const wrong = bookinfoObjects();
        wrong[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "*:80")]);
        const m = gatewayModel(wrong);
        expect(m.vhostRateLimits).to.deep.equal([]);
        expect(m.filterNames).to.deep.equal(["filter-ratelimit", "filter-ratelimit-svc-api"]);
        expect(explainWith(m, "/productpage").descriptors).to.deep.equal([]);
    });

    it("route patches land on the VirtualService route of that name; two patches add up; a patch without a name is refused", () => {
        const objs = bookinfoObjects([
            envoyFilterObj("second-api", [routePatch("api", [{ actions: [{ generic_key: { descriptor_key: "K", descriptor_value: "v" } }] }])]),
        ]);
        const api = gatewayModel(objs).routes[1];
        expect(api.rateLimits).to.deep.equal([{ actions: [apiMatch()] }, { actions: [{ generic_key: { descriptor_key: "K", descriptor_value: "v" } }] }]);
        expect(api.envoyFilter).to.equal("filter-ratelimit-svc-api, second-api");
        expect(api.vhRateLimits).to.equal("INCLUDE");
        // A patch naming a route the VirtualService does not have changes nothing (but names its filter).
        const ghost = gatewayModel(bookinfoObjects([envoyFilterObj("ghost", [routePatch("ghost", [{ actions: [] }])])]));
        expect(ghost.routes).to.deep.equal(gatewayModel(bookinfoObjects()).routes);
        // A patch on another virtual host does not land.
        const elsewhere = gatewayModel(bookinfoObjects([envoyFilterObj("elsewhere", [routePatch("api", [{ actions: [] }], "IGNORE", "other:8080")])]));
        expect(elsewhere.routes[1].vhRateLimits).to.equal("INCLUDE");
        expect(elsewhere.filterNames).to.not.include("elsewhere");
        // Neither rate_limits nor a mode: nothing to model, even without a route name.
        expect(gatewayModel(bookinfoObjects([envoyFilterObj("empty", [routePatch(undefined, undefined)])])).filterNames).to.not.include("empty");
        expect(() => gatewayModel(bookinfoObjects([envoyFilterObj("unnamed", [routePatch(undefined, [{ actions: [] }])])]))).to.throw(
            "EnvoyFilter unnamed: a route patch without route name is not modelled",
        );
        // One filter with several patches is named once.
        const both = envoyFilterObj("both", [vhostPatch([{ actions: [] }]), routePatch("api", [{ actions: [] }]), routePatch("api", [{ actions: [] }])]);
        expect(gatewayModel(bookinfoObjects([both])).filterNames).to.deep.equal([
            "filter-ratelimit",
            "filter-ratelimit-svc",
            "filter-ratelimit-svc-api",
            "both",
        ]);
    });

    it("vh_rate_limits on a route: a name, its enum number, or absent (OVERRIDE); anything else is refused", () => {
        const mode = (m: VhRateLimits | number | null) => gatewayModel(bookinfoObjects([], { apiMode: m as any })).routes[1].vhRateLimits;
        expect(mode("INCLUDE")).to.equal("INCLUDE");
        expect(mode("IGNORE")).to.equal("IGNORE");
        expect(mode("OVERRIDE")).to.equal("OVERRIDE");
        expect(mode(0)).to.equal("OVERRIDE");
        expect(mode(1)).to.equal("INCLUDE");
        expect(mode(2)).to.equal("IGNORE");
        expect(mode(null)).to.equal("OVERRIDE");
        expect(() => mode("INCLUDE_ALL" as any)).to.throw('vh_rate_limits "INCLUDE_ALL" is not modelled');
        expect(() => mode(3)).to.throw("vh_rate_limits 3 is not modelled");
        // A per-route config without vh_rate_limits is OVERRIDE; one for another filter is no mode at all.
        const noField = bookinfoObjects();
        noField[4] = envoyFilterObj("filter-ratelimit-svc-api", [
            {
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "*:8080", route: { name: "api" } } } },
                patch: { operation: "MERGE", value: { typed_per_filter_config: { [RL]: { "@type": PER_ROUTE_TYPE } } } },
            },
        ]);
        expect(gatewayModel(noField).routes[1]).to.deep.include({ vhRateLimits: "OVERRIDE", rateLimits: [], envoyFilter: "filter-ratelimit-svc-api" });
        const otherFilter = bookinfoObjects();
        otherFilter[4] = envoyFilterObj("filter-ratelimit-svc-api", [
            {
                applyTo: "HTTP_ROUTE",
                match: { context: "GATEWAY", routeConfiguration: { vhost: { name: "*:8080", route: { name: "api" } } } },
                patch: { operation: "MERGE", value: { typed_per_filter_config: { "envoy.filters.http.local_ratelimit": {} } } },
            },
        ]);
        expect(gatewayModel(otherFilter).routes[1]).to.deep.equal({
            name: "api",
            index: 1,
            matches: [{ kind: "prefix", value: "/api/v1/products" }],
            rateLimits: [],
            vhRateLimits: "OVERRIDE",
        });
    });

    it("vh_rate_limits on the virtual host applies to every route that has no mode of its own", () => {
        // Envoy resolves RateLimitPerRoute most-specific first: the route's, else the virtual host's.
        const objs = bookinfoObjects([], { apiMode: null });
        objs[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", "INCLUDE")]);
        const m = gatewayModel(objs);
        expect(m.routes.map((r) => r.vhRateLimits)).to.deep.equal(["INCLUDE", "INCLUDE"]);
        expect(entries(explainWith(m, "/api/v1/products/100"))).to.deep.equal([[{ key: "PATH", value: "/api/v1/products/100" }]]);
        // The route's own mode wins over the virtual host's.
        const own = bookinfoObjects([], { apiMode: "OVERRIDE" });
        own[3] = envoyFilterObj("filter-ratelimit-svc", [vhostPatch([{ actions: [celUrlPath()] }], "", "IGNORE")]);
        expect(gatewayModel(own).routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "OVERRIDE"]);
        // A mode-only virtual-host patch (no rate_limits) is not a rate_limits source.
        const modeOnly = bookinfoObjects([envoyFilterObj("mode-only", [vhostPatch(undefined, "", "IGNORE")])], { apiMode: null });
        const mo = gatewayModel(modeOnly);
        expect(mo.vhostRateLimits.map((v) => v.envoyFilter)).to.deep.equal(["filter-ratelimit-svc"]);
        expect(mo.filterNames).to.not.include("mode-only");
        expect(mo.routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "IGNORE"]);
    });

    it("the rate-limit filter: its domain and failure_mode_deny (default false); one domain only; required", () => {
        const open = bookinfoObjects();
        open[2] = envoyFilterObj("filter-ratelimit", [globalFilterPatch("shop", null)]);
        open[5] = configMapObj(BOOKINFO_CONFIG_YAML.replace("domain: ratelimit", "domain: shop"));
        const m = gatewayModel(open);
        expect([m.domain, m.failureModeDeny, m.config.domain]).to.deep.equal(["shop", false, "shop"]);
        const camel = bookinfoObjects();
        camel[2] = envoyFilterObj("filter-ratelimit", [
            {
                apply_to: "HTTP_FILTER",
                match: { context: "GATEWAY" },
                patch: { value: { name: RL, typedConfig: { domain: "ratelimit", failureModeDeny: true } } },
            },
        ]);
        expect([gatewayModel(camel).domain, gatewayModel(camel).failureModeDeny]).to.deep.equal(["ratelimit", true]);
        expect(gatewayModel(bookinfoObjects([envoyFilterObj("again", [globalFilterPatch("ratelimit", false)])])).filterNames).to.deep.equal([
            "filter-ratelimit",
            "filter-ratelimit-svc",
            "filter-ratelimit-svc-api",
            "again",
        ]);
        expect(() => gatewayModel(bookinfoObjects([envoyFilterObj("second", [globalFilterPatch("other")])]))).to.throw(
            "two ratelimit filters with different domains (ratelimit, other)",
        );
        const none = bookinfoObjects();
        none.splice(2, 1);
        expect(() => gatewayModel(none)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods");
        // Another HTTP filter is not the rate-limit filter.
        const local = bookinfoObjects();
        local[2] = envoyFilterObj("filter-ratelimit", [
            {
                applyTo: "HTTP_FILTER",
                match: { context: "GATEWAY" },
                patch: { value: { name: "envoy.filters.http.local_ratelimit", typed_config: { domain: "x" } } },
            },
        ]);
        expect(() => gatewayModel(local)).to.throw(/no EnvoyFilter inserts/);
        // The rate-limit filter without a typed_config has no domain.
        const untyped = bookinfoObjects();
        untyped[2] = envoyFilterObj("filter-ratelimit", [{ applyTo: "HTTP_FILTER", match: { context: "GATEWAY" }, patch: { value: { name: RL } } }]);
        expect(() => gatewayModel(untyped)).to.throw("no EnvoyFilter inserts envoy.filters.http.ratelimit into Gateway bookinfo-gateway's pods");
    });

    it("the ConfigMap: the one whose config.yaml has a domain; none is an error; no descriptors is an empty list", () => {
        const objs = bookinfoObjects([
            configMapObj("not: ratelimit\n", "aaa"),
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bbb" }, data: { other: "domain: x" } },
        ]);
        objs.unshift(objs.pop()!, objs.pop()!);
        expect(gatewayModel(objs).config).to.deep.equal(bookinfoConfig());
        const bare = bookinfoObjects();
        bare[5] = configMapObj("domain: ratelimit\n");
        expect(gatewayModel(bare).config).to.deep.equal({ domain: "ratelimit", descriptors: [] });
        const indented = bookinfoObjects();
        indented[5] = configMapObj("x: 1\ndomain: ratelimit\ndescriptors: []\n");
        expect(gatewayModel(indented).config).to.deep.equal({ domain: "ratelimit", descriptors: [] });
        const missing = bookinfoObjects();
        missing[5] = configMapObj("  domain: nested\n");
        expect(() => gatewayModel(missing)).to.throw("no rate-limit ConfigMap (data['config.yaml'] with a domain) in the rendered objects");
    });
});

describe("the gateway model (gateway-model/explain.ts): gatewayModelFromEnvoy, reading Istio's generated routes", () => {
    const rc = (routes: any[], vh: Record<string, unknown> = {}) => ({
        name: "http.8080",
        virtualHosts: [
            { name: "other:8080", routes: [] },
            { name: "*:8080", domains: ["*"], routes, ...vh },
        ],
    });
    const read = (config: any, vhost = "*:8080") => gatewayModelFromEnvoy(config, vhost, { domain: "ratelimit", failureModeDeny: false }, bookinfoObjects());

    it("route matches: path → exact, prefix → prefix, safe_regex → regex; rate_limits and modes per route", () => {
        const m = read(
            rc(
                [
                    { match: { path: "/productpage", caseSensitive: true }, route: {} },
                    { name: "static", match: { prefix: "/static" }, route: {} },
                    {
                        name: "api",
                        match: { safe_regex: { regex: "/api/.*" } },
                        route: { rate_limits: [{ actions: [apiMatch()] }] },
                        typed_per_filter_config: { [RL]: { vh_rate_limits: "INCLUDE" } },
                    },
                    {
                        name: "camel",
                        match: { safeRegex: { regex: "/c" } },
                        route: { rateLimits: [{ actions: [] }] },
                        typedPerFilterConfig: { [RL]: { vhRateLimits: 2 } },
                    },
                ],
                { rateLimits: [{ actions: [celUrlPath()] }] },
            ),
        );
        expect(m).to.deep.equal({
            source: "Istio-generated route configuration",
            gateway: { name: "bookinfo-gateway", port: 8080, selector: SELECTOR },
            virtualHost: "*:8080",
            routes: [
                {
                    name: undefined,
                    index: 0,
                    matches: [{ kind: "exact", value: "/productpage" }],
                    rateLimits: [],
                    vhRateLimits: "OVERRIDE",
                    envoyFilter: "(generated)",
                },
                {
                    name: "static",
                    index: 1,
                    matches: [{ kind: "prefix", value: "/static" }],
                    rateLimits: [],
                    vhRateLimits: "OVERRIDE",
                    envoyFilter: "(generated)",
                },
                {
                    name: "api",
                    index: 2,
                    matches: [{ kind: "regex", value: "/api/.*" }],
                    rateLimits: [{ actions: [apiMatch()] }],
                    anyRateLimits: true,
                    vhRateLimits: "INCLUDE",
                    envoyFilter: "(generated)",
                },
                {
                    name: "camel",
                    index: 3,
                    matches: [{ kind: "regex", value: "/c" }],
                    rateLimits: [{ actions: [] }],
                    anyRateLimits: true,
                    vhRateLimits: "IGNORE",
                    envoyFilter: "(generated)",
                },
            ],
            domain: "ratelimit",
            failureModeDeny: false,
            filterNames: [],
            vhostRateLimits: [{ rateLimits: [{ actions: [celUrlPath()] }], envoyFilter: "(generated)" }],
            stage: 0,
            httpFilterName: "envoy.filters.http.ratelimit",
            config: bookinfoConfig(),
        });
    });

    it("the virtual host's vh_rate_limits is every route's default; no virtual-host rate_limits is an empty list", () => {
        const m = read(
            rc(
                [
                    { match: { prefix: "/" }, route: {} },
                    { match: { prefix: "/x" }, route: {}, typedPerFilterConfig: { [RL]: { vhRateLimits: "OVERRIDE" } } },
                ],
                { typed_per_filter_config: { [RL]: { vh_rate_limits: "IGNORE" } } },
            ),
        );
        expect(m.routes.map((r) => r.vhRateLimits)).to.deep.equal(["IGNORE", "OVERRIDE"]);
        expect(m.vhostRateLimits).to.deep.equal([]);
        expect(read({ name: "n", virtual_hosts: [{ name: "*:8080" }] }).routes).to.deep.equal([]);
    });

    it("refuses what it does not model, and a virtual host that is not there", () => {
        expect(() => read(rc([]), "*:9090")).to.throw("route configuration http.8080 has no virtual host *:9090");
        expect(() => read({}, "*:8080")).to.throw("route configuration undefined has no virtual host *:8080");
        expect(() => read(rc([{ match: { prefix: "/", headers: [] }, route: {} }]))).to.throw("Envoy route match fields headers are not modelled");
        expect(() => read(rc([{ match: { prefix: "/", case_sensitive: false }, route: {} }]))).to.throw("case-insensitive route matches are not modelled");
        expect(() => read(rc([{ match: { pathSeparatedPrefix: "/static" }, route: {} }]))).to.throw(
            'Envoy route match {"pathSeparatedPrefix":"/static"} is not modelled',
        );
        expect(() => read(rc([{ match: { path_separated_prefix: "/static" }, route: {} }]))).to.throw(
            'Envoy route match {"path_separated_prefix":"/static"} is not modelled',
        );
        expect(() => read(rc([{ route: {} }]))).to.throw("Envoy route match {} is not modelled");
    });

    it("explains the same as the model read from the rendered objects (variant A)", () => {
        const fromEnvoy = read(
            rc(
                [
                    ...["/productpage", "/login", "/logout"].map((p) => ({ match: { path: p, caseSensitive: true }, route: {} })),
                    { match: { prefix: "/static", caseSensitive: true }, route: {} },
                    {
                        name: "api",
                        match: { prefix: "/api/v1/products", caseSensitive: true },
                        route: { rateLimits: [{ actions: [apiMatch()] }] },
                        typedPerFilterConfig: { [RL]: { vhRateLimits: "INCLUDE" } },
                    },
                ],
                { rateLimits: [{ actions: [celUrlPath()] }] },
            ),
        );
        const fromObjects = gatewayModel(bookinfoObjects());
        for (const p of ["/productpage?x=1", "/login", "/static/a.css", "/api/v1/products/7?q", "/api/v1/products/100", "/nope"]) {
            const a = explainWith(fromObjects, p);
            const b = explainWith(fromEnvoy, p);
            expect([b.route?.name, b.descriptors], p).to.deep.equal([a.route?.name, a.descriptors]);
        }
    });
});

describe("the gateway model (gateway-model/explain.ts): checks a mutation run showed untested (docs/mutation.md)", () => {
    it("an exact route compares text, not a regex: '/v1.0' does not match '/v1x0'", () => {
        const m = { routes: [route("exact", 0, [{ kind: "exact", value: "/v1.0" }])] } as unknown as GatewayModel;
        expect(selectRoute(m, "/v1x0")).to.equal(undefined);
        expect(selectRoute(m, "/v1.0")?.route.name).to.equal("exact");
    });

    it("a prefix* wildcard of another key never matches an entry", () => {
        const config = {
            domain: "d",
            descriptors: [
                { key: "OTHER", value: "/api*", rate_limit: { unit: "hour", requests_per_unit: 1 } },
                { key: "PATH", rate_limit: { unit: "minute", requests_per_unit: 7 } },
            ],
        };
        const x = lookupLimit(config, "d", [{ key: "PATH", value: "/api/x" }]);
        expect(x.limit?.entry).to.equal("PATH (catch-all)");
        expect(x.limit?.requestsPerUnit).to.equal(7);
    });
});
