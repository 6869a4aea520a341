package xdscheck

// The gateway's pre-limit (builders/pre-limit.ts) in the configuration Istio generates: the local
// rate-limit filter directly before the rate-limit filter on the stack's listener only, disabled
// there, and enabled with the buckets the specification's limits imply on the stack's virtual host
// only. The expected buckets are derived here from the variant's limits (docs/specification.md,
// section 8: /productpage 1 per minute, variant A's api 2 per minute): 2L tokens refilled L per 60 s.

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	lrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
)

const (
	preLimitStatPrefix = "mesh_ratelimit_pre_limit"
	preLimitHeader     = "x-mesh-ratelimit"
	preLimitValue      = "pre-limit"
	// Finding IDs.
	PreLimitOrder   = "gateway/pre-limit-before-ratelimit"
	PreLimitPort    = "gateway/pre-limit-only-on-gateway-port"
	PreLimitBuckets = "gateway/pre-limit-buckets"
	PreLimitScope   = "gateway/pre-limit-only-stack-vhost"
)

// preLimitExpected: the buckets (descriptor "KEY=value" → L per minute), or nil when the render
// was made with preLimit=false (XDSCHECK_PRELIMIT=off).
func preLimitExpected(e Expect) map[string]uint32 {
	if os.Getenv("XDSCHECK_PRELIMIT") == "off" {
		return nil
	}
	want := map[string]uint32{"PATH=/productpage": 1}
	if e.APIRoute {
		want["PATH=api"] = 2
	}
	return want
}

func checkPreLimit(fs *findings, docs []Doc, g *Generated, e Expect) {
	want := preLimitExpected(e)
	lname := e.GatewayListener()
	ref := e.FilterRef(EFGlobal)

	// 1. Where the filter sits on the stack's listener.
	var probs []string
	var onStack bool
	l := findListener(g.GatewayListeners, lname)
	if l == nil {
		probs = append(probs, "no listener "+lname)
	} else {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			names := httpFilterNames(h)
			i, r := indexOf(names, FilterLocalRateLimit), indexOf(names, FilterRateLimit)
			n := strings.Count(strings.Join(names, ","), FilterLocalRateLimit)
			switch {
			case want == nil && i >= 0:
				probs = append(probs, fmt.Sprintf("present with preLimit=false; HTTP filters are %v", names))
			case want == nil:
			case i < 0:
				probs = append(probs, fmt.Sprintf("absent; HTTP filters are %v", names))
			case n > 1:
				probs = append(probs, fmt.Sprintf("inserted %d times; HTTP filters are %v", n, names))
			case r != i+1:
				probs = append(probs, fmt.Sprintf("not directly before %s; HTTP filters are %v", FilterRateLimit, names))
			default:
				onStack = true
				lr, err := decodeLocalRateLimit(h.HttpFilters[i].GetTypedConfig())
				switch {
				case err != nil:
					probs = append(probs, err.Error())
				case lr.GetTokenBucket() != nil || lr.GetFilterEnabled() != nil || len(lr.GetDescriptors()) > 0:
					// Enabled listener-wide, it would count other teams' hosts on the port too.
					probs = append(probs, "the listener-wide config has a bucket, descriptors or filter_enabled: "+jsonOf(lr))
				}
			}
		}
	}
	exp := fmt.Sprintf("%s directly before %s on %s, disabled there (no bucket, no filter_enabled)", FilterLocalRateLimit, FilterRateLimit, lname)
	if want == nil {
		exp = fmt.Sprintf("no %s on %s (preLimit=false)", FilterLocalRateLimit, lname)
	}
	fs.add(PreLimitOrder, ref, exp, strings.Join(probs, "; "))

	// 2. Not on any other listener of the gateway; the rendered HTTP_FILTER patch matches the port.
	probs = nil
	var others []string
	for _, ol := range g.GatewayListeners {
		if ol.Name == lname {
			continue
		}
		others = append(others, ol.Name)
		for _, fc := range ol.FilterChains {
			if h := hcmOf(fc); h != nil && indexOf(httpFilterNames(h), FilterLocalRateLimit) >= 0 {
				probs = append(probs, "generated: also on listener "+ol.Name)
				break
			}
		}
	}
	if d := Find(docs, "EnvoyFilter", e.GatewayNamespace, EFGlobal); d != nil {
		for _, i := range patchIndices(patchesOf(d, "HTTP_FILTER")) {
			p := Patches(d)[i]
			if Dig(p, "patch", "value", "name") != FilterLocalRateLimit {
				continue
			}
			if pr := portMatchProblem(EFGlobal, i, p, e.GatewayPort, "Istio would insert the pre-limit on every listener that has the rate-limit filter"); pr != "" {
				probs = append(probs, pr)
			}
		}
	}
	if want != nil && !onStack {
		probs = append(probs, "not on "+lname+" either")
	}
	fs.add(PreLimitPort, ref, fmt.Sprintf("%s on listener %s only (not on the gateway's other listeners %v)", FilterLocalRateLimit, lname, others), strings.Join(probs, "; "))

	// 3. The buckets on the stack's virtual host; no other virtual host of the gateway has any.
	rcName := fmt.Sprintf("http.%d", e.GatewayPort)
	vh := findVhost(g.GatewayRoutes, rcName, e.GatewayVhost())
	probs = nil
	if vh == nil {
		probs = append(probs, fmt.Sprintf("no virtual host %s in %s; have %v", e.GatewayVhost(), rcName, routeConfigSummary(g.GatewayRoutes)))
	} else if a, ok := vh.TypedPerFilterConfig[FilterLocalRateLimit]; want == nil && ok {
		probs = append(probs, "typed_per_filter_config present with preLimit=false")
	} else if want != nil && !ok {
		probs = append(probs, "no typed_per_filter_config["+FilterLocalRateLimit+"]")
	} else if want != nil {
		lr, err := decodeLocalRateLimit(a)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			probs = append(probs, preLimitConfigProblems(lr, want)...)
		}
	}
	var wantText []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		wantText = append(wantText, fmt.Sprintf("%s %d tokens refilled %d per 60s", k, 2*want[k], want[k]))
	}
	bexp := fmt.Sprintf("virtual host %s: LocalRateLimit enabled and enforced 100%%, buckets %s, default bucket refusing nothing, %s: %s on refusal, stat_prefix %s",
		e.GatewayVhost(), strings.Join(wantText, ", "), preLimitHeader, preLimitValue, preLimitStatPrefix)
	if want == nil {
		bexp = fmt.Sprintf("virtual host %s: no LocalRateLimit (preLimit=false)", e.GatewayVhost())
	}
	fs.add(PreLimitBuckets, ref, bexp, strings.Join(probs, "; "))

	probs = nil
	for _, rc := range g.GatewayRoutes {
		for _, v := range rc.VirtualHosts {
			if rc.Name == rcName && v.Name == e.GatewayVhost() {
				continue
			}
			if _, ok := v.TypedPerFilterConfig[FilterLocalRateLimit]; ok {
				probs = append(probs, fmt.Sprintf("%s/%s has a pre-limit config", rc.Name, v.Name))
			}
			for _, r := range v.Routes {
				if _, ok := r.TypedPerFilterConfig[FilterLocalRateLimit]; ok {
					probs = append(probs, fmt.Sprintf("%s/%s route %q has a pre-limit config", rc.Name, v.Name, r.Name))
				}
			}
		}
	}
	fs.add(PreLimitScope, ref, fmt.Sprintf("no virtual host but %s carries a pre-limit config (gateway route configs: %v)", e.GatewayVhost(), routeConfigSummary(g.GatewayRoutes)), strings.Join(probs, "; "))
}

