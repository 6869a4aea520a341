package xdscheck

import (
	"strings"
	"testing"
)

// TestAuthz: the AuthorizationPolicies on the rate-limit service's and Redis's inbound chains, as
// Istio generates them, let through only the gateway (gRPC port) and the rate-limit service (Redis).
func TestAuthz(t *testing.T) {
	docs, _ := inputs(t)
	fs := CheckAuthz(t, docs)
	if len(fs) != len(AuthzCases) {
		t.Fatalf("expected %d findings, got %d: %v", len(AuthzCases), len(fs), fs)
	}
	for _, f := range fs {
		f := f
		t.Run(f.ID, func(t *testing.T) {
			if !f.OK() {
				t.Errorf("FAILED: %s: %s: expected %s; got: %s", f.ID, f.Object, f.Expectation, f.Problem)
			} else {
				t.Logf("%s: %s", f.Object, f.Expectation)
			}
		})
	}
}

// TestAuthzControls: the check fails when a policy allows another identity, allows everyone, or is
// missing (so it does not pass for want of a policy to check).
func TestAuthzControls(t *testing.T) {
	docs, _ := inputs(t)
	controls := []struct {
		name   string
		policy string
		edit   func(d Doc)
		want   string
	}{
		{"gateway-principal-swapped", "ratelimit-from-gateway", func(d Doc) {
			setPrincipals(d, []any{"cluster.local/ns/default/sa/bookinfo-productpage"})
		}, "authz/ratelimit-grpc"},
		{"redis-open-to-everyone", "redis-from-ratelimit", func(d Doc) {
			rules := Dig(d, "spec", "rules").([]any)
			delete(rules[0].(map[string]any), "from")
		}, "authz/redis"},
		{"ratelimit-policy-missing", "ratelimit-from-gateway", nil, "authz/ratelimit-grpc"},
		// The gateway's rule without its port: the JSON API (8080) and debug server (6070) would be
		// open to it through the passthrough chains; the check must name them.
		{"ratelimit-every-port", "ratelimit-from-gateway", func(d Doc) {
			rules := Dig(d, "spec", "rules").([]any)
			delete(rules[0].(map[string]any), "to")
		}, "authz/ratelimit-grpc"},
		{"redis-principal-gateway", "redis-from-ratelimit", func(d Doc) {
			setPrincipals(d, []any{"cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"})
		}, "authz/redis"},
	}
	for _, c := range controls {
		c := c
		t.Run(c.name, func(t *testing.T) {
			mutated := Clone(docs)
			var kept []Doc
			for _, d := range mutated {
				if d.Kind() == "AuthorizationPolicy" && d.Name() == c.policy {
					if c.edit == nil {
						continue
					}
					c.edit(d)
				}
				kept = append(kept, d)
			}
			if len(kept) == len(mutated) && c.edit == nil {
				t.Fatalf("AuthorizationPolicy %s not rendered", c.policy)
			}
			for _, f := range CheckAuthz(t, kept) {
				if f.ID == c.want {
					if f.OK() {
						t.Errorf("FAILED: %s: control: %s still passes", c.name, c.want)
					} else if c.name == "ratelimit-every-port" && !(strings.Contains(f.Problem, "port 8080 is open") && strings.Contains(f.Problem, "port 6070 is open")) {
						t.Errorf("FAILED: %s: control: %s fails, but not on ports 8080 and 6070: %s", c.name, c.want, f.Problem)
					} else {
						t.Logf("control %s: %s fails as it must: %s", c.name, c.want, f.Problem)
					}
					return
				}
			}
			t.Errorf("FAILED: %s: control: no finding %s", c.name, c.want)
		})
	}
}

func setPrincipals(d Doc, ps []any) {
	rules := Dig(d, "spec", "rules").([]any)
	from := rules[0].(map[string]any)["from"].([]any)
	from[0].(map[string]any)["source"].(map[string]any)["principals"] = ps
}
