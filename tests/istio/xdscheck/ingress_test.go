package xdscheck

import (
	"os"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	meshconfig "istio.io/api/mesh/v1alpha1"
)

// Inputs, beside XDSCHECK_DIR (tests/istio/run.sh):
//
//	XDSCHECK_PROFILE    seed or current (the render's API profile)
//	XDSCHECK_PORT_MODE  http (default) or tcp (the render's espPortMode)
func ingressInputs(t *testing.T) ([]Doc, IngressExpect) {
	t.Helper()
	dir := os.Getenv("XDSCHECK_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_DIR not set (run tests/istio/run.sh)")
	}
	e := IngressExpect{Profile: os.Getenv("XDSCHECK_PROFILE"), PortMode: envOr("XDSCHECK_PORT_MODE", "http"), Namespace: "default"}
	if e.Profile != "seed" && e.Profile != "current" {
		t.Skipf("XDSCHECK_PROFILE=%q: the managed-API checks need the profile (seed or current)", e.Profile)
	}
	if e.PortMode != "http" && e.PortMode != "tcp" {
		t.Fatalf("XDSCHECK_PORT_MODE=%q (want http or tcp)", e.PortMode)
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if Find(docs, "Ingress", "", IngressName) == nil {
		t.Skip("no Ingress " + IngressName + " in this render (managedApi=false)")
	}
	return docs, e
}

// The stack's mutual TLS (spec 2.10, config mutualTlsScope=workloads, both profiles): a
// PeerAuthentication of this name, mode STRICT, in each of the stack's namespaces, selecting the
// stack's pods. ESP listens on ESPHTTPPort (spec 2.8: --http_port=8081, the Service's target port).
const (
	StackPeerAuthentication = "mesh-ratelimit-mtls"
	ESPHTTPPort             = 8081
)

