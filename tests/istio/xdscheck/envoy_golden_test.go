package xdscheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	sigyaml "sigs.k8s.io/yaml"
)

// Golden files of the Envoy configuration Istio generates (docs/testing.md, "Golden files").
//
// Inputs come from tests/istio/run.sh:
//
//	XDSCHECK_GOLDEN         the repository's tests/golden directory: every stack case of in/<case>.yaml
//	                        (a `stack:` with a `variant:`) is generated from the committed rendered
//	                        objects of out/<case>/ and compared with envoy/<case>/*.yaml
//	XDSCHECK_GOLDEN_UPDATE  1: rewrite envoy/<case>/ instead of comparing (and remove stale files)
//	XDSCHECK_GOLDEN_ACTUAL  a directory: the generated files are written there too, <case>/<file>,
//	                        so the tier can show `diff -u` of what changed
//
// The files hold what the rate limits depend on, as Envoy receives it (protobuf JSON written as YAML
// with sorted keys): the gateway's HTTP filter chain, its route configuration, the rate-limit
// service's cluster, and the productpage sidecar's inbound HTTP filters on the application port.
// None of these messages carries a version, timestamp or hash (those live in the xDS response
// around them, which is not kept); lists keep Envoy's order, which is behaviour (filter order, first
// matching route); map keys are sorted. Two runs write the same bytes.

// EnvoyGoldenUpdate is the command that rewrites the files (printed on a difference).
const EnvoyGoldenUpdate = "bash tests/istio/run.sh --update-envoy-golden"

// envoyGoldenCase is one stack case of tests/golden/in.
type envoyGoldenCase struct {
	name    string
	variant string
}

func envoyGoldenCases(root string) ([]envoyGoldenCase, error) {
	files, err := filepath.Glob(filepath.Join(root, "in", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []envoyGoldenCase
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "refused-") {
			continue // refused input: its output is the error text, nothing rendered to generate for
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var in struct {
			Stack map[string]any `json:"stack"`
		}
		if err := sigyaml.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		v, _ := in.Stack["variant"].(string)
		if v == "" {
			continue // a GlobalRateLimit on its own: no bookinfo gateway or productpage proxy to generate for
		}
		if in.Stack["meshMode"] == "ambient" {
			continue // no sidecar and a Gateway API ingress: TestAmbient (ambient_test.go) generates for it
		}
		out = append(out, envoyGoldenCase{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), variant: v})
	}
	return out, nil
}

// protoValue turns a message into plain JSON values (maps with sorted keys once marshalled), so that
// protojson's deliberately unstable spacing never reaches the file.
func protoValue(m proto.Message) (any, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// httpFilterChains: per filter chain of the listener that has an HTTP connection manager, its name,
// match and HTTP filters (name and typed config), in Envoy's order.
func httpFilterChains(l *listenerv3.Listener, keep func(*listenerv3.FilterChain) bool) ([]any, error) {
	var out []any
	for _, fc := range l.FilterChains {
		h := hcmOf(fc)
		if h == nil || (keep != nil && !keep(fc)) {
			continue
		}
		var filters []any
		for _, f := range h.HttpFilters {
			v, err := protoValue(f)
			if err != nil {
				return nil, fmt.Errorf("listener %s http filter %s: %w", l.Name, f.Name, err)
			}
			filters = append(filters, v)
		}
		chain := map[string]any{"http_filters": filters}
		if fc.Name != "" {
			chain["name"] = fc.Name
		}
		if fc.FilterChainMatch != nil {
			m, err := protoValue(fc.FilterChainMatch)
			if err != nil {
				return nil, err
			}
			chain["filter_chain_match"] = m
		}
		if rc := h.GetRouteConfig(); rc != nil {
			v, err := protoValue(rc)
			if err != nil {
				return nil, err
			}
			chain["route_config"] = v
		}
		out = append(out, chain)
	}
	return out, nil
}

// envoyGoldenFiles generates the configuration for one case: file name -> YAML text.
func envoyGoldenFiles(t *testing.T, docs []Doc, e Expect) (map[string]string, error) {
	g, input := Generate(t, docs, e)
	if g == nil {
		return nil, fmt.Errorf("nothing generated: %v", input)
	}
	files := map[string]any{}

	l := findListener(g.GatewayListeners, e.GatewayListener())
	if l == nil {
		return nil, fmt.Errorf("no gateway listener %s; have %v", e.GatewayListener(), listenerNames(g.GatewayListeners))
	}
	chains, err := httpFilterChains(l, nil)
	if err != nil {
		return nil, err
	}
	files["gateway-http-filters.yaml"] = map[string]any{"listener": l.Name, "filter_chains": chains}

	rcName := fmt.Sprintf("http.%d", e.GatewayPort)
	found := false
	for _, rc := range g.GatewayRoutes {
		if rc.GetName() != rcName {
			continue
		}
		v, err := protoValue(rc)
		if err != nil {
			return nil, err
		}
		files["gateway-routes.yaml"] = v
		found = true
	}
	if !found {
		return nil, fmt.Errorf("no gateway route configuration %s; have %v", rcName, routeConfigSummary(g.GatewayRoutes))
	}

	c := findCluster(g.GatewayClusters, e.RLSCluster)
	if c == nil {
		return nil, fmt.Errorf("no cluster %s; have %v", e.RLSCluster, clusterNames(g.GatewayClusters, "ratelimit"))
	}
	cv, err := protoValue(c)
	if err != nil {
		return nil, err
	}
	files["gateway-ratelimit-cluster.yaml"] = cv

	in := findListener(g.SidecarListeners, "virtualInbound")
	if in == nil {
		return nil, fmt.Errorf("no sidecar listener virtualInbound; have %v", listenerNames(g.SidecarListeners))
	}
	onAppPort := func(fc *listenerv3.FilterChain) bool {
		return fc.GetFilterChainMatch().GetDestinationPort().GetValue() == e.AppPort
	}
	sch, err := httpFilterChains(in, onAppPort)
	if err != nil {
		return nil, err
	}
	if len(sch) == 0 {
		return nil, fmt.Errorf("no HTTP filter chain on port %d of the sidecar's virtualInbound listener", e.AppPort)
	}
	files["sidecar-inbound-http-filters.yaml"] = map[string]any{"listener": in.Name, "port": e.AppPort, "filter_chains": sch}

	out := map[string]string{}
	for name, v := range files {
		b, err := sigyaml.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[name] = string(b)
	}
	return out, nil
}

// firstDifference names the first line where two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, a, b)
		}
	}
	return "same lines"
}

