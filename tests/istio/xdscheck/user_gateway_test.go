package xdscheck

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"istio.io/istio/pilot/pkg/networking/core"
)

// A user's gateway that is not bookinfo (tests/istio/render-user.ts): pods app=shop-gateway in
// namespace shop, Gateway server port 80, the package's GlobalRateLimit with typed rules. Expected
// values are written from the rules in render-user.ts, not read from the render.
//
//	XDSCHECK_USER_DIR   directory with the user setup's all.yaml
//	XDSCHECK_USER_DUMP  optional: where to write the generated route configuration (model agreement)
const (
	userNamespace = "shop"
	userPort      = 80
	userVhost     = "*:80"
	userDomain    = "shop"
	userCluster   = "outbound|8081||ratelimit.shop.svc.cluster.local"
)

var userGatewayLabels = map[string]string{"app": "shop-gateway"}

// generateUserGateway runs Istio's generator for the shop's gateway pod.
func generateUserGateway(t *testing.T, docs []Doc) ([]*listenerv3.Listener, []*routev3.RouteConfiguration) {
	t.Helper()
	text, services, err := istioAndServices(docs, 1)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	_, ls, rcs := gatewayProxy(cg, "shop-gateway-0.shop", userNamespace, "10.244.2.1", userGatewayLabels)
	return ls, rcs
}

// firstValue: the descriptor value of a rate_limits entry's first action (the rule's name).
func firstValue(rl *routev3.RateLimit) string {
	if len(rl.Actions) == 0 {
		return ""
	}
	a := rl.Actions[0]
	if h := a.GetHeaderValueMatch(); h != nil {
		return h.GetDescriptorValue()
	}
	if g := a.GetGenericKey(); g != nil {
		return g.GetDescriptorValue()
	}
	return ""
}

func byRule(rls []*routev3.RateLimit) map[string]*routev3.RateLimit {
	out := map[string]*routev3.RateLimit{}
	for _, rl := range rls {
		out[firstValue(rl)] = rl
	}
	return out
}

// validUTF8: the matcher of a valid UTF-8 value, written from the design (every Unicode scalar
// value); oneHeaderValue: the same without a comma (Envoy joins a repeated header's values with ",").
// valueChars: the characters a per-value header may hold to be sent (valid UTF-8 from U+0020 on,
// no comma, no control character); overLimit: a value over 256 bytes (RE2's \C is one byte).
const (
	validUTF8  = `[\x{0}-\x{D7FF}\x{E000}-\x{10FFFF}]*`
	valueChars = `[\x{20}-\x{2B}\x{2D}-\x{7E}\x{A0}-\x{D7FF}\x{E000}-\x{10FFFF}]*`
	overLimit  = `\C{257}\C*`
)

// ruleEntriesProblem: the virtual host's rate_limits entries of a rule (first action's value = the
// rule's name), each written as its actions, in order; matcher regexes other than the valid-UTF-8
// one and the rule's own path shown as other-regex, `!~` an inverted matcher.
func ruleEntriesProblem(vh *routev3.VirtualHost, rule string, want ...string) string {
	var got []string
	for _, rl := range vh.RateLimits {
		if firstValue(rl) != rule {
			continue
		}
		var as []string
		for _, a := range rl.Actions {
			h := a.GetHeaderValueMatch()
			if h == nil {
				as = append(as, actionString(a))
				continue
			}
			var hs []string
			for _, m := range h.Headers {
				op, re := "~", m.GetSafeRegexMatch().GetRegex()
				if m.GetInvertMatch() {
					op = "!~"
				}
				switch {
				case m.GetPresentMatch() && m.GetInvertMatch():
					hs = append(hs, m.GetName()+" absent")
					continue
				case m.GetSafeRegexMatch() == nil:
					hs = append(hs, jsonOf(m))
					continue
				case re == validUTF8:
					re = "valid-utf8"
				case re == valueChars:
					re = "value-chars"
				case re == overLimit:
					re = "over-256-bytes"
				case m.GetName() == ":path" && spellingLabel(re) != "":
					re = spellingLabel(re)
				case m.GetName() == ":path" && strings.HasPrefix(re, "/"):
				default:
					re = "other-regex"
				}
				s := m.GetName() + op + re
				if m.GetTreatMissingHeaderAsEmpty() {
					s += " (missing as empty)"
				}
				hs = append(hs, s)
			}
			not := ""
			if h.GetExpectMatch() != nil && !h.GetExpectMatch().GetValue() {
				not = " unless"
			}
			as = append(as, fmt.Sprintf("header_value_match %s=%s%s [%s]", h.GetDescriptorKey(), h.GetDescriptorValue(), not, strings.Join(hs, ",")))
		}
		got = append(got, strings.Join(as, " | "))
	}
	if strings.Join(got, " ; ") != strings.Join(want, " ; ") {
		return fmt.Sprintf("rate_limits of %s %q, want %q", rule, got, want)
	}
	return ""
}

