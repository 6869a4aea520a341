package xdscheck

import (
	"fmt"
	"os"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"

	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pkg/jwt"
)

// Rules keyed by a verified identity (tests/istio/render-identity.ts): the shop's gateway with
// GlobalRateLimit rules whose counter is the verified token's claim. Expected values are written
// from the rules in render-identity.ts and from Envoy's API, not read from the render.
//
//	XDSCHECK_IDENTITY_DIR      directory with the identity render's all.yaml
//	XDSCHECK_IDENTITY_CONTROL  directory with the control render (the header recipe): the descriptor check must fail there
const (
	filterJwtAuthn  = "envoy.filters.http.jwt_authn"
	identityIssuer  = "https://auth.shop.example.com"
	identityJwks    = "https://auth.shop.example.com/.well-known/jwks.json"
	identityPayload = "payload"
)

// httpFiltersOn: the HTTP filters of the shop gateway's port-80 listener, and its connection manager's.
func shopHTTPFilters(ls []*listenerv3.Listener) ([]string, []any, string) {
	l := findListener(ls, fmt.Sprintf("0.0.0.0_%d", userPort))
	if l == nil {
		return nil, nil, fmt.Sprintf("no listener 0.0.0.0_%d; have %v", userPort, listenerNames(ls))
	}
	for _, fc := range l.FilterChains {
		if h := hcmOf(fc); h != nil {
			var configs []any
			for _, f := range h.HttpFilters {
				configs = append(configs, f.GetTypedConfig())
			}
			return httpFilterNames(h), configs, ""
		}
	}
	return nil, nil, "no HTTP connection manager on the listener"
}

// jwtProviderProblem: the generated JWT filter verifies the issuer's tokens with its key set, writes
// the payload to dynamic metadata under `payload`, and copies no claim into a header.
func jwtProviderProblem(ls []*listenerv3.Listener) string {
	l := findListener(ls, fmt.Sprintf("0.0.0.0_%d", userPort))
	if l == nil {
		return "no listener"
	}
	for _, fc := range l.FilterChains {
		h := hcmOf(fc)
		if h == nil {
			continue
		}
		for _, f := range h.HttpFilters {
			if f.GetName() != filterJwtAuthn {
				continue
			}
			cfg := &jwtv3.JwtAuthentication{}
			if err := f.GetTypedConfig().UnmarshalTo(cfg); err != nil {
				return fmt.Sprintf("jwt_authn config: %v", err)
			}
			for name, p := range cfg.GetProviders() {
				if p.GetIssuer() != identityIssuer {
					continue
				}
				switch {
				case p.GetPayloadInMetadata() != identityPayload:
					return fmt.Sprintf("provider %s: payload_in_metadata %q, want %q", name, p.GetPayloadInMetadata(), identityPayload)
				case len(p.GetClaimToHeaders()) > 0:
					return fmt.Sprintf("provider %s: claim_to_headers %v: a claim is copied into a header", name, p.GetClaimToHeaders())
				case p.GetRemoteJwks() != nil && p.GetRemoteJwks().GetHttpUri().GetUri() != identityJwks:
					return fmt.Sprintf("provider %s: remote JWKS %q, want %q", name, p.GetRemoteJwks().GetHttpUri().GetUri(), identityJwks)
				}
				return ""
			}
			return fmt.Sprintf("no provider of issuer %s in %v", identityIssuer, jsonOf(cfg))
		}
	}
	return "no " + filterJwtAuthn + " filter"
}

// identityEntriesProblem: every rate_limits entry of the rule reads the verified issuer and claim
// from the JWT filter's payload (metadata actions, source DYNAMIC), and none reads a request header
// or a query parameter (what a client writes).
func identityEntriesProblem(rcs []*routev3.RouteConfiguration, rule, claim string) string {
	vh := findVhost(rcs, fmt.Sprintf("http.%d", userPort), userVhost)
	if vh == nil {
		return fmt.Sprintf("no virtual host %s; have %v", userVhost, routeConfigSummary(rcs))
	}
	all := append([]*routev3.RateLimit{}, vh.RateLimits...)
	// The per-instance layout: each rate-limit filter's own rate_limits in the virtual host's per-filter config.
	for name, a := range vh.GetTypedPerFilterConfig() {
		pr := &rlv3.RateLimitPerRoute{}
		// Another filter's, or a wrapper that switches a filter off (the platform defaults' switch).
		if !strings.HasPrefix(name, FilterRateLimit) || !a.MessageIs(pr) {
			continue
		}
		if err := a.UnmarshalTo(pr); err != nil {
			return fmt.Sprintf("per-filter config %s: %v", name, err)
		}
		all = append(all, pr.GetRateLimits()...)
	}
	n := 0
	for _, rl := range all {
		if firstValue(rl) != rule {
			continue
		}
		n++
		var reads []string
		for _, a := range rl.Actions[1:] {
			if a.GetRequestHeaders() != nil || a.GetQueryParameters() != nil {
				return fmt.Sprintf("entry %d of %s reads what the client sends: %s", n, rule, actionString(a))
			}
			if m := a.GetMetadata(); m != nil {
				var path []string
				for _, s := range m.GetMetadataKey().GetPath() {
					path = append(path, s.GetKey())
				}
				reads = append(reads, fmt.Sprintf("%s %s[%s]->%s", m.GetSource(), m.GetMetadataKey().GetKey(), strings.Join(path, "."), m.GetDescriptorKey()))
			}
		}
		want := fmt.Sprintf("DYNAMIC %s[%s.iss]->identity_issuer", filterJwtAuthn, identityPayload)
		if len(reads) == 0 || reads[0] != want {
			return fmt.Sprintf("entry %d of %s reads %v, want first %s", n, rule, reads, want)
		}
		if n == 1 && (len(reads) != 2 || reads[1] != fmt.Sprintf("DYNAMIC %s[%s.%s]->identity", filterJwtAuthn, identityPayload, claim)) {
			return fmt.Sprintf("entry 1 of %s reads %v, want the issuer then payload.%s", rule, reads, claim)
		}
	}
	if n == 0 {
		return fmt.Sprintf("no rate_limits entry of %s among %d entries", rule, len(all))
	}
	return ""
}