func findClusterByName(cs []*clusterv3.Cluster, name string) *clusterv3.Cluster {
	for _, c := range cs {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

// echoRoute generates the gateway configuration and returns "" when the gateway routes the Ingress
// path prefix to the ESP Service port, else what it found.
func echoRoute(t *testing.T, docs []Doc, mc *meshconfig.MeshConfig, e IngressExpect) (*IngressGenerated, string) {
	g, err := GenerateIngress(t, docs, mc)
	if err != nil {
		return nil, "cannot generate: " + err.Error()
	}
	if len(g.Derived) == 0 {
		return g, "Istio's Ingress controller derived no Gateway or VirtualService: it ignores the Ingress"
	}
	r, seen := IngressRoute(g.Routes, IngressPath)
	if r == nil {
		return g, "no route with prefix " + IngressPath + "; " + seen
	}
	if got := r.GetRoute().GetCluster(); got != e.ESPCluster() {
		return g, "route " + IngressPath + " goes to cluster " + got
	}
	return g, ""
}

// espInbound generates the ESP pod's sidecar and returns its inbound mutual-TLS state on the ESP
// port (how Istio builds the chains: see inboundTLS).
func espInbound(t *testing.T, docs []Doc) (portTLS, error) {
	ls, err := sidecarListeners(t, docs, []string{ESPService})
	if err != nil {
		return portTLS{}, err
	}
	l, ok := ls[ESPService]
	if !ok {
		return portTLS{}, errNoObject("Deployment with pods app=" + ESPService)
	}
	return inboundTLS(l, ESPHTTPPort), nil
}

// strictProblem: "" when the port accepts only mutual TLS (STRICT), else what it accepts.
func strictProblem(p portTLS) string {
	switch {
	case len(p.mtls) == 0 && len(p.plaintext) == 0 && len(p.other) == 0:
		return "no inbound chain for the port"
	case len(p.plaintext) > 0 || len(p.other) > 0 || len(p.mtls) == 0:
		return p.String()
	}
	return ""
}

// TestIngress: with a default Istio install's mesh config (ingressControllerMode STRICT, ingress
// class istio), the ingress gateway routes the Ingress path prefix to esp-echo port 80; the
// gateway's cluster for esp-echo uses Istio mutual TLS (auto mutual TLS); the ESP sidecar, under
// the stack's PeerAuthentication, accepts only mutual TLS.
func TestIngress(t *testing.T) {
	docs, e := ingressInputs(t)
	obj := "Ingress " + e.Namespace + "/" + IngressName
	g, problem := echoRoute(t, docs, DefaultMesh(), e)
	t.Run("echo-route-to-esp", func(t *testing.T) {
		if problem != "" {
			t.Errorf("FAILED: echo-route-to-esp: %s: expected the ingress gateway (default mesh config) to route prefix %s to %s; got: %s", obj, IngressPath, e.ESPCluster(), problem)
			return
		}
		t.Logf("%s (%s profile, %s port): gateway route config http.80 routes prefix %s to %s", obj, e.Profile, e.PortMode, IngressPath, e.ESPCluster())
	})
	t.Run("esp-cluster", func(t *testing.T) {
		if g == nil {
			t.Fatalf("FAILED: esp-cluster: Service %s/%s: expected gateway cluster %s; got: nothing generated", e.Namespace, ESPService, e.ESPCluster())
		}
		c := findClusterByName(g.Clusters, e.ESPCluster())
		if c == nil {
			t.Fatalf("FAILED: esp-cluster: Service %s/%s: expected gateway cluster %s; got: absent", e.Namespace, ESPService, e.ESPCluster())
		}
		// The client side is Istio's auto mutual TLS, the same for both profiles and port modes: the
		// endpoints carry tlsMode=istio (sidecar injected), and no namespace- or mesh-wide
		// PeerAuthentication says DISABLE. The stack's workload-level policy plays no part here.
		ok, where := IstioMutualTLS(c, e.ESPSNI())
		if !ok {
			t.Errorf("FAILED: esp-cluster: Service %s/%s (sidecar-injected pods): expected cluster %s to use Istio mutual TLS (SNI %s); got: %s", e.Namespace, ESPService, e.ESPCluster(), e.ESPSNI(), where)
			return
		}
		t.Logf("cluster %s (%s profile, %s port): Istio mutual TLS in %s", e.ESPCluster(), e.Profile, e.PortMode, where)
	})
	// The Ingress is no side door to productpage: its route configuration http.80 leads only to ESP.
	// Control: its backend pointed at productpage:9080 (in memory) and the same rule finds the route.
	t.Run("ingress-no-productpage", func(t *testing.T) {
		if g == nil {
			t.Fatalf("FAILED: ingress-no-productpage: %s: expected a generated route configuration http.80; got: nothing generated", obj)
		}
		ctl := Clone(docs)
		if err := pointIngressAt(ctl, "productpage", 9080); err != nil {
			t.Fatalf("FAILED: ingress-no-productpage: %s: control: %v", obj, err)
		}
		gc, err := GenerateIngress(t, ctl, DefaultMesh())
		switch got := productpageRoutesOf(g.Routes, "http.80"); {
		case len(got) > 0:
			t.Errorf("FAILED: ingress-no-productpage: %s: expected no route of http.80 to productpage; got: %v", obj, got)
		case err != nil || len(productpageRoutesOf(gc.Routes, "http.80")) == 0:
			t.Errorf("FAILED: ingress-no-productpage: %s: control: expected the rule to find a route to productpage once the backend is productpage:9080; got none (%v)", obj, err)
		default:
			t.Logf("FINDING: ingress-no-productpage: %s: http.80 leads only to %s; with its backend pointed at productpage the same rule finds %v", obj, e.ESPCluster(), productpageRoutesOf(gc.Routes, "http.80"))
		}
	})
	// The server side, which the stack's PeerAuthentication decides: the ESP sidecar accepts only
	// mutual TLS on the ESP port.
	t.Run("esp-inbound-strict", func(t *testing.T) {
		p, err := espInbound(t, docs)
		if err != nil {
			t.Fatalf("FAILED: esp-inbound-strict: PeerAuthentication %s/%s: expected the %s sidecar's inbound chains for port %d to accept only mutual TLS; got: %v", e.Namespace, StackPeerAuthentication, ESPService, ESPHTTPPort, err)
		}
		if pr := strictProblem(p); pr != "" {
			t.Errorf("FAILED: esp-inbound-strict: PeerAuthentication %s/%s: expected the %s sidecar's inbound chains for port %d to accept only mutual TLS (STRICT); got: %s", e.Namespace, StackPeerAuthentication, ESPService, ESPHTTPPort, pr)
			return
		}
		t.Logf("sidecar %s/%s port %d (%s profile, %s port): STRICT: %s", e.Namespace, ESPService, ESPHTTPPort, e.Profile, e.PortMode, p)
	})
}

// ingressControl changes the render (or the mesh config) in memory; the named check must then fail.
type ingressControl struct {
	name   string
	when   func(IngressExpect) bool
	mutate func(docs []Doc, mc *meshconfig.MeshConfig) ([]Doc, error)
	// check: the check the control must make fail (default: the route).
	check ingressCheck
}

type ingressCheck int

const (
	checkRoute      ingressCheck = iota
	checkClientMTLS              // esp-cluster: the gateway's cluster for the ESP Service
	checkServerMTLS              // esp-inbound-strict: the ESP sidecar's inbound chains
)

func removeKind(docs []Doc, kind string) []Doc {
	var out []Doc
	for _, d := range docs {
		if d.Kind() != kind {
			out = append(out, d)
		}
	}
	return out
}

var ingressControls = []ingressControl{
	// The issue this tier guards: a class name without an IngressClass object, under the default
	// STRICT mode, is ignored by Istio.
	{name: "no-ingressclass-strict", when: func(e IngressExpect) bool { return e.Profile == "current" },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			return removeKind(docs, "IngressClass"), nil
		}},
	{name: "ingressclass-other-controller", when: func(e IngressExpect) bool { return e.Profile == "current" },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			c := Find(docs, "IngressClass", "", IngressClass)
			if c == nil {
				return nil, errNoObject("IngressClass " + IngressClass)
			}
			c["spec"] = map[string]any{"controller": "example.com/other-controller"}
			return docs, nil
		}},
	{name: "annotation-other-class", when: func(e IngressExpect) bool { return e.Profile == "seed" },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			ing := Find(docs, "Ingress", "", IngressName)
			ann, _ := Dig(ing, "metadata", "annotations").(map[string]any)
			if ann == nil || ann["kubernetes.io/ingress.class"] == nil {
				return nil, errNoObject("annotation kubernetes.io/ingress.class on Ingress " + IngressName)
			}
			ann["kubernetes.io/ingress.class"] = "nginx"
			return docs, nil
		}},
	// The seed Ingress without pathType: the API server defaults it to ImplementationSpecific and
	// Istio matches `/echo` exactly, so /echo/<anything> is not routed.
	{name: "seed-without-pathtype", when: func(e IngressExpect) bool { return e.Profile == "seed" },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			paths, _ := Dig(Find(docs, "Ingress", "", IngressName), "spec", "rules").([]any)
			if len(paths) == 0 {
				return nil, errNoObject("Ingress " + IngressName + " rules")
			}
			ps, _ := Dig(paths[0].(map[string]any), "http", "paths").([]any)
			if len(ps) == 0 {
				return nil, errNoObject("Ingress " + IngressName + " paths")
			}
			delete(ps[0].(map[string]any), "pathType")
			return docs, nil
		}},
	// Only the annotation depends on the mode: an IngressClass for Istio is served even with OFF.
	{name: "ingress-controller-off", when: func(e IngressExpect) bool { return e.Profile == "seed" },
		mutate: func(docs []Doc, mc *meshconfig.MeshConfig) ([]Doc, error) {
			mc.IngressControllerMode = meshconfig.MeshConfig_OFF
			return docs, nil
		}},
	// The stack's own policy turned to DISABLE: the ESP sidecar then accepts plain text.
	{name: "peerauthentication-disable", check: checkServerMTLS, when: func(IngressExpect) bool { return true },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			pa := Find(docs, "PeerAuthentication", "default", StackPeerAuthentication)
			if pa == nil {
				return nil, errNoObject("PeerAuthentication default/" + StackPeerAuthentication)
			}
			spec, _ := pa["spec"].(map[string]any)
			if spec == nil || Dig(spec, "mtls", "mode") != "STRICT" {
				return nil, errNoObject("mode STRICT in PeerAuthentication default/" + StackPeerAuthentication)
			}
			spec["mtls"] = map[string]any{"mode": "DISABLE"}
			return docs, nil
		}},
	// Not the stack's object: the namespace's own policy, DISABLE for the whole namespace (written
	// here). The ESP sidecar stays STRICT (a workload policy wins on the server side), but the
	// gateway's auto mutual TLS reads only namespace- and mesh-wide policies
	// (PushContext.BestEffortInferServiceMTLSMode, pilot/pkg/model/push_context.go) and sends plain
	// text, which the sidecar refuses.
	{name: "namespace-peerauthentication-disable", check: checkClientMTLS, when: func(IngressExpect) bool { return true },
		mutate: func(docs []Doc, _ *meshconfig.MeshConfig) ([]Doc, error) {
			if Find(docs, "PeerAuthentication", "default", "default") != nil {
				return nil, errNoObject("a render without PeerAuthentication default/default (it has one)")
			}
			return append(docs, Doc{"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
				"metadata": map[string]any{"name": "default", "namespace": "default"},
				"spec":     map[string]any{"mtls": map[string]any{"mode": "DISABLE"}}}), nil
		}},
}