// actionString: one rate-limit action as the checks write it.
func actionString(a *routev3.RateLimit_Action) string {
	switch {
	case a.GetHeaderValueMatch() != nil:
		h := a.GetHeaderValueMatch()
		var hs []string
		for _, m := range h.Headers {
			switch {
			case m.GetSafeRegexMatch() != nil && m.Name == ":path" && spellingLabel(m.GetSafeRegexMatch().GetRegex()) != "":
				hs = append(hs, m.Name+"~"+spellingLabel(m.GetSafeRegexMatch().GetRegex()))
			case m.GetSafeRegexMatch() != nil:
				hs = append(hs, m.Name+"~"+m.GetSafeRegexMatch().GetRegex())
			case m.GetStringMatch() != nil:
				hs = append(hs, m.Name+"="+m.GetStringMatch().GetExact())
			case m.GetPresentMatch():
				hs = append(hs, m.Name+" present")
			}
		}
		return fmt.Sprintf("header_value_match %s=%s [%s]", h.GetDescriptorKey(), h.GetDescriptorValue(), strings.Join(hs, ","))
	case a.GetGenericKey() != nil:
		return fmt.Sprintf("generic_key %s=%s", a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue())
	case a.GetRequestHeaders() != nil:
		rh := a.GetRequestHeaders()
		s := fmt.Sprintf("request_headers %s->%s", rh.GetHeaderName(), rh.GetDescriptorKey())
		if rh.GetSkipIfAbsent() {
			s += " skip_if_absent"
		}
		return s
	case a.GetQueryParameters() != nil:
		qp := a.GetQueryParameters()
		s := fmt.Sprintf("query_parameters %s->%s", qp.GetQueryParameterName(), qp.GetDescriptorKey())
		if qp.GetSkipIfAbsent() {
			s += " skip_if_absent"
		}
		return s
	case a.GetRemoteAddress() != nil:
		return "remote_address"
	case a.GetMaskedRemoteAddress() != nil:
		return maskedString(a.GetMaskedRemoteAddress())
	}
	return jsonOf(a)
}

