package xdscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"istio.io/istio/pilot/pkg/features"
)

// The package's ambient render (tests/golden/out/ambient-A, ambient-B: `meshMode: ambient`) on
// Istio's generator with ambient enabled (ambient.go). For each variant: every EnvoyFilter of the
// render aimed at the ingress reaches the ambient ingress (the Gateway API Gateway's pods); each HTTP
// filter it inserts is in the ingress listener's chain before the router, each cluster it adds
// exists, the virtual host gets its rate_limits (and variant A's api route its own). The local
// bucket's filter reaches the waypoint and nothing else, and its bucket lands on productpage's chain
// of the waypoint's main_internal listener only, before the router: not on the chain of reviews, the
// other Service behind the same waypoint on the same port, not on the HBONE-terminating listener.
// The per-route form (tests/golden/out/local-ambient) lands on the routes of productpage's route
// configuration only. Controls, each of which must fail the check it controls: the filters aimed at
// another Gateway reach nothing; the bucket on a chain that does not exist, or aimed at another
// waypoint, lands nowhere; the bucket or its routes without the chain's name land on reviews too.
// And the earlier probes: a bucket by targetRefs lands (on the chain it names; per route without a
// route configuration name, on every chain of the port, reviews' too), by workloadSelector nowhere.
//
//	XDSCHECK_AMBIENT_GOLDEN  tests/golden/out (the committed renders)
func TestAmbient(t *testing.T) {
	// Run only by the ambient section of tests/istio/run.sh, which sets both; the matrix's runs of
	// every test leave it out as they leave out the other sections' tests.
	root := os.Getenv("XDSCHECK_AMBIENT_GOLDEN")
	if root == "" {
		t.Skip("XDSCHECK_AMBIENT_GOLDEN not set")
	}
	if !features.EnableAmbient {
		t.Fatalf("FAILED: input: run with PILOT_ENABLE_AMBIENT=true (Istio reads it at start)")
	}
	for _, v := range []string{"A", "B"} {
		docs, err := LoadDir(filepath.Join(root, "ambient-"+v))
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		m := generateAmbient(t, docs)
		t.Run(v+"/ingress-filters", func(t *testing.T) { report(t, v+"/ingress-filters", ambientIngressProblem(m, docs)) })
		t.Run(v+"/ingress-config", func(t *testing.T) { report(t, v+"/ingress-config", ambientConfigProblem(m, docs, v)) })
		t.Run(v+"/waypoint-bucket", func(t *testing.T) { report(t, v+"/waypoint-bucket", waypointBucketProblem(m, docs, false)) })
		t.Run(v+"/control-other-gateway", func(t *testing.T) {
			other := Clone(docs)
			for _, d := range other {
				if d.Kind() == "EnvoyFilter" {
					refs, _ := d["spec"].(map[string]any)["targetRefs"].([]any)
					for _, r := range refs {
						r.(map[string]any)["name"] = "other-gateway"
					}
				}
			}
			om := generateAmbient(t, other)
			p, c, w := ambientIngressProblem(om, other), ambientConfigProblem(om, other, v), waypointBucketProblem(om, other, false)
			report(t, v+"/control-other-gateway", orFinding(p.ok || c.ok || w.ok, "a check passed with every filter aimed at Gateway other-gateway",
				"the three checks fail: "+p.text+"; "+c.text+"; "+w.text))
		})
	}
	adocs, err := LoadDir(filepath.Join(root, "ambient-A"))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	routedAll, err := LoadDir(filepath.Join(root, "local-ambient"))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	// Its EnvoyFilter only: its waypoint Gateway is the same waypoint the stack's render creates.
	var routed []Doc
	for _, d := range routedAll {
		if d.Kind() == "EnvoyFilter" {
			routed = append(routed, d)
		}
	}
	perRoute := append(Clone(adocs), routed...)
	t.Run("per-route-bucket", func(t *testing.T) {
		report(t, "per-route-bucket", waypointBucketProblem(generateAmbient(t, perRoute), routed, true))
	})
	for _, c := range waypointControls(adocs, routed) {
		id := "control-" + c.name
		t.Run(id, func(t *testing.T) {
			o := waypointBucketProblem(generateAmbient(t, c.docs), c.bucket, c.perRoute)
			report(t, id, orFinding(o.ok, "the check passed: "+o.text, "the check fails as it must: "+o.text))
		})
	}
	for _, c := range waypointBucketCases() {
		id := "waypoint-bucket-" + c.name
		t.Run(id, func(t *testing.T) {
			chains := waypointChainsWith(generateAmbient(t, append(Clone(adocs), c.filter)), c.httpFilter)
			got := strings.Join(chains, ", ")
			report(t, id, orFinding(c.lands != (len(chains) > 0), fmt.Sprintf("expected landing=%v; got chains [%s]", c.lands, got), fmt.Sprintf("lands in [%s]", got)))
		})
	}
}

// outcome: a check's result, its text a finding when ok, a problem otherwise.
type outcome struct {
	ok   bool
	text string
}

func orFinding(bad bool, problem, finding string) outcome {
	if bad {
		return outcome{false, problem}
	}
	return outcome{true, finding}
}

func report(t *testing.T, id string, o outcome) {
	t.Helper()
	if o.ok {
		t.Logf("FINDING: %s: %s", id, o.text)
	} else {
		t.Errorf("FAILED: %s: %s", id, o.text)
	}
}

