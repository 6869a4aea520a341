package xdscheck

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// Request-level checks of the shop's gateway: concrete requests are run through the GENERATED
// route configuration (route choice, the route's and the virtual host's rate_limits as
// vh_rate_limits combines them, every action with Envoy's semantics; regexes with Go's regexp,
// which is RE2, as a full match like Envoy's safe_regex). The action-string checks in
// user_gateway_test.go say which regex was generated; these say what it does: a regex that is
// written differently but means the same passes, one that means something else fails and names
// the request it gets wrong.
//
// The expected descriptors below are written from the rules in tests/istio/render-user.ts
// (USER_RULES and the VirtualService's routes), never read from the render.

// userRequest is one request at the shop's gateway: `:path` as the client sends it (query
// included), other headers by lower-case name, and the client address Envoy trusts.
type userRequest struct {
	path    string
	headers map[string]string
	addr    string
}

func (r userRequest) String() string {
	var hs []string
	for k, v := range r.headers {
		hs = append(hs, k+": "+v)
	}
	sort.Strings(hs)
	s := r.path
	if len(hs) > 0 {
		s += " {" + strings.Join(hs, ", ") + "}"
	}
	return s + " from " + r.addr
}

func (r userRequest) header(name string) (string, bool) {
	if name == ":path" {
		return r.path, true
	}
	v, ok := r.headers[strings.ToLower(name)]
	return v, ok
}

// pathWithoutQuery: what Envoy's `path` and `safe_regex` route matchers compare.
func (r userRequest) pathWithoutQuery() string {
	if i := strings.IndexByte(r.path, '?'); i >= 0 {
		return r.path[:i]
	}
	return r.path
}

var re2Cache = map[string]*regexp.Regexp{}

// byteLength: the one RE2 form Go's regexp lacks, `\C{n}\C*` (RE2's \C is one byte even in
// UTF-8 mode: a value of at least n bytes), which the per-value rules use for their length bound.
var byteLength = regexp.MustCompile(`^\\C\{([0-9]+)\}\\C\*$`)

// re2FullMatch: Envoy's safe_regex (google_re2) matches the whole value.
func re2FullMatch(re, s string) (bool, error) {
	if m := byteLength.FindStringSubmatch(re); m != nil {
		n, _ := strconv.Atoi(m[1])
		return len(s) >= n, nil
	}
	c, ok := re2Cache[re]
	if !ok {
		var err error
		if c, err = regexp.Compile(`^(?:` + re + `)$`); err != nil {
			return false, fmt.Errorf("regex %q does not compile as RE2: %v", re, err)
		}
		re2Cache[re] = c
	}
	return c.MatchString(s), nil
}

func userStringMatch(m *matcherv3.StringMatcher, v string) (bool, error) {
	fold := func(s string) string {
		if m.GetIgnoreCase() {
			return strings.ToLower(s)
		}
		return s
	}
	switch x := m.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		return fold(v) == fold(x.Exact), nil
	case *matcherv3.StringMatcher_Prefix:
		return strings.HasPrefix(fold(v), fold(x.Prefix)), nil
	case *matcherv3.StringMatcher_Suffix:
		return strings.HasSuffix(fold(v), fold(x.Suffix)), nil
	case *matcherv3.StringMatcher_Contains:
		return strings.Contains(fold(v), fold(x.Contains)), nil
	case *matcherv3.StringMatcher_SafeRegex: // ignore_case does not apply to safe_regex
		return re2FullMatch(x.SafeRegex.GetRegex(), v)
	}
	return false, fmt.Errorf("string matcher %s is not evaluated by this check", jsonOf(m))
}

