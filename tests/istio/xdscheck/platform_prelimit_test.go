package xdscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"istio.io/istio/pilot/pkg/networking/core"
)

// The platform's pre-limits (builders/platform-filters.ts) in the configuration Istio generates,
// from the renders of tests/istio/render-platform.ts. The platform's fixed rules there are an
// override "ceiling" of 50,000 a minute and a default "all" of 20,000 a minute, so each pre-limit
// holds one bucket of 2L tokens refilled L per 60 s (derived here from those limits). Checked: on
// listener 0.0.0.0_8080 each local filter sits directly before its platform filter; on team C's
// 0.0.0.0_8443 the overrides' pre-limit does and the defaults' (listenerPorts [8080]) is absent;
// team A's switch of the defaults disables the defaults' pre-limit on its host and not on
// another. The control (platform-misplaced: the two local filters anchored on each other's
// platform filter) must fail the placement check.
const (
	pfLocalOverrides = FilterLocalRateLimit + ".platform-overrides"
	pfLocalDefaults  = FilterLocalRateLimit + ".platform-defaults"
)

// pfPreLimitWant: per local filter, its platform filter and its one bucket (descriptor, max tokens, tokens per fill).
var pfPreLimitWant = map[string]struct {
	Before     string
	Descriptor string
	Max, Fill  uint32
}{
	pfLocalOverrides: {pfPlatformOverrides, "platform_override=ceiling", 100000, 50000},
	pfLocalDefaults:  {pfPlatformDefaults, "platform_default=all", 40000, 20000},
}

func pfLoadDirs(t *testing.T, dirs ...string) *pfGenerated {
	t.Helper()
	root := os.Getenv("XDSCHECK_PLATFORM_DIR")
	if root == "" {
		t.Skip("XDSCHECK_PLATFORM_DIR not set (run tests/istio/run.sh)")
	}
	var docs []Doc
	for _, d := range dirs {
		ds, err := LoadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		docs = append(docs, ds...)
	}
	text, services, err := istioAndServices(docs, 4)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	g := &pfGenerated{}
	_, g.Listeners, g.Routes = gatewayProxy(cg, "istio-ingressgateway-0.istio-system", IstioSystem, "10.244.3.1", mtGatewayLabels)
	return g
}

// pfHTTPFilters: the HTTP filter names of the listener's first HTTP connection manager, in chain order.
func pfHTTPFilters(ls []*listenerv3.Listener, listener string) ([]string, error) {
	l := findListener(ls, listener)
	if l == nil {
		return nil, fmt.Errorf("no listener %s; have %v", listener, listenerNames(ls))
	}
	for _, fc := range l.FilterChains {
		if h := hcmOf(fc); h != nil {
			var names []string
			for _, f := range h.HttpFilters {
				names = append(names, f.Name)
			}
			return names, nil
		}
	}
	return nil, fmt.Errorf("no HTTP connection manager on %s", listener)
}

// pfPreLimitPlacement: problems with the local filters named (each directly before its platform
// filter) and with those that must be absent, on one listener.
func pfPreLimitPlacement(ls []*listenerv3.Listener, listener string, present, absent []string) []string {
	names, err := pfHTTPFilters(ls, listener)
	if err != nil {
		return []string{err.Error()}
	}
	index := func(n string) int {
		for i, x := range names {
			if x == n {
				return i
			}
		}
		return -1
	}
	var probs []string
	for _, local := range present {
		i, j := index(local), index(pfPreLimitWant[local].Before)
		if i < 0 || j < 0 || i != j-1 {
			probs = append(probs, fmt.Sprintf("%s: %s at %d, %s at %d (want directly before) in %v", listener, local, i, pfPreLimitWant[local].Before, j, names))
		}
	}
	for _, local := range absent {
		if index(local) >= 0 {
			probs = append(probs, fmt.Sprintf("%s: %s present, want none there: %v", listener, local, names))
		}
	}
	return probs
}