// userChecks: expectation ID -> problem ("" when it holds) for the generated configuration.
func userChecks(ls []*listenerv3.Listener, rcs []*routev3.RouteConfiguration) map[string]string {
	res := map[string]string{}
	// The rate-limit HTTP filter before the router, calling the service of namespace shop.
	res["http-filter"] = func() string {
		l := findListener(ls, fmt.Sprintf("0.0.0.0_%d", userPort))
		if l == nil {
			return fmt.Sprintf("no listener 0.0.0.0_%d; have %v", userPort, listenerNames(ls))
		}
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			names := httpFilterNames(h)
			i, r := indexOf(names, FilterRateLimit), indexOf(names, FilterRouter)
			if i < 0 || r < 0 || i > r {
				return fmt.Sprintf("filters %v: want %s before %s", names, FilterRateLimit, FilterRouter)
			}
			rl := &rlv3.RateLimit{}
			if err := h.HttpFilters[i].GetTypedConfig().UnmarshalTo(rl); err != nil {
				return err.Error()
			}
			if rl.Domain != userDomain || rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName() != userCluster {
				return fmt.Sprintf("domain %q cluster %q", rl.Domain, rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName())
			}
			// Clients see their limits: GlobalRateLimit's default rateLimitHeaders (draft-03).
			if rl.EnableXRatelimitHeaders != rlv3.RateLimit_DRAFT_VERSION_03 {
				return fmt.Sprintf("enable_x_ratelimit_headers is %s, want DRAFT_VERSION_03", rl.EnableXRatelimitHeaders)
			}
			return ""
		}
		return "no HTTP connection manager on the listener"
	}()
	vh := findVhost(rcs, fmt.Sprintf("http.%d", userPort), userVhost)
	if vh == nil {
		res["vhost"] = fmt.Sprintf("no virtual host %s in http.%d; have %v", userVhost, userPort, routeConfigSummary(rcs))
		return res
	}
	rules := byRule(vh.RateLimits)
	expectActions := func(rule string, want ...string) string {
		rl := rules[rule]
		if rl == nil {
			return fmt.Sprintf("no rate_limits entry for rule %s on %s; have %v", rule, userVhost, jsonOf(vh.RateLimits))
		}
		var got []string
		for _, a := range rl.Actions {
			got = append(got, actionString(a))
		}
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			return fmt.Sprintf("actions %q, want %q", got, want)
		}
		return ""
	}
	res["vhost-login-per-client"] = expectActions("login-per-client", `header_value_match rule=login-per-client [:path~spellings(/login)]`, "masked_remote_address v4=32 v6=64")
	res["vhost-search-prefix"] = expectActions("search", `header_value_match rule=search [:path~spellings(/search*)]`)
	// per-api-key (perValue, whenMissing defaults to SharedCounter). With no underscored spelling of
	// the name present (x_api-key, x-api_key, x_api_key): its value when of the value characters and
	// at most 256 bytes; else the guard's entries (a bad value, a long one), per client. Any
	// underscored spelling: the guard, per client. Without the header: the missing counter, per client.
	const noVariant = "x_api-key absent,x-api_key absent,x_api_key absent"
	const client = "masked_remote_address v4=32 v6=64"
	res["vhost-header-per-value"] = ruleEntriesProblem(vh, "per-api-key",
		"header_value_match rule=per-api-key ["+noVariant+",x-api-key~value-chars,x-api-key!~over-256-bytes] | request_headers x-api-key->x-api-key",
		"header_value_match rule=per-api-key ["+noVariant+",x-api-key!~value-chars] | generic_key untrusted_value=shared | "+client,
		"header_value_match rule=per-api-key ["+noVariant+",x-api-key~value-chars,x-api-key~over-256-bytes] | generic_key untrusted_value=shared | "+client,
		"generic_key rule=per-api-key | header_value_match untrusted_value=shared unless ["+noVariant+"] | "+client,
		"header_value_match rule=per-api-key ["+noVariant+",x-api-key absent] | generic_key missing_value=shared | "+client)
	res["vhost-header-presence"] = expectActions("has-token", "header_value_match rule=has-token [authorization present]")
	res["vhost-per-client"] = expectActions("per-client", "generic_key rule=per-client", client)
	// per-query-key (query.perValue under /api): its value's entry when the parameter is not
	// ambiguous, its value trusted and not over 256 bytes; the guard's three entries (ambiguous;
	// present but not trusted; trusted but too long) and the missing one, each per client. What the
	// query regexes mean is checked by requests-per-query-key.
	const api = `:path~spellings(/api*)`
	res["vhost-query-per-value"] = ruleEntriesProblem(vh, "per-query-key",
		"header_value_match rule=per-query-key ["+api+",:path!~other-regex,:path~other-regex,:path!~other-regex] | query_parameters api_key->query_value",
		"header_value_match rule=per-query-key ["+api+",:path~other-regex] | generic_key untrusted_value=shared | "+client,
		"header_value_match rule=per-query-key ["+api+",:path!~other-regex,:path~other-regex,:path!~other-regex] | generic_key untrusted_value=shared | "+client,
		"header_value_match rule=per-query-key ["+api+",:path!~other-regex,:path~other-regex,:path~other-regex] | generic_key untrusted_value=shared | "+client,
		"header_value_match rule=per-query-key ["+api+",:path!~other-regex] | generic_key missing_value=shared | "+client)
	res["vhost-methods"] = expectActions("writes", `header_value_match rule=writes [:path~spellings(/search*),:method~(?i:POST|DELETE)]`)
	// free-tier is hidden from the X-RateLimit headers (rateLimitHeaders: false); the others inherit the filter's.
	res["vhost-rule-headers-option"] = func() string {
		var bad []string
		for name, rl := range rules {
			want := routev3.RateLimit_UNSPECIFIED
			if name == "free-tier" {
				want = routev3.RateLimit_OFF
			}
			if rl.GetXRatelimitOption() != want {
				bad = append(bad, fmt.Sprintf("rule %s: x_ratelimit_option %s, want %s", name, rl.GetXRatelimitOption(), want))
			}
		}
		if rules["free-tier"] == nil {
			bad = append(bad, "no rate_limits entry for rule free-tier")
		}
		sort.Strings(bad)
		return strings.Join(bad, "; ")
	}()
	if _, onVhost := rules["checkout"]; onVhost {
		res["route-rule-not-on-vhost"] = "rule checkout (a route rule) is on the virtual host"
	} else {
		res["route-rule-not-on-vhost"] = ""
	}
	res["route-checkout"] = func() string {
		r := findRoute(vh, "checkout")
		if r == nil {
			return fmt.Sprintf("no route checkout; have %v", routeNames(vh))
		}
		own := byRule(r.GetRoute().GetRateLimits())
		if g := own["checkout"]; g == nil || len(g.Actions) != 1 || g.Actions[0].GetGenericKey() == nil {
			return fmt.Sprintf("route rate_limits %s, want one generic_key rule=checkout", jsonOf(r.GetRoute().GetRateLimits()))
		}
		return vhRateLimitsProblem(r)
	}()
	// Route partners: the client-CIDR rules, in the rules' order: partners-cidr one entry per prefix
	// length (10.0.0.0/8 with 2001:db8::/32, then 172.16.0.0/12 with IPv6 at 128, a length none of
	// its IPv6 CIDRs has), partners-per-address its CIDR's length then remote_address. Written from
	// render-user.ts, not read from the render.
	res["route-partners-client-cidr"] = func() string {
		r := findRoute(vh, "partners")
		if r == nil {
			return fmt.Sprintf("no route partners; have %v", routeNames(vh))
		}
		want := []string{
			"generic_key rule=partners-cidr | masked_remote_address v4=8 v6=32",
			"generic_key rule=partners-cidr | masked_remote_address v4=12 v6=128",
			"generic_key rule=partners-per-address | masked_remote_address v4=22 v6=128 | masked_remote_address v4=32 v6=64",
		}
		var got []string
		for _, rl := range r.GetRoute().GetRateLimits() {
			var as []string
			for _, a := range rl.GetActions() {
				switch {
				case a.GetGenericKey() != nil:
					as = append(as, fmt.Sprintf("generic_key %s=%s", a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue()))
				case a.GetMaskedRemoteAddress() != nil:
					as = append(as, maskedString(a.GetMaskedRemoteAddress()))
				case a.GetRemoteAddress() != nil:
					as = append(as, "remote_address")
				default:
					as = append(as, jsonOf(a))
				}
			}
			got = append(got, strings.Join(as, " | "))
		}
		if strings.Join(got, " ; ") != strings.Join(want, " ; ") {
			return fmt.Sprintf("route rate_limits %q, want %q", got, want)
		}
		if _, onVhost := rules["partners-cidr"]; onVhost {
			return "rule partners-cidr (a route rule) is on the virtual host"
		}
		return vhRateLimitsProblem(r)
	}()
	// RateLimit-Policy, written from USER_RULES: the virtual host lists its rules (free-tier is
	// hidden by rateLimitHeaders: false), each route with rules of its own lists those.
	policyOf := func(hs []*corev3.HeaderValueOption) string {
		var vs []string
		for _, h := range hs {
			if h.GetHeader().GetKey() == "ratelimit-policy" {
				vs = append(vs, h.GetHeader().GetValue())
			}
		}
		return strings.Join(vs, " | ")
	}
	wantVhostPolicy := `"login-per-client";q=5;w=60, "search";q=100;w=60, "per-api-key";q=20;w=60, "has-token";q=50;w=60, "per-client";q=300;w=60, "writes";q=10;w=60, "per-query-key";q=15;w=60`
	if got := policyOf(vh.GetResponseHeadersToAdd()); got != wantVhostPolicy {
		res["vhost-ratelimit-policy"] = fmt.Sprintf("virtual host %s response header ratelimit-policy %q, want %q", userVhost, got, wantVhostPolicy)
	} else {
		res["vhost-ratelimit-policy"] = ""
	}
	res["route-ratelimit-policy"] = func() string {
		var bad []string
		for route, want := range map[string]string{"checkout": `"checkout";q=10;w=60`, "partners": `"partners-cidr";q=30;w=60, "partners-per-address";q=5;w=60`, "web": ""} {
			r := findRoute(vh, route)
			if r == nil {
				bad = append(bad, "no route "+route)
			} else if got := policyOf(r.GetResponseHeadersToAdd()); got != want {
				bad = append(bad, fmt.Sprintf("route %s: ratelimit-policy %q, want %q", route, got, want))
			}
		}
		sort.Strings(bad)
		return strings.Join(bad, "; ")
	}()
	// What the actions do with concrete requests (user_requests_test.go).
	for id, problem := range userRequestChecks(vh) {
		res[id] = problem
	}
	res["route-web-untouched"] = func() string {
		r := findRoute(vh, "web")
		if r == nil {
			return fmt.Sprintf("no route web; have %v", routeNames(vh))
		}
		if len(r.GetRoute().GetRateLimits()) != 0 {
			return "route web got rate_limits of its own: " + jsonOf(r.GetRoute().GetRateLimits())
		}
		return ""
	}()
	return res
}