// headerMatches follows Envoy's HeaderMatcher: a missing header matches only a presence test
// (present_match false, or present_match true inverted), never an inverted value matcher.
func headerMatches(h *routev3.HeaderMatcher, r userRequest) (bool, error) {
	v, present := r.header(h.GetName())
	if !present && h.GetTreatMissingHeaderAsEmpty() {
		v, present = "", true
	}
	pm, isPresence := h.GetHeaderMatchSpecifier().(*routev3.HeaderMatcher_PresentMatch)
	if !present {
		return isPresence && pm.PresentMatch == h.GetInvertMatch(), nil
	}
	var m bool
	var err error
	switch x := h.GetHeaderMatchSpecifier().(type) {
	case *routev3.HeaderMatcher_PresentMatch:
		m = x.PresentMatch
	case nil:
		m = true
	case *routev3.HeaderMatcher_ExactMatch:
		m = v == x.ExactMatch
	case *routev3.HeaderMatcher_PrefixMatch:
		m = strings.HasPrefix(v, x.PrefixMatch)
	case *routev3.HeaderMatcher_SuffixMatch:
		m = strings.HasSuffix(v, x.SuffixMatch)
	case *routev3.HeaderMatcher_ContainsMatch:
		m = strings.Contains(v, x.ContainsMatch)
	case *routev3.HeaderMatcher_SafeRegexMatch:
		m, err = re2FullMatch(x.SafeRegexMatch.GetRegex(), v)
	case *routev3.HeaderMatcher_StringMatch:
		m, err = userStringMatch(x.StringMatch, v)
	default:
		return false, fmt.Errorf("header matcher %s is not evaluated by this check", jsonOf(h))
	}
	if err != nil {
		return false, err
	}
	return m != h.GetInvertMatch(), nil
}

// routeMatches: Envoy's RouteMatch. `prefix` compares the whole :path (query included); `path`,
// `safe_regex` and `path_separated_prefix` the path without its query.
func routeMatches(m *routev3.RouteMatch, r userRequest) (bool, error) {
	if len(m.GetQueryParameters()) > 0 || m.GetGrpc() != nil || m.GetTlsContext() != nil || len(m.GetDynamicMetadata()) > 0 {
		return false, fmt.Errorf("route match %s is not evaluated by this check", jsonOf(m))
	}
	cs := m.GetCaseSensitive() == nil || m.GetCaseSensitive().GetValue()
	fold := func(s string) string {
		if cs {
			return s
		}
		return strings.ToLower(s)
	}
	var ok bool
	switch x := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		ok = strings.HasPrefix(fold(r.path), fold(x.Prefix))
	case *routev3.RouteMatch_Path:
		ok = fold(r.pathWithoutQuery()) == fold(x.Path)
	case *routev3.RouteMatch_PathSeparatedPrefix:
		p := fold(r.pathWithoutQuery())
		ok = p == fold(x.PathSeparatedPrefix) || strings.HasPrefix(p, fold(x.PathSeparatedPrefix)+"/")
	case *routev3.RouteMatch_SafeRegex:
		var err error
		if ok, err = re2FullMatch(x.SafeRegex.GetRegex(), r.pathWithoutQuery()); err != nil {
			return false, err
		}
	default:
		return false, fmt.Errorf("route match %s is not evaluated by this check", jsonOf(m))
	}
	if !ok {
		return false, nil
	}
	for _, h := range m.GetHeaders() {
		hm, err := headerMatches(h, r)
		if err != nil || !hm {
			return false, err
		}
	}
	return true, nil
}

