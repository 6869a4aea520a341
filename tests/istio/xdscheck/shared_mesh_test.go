package xdscheck

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"istio.io/istio/pkg/config/mesh"
)

// The shared-mesh scenario (shared_mesh.go): the stack next to other teams' objects on one mesh.
// Inputs from tests/istio/run.sh:
//
//	XDSCHECK_SHARED_DIR          the default render (scoped): all.yaml plus not-appliable/ objects
//	XDSCHECK_SHARED_LITERAL_DIR  the render with the specification's literal settings
//	                             (--set vhostScope=all --set filterNamespaces=root --set mutualTlsScope=mesh)
//	XDSCHECK_VARIANT             A (default) or B: the local bucket the controls look for
//
// Every result is a subtest; a pass logs "FINDING: <id>: <what was seen>", a failure
// "FAILED: <id>: <object>: expected ...; got: ...".
func sharedDocs(t *testing.T, env string) []Doc {
	t.Helper()
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

func generateShared(t *testing.T, docs []Doc) *SharedGenerated {
	t.Helper()
	g, err := GenerateShared(t, docs)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	return g
}

// TestSharedMesh: with the scoped render, nothing of the stack reaches the other teams' gateway
// virtual hosts, listeners or workloads, and the stack keeps its own limits and STRICT mTLS.
func TestSharedMesh(t *testing.T) {
	g := generateShared(t, sharedDocs(t, "XDSCHECK_SHARED_DIR"))
	fs := SharedFindings(g)
	for _, f := range fs {
		f := f
		t.Run(f.ID, func(t *testing.T) {
			if !f.OK() {
				t.Errorf("FAILED: %s: %s: expected %s; got: %s", f.ID, f.Object, f.Expectation, f.Problem)
			} else {
				t.Logf("FINDING: %s: %s: %s", f.ID, f.Object, f.Expectation)
			}
		})
	}
}

// sharedControl: with the literal render a check must fail, and the leak it names must be the one
// the literal setting causes (evidence read from the generated configuration and the render).
type sharedControl struct {
	name    string
	finding string
	mutate  func(docs []Doc) error // optional, applied to the literal render
	// evidence returns what proves the specific leak, or a problem when the leak is not there.
	evidence func(g *SharedGenerated, e Expect) (string, string)
}

var sharedControls = []sharedControl{
	{
		// Istio's rc_patch.go (virtualHostMatch): a vhost match with name "" matches every virtual
		// host of the route configuration, the tenant's included.
		name: "tenant-vhost-gets-stack-limits", finding: SMTenantVhost,
		evidence: func(g *SharedGenerated, _ Expect) (string, string) {
			ef := Find(g.Render, "EnvoyFilter", "", EFVhost)
			if ef == nil || len(Patches(ef)) == 0 {
				return "", "EnvoyFilter " + EFVhost + " not rendered"
			}
			vhm, _ := Dig(Patches(ef)[0], "match", "routeConfiguration", "vhost").(map[string]any)
			name, hasName := vhm["name"]
			if !hasName || name != "" {
				return "", fmt.Sprintf("%s matches virtual host %v, not every virtual host (\"\")", ef.Ref(), name)
			}
			vh := findVhost(g.StackGateway.Routes, fmt.Sprintf("http.%d", stackGatewayPort), fmt.Sprintf("%s:%d", shopHost, shopPort))
			if vh == nil {
				return "", "tenant virtual host absent"
			}
			if !hasURLPathAction(vh.RateLimits, "PATH") {
				return "", "the tenant virtual host does not carry the stack's CEL PATH descriptor: " + rateLimitsText(vh.RateLimits)
			}
			return fmt.Sprintf("%s (vhost name \"\") puts the stack's CEL PATH descriptor on the tenant's virtual host %s:%d: every tenant request calls the stack's rate-limit service", ef.Ref(), shopHost, shopPort), ""
		},
	},
	{
		// The local filter in the root namespace selects app=productpage in every namespace.
		name: "other-productpage-gets-local-bucket", finding: SMOtherProductpage,
		evidence: func(g *SharedGenerated, e Expect) (string, string) {
			ef := Find(g.Render, "EnvoyFilter", "", EFLocal)
			root := mesh.DefaultMeshConfig().GetRootNamespace()
			if ef == nil || ef.Namespace() != root {
				return "", fmt.Sprintf("%s is not in the root namespace %s", objRef(g.Render, "EnvoyFilter", EFLocal), root)
			}
			for _, c := range inboundChains(g.OtherProductpage.Listeners) {
				if c.hcm == nil || c.port != stackAppPort {
					continue
				}
				for _, b := range localBuckets(c) {
					if b == e.Bucket {
						return fmt.Sprintf("%s (root namespace %s, selector app=productpage) puts the stack's %d-token bucket on %s/productpage chain %s", ef.Ref(), root, e.Bucket, otherNamespace, c.label()), ""
					}
				}
			}
			return "", fmt.Sprintf("no inbound chain for %d of %s/productpage carries a local bucket of %d tokens", stackAppPort, otherNamespace, e.Bucket)
		},
	},
	{
		// A PeerAuthentication without a selector in the root namespace is the mesh-wide default
		// (pilot/pkg/security/authn/policy_applier.go, ComposePeerAuthentication).
		name: "legacy-strict", finding: SMLegacyPlaintext,
		evidence: func(g *SharedGenerated, _ Expect) (string, string) {
			pa := meshWideStrict(g.Render)
			if pa == nil {
				return "", "the render has no mesh-wide STRICT PeerAuthentication: " + peerAuthRefs(g.Render)
			}
			tls := inboundTLS(g.OtherLegacy.Listeners, legacyPort)
			if len(tls.plaintext) > 0 || len(tls.mtls) == 0 {
				return "", fmt.Sprintf("%s/legacy port %d is not STRICT: %s", otherNamespace, legacyPort, tls)
			}
			return fmt.Sprintf("%s (mesh-wide STRICT) leaves %s/legacy port %d only mTLS chains %v: its plain-text clients are refused", pa.Ref(), otherNamespace, legacyPort, tls.mtls), ""
		},
	},
	{
		// The global filter without listener.portNumber lands on every gateway listener, the
		// tenant's 9090 included (it would send a tenant's own rate_limits to the stack's service).
		name: "gateway-filter-without-port", finding: SMFilterPort,
		mutate: func(docs []Doc) error {
			ef := Find(docs, "EnvoyFilter", "", EFGlobal)
			if ef == nil {
				return fmt.Errorf("EnvoyFilter %s not rendered", EFGlobal)
			}
			for _, p := range Patches(ef) {
				if l, ok := Dig(p, "match", "listener").(map[string]any); ok {
					delete(l, "portNumber")
				}
			}
			return nil
		},
		evidence: func(g *SharedGenerated, e Expect) (string, string) {
			l := fmt.Sprintf("0.0.0.0_%d", shopAdminPort)
			if _, ok := rateLimitFilterListeners(g.StackGateway.Listeners)[l]; !ok {
				return "", fmt.Sprintf("%s not on the tenant's listener %s", FilterRateLimit, l)
			}
			if d := rateLimitDomain(g.StackGateway.Listeners, l); d != e.Domain {
				return "", fmt.Sprintf("the filter on %s has domain %q, not the stack's %q", l, d, e.Domain)
			}
			return fmt.Sprintf("%s without listener.portNumber puts the stack's %s (domain %q) on the tenant's listener %s", objRef(g.Render, "EnvoyFilter", EFGlobal), FilterRateLimit, e.Domain, l), ""
		},
	},
	{
		// The local filter without listener.portNumber also lands on the sidecar's passthrough HTTP
		// chain (virtualInbound-catchall-http: traffic to a port no Service declares).
		name: "local-filter-without-port", finding: SMStackLocal,
		mutate: func(docs []Doc) error {
			ef := Find(docs, "EnvoyFilter", "", EFLocal)
			if ef == nil {
				return fmt.Errorf("EnvoyFilter %s not rendered", EFLocal)
			}
			for _, p := range Patches(ef) {
				if l, ok := Dig(p, "match", "listener").(map[string]any); ok {
					delete(l, "portNumber")
				}
			}
			return nil
		},
		evidence: func(g *SharedGenerated, _ Expect) (string, string) {
			var on []string
			for _, c := range inboundChains(g.StackProductpage.Listeners) {
				if c.port != stackAppPort && localFilterOn(c) != "" {
					on = append(on, c.label())
				}
			}
			if len(on) == 0 {
				return "", fmt.Sprintf("no inbound chain of %s/productpage other than port %d carries %s", stackNamespace, stackAppPort, FilterLocalRateLimit)
			}
			return fmt.Sprintf("%s without listener.portNumber puts %s on %s/productpage chains %v too", objRef(g.Render, "EnvoyFilter", EFLocal), FilterLocalRateLimit, stackNamespace, on), ""
		},
	},
}

// localBuckets: the max_tokens of every local rate limit on a chain (HTTP filter and per-route).
func localBuckets(c inboundChain) []uint32 {
	var out []uint32
	for _, f := range c.hcm.HttpFilters {
		if f.Name != FilterLocalRateLimit {
			continue
		}
		if l, err := decodeLocalRateLimit(f.GetTypedConfig()); err == nil && l.GetTokenBucket() != nil {
			out = append(out, l.GetTokenBucket().GetMaxTokens())
		}
	}
	for _, vh := range c.hcm.GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.Routes {
			if a, ok := r.TypedPerFilterConfig[FilterLocalRateLimit]; ok {
				if l, err := decodeLocalRateLimit(a); err == nil && l.GetTokenBucket() != nil {
					out = append(out, l.GetTokenBucket().GetMaxTokens())
				}
			}
		}
	}
	return out
}

