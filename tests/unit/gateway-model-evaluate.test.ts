/**
 * The gateway MODEL, one request through it (gateway-model/evaluate.ts), function by function, with exact expectations.
 *
 * Every expectation is reasoned from how the real components behave (docs/proof/upstream.md, docs/proof/rls.md
 * and the functions' doc comments): Envoy's path normalization (Istio's default `BASE`, RFC 3986),
 * route matching (`path`/`safe_regex` without the query, `prefix` on the whole `:path`), the
 * rate-limit actions and header matchers (route_components.proto), `vh_rate_limits`, and the
 * lookup and counter keys of envoyproxy/ratelimit. Inputs are small hand-written objects, built
 * inside each test (no results computed while the file loads, so per-test coverage sees them).
 */
import { expect } from "chai";
import { descriptorFor, fullMatch, lookupLimit, normalizePath, selectRoute, urlPath } from "../../gateway-model/evaluate";
import { GatewayModel } from "../../gateway-model/model";
import { bookinfoModel, celUrlPath, literalPath, route } from "./gateway-model-fixtures";

// ---------------------------------------------------------------------------------------------

describe("the gateway model: normalizePath, Envoy's RFC 3986 normalization (Istio BASE)", () => {
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

describe("the gateway model: urlPath, CEL's request.url_path", () => {
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

describe("the gateway model: fullMatch, RE2 full match as Envoy's safe_regex", () => {
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

describe("the gateway model: selectRoute, Envoy's route matching", () => {
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

describe("the gateway model: descriptorFor, one rate_limits entry → one descriptor", () => {
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

describe("the gateway model: descriptorFor, header_value_match and its header matchers", () => {
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

describe("the gateway model: lookupLimit, envoyproxy/ratelimit's config lookup", () => {
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
    /** No limit answers the descriptor: no limit, no counter (whatever else the explanation carries). */
    const expectNoLimit = (x: ReturnType<typeof lookupLimit>, what?: string) => {
        expect(x.limit, what).to.equal(undefined);
        expect(x.bucket, what).to.equal(undefined);
    };

    it("key and value: that entry's limit; the counter key is <domain>_<key>_<value>_<window>", () => {
        const entries = e(["PATH", "/productpage"]);
        const x = lookupLimit(config(), "d", entries);
        expect(x.limit).to.deep.include({ entry: "PATH=/productpage", unit: "minute", requests: 1, unlimited: false, shadow: false });
        expect([x.entries, x.bucket]).to.deep.equal([entries, "d_PATH_/productpage_{window}"]);
    });

    it("the key's catch-all answers any other value, and counts each value apart", () => {
        const a = lookupLimit(config(), "d", e(["PATH", "/login"]));
        const b = lookupLimit(config(), "d", e(["PATH", "/login?x=1"]));
        expect(a.limit).to.deep.include({ entry: "PATH (catch-all)", unit: "minute", requests: 100, unlimited: false, shadow: false });
        expect(a.bucket).to.equal("d_PATH_/login_{window}");
        expect(b.limit?.entry).to.equal("PATH (catch-all)");
        expect(b.bucket).to.equal("d_PATH_/login?x=1_{window}");
    });

    it("a value ending in `*` matches by prefix, after an exact value and before the catch-all; each value counts apart", () => {
        const w = lookupLimit(config(), "d", e(["PATH", "/api/v1/products/7"]));
        expect(w.limit).to.deep.include({ entry: "PATH=/api/*", unit: "hour", requests: 50, unlimited: false, shadow: false });
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
        const x = lookupLimit(config(), "d", entries);
        expect(x.limit).to.deep.include({ entry: "rule=login / remote_address (catch-all)", unit: "second", requests: 5, unlimited: false, shadow: false });
        expect([x.entries, x.bucket]).to.deep.equal([entries, "d_rule_login_remote_address_192.0.2.1_{window}"]);
    });

    it("no limit when the request stops above the level that has one, or goes deeper than the config", () => {
        expectNoLimit(lookupLimit(config(), "d", e(["rule", "login"])));
        expectNoLimit(lookupLimit(config(), "d", e(["PATH", "/productpage"], ["x", "y"])));
        // A leaf has no level below it, even for a key that exists at the top.
        expectNoLimit(lookupLimit(config(), "d", e(["PATH", "/productpage"], ["PATH", "/login"])));
        expectNoLimit(lookupLimit(config(), "d", e(["rule", "login"], ["other", "1"])));
        expectNoLimit(lookupLimit(config(), "d", e(["rule", "bare"])));
    });

    it("no limit for an unknown key, an unknown value without catch-all, a key of another case, or no entries", () => {
        for (const entries of [e(["OTHER", "x"]), e(["rule", "unknown"]), e(["path", "/productpage"]), []]) {
            expectNoLimit(lookupLimit(config(), "d", entries), JSON.stringify(entries));
        }
    });

    it("a domain the config does not have is answered OK: no limit at all", () => {
        const entries = e(["PATH", "/productpage"]);
        expectNoLimit(lookupLimit(config(), "other", entries));
        expectNoLimit(lookupLimit(config(), "D", entries));
    });

    it("shadow_mode and unlimited are reported; the unit is read case-insensitively", () => {
        expect(lookupLimit(config(), "d", e(["rule", "beta"])).limit).to.deep.include({
            entry: "rule=beta",
            unit: "minute",
            requests: 3,
            unlimited: false,
            shadow: true,
        });
        const free = lookupLimit(config(), "d", e(["rule", "free"]));
        expect(free.limit).to.deep.include({ entry: "rule=free", unit: "", requests: 0, unlimited: true, shadow: false });
        expect(free.bucket).to.equal("d_rule_free_{window}");
    });
});