// descriptorOf evaluates one rate_limits entry: "key=value,key=value", or ok=false when an action
// yields nothing (Envoy then sends no descriptor for the entry).
func descriptorOf(rl *routev3.RateLimit, r userRequest) (string, bool, error) {
	var entries []string
	for _, a := range rl.GetActions() {
		switch {
		case a.GetGenericKey() != nil:
			k := a.GetGenericKey().GetDescriptorKey()
			if k == "" {
				k = "generic_key"
			}
			entries = append(entries, k+"="+a.GetGenericKey().GetDescriptorValue())
		case a.GetHeaderValueMatch() != nil:
			h := a.GetHeaderValueMatch()
			all := true
			for _, m := range h.GetHeaders() {
				ok, err := headerMatches(m, r)
				if err != nil {
					return "", false, err
				}
				all = all && ok
			}
			expect := h.GetExpectMatch() == nil || h.GetExpectMatch().GetValue()
			if all != expect {
				return "", false, nil
			}
			k := h.GetDescriptorKey()
			if k == "" {
				k = "header_match"
			}
			entries = append(entries, k+"="+h.GetDescriptorValue())
		case a.GetRequestHeaders() != nil:
			// Envoy's RateLimit.Action.RequestHeaders with the header absent (go-control-plane's
			// route_components.pb.go, SkipIfAbsent): false (default) "Envoy does NOT call the rate
			// limiting service for this descriptor" (the whole entry yields nothing); true "Envoy
			// calls the rate limiting service but omits this descriptor" (this action's entry is
			// left out, the other actions' entries are still sent). A present header, even empty,
			// gives its value.
			rh := a.GetRequestHeaders()
			v, ok := r.header(rh.GetHeaderName())
			if !ok {
				if rh.GetSkipIfAbsent() {
					continue
				}
				return "", false, nil
			}
			entries = append(entries, rh.GetDescriptorKey()+"="+v)
		case a.GetQueryParameters() != nil:
			// Envoy's RateLimit.Action.QueryParameters (envoyproxy/envoy#37875): the first value of
			// the parameter in the query as Envoy's parseAndDecodeQueryString reads it; absent, as
			// request_headers with skip_if_absent.
			qp := a.GetQueryParameters()
			v, ok := envoyFirstQueryValue(r.path, qp.GetQueryParameterName())
			if !ok {
				if qp.GetSkipIfAbsent() {
					continue
				}
				return "", false, nil
			}
			entries = append(entries, qp.GetDescriptorKey()+"="+v)
		case a.GetRemoteAddress() != nil:
			entries = append(entries, "remote_address="+r.addr)
		case a.GetMaskedRemoteAddress() != nil:
			// Envoy: the address with its host bits cleared at the family's length (32 and 128
			// when unset), printed as "<network>/<length>"; net/netip prints IPv6 compressed.
			m := a.GetMaskedRemoteAddress()
			addr, err := netip.ParseAddr(r.addr)
			if err != nil {
				return "", false, err
			}
			bits := 32
			if m.GetV4PrefixMaskLen() != nil {
				bits = int(m.GetV4PrefixMaskLen().GetValue())
			}
			if addr.Is6() {
				bits = 128
				if m.GetV6PrefixMaskLen() != nil {
					bits = int(m.GetV6PrefixMaskLen().GetValue())
				}
			}
			prefix, err := addr.Prefix(bits)
			if err != nil {
				return "", false, err
			}
			entries = append(entries, "masked_remote_address="+prefix.String())
		default:
			return "", false, fmt.Errorf("action %s is not evaluated by this check", jsonOf(a))
		}
	}
	if len(entries) == 0 {
		return "", false, nil
	}
	return strings.Join(entries, ","), true, nil
}

// envoyPercentDecode: Envoy's PercentEncoding::decode, written here from its tests
// (test/common/http/utility_test.cc): "%" and two hex digits become that byte, anything else
// (a broken escape, "+") stays as written.
func envoyPercentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// envoyFirstQueryValue: Envoy's QueryParamsMulti::parseAndDecodeQueryString then getFirstValue:
// the query after the first "?" split on "&" only, each part at its first "=" (none: the empty
// value), name and value percent-decoded; the first part whose name is exactly name.
func envoyFirstQueryValue(path, name string) (string, bool) {
	q := strings.IndexByte(path, '?')
	if q < 0 {
		return "", false
	}
	for _, part := range strings.Split(path[q+1:], "&") {
		n, v, hasValue := strings.Cut(part, "=")
		if envoyPercentDecode(n) != name {
			continue
		}
		if !hasValue {
			return "", true
		}
		return envoyPercentDecode(v), true
	}
	return "", false
}

// vhMode: vh_rate_limits of the rate-limit filter's per-route config, most specific first (the
// route's, else the virtual host's); OVERRIDE when neither sets it (Envoy's default).
func vhMode(vh *routev3.VirtualHost, rt *routev3.Route) (rlv3.RateLimitPerRoute_VhRateLimitsOptions, error) {
	for _, cfgs := range []map[string]*anypb.Any{rt.GetTypedPerFilterConfig(), vh.GetTypedPerFilterConfig()} {
		if a, ok := cfgs[FilterRateLimit]; ok {
			pr := &rlv3.RateLimitPerRoute{}
			if err := a.UnmarshalTo(pr); err != nil {
				return 0, fmt.Errorf("typed_per_filter_config[%s] is not a RateLimitPerRoute: %v", FilterRateLimit, err)
			}
			return pr.GetVhRateLimits(), nil
		}
	}
	return rlv3.RateLimitPerRoute_OVERRIDE, nil
}