func identityChecks(ls []*listenerv3.Listener, rcs []*routev3.RouteConfiguration) map[string]string {
	res := map[string]string{}
	res["jwt-before-ratelimit"] = func() string {
		names, _, problem := shopHTTPFilters(ls)
		if problem != "" {
			return problem
		}
		j, limits := indexOf(names, filterJwtAuthn), 0
		for i, n := range names {
			if !strings.HasPrefix(n, FilterRateLimit) {
				continue
			}
			limits++
			if j < 0 || i < j {
				return fmt.Sprintf("filters %v: want %s before %s", names, filterJwtAuthn, n)
			}
		}
		if limits == 0 {
			return fmt.Sprintf("filters %v: no rate-limit filter", names)
		}
		return ""
	}()
	res["jwt-payload-in-metadata"] = jwtProviderProblem(ls)
	res["per-user-reads-verified-claim"] = identityEntriesProblem(rcs, "per-user", "sub")
	res["account-per-user-reads-verified-claim"] = identityEntriesProblem(rcs, "account-per-user", "sub")
	return res
}

// generateIdentityGateway: Istio's generator for the shop's gateway, Envoy fetching the key set
// itself (PILOT_JWT_ENABLE_REMOTE_JWKS=envoy): in the default modes istiod fetches it over the
// network, which a generator run has no server for. The key set's source changes neither the
// filter order nor where the payload goes.
func generateIdentityGateway(t *testing.T, docs []Doc) ([]*listenerv3.Listener, []*routev3.RouteConfiguration) {
	saved := features.JwksFetchMode
	features.JwksFetchMode = jwt.Envoy
	defer func() { features.JwksFetchMode = saved }()
	return generateUserGateway(t, docs)
}

func identityDocs(t *testing.T, env string) []Doc {
	dir := os.Getenv(env)
	if dir == "" {
		t.Skip(env + " not set (run tests/istio/run.sh)")
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestIdentity: the token check runs before the rate-limit filter, and the identity rules' descriptors read the verified claim.
func TestIdentity(t *testing.T) {
	ls, rcs := generateIdentityGateway(t, identityDocs(t, "XDSCHECK_IDENTITY_DIR"))
	if names, _, problem := shopHTTPFilters(ls); problem == "" {
		t.Logf("FINDING: identity: the gateway's HTTP filters: %s", strings.Join(names, " > "))
	}
	res := identityChecks(ls, rcs)
	for _, id := range sortedKeys(res) {
		problem := res[id]
		t.Run(id, func(t *testing.T) {
			if problem != "" {
				t.Errorf("FAILED: %s: %s", id, problem)
			}
		})
	}
}

// TestIdentityDefaultLayout: the same checks on the component's default layout (a rate-limit
// filter of its own, the per-value counters' filter apart, rate_limits in per-filter configs).
func TestIdentityDefaultLayout(t *testing.T) {
	ls, rcs := generateIdentityGateway(t, identityDocs(t, "XDSCHECK_IDENTITY_DEFAULT"))
	if names, _, problem := shopHTTPFilters(ls); problem == "" {
		t.Logf("FINDING: identity default layout: the gateway's HTTP filters: %s", strings.Join(names, " > "))
	}
	res := identityChecks(ls, rcs)
	for _, id := range sortedKeys(res) {
		problem := res[id]
		t.Run(id, func(t *testing.T) {
			if problem != "" {
				t.Errorf("FAILED: %s: %s", id, problem)
			}
		})
	}
}

// TestIdentityControl: the hand-made recipe (claim copied into x-user, a per-value rule on x-user)
// fails the descriptor check (its entry reads a request header a client can send) and the JWT check
// (a claim copied into a header), while the filter order holds there too.
func TestIdentityControl(t *testing.T) {
	ls, rcs := generateIdentityGateway(t, identityDocs(t, "XDSCHECK_IDENTITY_CONTROL"))
	res := identityChecks(ls, rcs)
	if res["jwt-before-ratelimit"] != "" {
		t.Errorf("FAILED: control: the filter order should hold for the recipe too: %s", res["jwt-before-ratelimit"])
	}
	if p := res["per-user-reads-verified-claim"]; !strings.Contains(p, "reads what the client sends: request_headers x-user") {
		t.Errorf("FAILED: control: the descriptor check passed the header recipe (%q)", p)
	} else {
		t.Logf("FINDING: control: %s", p)
	}
	if p := res["jwt-payload-in-metadata"]; !strings.Contains(p, "claim_to_headers") {
		t.Errorf("FAILED: control: the JWT check passed a claim copied into a header (%q)", p)
	} else {
		t.Logf("FINDING: control: %s", p)
	}
}