// userFilterHeaders: the generated rate-limit filter on the shop's listener has enable_x_ratelimit_headers DRAFT_VERSION_03.
func userFilterHeaders(ls []*listenerv3.Listener) bool {
	l := findListener(ls, fmt.Sprintf("0.0.0.0_%d", userPort))
	if l == nil {
		return false
	}
	for _, fc := range l.FilterChains {
		if h := hcmOf(fc); h != nil {
			if i := indexOf(httpFilterNames(h), FilterRateLimit); i >= 0 {
				rl := &rlv3.RateLimit{}
				if h.HttpFilters[i].GetTypedConfig().UnmarshalTo(rl) == nil {
					return rl.EnableXRatelimitHeaders == rlv3.RateLimit_DRAFT_VERSION_03
				}
			}
		}
	}
	return false
}

// maskedString: a masked_remote_address action with the lengths Envoy applies (32 and 128 when unset).
func maskedString(m *routev3.RateLimit_Action_MaskedRemoteAddress) string {
	v4, v6 := uint32(32), uint32(128)
	if m.GetV4PrefixMaskLen() != nil {
		v4 = m.GetV4PrefixMaskLen().GetValue()
	}
	if m.GetV6PrefixMaskLen() != nil {
		v6 = m.GetV6PrefixMaskLen().GetValue()
	}
	return fmt.Sprintf("masked_remote_address v4=%d v6=%d", v4, v6)
}