// userDescriptors: the route Envoy picks for the request and the descriptors its rate-limit
// filter (stage 0) sends, sorted. route "" means no route matched (Envoy answers 404, nothing sent).
func userDescriptors(vh *routev3.VirtualHost, r userRequest) (string, []string, error) {
	var rt *routev3.Route
	for _, c := range vh.GetRoutes() {
		ok, err := routeMatches(c.GetMatch(), r)
		if err != nil {
			return "", nil, fmt.Errorf("route %s: %v", c.GetName(), err)
		}
		if ok {
			rt = c
			break
		}
	}
	if rt == nil {
		return "", nil, nil
	}
	mode, err := vhMode(vh, rt)
	if err != nil {
		return rt.GetName(), nil, err
	}
	own := rt.GetRoute().GetRateLimits()
	entries := append([]*routev3.RateLimit{}, own...)
	switch {
	case mode == rlv3.RateLimitPerRoute_INCLUDE,
		mode == rlv3.RateLimitPerRoute_OVERRIDE && (len(own) == 0 || rt.GetRoute().GetIncludeVhRateLimits().GetValue()):
		entries = append(entries, vh.GetRateLimits()...)
	}
	out := []string{}
	for _, rl := range entries {
		if rl.GetStage().GetValue() != 0 {
			continue
		}
		d, ok, err := descriptorOf(rl, r)
		if err != nil {
			return rt.GetName(), nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return rt.GetName(), out, nil
}

// userRequestCase: a request and what the rules of render-user.ts say Envoy must send for it.
type userRequestCase struct {
	req   userRequest
	route string
	want  []string
}

const (
	clientA = "192.0.2.10"
	clientB = "198.51.100.20"
)

// clientKey: the client's entry of the per-client counters, its address at the rules' default
// prefix (/32 for IPv4, /64 for IPv6), written with net/netip apart from Envoy's printing.
func clientKey(addr string) string {
	a := netip.MustParseAddr(addr)
	bits := 32
	if a.Is6() {
		bits = 64
	}
	return "masked_remote_address=" + netip.PrefixFrom(a, bits).Masked().String()
}

// Descriptors of the rules of render-user.ts, as Envoy sends them.
func perClient(addr string) string      { return "rule=per-client," + clientKey(addr) }
func loginPerClient(addr string) string { return "rule=login-per-client," + clientKey(addr) }
func perAPIKey(key string) string       { return "rule=per-api-key,x-api-key=" + key }

// apiMissing, apiGuard: per-api-key's fallback counters, each the client's own.
func apiMissing(addr string) string {
	return "rule=per-api-key,missing_value=shared," + clientKey(addr)
}
func apiGuard(addr string) string {
	return "rule=per-api-key,untrusted_value=shared," + clientKey(addr)
}

// perAPIKeyOf: per-api-key has no condition and whenMissing defaults to SharedCounter, so every
// request sends it: its own x-api-key's counter, or, without the header, the client's missing counter.
func perAPIKeyOf(r userRequest) string {
	if k, ok := r.headers["x-api-key"]; ok {
		return perAPIKey(k)
	}
	return apiMissing(r.addr)
}

const (
	searchRule   = "rule=search"
	hasTokenRule = "rule=has-token"
	checkoutRule = "rule=checkout"
)

func req(path string, addr string, headers ...string) userRequest {
	hs := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		hs[headers[i]] = headers[i+1]
	}
	return userRequest{path: path, headers: hs, addr: addr}
}

// userRequestTable: per rule of render-user.ts, the requests that must and must not count against
// it. Every request also carries the two rules without a condition: per-client (per address) and
// per-api-key (per x-api-key, or the shared counter without it: perAPIKeyOf); per-api-key's own
// table spells every descriptor out instead. The VirtualService routes /checkout (prefix) to route
// checkout and everything else to web.
func userRequestTable() map[string][]userRequestCase {
	web := func(r userRequest, extra ...string) userRequestCase {
		return userRequestCase{req: r, route: "web", want: append([]string{perClient(r.addr), perAPIKeyOf(r)}, extra...)}
	}
	checkout := func(r userRequest, extra ...string) userRequestCase {
		return userRequestCase{req: r, route: "checkout", want: append([]string{checkoutRule, perClient(r.addr), perAPIKeyOf(r)}, extra...)}
	}
	exactly := func(route string, r userRequest, want ...string) userRequestCase {
		return userRequestCase{req: r, route: route, want: want}
	}
	partners := func(r userRequest, extra ...string) userRequestCase {
		return userRequestCase{req: r, route: "partners", want: append([]string{perClient(r.addr), perAPIKeyOf(r)}, extra...)}
	}
	return map[string][]userRequestCase{
		// prefix /search: /search, /search/..., /search?... whatever the query; not /searchx,
		// not the prefix further in the path or in the query.
		"requests-search": {
			web(req("/search", clientA), searchRule),
			web(req("/search/x", clientA), searchRule),
			web(req("/search?q=1", clientA), searchRule),
			web(req("/search?", clientA), searchRule),
			web(req("/search/", clientA), searchRule),
			web(req("/search/a/b?q=/x&y=%2F", clientA), searchRule),
			web(req("/search?q="+strings.Repeat("a", 3000), clientA), searchRule),
			web(req("/x/search", clientA)),
			web(req("/x/search/y", clientA)),
			web(req("/searchx", clientA)),
			web(req("/search-results", clientA)),
			web(req("/searches?q=1", clientA)),
			web(req("/sear", clientA)),
			web(req("/x?next=/search", clientA)),
			web(req("/?q=/search/x", clientA)),
			web(req("/", clientA)),
		},
		// exact /login per client: /login with any query and in every spelling a backend routes to
		// the same handler (path_spellings_test.go has them all), each address its own counter; not
		// anything longer or shorter.
		"requests-login-per-client": {
			web(req("/login", clientA), loginPerClient(clientA)),
			web(req("/login", clientB), loginPerClient(clientB)),
			web(req("/login?next=/x", clientA), loginPerClient(clientA)),
			web(req("/login?", clientA), loginPerClient(clientA)),
			web(req("/login/", clientA), loginPerClient(clientA)),
			web(req("/LOGIN", clientA), loginPerClient(clientA)),
			web(req("/login;jsessionid=x", clientA), loginPerClient(clientA)),
			web(req("/login/x", clientA)),
			web(req("/loginx", clientA)),
			web(req("/logi", clientA)),
			web(req("/x/login", clientA)),
			web(req("/x?r=/login", clientA)),
		},
		// x-api-key per value: its own counter per key, whatever the client; without the header the
		// client's missing counter, never nothing; a value with a comma (a repeated header), a control
		// character, over 256 bytes, or beside an underscored spelling of the name (x_api_key) the
		// client's untrusted-value counter.
		"requests-per-api-key": {
			exactly("web", req("/items", clientA, "x-api-key", "k1"), perClient(clientA), "rule=per-api-key,x-api-key=k1"),
			exactly("web", req("/items", clientB, "x-api-key", "k1"), perClient(clientB), "rule=per-api-key,x-api-key=k1"),
			exactly("web", req("/items?page=2", clientA, "x-api-key", "k2"), perClient(clientA), "rule=per-api-key,x-api-key=k2"),
			exactly("web", req("/items", clientA, "x-api-key", "caf\u00e9"), perClient(clientA), "rule=per-api-key,x-api-key=caf\u00e9"),
			exactly("web", req("/items", clientA, "x-api-key", strings.Repeat("k", 256)), perClient(clientA), perAPIKey(strings.Repeat("k", 256))),
			exactly("web", req("/items", clientA), perClient(clientA), apiMissing(clientA)),
			exactly("web", req("/items", clientB), perClient(clientB), apiMissing(clientB)),
			exactly("web", req("/items", "2001:db8:1:2::7"), perClient("2001:db8:1:2::7"), "rule=per-api-key,missing_value=shared,masked_remote_address=2001:db8:1:2::/64"),
			exactly("web", req("/items", clientA, "x-api-keys", "k1"), perClient(clientA), apiMissing(clientA)),
			exactly("web", req("/items", clientA, "authorization", "k1"), perClient(clientA), hasTokenRule, apiMissing(clientA)),
			exactly("web", req("/login", clientA), loginPerClient(clientA), perClient(clientA), apiMissing(clientA)),
			exactly("web", req("/search", clientA, "x-api-key", "k3"), perClient(clientA), searchRule, "rule=per-api-key,x-api-key=k3"),
			exactly("checkout", req("/checkout", clientA), checkoutRule, perClient(clientA), apiMissing(clientA)),
			exactly("checkout", req("/checkout", clientA, "x-api-key", "k1"), checkoutRule, perClient(clientA), "rule=per-api-key,x-api-key=k1"),
			// Two values (as Envoy's header matcher sees a repeated header: joined with ",") or one
			// holding a comma: no value sent, the untrusted-value counter.
			exactly("web", req("/items", clientA, "x-api-key", "fresh,k1"), perClient(clientA), apiGuard(clientA)),
			exactly("web", req("/items", clientA, "x-api-key", ",k1"), perClient(clientA), apiGuard(clientA)),
			exactly("web", req("/items", clientB, "x-api-key", "a\tb"), perClient(clientB), apiGuard(clientB)),
			exactly("web", req("/items", clientA, "x-api-key", strings.Repeat("v", 300)), perClient(clientA), apiGuard(clientA)),
			exactly("web", req("/items", clientA, "x-api-key", "fresh", "x_api_key", "mine"), perClient(clientA), apiGuard(clientA)),
			exactly("web", req("/items", clientA, "x-api_key", "mine"), perClient(clientA), apiGuard(clientA)),
		},
		// authorization present, whatever its value; nothing without it.
		"requests-has-token": {
			web(req("/items", clientA, "authorization", "Bearer t1"), hasTokenRule),
			web(req("/items", clientA, "authorization", "Basic eDp5"), hasTokenRule),
			web(req("/items", clientA)),
			web(req("/items", clientA, "x-authorization", "Bearer t1")),
		},
		// Every request, one counter per client address; several rules at once.
		"requests-per-client": {
			web(req("/", clientA)),
			web(req("/", clientB)),
			web(req("/search?q=1", clientB, "x-api-key", "k9", "authorization", "Bearer t"), searchRule, hasTokenRule),
			web(req("/login?next=/search", clientB, "authorization", "Bearer t"), loginPerClient(clientB), hasTokenRule),
		},
		// The checkout route (VirtualService prefix /checkout): its own rule, and the virtual
		// host's rules too (vh_rate_limits INCLUDE); no other route gets it.
		"requests-checkout-route": {
			checkout(req("/checkout", clientA)),
			checkout(req("/checkout/pay?x=1", clientA)),
			checkout(req("/checkout/search", clientA)),
			checkout(req("/checkout", clientB, "x-api-key", "k1")),
			web(req("/x/checkout", clientA)),
			web(req("/search/checkout", clientA), searchRule),
		},
		// Route partners, client CIDRs: every entry sends the client's network at its length (a
		// value the service has only for a configured CIDR), per address also the address.
		// partners-cidr: 10.0.0.0/8 and 2001:db8::/32 (v4 8, v6 32), 172.16.0.0/12 (v4 12, v6 128);
		// partners-per-address: 192.168.4.0/22 (v4 22, v6 128).
		"requests-partners-client-cidr": {
			partners(req("/partners", "10.1.2.3"),
				"rule=partners-cidr,masked_remote_address=10.0.0.0/8",
				"rule=partners-cidr,masked_remote_address=10.0.0.0/12",
				"rule=partners-per-address,masked_remote_address=10.1.0.0/22,masked_remote_address=10.1.2.3/32"),
			partners(req("/partners/x?y=1", "172.20.0.1"),
				"rule=partners-cidr,masked_remote_address=172.0.0.0/8",
				"rule=partners-cidr,masked_remote_address=172.16.0.0/12",
				"rule=partners-per-address,masked_remote_address=172.20.0.0/22,masked_remote_address=172.20.0.1/32"),
			partners(req("/partners", "192.168.5.5"),
				"rule=partners-cidr,masked_remote_address=192.0.0.0/8",
				"rule=partners-cidr,masked_remote_address=192.160.0.0/12",
				"rule=partners-per-address,masked_remote_address=192.168.4.0/22,masked_remote_address=192.168.5.5/32"),
			partners(req("/partners", "2001:db8:ffff::9"),
				"rule=partners-cidr,masked_remote_address=2001:db8::/32",
				"rule=partners-cidr,masked_remote_address=2001:db8:ffff::9/128",
				"rule=partners-per-address,masked_remote_address=2001:db8:ffff::9/128,masked_remote_address=2001:db8:ffff::/64"),
			// Not on route partners: none of its entries.
			web(req("/partner", "10.1.2.3")),
			web(req("/x/partners", "10.1.2.3")),
		},
		// writes: POST or DELETE on /search, the method in any letter case (a client may send
		// "post"); not GET, not POST elsewhere.
		"requests-methods": {
			web(req("/search", clientA, ":method", "POST"), searchRule, "rule=writes"),
			web(req("/search?q=1", clientA, ":method", "post"), searchRule, "rule=writes"),
			web(req("/search/x", clientA, ":method", "Delete"), searchRule, "rule=writes"),
			web(req("/search", clientA, ":method", "GET"), searchRule),
			web(req("/search", clientA, ":method", "POSTX"), searchRule),
			web(req("/items", clientA, ":method", "POST")),
		},
		// free-tier: query tier=free in every spelling a client may send (encoded name or value,
		// another letter case in the name, repeated behind another value); not another value.
		"requests-query": {
			web(req("/items?tier=free", clientA), "rule=free-tier"),
			web(req("/items?page=2&tier=free", clientA), "rule=free-tier"),
			web(req("/items?%74ier=fr%65e", clientA), "rule=free-tier"),
			web(req("/items?TIER=%66ree", clientA), "rule=free-tier"),
			web(req("/items?tier=gold&tier=free", clientA), "rule=free-tier"),
			web(req("/items?tier=gold", clientA)),
			web(req("/items?tier=freeze", clientA)),
			web(req("/items?xtier=free", clientA)),
			web(req("/tier=free", clientA)),
		},
		// per-query-key: under /api each decoded api_key value its own counter (a + as written, UTF-8
		// decoded); without the parameter in any spelling the client's missing counter; a request
		// another reader could see with another value (the name twice or only in another spelling, a
		// value holding ';' or an encoded space), a value that does not decode to UTF-8 without
		// control characters, or over 256 bytes as written: the client's guard counter.
		"requests-per-query-key": {
			web(req("/api?api_key=k1", clientA), pqk("k1")),
			web(req("/api/v1?%61pi_key=k%31&x=2", clientA), pqk("k1")),
			web(req("/api?x=1&api_key=k1", clientA), pqk("k1")),
			web(req("/api?api_key=a%2Bb", clientA), pqk("a+b")),
			web(req("/api?api_key=a+b", clientA), pqk("a+b")),
			web(req("/api?api_key=caf%C3%A9", clientA), pqk("caf\u00e9")),
			web(req("/api?api_key=", clientA), pqk("")),
			web(req("/api?api_key="+strings.Repeat("k", 256), clientA), pqk(strings.Repeat("k", 256))),
			web(req("/api", clientA), pqkMissing(clientA)),
			web(req("/api", clientB), pqkMissing(clientB)),
			web(req("/api?x=1", clientA), pqkMissing(clientA)),
			web(req("/api?API_KEY=k1", clientA), pqkGuard(clientA)),
			web(req("/api?x=1;api_key=k1", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=fresh&api_key=mine", clientA), pqkGuard(clientA)),
			web(req("/api?%61pi_key=fresh&api_key=mine", clientA), pqkGuard(clientA)),
			web(req("/api?API_KEY=mine&api_key=fresh", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=fresh;api_key=mine", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=mine;x=1", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=a%20b", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=%FF", clientA), pqkGuard(clientA)),
			web(req("/api?api_key=a%00b", clientB), pqkGuard(clientB)),
			web(req("/api?api_key="+strings.Repeat("z", 300), clientA), pqkGuard(clientA)),
			web(req("/api?api_key=%7E%41", clientA), pqk("~A")),
			web(req("/api?api_key=k1&api_keyx=2", clientA), pqk("k1")),
			web(req("/apix?api_key=k1", clientA)),
			web(req("/x?api_key=k1", clientA)),
		},
	}
}

// Descriptors of rule per-query-key: its value's counter, and the client's missing and guard counters.
func pqk(v string) string { return "rule=per-query-key,query_value=" + v }
func pqkMissing(addr string) string {
	return "rule=per-query-key,missing_value=shared," + clientKey(addr)
}
func pqkGuard(addr string) string {
	return "rule=per-query-key,untrusted_value=shared," + clientKey(addr)
}

// userRequestChecks: expectation ID -> problem ("" when it holds), one ID per rule.
func userRequestChecks(vh *routev3.VirtualHost) map[string]string {
	res := map[string]string{}
	for id, cases := range userRequestTable() {
		var problems []string
		for _, c := range cases {
			want := append([]string{}, c.want...)
			sort.Strings(want)
			route, got, err := userDescriptors(vh, c.req)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", c.req, err))
			case route != c.route:
				problems = append(problems, fmt.Sprintf("%s: route %q, want %q", c.req, route, c.route))
			case strings.Join(got, " ; ") != strings.Join(want, " ; "):
				problems = append(problems, fmt.Sprintf("%s: sends [%s], want [%s]", c.req, strings.Join(got, " ; "), strings.Join(want, " ; ")))
			}
		}
		res[id] = strings.Join(problems, "; ")
	}
	return res
}