// TestSharedMeshControls: with the specification's literal settings each leak is there, and the
// matching check fails because of it.
func TestSharedMeshControls(t *testing.T) {
	docs := sharedDocs(t, "XDSCHECK_SHARED_LITERAL_DIR")
	e, err := ExpectFor(envOr("XDSCHECK_VARIANT", "A"), envOr("XDSCHECK_PLACEMENT", "all-routes"))
	if err != nil {
		t.Fatal(err)
	}
	literal := generateShared(t, docs)
	literalFindings := SharedFindings(literal)
	for _, c := range sharedControls {
		c := c
		t.Run(c.name, func(t *testing.T) {
			g, fs := literal, literalFindings
			if c.mutate != nil {
				mut := Clone(docs)
				if err := c.mutate(mut); err != nil {
					t.Fatalf("FAILED: %s: control cannot be applied: %v", c.name, err)
				}
				g = generateShared(t, mut)
				fs = SharedFindings(g)
			}
			f := FindingByID(fs, c.finding)
			ev, problem := c.evidence(g, e)
			switch {
			case f == nil:
				t.Errorf("FAILED: %s: control: check %s was not evaluated", c.name, c.finding)
			case f.OK():
				t.Errorf("FAILED: %s: control: with the literal settings check %s still passes (%s)", c.name, c.finding, strings.TrimSpace(problem+" "+ev))
			case problem != "":
				t.Errorf("FAILED: %s: control: check %s fails, but not for the leak it must show: %s; the check says: %s", c.name, c.finding, problem, f.Problem)
			default:
				t.Logf("FINDING: %s: detected: %s; check %s fails: %s", c.name, ev, c.finding, f.Problem)
			}
		})
	}
}