// pfPreLimitBuckets: problems with the local filter's own config on the listener (enabled at 100 %, the one bucket wanted).
func pfPreLimitBuckets(ls []*listenerv3.Listener, listener, local string) []string {
	l := findListener(ls, listener)
	if l == nil {
		return []string{"no listener " + listener}
	}
	want := pfPreLimitWant[local]
	for _, fc := range l.FilterChains {
		h := hcmOf(fc)
		if h == nil {
			continue
		}
		for _, f := range h.HttpFilters {
			if f.Name != local {
				continue
			}
			lc, err := decodeLocalRateLimit(f.GetTypedConfig())
			if err != nil {
				return []string{local + ": " + err.Error()}
			}
			var probs []string
			if lc.GetFilterEnabled().GetDefaultValue().GetNumerator() != 100 || lc.GetFilterEnforced().GetDefaultValue().GetNumerator() != 100 {
				probs = append(probs, local+": not enabled and enforced at 100 %")
			}
			if lc.GetAlwaysConsumeDefaultTokenBucket().GetValue() {
				probs = append(probs, local+": the default bucket is always consumed")
			}
			var got []string
			for _, d := range lc.GetDescriptors() {
				var parts []string
				for _, e := range d.GetEntries() {
					parts = append(parts, e.GetKey()+"="+e.GetValue())
				}
				tb := d.GetTokenBucket()
				got = append(got, fmt.Sprintf("%s %d/%d/%s", strings.Join(parts, ","), tb.GetMaxTokens(), tb.GetTokensPerFill().GetValue(), tb.GetFillInterval().AsDuration()))
			}
			exp := fmt.Sprintf("%s %d/%d/1m0s", want.Descriptor, want.Max, want.Fill)
			if len(got) != 1 || got[0] != exp {
				probs = append(probs, fmt.Sprintf("%s: buckets %v, want [%s]", local, got, exp))
			}
			return probs
		}
	}
	return []string{local + ": absent from " + listener}
}

// pfPreLimitDisabled: whether the local filter is disabled (FilterConfig) on every route of the host.
func pfPreLimitDisabled(t *testing.T, g *pfGenerated, host, local string) bool {
	vh := findVhost(g.Routes, mtRouteConfig, host)
	if vh == nil {
		t.Fatalf("FAILED: input: virtual host %s absent from %s", host, mtRouteConfig)
	}
	for _, r := range vh.Routes {
		a := perFilter(vh, r, local)
		if a == nil || a.GetTypeUrl() != pfFilterConfigType {
			return false
		}
		fcfg := &routev3.FilterConfig{}
		if err := a.UnmarshalTo(fcfg); err != nil || !fcfg.GetDisabled() {
			return false
		}
	}
	return true
}

// TestPlatformPreLimit: the platform's and team A's renders on one gateway.
func TestPlatformPreLimit(t *testing.T) {
	g := pfLoadDirs(t, "platform", "team")
	t.Run("directly-before-each-platform-filter", func(t *testing.T) {
		probs := pfPreLimitPlacement(g.Listeners, mtListener, []string{pfLocalOverrides, pfLocalDefaults}, nil)
		probs = append(probs, pfPreLimitPlacement(g.Listeners, pfTeamPortListener, []string{pfLocalOverrides}, []string{pfLocalDefaults})...)
		for _, p := range probs {
			t.Errorf("FAILED: directly-before-each-platform-filter: %s", p)
		}
		if len(probs) == 0 {
			t.Logf("FINDING: directly-before-each-platform-filter: %s: each local filter directly before its platform filter; %s: the overrides' only", mtListener, pfTeamPortListener)
		}
	})
	t.Run("buckets-2L-refilled-L", func(t *testing.T) {
		probs := append(pfPreLimitBuckets(g.Listeners, mtListener, pfLocalOverrides), pfPreLimitBuckets(g.Listeners, mtListener, pfLocalDefaults)...)
		probs = append(probs, pfPreLimitBuckets(g.Listeners, pfTeamPortListener, pfLocalOverrides)...)
		for _, p := range probs {
			t.Errorf("FAILED: buckets-2L-refilled-L: %s", p)
		}
		if len(probs) == 0 {
			t.Logf("FINDING: buckets-2L-refilled-L: one bucket of 2L tokens refilled L per minute per fixed rule, enabled and enforced")
		}
	})
	t.Run("team-switch-disables-defaults-pre-limit", func(t *testing.T) {
		if !pfPreLimitDisabled(t, g, pfTeamHost, pfLocalDefaults) {
			t.Errorf("FAILED: team-switch-disables-defaults-pre-limit: %s: the defaults' pre-limit is not disabled where the defaults are", pfTeamHost)
		} else if pfPreLimitDisabled(t, g, pfOtherHost, pfLocalDefaults) || pfPreLimitDisabled(t, g, pfTeamHost, pfLocalOverrides) {
			t.Errorf("FAILED: team-switch-disables-defaults-pre-limit: disabled beyond the team's host and the defaults")
		} else {
			t.Logf("FINDING: team-switch-disables-defaults-pre-limit: off on %s with the defaults, on on %s, the overrides' on everywhere", pfTeamHost, pfOtherHost)
		}
	})
	t.Run("control-misplaced-pre-limit-fails", func(t *testing.T) {
		bad := pfLoadDirs(t, "platform-misplaced", "team")
		probs := pfPreLimitPlacement(bad.Listeners, mtListener, []string{pfLocalOverrides, pfLocalDefaults}, nil)
		if len(probs) < 2 {
			t.Errorf("FAILED: control-misplaced-pre-limit-fails: the local filters anchored on each other's platform filter passed the placement check: %v", probs)
		} else {
			t.Logf("FINDING: control-misplaced-pre-limit-fails: the placement check reports %d problems: %s", len(probs), probs[0])
		}
	})
}