type errNoObject string

func (e errNoObject) Error() string { return string(e) + " not rendered" }

// TestIngressControls: each control must make its check fail, while the unchanged render passes
// it (so a pass of TestIngress is not vacuous). Also shows the other side of the default: with
// ingressControllerMode DEFAULT, an Ingress with a class name but no IngressClass is served.
func TestIngressControls(t *testing.T) {
	docs, e := ingressInputs(t)
	if _, p := echoRoute(t, Clone(docs), DefaultMesh(), e); p != "" {
		t.Fatalf("FAILED: controls: the unchanged render already fails the route check: %s", p)
	}
	for _, c := range ingressControls {
		c := c
		if !c.when(e) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			mc := DefaultMesh()
			mut, err := c.mutate(Clone(docs), mc)
			if err != nil {
				t.Fatalf("FAILED: %s: control cannot be applied: %v", c.name, err)
			}
			g, problem := echoRoute(t, mut, mc, e)
			switch c.check {
			case checkClientMTLS:
				cl := (*clusterv3.Cluster)(nil)
				if g != nil {
					cl = findClusterByName(g.Clusters, e.ESPCluster())
				}
				if cl == nil {
					t.Fatalf("FAILED: %s: cluster %s absent, so the control shows nothing", c.name, e.ESPCluster())
				}
				ok, where := IstioMutualTLS(cl, e.ESPSNI())
				if ok {
					t.Errorf("FAILED: %s: the mutual-TLS check still passes (%s): it cannot see mTLS turned off", c.name, where)
					return
				}
				t.Logf("detected: cluster %s without Istio mutual TLS: %s", e.ESPCluster(), where)
				// What the ESP sidecar makes of it: recorded.
				if p, err := espInbound(t, mut); err == nil {
					if strictProblem(p) == "" {
						t.Logf("while the %s sidecar stays STRICT on port %d (%s): its clients' plain text is refused", ESPService, ESPHTTPPort, p)
					} else {
						t.Logf("and the %s sidecar on port %d: %s", ESPService, ESPHTTPPort, p)
					}
				}
				return
			case checkServerMTLS:
				p, err := espInbound(t, mut)
				if err != nil {
					t.Fatalf("FAILED: %s: cannot generate the %s sidecar: %v", c.name, ESPService, err)
				}
				if strictProblem(p) == "" {
					t.Errorf("FAILED: %s: the inbound mutual-TLS check still passes (%s): it cannot see mTLS turned off", c.name, p)
				} else if len(p.plaintext) == 0 {
					t.Errorf("FAILED: %s: the inbound check fails, but not because plain text is accepted: %s", c.name, p)
				} else {
					t.Logf("detected: sidecar %s port %d accepts plain text: %s", ESPService, ESPHTTPPort, p)
				}
				return
			}
			if problem == "" {
				t.Errorf("FAILED: %s: the gateway still routes %s to %s: the check cannot see the Ingress ignored", c.name, IngressPath, e.ESPCluster())
				return
			}
			t.Logf("detected: %s", problem)
		})
	}
	if e.Profile == "current" {
		t.Run("default-mode-serves-classless", func(t *testing.T) {
			mc := DefaultMesh()
			mc.IngressControllerMode = meshconfig.MeshConfig_DEFAULT
			if _, p := echoRoute(t, removeKind(Clone(docs), "IngressClass"), mc, e); p != "" {
				t.Errorf("FAILED: default-mode-serves-classless: expected ingressControllerMode DEFAULT to serve the Ingress without an IngressClass object; got: %s", p)
			}
		})
	}
}