// ambientIngressProblem: every EnvoyFilter of the render aimed at the ingress reaches the ingress pods, and no other.
func ambientIngressProblem(m *ambientMesh, docs []Doc) outcome {
	want, got := renderFilters(docs, false), attachedFilters(m.cg, m.ingress)
	return orFinding(strings.Join(want, ",") != strings.Join(got, ",") || len(want) == 0,
		fmt.Sprintf("ingress pod %s/%s-istio: expected the render's filters %v; got %v", ambientIngressNS, ambientIngress, want, got),
		fmt.Sprintf("all %d filters reach %s/%s-istio", len(want), ambientIngressNS, ambientIngress))
}

// ambientConfigProblem: the render's HTTP filters, clusters and rate_limits in the ingress's configuration.
func ambientConfigProblem(m *ambientMesh, docs []Doc, variant string) outcome {
	ls := m.cg.Listeners(m.ingress)
	l := findListener(ls, "0.0.0.0_8080")
	if l == nil || len(l.FilterChains) == 0 {
		return outcome{false, fmt.Sprintf("no listener 0.0.0.0_8080 (listeners %v)", listenerNames(ls))}
	}
	names := httpFilterNames(hcmOf(l.FilterChains[0]))
	var problems []string
	inserted := 0
	for _, d := range docs {
		if aimedAtWaypoint(d) {
			continue // the local bucket's: on the waypoint (waypointBucketProblem)
		}
		for _, p := range Patches(d) {
			name, _ := Dig(p, "patch", "value", "name").(string)
			switch p["applyTo"] {
			case "HTTP_FILTER":
				inserted++
				if i := indexOf(names, name); i < 0 || i > indexOf(names, "envoy.filters.http.router") {
					problems = append(problems, fmt.Sprintf("%s: HTTP filter %s not before the router in %v", d.Ref(), name, names))
				}
			case "CLUSTER":
				if findCluster(m.cg.Clusters(m.ingress), name) == nil {
					problems = append(problems, fmt.Sprintf("%s: cluster %s missing", d.Ref(), name))
				}
			}
		}
	}
	vh := findVhost(m.cg.RoutesFromListeners(m.ingress, ls), "http.8080", "*:8080")
	if vh == nil || len(vh.RateLimits) == 0 {
		problems = append(problems, "virtual host *:8080 of http.8080 without rate_limits")
	}
	if variant == "A" {
		if r := findRoute(vh, "api"); r == nil || len(r.GetRoute().GetRateLimits()) == 0 {
			problems = append(problems, fmt.Sprintf("route api without rate_limits (routes %v)", routeNames(vh)))
		}
	}
	return orFinding(len(problems) > 0 || inserted == 0, strings.Join(problems, "; "),
		fmt.Sprintf("%d HTTP filters before the router %v, the clusters, the virtual host's rate_limits", inserted, names))
}

// waypointBucketCase: a local bucket written one way, and whether Istio's generator puts it on the waypoint.
type waypointBucketCase struct {
	name, httpFilter string
	lands            bool
	filter           Doc
}

func waypointBucketCases() []waypointBucketCase {
	bucket := func(name string, target map[string]any, patch map[string]any) Doc {
		spec := map[string]any{"configPatches": []any{patch}}
		for k, v := range target {
			spec[k] = v
		}
		return Doc{"apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
			"metadata": map[string]any{"name": name, "namespace": ambientNamespace}, "spec": spec}
	}
	value := func(n string) map[string]any {
		return map[string]any{"name": n, "typed_config": map[string]any{"@type": "type.googleapis.com/udpa.type.v1.TypedStruct",
			"type_url": "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit", "value": map[string]any{"stat_prefix": n}}}
	}
	chain := func(n string) map[string]any {
		return map[string]any{"applyTo": "HTTP_FILTER", "match": map[string]any{"context": "SIDECAR_INBOUND", "listener": map[string]any{
			"name": "main_internal", "filterChain": map[string]any{"name": "inbound-vip|9080|http|productpage.default.svc.cluster.local",
				"filter": map[string]any{"name": "envoy.filters.network.http_connection_manager"}}}},
			"patch": map[string]any{"operation": "INSERT_BEFORE", "value": value(n)}}
	}
	waypoint := map[string]any{"targetRefs": []any{map[string]any{"group": gatewayAPIGroup, "kind": "Gateway", "name": ambientWaypoint}}}
	sidecar := map[string]any{"workloadSelector": map[string]any{"labels": map[string]any{"app": "productpage"}}}
	perRoute := map[string]any{"applyTo": "HTTP_ROUTE", "match": map[string]any{"context": "SIDECAR_INBOUND", "routeConfiguration": map[string]any{
		"vhost": map[string]any{"name": "inbound|http|9080", "route": map[string]any{"action": "ANY"}}}},
		"patch": map[string]any{"operation": "MERGE", "value": map[string]any{"typed_per_filter_config": map[string]any{"probe.route": value("probe.route")["typed_config"]}}}}
	return []waypointBucketCase{
		{"targetRefs-chain", "probe.chain", true, bucket("probe-chain", waypoint, chain("probe.chain"))},
		{"workloadSelector-chain", "probe.selector", false, bucket("probe-selector", sidecar, chain("probe.selector"))},
		{"targetRefs-per-route", "probe.route", true, bucket("probe-route", waypoint, perRoute)},
	}
}

// waypointChainsWith: listener/chain of every waypoint HTTP chain holding the named HTTP filter or per-route config.
func waypointChainsWith(m *ambientMesh, name string) []string {
	var out []string
	for _, l := range m.cg.Listeners(m.waypoint) {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			has := indexOf(httpFilterNames(h), name) >= 0
			for _, vh := range h.GetRouteConfig().GetVirtualHosts() {
				for _, r := range vh.Routes {
					if _, ok := r.TypedPerFilterConfig[name]; ok {
						has = true
					}
				}
			}
			if has {
				out = append(out, l.Name+"/"+fc.Name)
			}
		}
	}
	return out
}