// TestEnvoyGolden: for every stack case of tests/golden, the Envoy configuration Istio generates from
// the committed rendered objects equals the committed files of tests/golden/envoy/<case>/.
func TestEnvoyGolden(t *testing.T) {
	root := os.Getenv("XDSCHECK_GOLDEN")
	if root == "" {
		t.Skip("XDSCHECK_GOLDEN not set (run tests/istio/run.sh)")
	}
	update := os.Getenv("XDSCHECK_GOLDEN_UPDATE") == "1"
	actual := os.Getenv("XDSCHECK_GOLDEN_ACTUAL")
	cases, err := envoyGoldenCases(root)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	if len(cases) == 0 {
		t.Fatalf("FAILED: input: no stack case in %s/in", root)
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			id := c.name
			docs, err := LoadDir(filepath.Join(root, "out", c.name))
			if err != nil {
				t.Fatalf("FAILED: %s: tests/golden/out/%s: %v", id, c.name, err)
			}
			e, err := ExpectFor(c.variant, "all-routes")
			if err != nil {
				t.Fatalf("FAILED: %s: %v", id, err)
			}
			got, err := envoyGoldenFiles(t, docs, e)
			if err != nil {
				t.Fatalf("FAILED: %s: generating from tests/golden/out/%s: %v", id, c.name, err)
			}
			dir := filepath.Join(root, "envoy", c.name)
			if actual != "" {
				writeGoldenDir(t, filepath.Join(actual, c.name), got, false)
			}
			if update {
				writeGoldenDir(t, dir, got, true)
				t.Logf("wrote tests/golden/envoy/%s/ (%d files)", c.name, len(got))
				return
			}
			var problems []string
			names := make([]string, 0, len(got))
			for n := range got {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				want, err := os.ReadFile(filepath.Join(dir, n))
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("tests/golden/envoy/%s/%s: missing (Istio generates it)", c.name, n))
				case !bytes.Equal(want, []byte(got[n])):
					problems = append(problems, fmt.Sprintf("tests/golden/envoy/%s/%s: differs from what Istio generates, %s", c.name, n, firstDifference(string(want), got[n])))
				}
			}
			committed, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
			for _, f := range committed {
				if _, ok := got[filepath.Base(f)]; !ok {
					problems = append(problems, fmt.Sprintf("tests/golden/envoy/%s/%s: no longer generated", c.name, filepath.Base(f)))
				}
			}
			if len(problems) > 0 {
				t.Errorf("FAILED: %s: %s; if the change is intended, run %s and review git diff tests/golden/envoy", id, strings.Join(problems, "; "), EnvoyGoldenUpdate)
				return
			}
			t.Logf("FINDING: %s: %d files equal tests/golden/envoy/%s/", id, len(got), c.name)
		})
	}
}

// writeGoldenDir writes the files into dir; with prune, it removes the YAML files not in files.
func writeGoldenDir(t *testing.T, dir string, files map[string]string, prune bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("FAILED: write: %v", err)
	}
	if prune {
		old, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range old {
			if _, ok := files[filepath.Base(f)]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatalf("FAILED: write: %v", err)
				}
			}
		}
	}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644); err != nil {
			t.Fatalf("FAILED: write: %v", err)
		}
	}
}