// productpageRoutesOf: `<virtual host>: <cluster>` of every route of route configuration rc whose
// cluster is a productpage Service's.
func productpageRoutesOf(rcs []*routev3.RouteConfiguration, rc string) []string {
	var out []string
	for _, r := range rcs {
		if r.GetName() != rc {
			continue
		}
		for _, vh := range r.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				if c := rt.GetRoute().GetCluster(); strings.Contains(c, "||productpage.") {
					out = append(out, vh.GetName()+": "+c)
				}
			}
		}
	}
	return out
}

// pointIngressAt sets the backend of the Ingress's first path to a Service and port (both API
// versions' field names).
func pointIngressAt(docs []Doc, service string, port int) error {
	rules, _ := Dig(Find(docs, "Ingress", "", IngressName), "spec", "rules").([]any)
	if len(rules) == 0 {
		return errNoObject("Ingress " + IngressName + " rules")
	}
	ps, _ := Dig(rules[0].(map[string]any), "http", "paths").([]any)
	if len(ps) == 0 {
		return errNoObject("Ingress " + IngressName + " paths")
	}
	b, _ := ps[0].(map[string]any)["backend"].(map[string]any)
	if b == nil {
		return errNoObject("Ingress " + IngressName + " backend")
	}
	if _, v1 := b["service"]; v1 {
		b["service"] = map[string]any{"name": service, "port": map[string]any{"number": port}}
	} else {
		b["serviceName"], b["servicePort"] = service, port
	}
	return nil
}
