package xdscheck

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Inputs come from tests/istio/run.sh:
//
//	XDSCHECK_DIR        directory written by `npm run render -- ... --out DIR` (all.yaml or one file per object)
//	XDSCHECK_VARIANT    A or B (expected values are derived from the letter, not read from the render)
//	XDSCHECK_PLACEMENT  all-routes or single-route
func inputs(t *testing.T) ([]Doc, Expect) {
	t.Helper()
	dir := os.Getenv("XDSCHECK_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_DIR not set (run tests/istio/run.sh)")
	}
	e, err := ExpectFor(os.Getenv("XDSCHECK_VARIANT"), envOr("XDSCHECK_PLACEMENT", "all-routes"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return docs, e
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// TestGeneratedConfig: every expectation is a subtest named after its ID, and a failure
// names the rendered object and the expectation.
func TestGeneratedConfig(t *testing.T) {
	docs, e := inputs(t)
	if out := os.Getenv("XDSCHECK_DUMP"); out != "" {
		if err := DumpGateway(t, docs, e, out); err != nil {
			t.Errorf("FAILED: dump: %v", err)
		}
	}
	fs := Check(t, docs, e)
	if len(fs) == 0 {
		t.Fatal("no expectation evaluated")
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

// mutation changes one field of one rendered EnvoyFilter in memory. The check must then
// report the named expectation as failed: it proves the check detects a patch that misses.
type mutation struct {
	name     string
	filter   string
	patchIdx int
	path     []string // path inside configPatches[patchIdx] (or, with onSpec/onMeta, inside spec/metadata)
	value    any      // the new value; deleteKey removes the key
	wantFail string   // finding ID that must fail
	when     func(Expect) bool
	// Optional: the change is inside spec or metadata, not a patch.
	onSpec, onMeta bool
	// Optional: the failure must say this (so the control fails for its own reason).
	wantProblem string
}

// deleteKey as a mutation's value removes the key.
type deleteKeyT struct{}

var deleteKey = deleteKeyT{}

func (deleteKeyT) String() string { return "<removed>" }

func always(Expect) bool { return true }

// preLimitOn: the render has the pre-limit (not XDSCHECK_PRELIMIT=off).
func preLimitOn(e Expect) bool { return preLimitExpected(e) != nil }

// positional: a control with only the basic fields.
func positional(name, filter string, patchIdx int, path []string, value any, wantFail string, when func(Expect) bool) mutation {
	return mutation{name: name, filter: filter, patchIdx: patchIdx, path: path, value: value, wantFail: wantFail, when: when}
}

var mutations = []mutation{
	positional("vhost-name", EFVhost, 0, []string{"match", "routeConfiguration", "vhost", "name"}, "*:80",
		"gateway/vhost-path-action", always),
	positional("route-name", EFRouteAPI, 0, []string{"match", "routeConfiguration", "vhost", "route", "name"}, "apis",
		"gateway/api-route-action", func(e Expect) bool { return e.APIRoute }),
	positional("route-vhost-name", EFRouteAPI, 0, []string{"match", "routeConfiguration", "vhost", "name"}, "*:80",
		"gateway/api-route-action", func(e Expect) bool { return e.APIRoute }),
	positional("global-context", EFGlobal, 0, []string{"match", "context"}, "SIDECAR_OUTBOUND",
		"gateway/ratelimit-filter-before-router", always),
	positional("global-subfilter", EFGlobal, 0, []string{"match", "listener", "filterChain", "filter", "subFilter", "name"}, "envoy.filters.http.routr",
		"gateway/ratelimit-filter-before-router", always),
	positional("vhost-context", EFVhost, 0, []string{"match", "context"}, "SIDECAR_INBOUND",
		"gateway/vhost-path-action", always),
	positional("local-context", EFLocal, 0, []string{"match", "context"}, "SIDECAR_OUTBOUND",
		"sidecar/local-filter-present", always),
	positional("local-route-vhost-name", EFLocal, 1, []string{"match", "routeConfiguration", "vhost", "name"}, "inbound|http|80",
		"sidecar/per-route-config", func(e Expect) bool { return e.Placement == "single-route" }),
	positional("local-route-context", EFLocal, 1, []string{"match", "context"}, "GATEWAY",
		"sidecar/per-route-config", func(e Expect) bool { return e.Placement == "single-route" }),
	positional("global-domain", EFGlobal, 0, []string{"patch", "value", "typed_config", "domain"}, "ratelimit-x",
		"gateway/ratelimit-filter-config", always),
	positional("api-regex-too-wide", EFRouteAPI, 0, []string{"patch", "value", "route", "rate_limits", "0", "actions", "0",
		"header_value_match", "headers", "0", "safe_regex_match", "regex"}, "/api/v1/products/.*",
		"gateway/api-regex-full-match", func(e Expect) bool { return e.APIRoute }),
	positional("local-bucket-size", EFLocal, 0, []string{"patch", "value", "typed_config", "value", "token_bucket", "max_tokens"}, 5,
		"sidecar/local-filter-config", func(e Expect) bool { return e.Placement == "all-routes" }),
	positional("route-bucket-size", EFLocal, 1, []string{"patch", "value", "typed_per_filter_config", FilterLocalRateLimit, "value", "token_bucket", "tokens_per_fill"}, 5,
		"sidecar/per-route-config", func(e Expect) bool { return e.Placement == "single-route" }),
	// Limits that hold: the path without its query, and the api route counting per path too.
	positional("vhost-cel-path-with-query", EFVhost, 0, []string{"patch", "value", "rate_limits", "0", "actions", "0", "extension", "typed_config", "text"}, "request.path",
		"gateway/vhost-path-action", always),
	positional("api-route-vh-override", EFRouteAPI, 0, []string{"patch", "value", "typed_per_filter_config", "envoy.filters.http.ratelimit", "vh_rate_limits"}, "OVERRIDE",
		"gateway/api-route-includes-vhost", func(e Expect) bool { return e.APIRoute }),
	positional("api-regex-no-query", EFRouteAPI, 0, []string{"patch", "value", "route", "rate_limits", "0", "actions", "0",
		"header_value_match", "headers", "0", "safe_regex_match", "regex"}, "/api/v1/products/[1-9][0-9]?",
		"gateway/api-regex-full-match", func(e Expect) bool { return e.APIRoute }),
	positional("api-regex-spec-literal", EFRouteAPI, 0, []string{"patch", "value", "route", "rate_limits", "0", "actions", "0",
		"header_value_match", "headers", "0", "safe_regex_match", "regex"}, "(?:/api/v1/products/[1-9]{1,2})(?:\\?.*)?",
		"gateway/api-regex-full-match", func(e Expect) bool { return e.APIRoute }),
	// Istio drops the unknown field when it builds the filter (istioctl only warns), so the
	// filter lands with failure_mode_deny=false: fail-open. Only the value check sees it.
	positional("global-typo", EFGlobal, -1, []string{"patch", "value", "typed_config", "failure_mode_dny"}, nil,
		"gateway/ratelimit-filter-config", always),
	positional("local-bucket-typo", EFLocal, -1, []string{"patch", "value", "typed_config", "value", "token_bucket", "max_tokns"}, 4,
		"sidecar/local-filter-config", func(e Expect) bool { return e.Placement == "all-routes" }),
	// A check must not pass for want of an object to check: with the local filter after the
	// router, or not on the inbound chain at all, the config check fails too.
	positional("local-after-router", EFLocal, 0, []string{"patch", "operation"}, "INSERT_AFTER",
		"sidecar/local-filter-config", always),
	positional("local-missing-config", EFLocal, 0, []string{"match", "context"}, "SIDECAR_OUTBOUND",
		"sidecar/local-filter-config", always),
	// Scope on a shared gateway and sidecar. In a tenant-free render each of these lands in the
	// same place as the scoped patch (one listener, one virtual host), so only the rendered match,
	// compared with the names derived from the Gateway and the application port, shows them.
	{name: "vhost-name-every-vhost", filter: EFVhost, path: []string{"match", "routeConfiguration", "vhost", "name"}, value: "",
		wantFail: "gateway/vhost-patch-stack-vhost-only", when: always, wantProblem: "names no virtual host"},
	{name: "route-vhost-every-vhost", filter: EFRouteAPI, path: []string{"match", "routeConfiguration", "vhost", "name"}, value: "",
		wantFail: "gateway/vhost-patch-stack-vhost-only", when: func(e Expect) bool { return e.APIRoute }, wantProblem: EFRouteAPI + " patch 0 names no virtual host"},
	{name: "global-without-port", filter: EFGlobal, path: []string{"match", "listener", "portNumber"}, value: deleteKey,
		wantFail: "gateway/ratelimit-filter-only-on-gateway-port", when: always, wantProblem: "no match.listener.portNumber"},
	{name: "local-without-port", filter: EFLocal, path: []string{"match", "listener", "portNumber"}, value: deleteKey,
		wantFail: "sidecar/local-filter-scope", when: always, wantProblem: "generated: also on inbound chain"},
	{name: "local-in-root-namespace", filter: EFLocal, onMeta: true, path: []string{"namespace"}, value: IstioSystem,
		wantFail: "sidecar/local-filter-scope", when: always, wantProblem: "rendered in namespace " + IstioSystem},
	// The pre-limit (prelimit.go): after the router instead of before the rate-limit filter, on
	// another virtual host, a bucket of L instead of 2L, on every listener.
	positional("pre-limit-before-router", EFGlobal, 1, []string{"match", "listener", "filterChain", "filter", "subFilter", "name"}, FilterRouter,
		PreLimitOrder, preLimitOn),
	positional("pre-limit-vhost-name", EFGlobal, 2, []string{"match", "routeConfiguration", "vhost", "name"}, "*:80",
		PreLimitBuckets, preLimitOn),
	positional("pre-limit-bucket-of-L", EFGlobal, 2, []string{"patch", "value", "typed_per_filter_config", FilterLocalRateLimit, "descriptors", "0", "token_bucket", "max_tokens"}, 1,
		PreLimitBuckets, preLimitOn),
	positional("pre-limit-consumes-default", EFGlobal, 2, []string{"patch", "value", "typed_per_filter_config", FilterLocalRateLimit, "always_consume_default_token_bucket"}, true,
		PreLimitBuckets, preLimitOn),
	{name: "pre-limit-without-port", filter: EFGlobal, patchIdx: 1, path: []string{"match", "listener", "portNumber"}, value: deleteKey,
		wantFail: PreLimitPort, when: preLimitOn, wantProblem: "no match.listener.portNumber"},
	// Without its priority the stack's filter is applied in creation order with another team's
	// priority-0 filter: created after it, that filter lands between the rate limit and the router.
	{name: "global-priority-removed", filter: EFGlobal, onSpec: true, path: []string{"priority"}, value: deleteKey,
		wantFail: OrderID, when: always, wantProblem: "probe created after"},
}

func apply(docs []Doc, m mutation, e Expect) error {
	// The stack's filters are looked up where the expectations put them: the gateway filters in the
	// gateway's namespace, the local bucket in the workload's.
	d := Find(docs, "EnvoyFilter", e.FilterNamespace(m.filter), m.filter)
	if d == nil {
		return fmt.Errorf("%s not rendered", e.FilterRef(m.filter))
	}
	ps := Patches(d)
	idx := m.patchIdx
	if idx < 0 {
		idx = 0
	}
	if idx >= len(ps) {
		return fmt.Errorf("EnvoyFilter %s has %d patches, no index %d", m.filter, len(ps), idx)
	}
	// Walk maps by key and lists by numeric index down to the parent of the last key.
	var cur any = ps[idx]
	switch {
	case m.onSpec:
		cur, idx = d["spec"], -1
	case m.onMeta:
		cur, idx = d["metadata"], -1
	}
	for i, k := range m.path[:len(m.path)-1] {
		var next any
		switch c := cur.(type) {
		case map[string]any:
			next = c[k]
		case []any:
			if n, err := strconv.Atoi(k); err == nil && n < len(c) {
				next = c[n]
			}
		}
		if next == nil {
			return fmt.Errorf("EnvoyFilter %s patch %d: no %s", m.filter, idx, strings.Join(m.path[:i+1], "."))
		}
		cur = next
	}
	parent, ok := cur.(map[string]any)
	if !ok {
		return fmt.Errorf("EnvoyFilter %s patch %d: %s is not an object", m.filter, idx, strings.Join(m.path[:len(m.path)-1], "."))
	}
	last := m.path[len(m.path)-1]
	if m.patchIdx < 0 { // a typo: rename an existing key
		good := strings.NewReplacer("max_tokns", "max_tokens", "failure_mode_dny", "failure_mode_deny").Replace(last)
		v, ok := parent[good]
		if !ok {
			return fmt.Errorf("EnvoyFilter %s: no %s to misspell", m.filter, good)
		}
		delete(parent, good)
		parent[last] = v
		return nil
	}
	if _, ok := parent[last]; !ok && last != "name" {
		return fmt.Errorf("EnvoyFilter %s patch %d: no %s", m.filter, idx, strings.Join(m.path, "."))
	}
	if m.value == deleteKey {
		delete(parent, last)
		return nil
	}
	parent[last] = m.value
	return nil
}

// TestNegativeControls mutates the rendered EnvoyFilters (virtual-host name, route name,
// context, sub-filter name, a typo in typed_config) and asserts the check then fails the
// matching expectation, while the unmutated render passes it.
func TestNegativeControls(t *testing.T) {
	docs, e := inputs(t)
	base := map[string]bool{}
	for _, f := range Check(t, Clone(docs), e) {
		base[f.ID] = f.OK()
	}
	for _, m := range mutations {
		m := m
		if !m.when(e) {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			if !base[m.wantFail] {
				t.Fatalf("FAILED: %s: control cannot run: expectation %s already fails on the unmutated render", m.name, m.wantFail)
			}
			mut := Clone(docs)
			if err := apply(mut, m, e); err != nil {
				t.Fatalf("FAILED: %s: control cannot be applied: %v", m.name, err)
			}
			var hit *Finding
			fs := check(t, mut, e, m.wantFail == OrderID)
			for i := range fs {
				if fs[i].ID == m.wantFail {
					hit = &fs[i]
				}
			}
			switch {
			case hit == nil:
				t.Errorf("FAILED: %s: control (EnvoyFilter %s %s=%v): expectation %s was not evaluated", m.name, m.filter, strings.Join(m.path, "."), m.value, m.wantFail)
			case hit.OK():
				t.Errorf("FAILED: %s: control (EnvoyFilter %s %s=%v): check still passes %s, so it cannot see this patch miss", m.name, m.filter, strings.Join(m.path, "."), m.value, m.wantFail)
			case m.wantProblem != "" && !strings.Contains(hit.Problem, m.wantProblem):
				t.Errorf("FAILED: %s: control (EnvoyFilter %s %s=%v): %s fails, but not for this control's reason (want %q in: %s)", m.name, m.filter, strings.Join(m.path, "."), m.value, m.wantFail, m.wantProblem, hit.Problem)
			default:
				t.Logf("detected: %s", hit)
			}
		})
	}
}

// TestSeedMeshConfigPatch feeds the seed profile's mesh ConfigMap text to Istio's own mesh-config
// loader. It must load (istiod keeps running), and the test records what Istio makes of
// `authPolicy: MUTUAL_TLS`: the field was removed from MeshConfig, so current Istio ignores it and
// only the current profile's PeerAuthentication turns on mutual TLS.
func TestSeedMeshConfigPatch(t *testing.T) {
	docs, _ := inputs(t)
	cm := Find(docs, "ConfigMap", IstioSystem, "istio")
	if cm == nil {
		t.Skip("no mesh ConfigMap patch in this render (current profile)")
	}
	text, _ := Dig(cm, "data", "mesh").(string)
	if !strings.Contains(text, "authPolicy: MUTUAL_TLS") {
		t.Errorf("FAILED: TestSeedMeshConfigPatch: ConfigMap istio-system/istio: expected data.mesh to set authPolicy: MUTUAL_TLS; got %q", text)
	}
	ignored, err := LoadMeshConfig(text)
	if err != nil {
		t.Fatalf("FAILED: TestSeedMeshConfigPatch: ConfigMap istio-system/istio: expected Istio's mesh-config loader to accept data.mesh; got %v", err)
	}
	t.Logf("ConfigMap istio-system/istio: Istio loads data.mesh; fields it does not know (ignored): %v", ignored)
}