func userDocs(t *testing.T) []Doc {
	dir := os.Getenv("XDSCHECK_USER_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_USER_DIR not set (run tests/istio/run.sh)")
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestUserGateway: the generated Envoy configuration of a user's gateway carries every rule.
func TestUserGateway(t *testing.T) {
	docs := userDocs(t)
	ls, rcs := generateUserGateway(t, docs)
	if out := os.Getenv("XDSCHECK_USER_DUMP"); out != "" {
		for _, rc := range rcs {
			if rc.GetName() != fmt.Sprintf("http.%d", userPort) {
				continue
			}
			b, err := protojson.Marshal(rc)
			if err != nil {
				t.Fatal(err)
			}
			dump, _ := json.MarshalIndent(map[string]any{
				"virtualHost": userVhost, "domain": userDomain, "failureModeDeny": true,
				// Read from the generated filter, so the model's headers follow what Istio produced.
				"rateLimitHeaders":   userFilterHeaders(ls),
				"routeConfiguration": json.RawMessage(b),
			}, "", "  ")
			if err := os.WriteFile(out, dump, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	res := userChecks(ls, rcs)
	for _, id := range sortedKeys(res) {
		problem := res[id]
		t.Run(id, func(t *testing.T) {
			if problem != "" {
				t.Errorf("FAILED: %s: shop gateway: %s", id, problem)
			}
		})
	}
}

// TestUserGatewayControls: the checks fail when the filters miss the shop's gateway.
func TestUserGatewayControls(t *testing.T) {
	docs := userDocs(t)
	controls := []struct {
		name, filter string
		path         []string
		value        any
		wantFail     string
		// Optional: changes the filter instead of path/value, and a text the failing check's
		// problem must contain (it fails for the right reason).
		mutate  func(f Doc) error
		wantMsg string
	}{
		// Istio silently ignores a patch that names no virtual host of this gateway.
		{"vhost-name-8080", "filter-ratelimit-svc", []string{"match", "routeConfiguration", "vhost", "name"}, "*:8080", "vhost-per-client", nil, ""},
		{"route-name-typo", "filter-ratelimit-svc-api", []string{"match", "routeConfiguration", "vhost", "route", "name"}, "checkou", "route-checkout", nil, ""},
		{"other-gateway-selector", "filter-ratelimit", []string{"@selector"}, map[string]any{"app": "other"}, "http-filter", nil, ""},
		// Regexes that mean something else than the rule: the request checks name the request.
		{"search-regex-anywhere", "filter-ratelimit-svc", nil, nil, "requests-search", setRuleRegex("search", `.*/search(?:[/?].*)?`), sends("/x/search", perClient(clientA), apiMissing(clientA), searchRule)},
		{"search-regex-no-separator", "filter-ratelimit-svc", nil, nil, "requests-search", setRuleRegex("search", `/search.*`), sends("/searchx", perClient(clientA), apiMissing(clientA), searchRule)},
		{"search-regex-no-query", "filter-ratelimit-svc", nil, nil, "requests-search", setRuleRegex("search", `/search(?:/.*)?`), sends("/search?q=1", perClient(clientA), apiMissing(clientA))},
		{"login-regex-no-query", "filter-ratelimit-svc", nil, nil, "requests-login-per-client", setRuleRegex("login-per-client", `/login`), sends("/login?next=/x", perClient(clientA), apiMissing(clientA))},
		{"login-regex-prefix", "filter-ratelimit-svc", nil, nil, "requests-login-per-client", setRuleRegex("login-per-client", `/login.*`), sends("/loginx", loginPerClient(clientA), perClient(clientA), apiMissing(clientA))},
		// Fields the action strings do not show: only the request checks see them.
		{"search-expect-match-false", "filter-ratelimit-svc", nil, nil, "requests-search", setRuleField("search", "expect_match", false), sends("/search", perClient(clientA), apiMissing(clientA))},
		{"has-token-inverted", "filter-ratelimit-svc", nil, nil, "requests-has-token", setRuleHeaderField("has-token", "invert_match", true), sends("/items {authorization: Bearer t1}", perClient(clientA), apiMissing(clientA))},
		// per-api-key without its missing entry (MissingHeader.Ignore's form): a client escapes the
		// limit by leaving the header out; the request check names that request.
		{"per-api-key-no-missing-entry", "filter-ratelimit-svc", nil, nil, "requests-per-api-key", dropRuleEntry("per-api-key", "missing_value"), sends("/items", perClient(clientA))},
		// The value's entry without the x_api_key-absent matcher: a fresh x-api-key beside the real
		// x_api_key gets a counter of its own. Without the length matcher: a 300-byte value does.
		{"per-api-key-no-underscore-matcher", "filter-ratelimit-svc", nil, nil, "requests-per-api-key", dropRuleMatcher("per-api-key", "request_headers", 2), "x_api_key: mine} from " + clientA + ": sends"},
		{"per-api-key-unbounded", "filter-ratelimit-svc", nil, nil, "requests-per-api-key", dropRuleMatcher("per-api-key", "request_headers", 4), "x-api-key=" + strings.Repeat("v", 300)},
		// The missing counter without the client: one shared counter again (what one client could use up for all).
		{"per-api-key-missing-shared", "filter-ratelimit-svc", nil, nil, "requests-per-api-key", dropLastAction("per-api-key", "missing_value"), "rule=per-api-key,missing_value=shared ;"},
		// A client-CIDR entry masked at another length than its CIDR's: the action check names it,
		// and a request from inside 10.0.0.0/8 no longer sends the CIDR as its value.
		{"partners-cidr-mask-16", "filter-ratelimit-svc-api", nil, nil, "route-partners-client-cidr", setRuleMaskLen("partners-cidr", "v4_prefix_mask_len", 16), "masked_remote_address v4=16 v6=32"},
		{"partners-cidr-mask-16-requests", "filter-ratelimit-svc-api", nil, nil, "requests-partners-client-cidr", setRuleMaskLen("partners-cidr", "v4_prefix_mask_len", 16), "masked_remote_address=10.1.0.0/16"},
		// A method matcher that minds case lets "post" through; a naive query matcher lets an encoded name through.
		{"writes-method-case-sensitive", "filter-ratelimit-svc", nil, nil, "requests-methods", setRuleMatcherRegex("writes", ":method", `POST|DELETE`), "{:method: post}"},
		{"free-tier-naive-query", "filter-ratelimit-svc", nil, nil, "requests-query", setRuleMatcherRegex("free-tier", ":path", `[^?]*\?(?:.*&)?tier=free(?:&.*)?`), "/items?%74ier=fr%65e"},
		// Without the guard entry a request hiding its value behind a fresh one sends nothing for the
		// rule (it escapes it); without the value entry's untrusted-query matcher it sends the fresh
		// value (a new counter each time): the request check names the request either way.
		{"per-query-key-no-guard", "filter-ratelimit-svc", nil, nil, "requests-per-query-key", dropRuleEntry("per-query-key", "untrusted_value"), "/api?api_key=fresh&api_key=mine from " + clientA + ": sends"},
		// The value's entry without its untrusted-query matcher: a hidden value gets a counter of its own.
		{"per-query-key-value-always", "filter-ratelimit-svc", nil, nil, "requests-per-query-key", dropRuleMatcher("per-query-key", "query_parameters", 1), "/api?api_key=fresh&api_key=mine from " + clientA + ": sends"},
	}
	for _, c := range controls {
		c := c
		t.Run(c.name, func(t *testing.T) {
			mut := Clone(docs)
			f := Find(mut, "EnvoyFilter", userNamespace, c.filter)
			if f == nil {
				t.Fatalf("FAILED: %s: no EnvoyFilter %s in the render", c.name, c.filter)
			}
			if c.mutate != nil {
				if err := c.mutate(f); err != nil {
					t.Fatalf("FAILED: %s: %v", c.name, err)
				}
			} else if c.path[0] == "@selector" {
				f["spec"].(map[string]any)["workloadSelector"] = map[string]any{"labels": c.value}
			} else {
				m := Patches(f)[0]
				for _, k := range c.path[:len(c.path)-1] {
					m = m[k].(map[string]any)
				}
				m[c.path[len(c.path)-1]] = c.value
			}
			ls, rcs := generateUserGateway(t, mut)
			problem := userChecks(ls, rcs)[c.wantFail]
			if problem == "" {
				t.Errorf("FAILED: %s: control: with %s changed the check %s still passed", c.name, c.filter, c.wantFail)
			} else if !strings.Contains(problem, c.wantMsg) {
				t.Errorf("FAILED: %s: control: the check %s failed, but not on %q: %s", c.name, c.wantFail, c.wantMsg, problem)
			}
		})
	}
}

// ruleHeaderValueMatch: the header_value_match of the virtual-host rate_limits entry of a rule
// (first action, descriptor value = the rule's name) in the EnvoyFilter's patch value.
func ruleHeaderValueMatch(f Doc, rule string) (map[string]any, error) {
	for _, p := range Patches(f) {
		value, _ := Dig(p, "patch", "value").(map[string]any)
		rls, _ := value["rate_limits"].([]any)
		for _, rl := range rls {
			actions, _ := rl.(map[string]any)["actions"].([]any)
			if len(actions) == 0 {
				continue
			}
			h, _ := actions[0].(map[string]any)["header_value_match"].(map[string]any)
			if h != nil && h["descriptor_value"] == rule {
				return h, nil
			}
		}
	}
	return nil, fmt.Errorf("no header_value_match for rule %s in EnvoyFilter %s", rule, f.Name())
}

// setRuleMatcherRegex: the safe_regex of a rule's header matcher on `name` (its first one).
func setRuleMatcherRegex(rule, name, regex string) func(Doc) error {
	return func(f Doc) error {
		h, err := ruleHeaderValueMatch(f, rule)
		if err != nil {
			return err
		}
		hs, _ := h["headers"].([]any)
		for _, m := range hs {
			if mm, _ := m.(map[string]any); mm["name"] == name {
				mm["safe_regex_match"] = map[string]any{"google_re2": map[string]any{}, "regex": regex}
				return nil
			}
		}
		return fmt.Errorf("rule %s has no matcher on %s", rule, name)
	}
}

func setRuleField(rule, field string, v any) func(Doc) error {
	return func(f Doc) error {
		h, err := ruleHeaderValueMatch(f, rule)
		if err != nil {
			return err
		}
		h[field] = v
		return nil
	}
}

func setRuleHeaderField(rule, field string, v any) func(Doc) error {
	return func(f Doc) error {
		h, err := ruleHeaderValueMatch(f, rule)
		if err != nil {
			return err
		}
		hs, _ := h["headers"].([]any)
		if len(hs) != 1 {
			return fmt.Errorf("rule %s: want one header matcher, have %d", rule, len(hs))
		}
		hs[0].(map[string]any)[field] = v
		return nil
	}
}

func setRuleRegex(rule, regex string) func(Doc) error {
	return func(f Doc) error {
		h, err := ruleHeaderValueMatch(f, rule)
		if err != nil {
			return err
		}
		hs, _ := h["headers"].([]any)
		if len(hs) != 1 {
			return fmt.Errorf("rule %s: want one header matcher, have %d", rule, len(hs))
		}
		sr, _ := hs[0].(map[string]any)["safe_regex_match"].(map[string]any)
		if sr == nil {
			return fmt.Errorf("rule %s: no safe_regex_match", rule)
		}
		sr["regex"] = regex
		return nil
	}
}

// ruleEntryWith finds the virtual-host rate_limits entry of a rule (first action's descriptor
// value = the rule's name) whose later actions contain `needle` in their JSON: the patch value
// holding it, its index and its actions.
func ruleEntryWith(f Doc, rule, needle string) (map[string]any, int, []any, error) {
	for _, p := range Patches(f) {
		value, _ := Dig(p, "patch", "value").(map[string]any)
		rls, _ := value["rate_limits"].([]any)
		for i, rl := range rls {
			actions, _ := rl.(map[string]any)["actions"].([]any)
			if len(actions) >= 2 && strings.Contains(jsonOf(actions[0]), `"descriptor_value":"`+rule+`"`) && strings.Contains(jsonOf(actions[1:]), needle) {
				return value, i, actions, nil
			}
		}
	}
	return nil, 0, nil, fmt.Errorf("no rate_limits entry of rule %s with %s in EnvoyFilter %s", rule, needle, f.Name())
}

// dropRuleEntry removes the rule's virtual-host entry that has an action with this descriptor key.
func dropRuleEntry(rule, key string) func(Doc) error {
	return func(f Doc) error {
		value, i, _, err := ruleEntryWith(f, rule, `"descriptor_key":"`+key+`"`)
		if err != nil {
			return err
		}
		rls := value["rate_limits"].([]any)
		value["rate_limits"] = append(append([]any{}, rls[:i]...), rls[i+1:]...)
		return nil
	}
}

// dropLastAction removes the last action of the rule's virtual-host entry that has an action with
// this descriptor key (e.g. the client of a fallback counter).
func dropLastAction(rule, key string) func(Doc) error {
	return func(f Doc) error {
		value, i, actions, err := ruleEntryWith(f, rule, `"descriptor_key":"`+key+`"`)
		if err != nil {
			return err
		}
		value["rate_limits"].([]any)[i].(map[string]any)["actions"] = actions[:len(actions)-1]
		return nil
	}
}

// dropRuleMatcher removes header matcher i of the first action of the rule's virtual-host entry
// that has an action of this kind.
func dropRuleMatcher(rule, kind string, i int) func(Doc) error {
	return func(f Doc) error {
		_, _, actions, err := ruleEntryWith(f, rule, `"`+kind+`"`)
		if err != nil {
			return err
		}
		h, _ := actions[0].(map[string]any)["header_value_match"].(map[string]any)
		hs, _ := h["headers"].([]any)
		if i >= len(hs) {
			return fmt.Errorf("rule %s: no header matcher %d in %s", rule, i, jsonOf(actions[0]))
		}
		h["headers"] = append(append([]any{}, hs[:i]...), hs[i+1:]...)
		return nil
	}
}

// ruleRequestHeaders: the request_headers action of the virtual-host rate_limits entry of a rule
// (first action generic_key or header_value_match with descriptor value = the rule's name) in the
// EnvoyFilter's patch value.
func ruleRequestHeaders(f Doc, rule string) (map[string]any, error) {
	for _, p := range Patches(f) {
		value, _ := Dig(p, "patch", "value").(map[string]any)
		rls, _ := value["rate_limits"].([]any)
		for _, rl := range rls {
			actions, _ := rl.(map[string]any)["actions"].([]any)
			if len(actions) == 0 {
				continue
			}
			first, _ := actions[0].(map[string]any)
			var named map[string]any
			for _, k := range []string{"generic_key", "header_value_match"} {
				if m, ok := first[k].(map[string]any); ok {
					named = m
				}
			}
			if named == nil || named["descriptor_value"] != rule {
				continue
			}
			for _, a := range actions[1:] {
				if rh, ok := a.(map[string]any)["request_headers"].(map[string]any); ok {
					return rh, nil
				}
			}
			return nil, fmt.Errorf("rule %s: no request_headers action in EnvoyFilter %s", rule, f.Name())
		}
	}
	return nil, fmt.Errorf("no rate_limits entry for rule %s in EnvoyFilter %s", rule, f.Name())
}

// setRuleRequestHeadersField sets a field of the rule's request_headers action (v nil: removes it;
// the field must be there).
func setRuleRequestHeadersField(rule, field string, v any) func(Doc) error {
	return func(f Doc) error {
		rh, err := ruleRequestHeaders(f, rule)
		if err != nil {
			return err
		}
		if v == nil {
			if _, ok := rh[field]; !ok {
				return fmt.Errorf("rule %s: request_headers has no %s to remove: %s", rule, field, jsonOf(rh))
			}
			delete(rh, field)
			return nil
		}
		rh[field] = v
		return nil
	}
}

// sends: the problem text of a request from clientA that sends exactly these descriptors (in the
// sorted order the request checks print).
func sends(request string, descriptors ...string) string {
	ds := append([]string{}, descriptors...)
	sort.Strings(ds)
	return fmt.Sprintf("%s from %s: sends [%s]", request, clientA, strings.Join(ds, " ; "))
}

// setRuleMaskLen sets a mask length of the masked_remote_address action of the rule's first
// rate_limits entry in the EnvoyFilter's patch values (route or virtual-host patches).
func setRuleMaskLen(rule, field string, v int) func(Doc) error {
	return func(f Doc) error {
		for _, p := range Patches(f) {
			value, _ := Dig(p, "patch", "value").(map[string]any)
			var rls []any
			if rv, ok := value["route"].(map[string]any); ok {
				rls, _ = rv["rate_limits"].([]any)
			} else {
				rls, _ = value["rate_limits"].([]any)
			}
			for _, rl := range rls {
				actions, _ := rl.(map[string]any)["actions"].([]any)
				if len(actions) < 2 {
					continue
				}
				first, _ := actions[0].(map[string]any)["generic_key"].(map[string]any)
				if first == nil || first["descriptor_value"] != rule {
					continue
				}
				m, _ := actions[1].(map[string]any)["masked_remote_address"].(map[string]any)
				if m == nil {
					return fmt.Errorf("rule %s: no masked_remote_address action in EnvoyFilter %s", rule, f.Name())
				}
				m[field] = v
				return nil
			}
		}
		return fmt.Errorf("no rate_limits entry for rule %s in EnvoyFilter %s", rule, f.Name())
	}
}