// preLimitConfigProblems compares a generated LocalRateLimit with the expected buckets.
func preLimitConfigProblems(l *lrlv3.LocalRateLimit, want map[string]uint32) []string {
	var p []string
	if l.StatPrefix != preLimitStatPrefix {
		p = append(p, fmt.Sprintf("stat_prefix is %q", l.StatPrefix))
	}
	for _, rf := range []struct {
		name string
		v    interface {
			GetDefaultValue() *typev3.FractionalPercent
		}
	}{{"filter_enabled", l.GetFilterEnabled()}, {"filter_enforced", l.GetFilterEnforced()}} {
		if rf.v.GetDefaultValue().GetNumerator() != 100 || rf.v.GetDefaultValue().GetDenominator() != typev3.FractionalPercent_HUNDRED {
			p = append(p, fmt.Sprintf("%s is %s (absent means 0%%: nothing enforced)", rf.name, jsonOf(rf.v)))
		}
	}
	if l.GetAlwaysConsumeDefaultTokenBucket() == nil || l.GetAlwaysConsumeDefaultTokenBucket().GetValue() {
		p = append(p, "always_consume_default_token_bucket is not false: every request would also take a default token")
	}
	if tb := l.GetTokenBucket(); tb.GetMaxTokens() != math.MaxUint32 || tb.GetTokensPerFill().GetValue() != math.MaxUint32 || tb.GetFillInterval().AsDuration() != time.Second {
		p = append(p, "the default bucket could refuse requests that match no descriptor: "+jsonOf(tb))
	}
	if l.GetVhRateLimits().String() != "INCLUDE" {
		p = append(p, fmt.Sprintf("vh_rate_limits is %s: the api route's requests would not send the virtual host's descriptors as the global filter does", l.GetVhRateLimits()))
	}
	found := false
	for _, h := range l.GetResponseHeadersToAdd() {
		if h.GetHeader().GetKey() == preLimitHeader && h.GetHeader().GetValue() == preLimitValue {
			found = true
		}
	}
	if !found {
		p = append(p, "response_headers_to_add is "+jsonOf(l.GetResponseHeadersToAdd()))
	}
	got := map[string]bool{}
	for _, d := range l.GetDescriptors() {
		var es []string
		for _, en := range d.GetEntries() {
			es = append(es, en.GetKey()+"="+en.GetValue())
		}
		k := strings.Join(es, ",")
		got[k] = true
		L, ok := want[k]
		tb := d.GetTokenBucket()
		switch {
		case !ok:
			p = append(p, "unexpected descriptor "+k)
		case tb.GetMaxTokens() != 2*L || tb.GetTokensPerFill().GetValue() != L || tb.GetFillInterval().AsDuration() != time.Minute:
			p = append(p, fmt.Sprintf("%s: max_tokens=%d tokens_per_fill=%d fill_interval=%s (want %d, %d, 60s)", k, tb.GetMaxTokens(), tb.GetTokensPerFill().GetValue(), tb.GetFillInterval().AsDuration(), 2*L, L))
		}
	}
	for k := range want {
		if !got[k] {
			p = append(p, "no descriptor "+k)
		}
	}
	return p
}
