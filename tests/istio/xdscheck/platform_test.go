package xdscheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"istio.io/istio/pilot/pkg/networking/core"
)

// Platform defaults with a team override (issue 47), on Istio's generated configuration. Input
// from tests/istio/run.sh:
//
//	XDSCHECK_PLATFORM_DIR  the output of tests/istio/render-platform.ts: platform/all.yaml (the
//	                       platform's PlatformRateLimit and a host other.example.com without limits of
//	                       its own), team/all.yaml (team A's GlobalRateLimit on a.example.com) and
//	                       model.json (what the listener model read from those renders says each
//	                       rate-limit filter reads on each route, with both stacks and the team's alone)
//
// What a rate-limit filter named N reads on a route, as Envoy reads it (ratelimit.cc,
// router/per_filter_config.cc): the most specific typed_per_filter_config[N] (route, else virtual
// host); a FilterConfig with disabled: true there leaves the filter out of the request; a
// RateLimitPerRoute with rate_limits gives exactly those; else the filter's own rate_limits when it
// has any; else the route's rate_limits of its stage, plus the virtual host's by vh_rate_limits.
const (
	pfPlatformOverrides = FilterRateLimit + ".platform-overrides"
	pfPlatformDefaults  = FilterRateLimit + ".platform-defaults"
	pfTeamFilter        = FilterRateLimit + "/team-a/ratelimit"
	pfTeamHost          = "a.example.com:8080"
	pfOtherHost         = "other.example.com:8080"
	pfFilterConfigType  = "type.googleapis.com/envoy.config.route.v3.FilterConfig"
)

type pfFilter struct {
	Name  string
	Stage uint32
	Own   []*routev3.RateLimit
}

type pfGenerated struct {
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
	Model     map[string]map[string][]any
}

func pfLoad(t *testing.T, withPlatform bool) *pfGenerated {
	t.Helper()
	dir := os.Getenv("XDSCHECK_PLATFORM_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_PLATFORM_DIR not set (run tests/istio/run.sh)")
	}
	docs, err := LoadDir(filepath.Join(dir, "team"))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	if withPlatform {
		p, err := LoadDir(filepath.Join(dir, "platform"))
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		docs = append(docs, p...)
	} else {
		// The other host's own Gateway and VirtualService stay (they are not the platform's stack).
		p, err := LoadDir(filepath.Join(dir, "platform"))
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		for _, d := range p {
			if d.Namespace() == "other" {
				docs = append(docs, d)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	g := &pfGenerated{}
	if err := json.Unmarshal(b, &g.Model); err != nil {
		t.Fatalf("FAILED: input: model.json: %v", err)
	}
	text, services, err := istioAndServices(docs, 4)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	_, g.Listeners, g.Routes = gatewayProxy(cg, "istio-ingressgateway-0.istio-system", IstioSystem, "10.244.3.1", mtGatewayLabels)
	return g
}

// pfFilters: the rate-limit filters of listener 0.0.0.0_8080, in chain order.
func pfFilters(ls []*listenerv3.Listener) ([]pfFilter, error) {
	return pfFiltersOn(ls, mtListener)
}

// pfFiltersOn: the rate-limit filters of the listener named, in chain order.
func pfFiltersOn(ls []*listenerv3.Listener, listener string) ([]pfFilter, error) {
	l := findListener(ls, listener)
	if l == nil {
		return nil, fmt.Errorf("no listener %s; have %v", listener, listenerNames(ls))
	}
	for _, fc := range l.FilterChains {
		h := hcmOf(fc)
		if h == nil {
			continue
		}
		var out []pfFilter
		for _, f := range h.HttpFilters {
			if !strings.HasPrefix(f.Name, FilterRateLimit) || strings.HasPrefix(f.Name, FilterLocalRateLimit) {
				continue
			}
			rl := &rlv3.RateLimit{}
			if err := f.GetTypedConfig().UnmarshalTo(rl); err != nil {
				return nil, fmt.Errorf("HTTP filter %s: %v", f.Name, err)
			}
			out = append(out, pfFilter{Name: f.Name, Stage: rl.Stage, Own: rl.GetRateLimits()})
		}
		return out, nil
	}
	return nil, fmt.Errorf("no HTTP connection manager on %s", listener)
}

// pfReads: whether the filter is disabled on the route, and the rate_limits entries it reads there.
func pfReads(f pfFilter, vh *routev3.VirtualHost, r *routev3.Route) (bool, []*routev3.RateLimit, error) {
	a := perFilter(vh, r, f.Name)
	vhMode := rlv3.RateLimitPerRoute_OVERRIDE
	if a != nil && a.GetTypeUrl() == pfFilterConfigType {
		fcfg := &routev3.FilterConfig{}
		if err := a.UnmarshalTo(fcfg); err != nil {
			return false, nil, err
		}
		if fcfg.GetDisabled() {
			return true, nil, nil
		}
		return false, nil, fmt.Errorf("FilterConfig without disabled under %s is not read by this check", f.Name)
	}
	if a != nil {
		pr := &rlv3.RateLimitPerRoute{}
		if err := a.UnmarshalTo(pr); err != nil {
			return false, nil, err
		}
		if len(pr.GetRateLimits()) > 0 {
			return false, pr.GetRateLimits(), nil
		}
		vhMode = pr.GetVhRateLimits()
	}
	if len(f.Own) > 0 {
		return false, f.Own, nil
	}
	return false, stageRateLimits(vh, r, f.Stage, vhMode), nil
}

// pfAllReads: per "<virtual host>|<route>|<filter>", the entries read (as JSON with proto names),
// for every route of both hosts; and per filter and virtual host, whether it is disabled there.
func pfAllReads(g *pfGenerated) (map[string][]any, map[string]bool, error) {
	fs, err := pfFilters(g.Listeners)
	if err != nil {
		return nil, nil, err
	}
	reads := map[string][]any{}
	disabled := map[string]bool{}
	for _, host := range []string{pfTeamHost, pfOtherHost} {
		vh := findVhost(g.Routes, mtRouteConfig, host)
		if vh == nil {
			return nil, nil, fmt.Errorf("virtual host %s absent from %s", host, mtRouteConfig)
		}
		for _, r := range vh.Routes {
			for _, f := range fs {
				off, rls, err := pfReads(f, vh, r)
				if err != nil {
					return nil, nil, fmt.Errorf("%s route %s filter %s: %v", host, r.Name, f.Name, err)
				}
				key := host + "|" + r.Name + "|" + f.Name
				if off {
					disabled[key] = true
				}
				for _, rl := range rls {
					b, _ := protojson.MarshalOptions{UseProtoNames: true}.Marshal(rl)
					var v any
					_ = json.Unmarshal(b, &v)
					reads[key] = append(reads[key], v)
				}
			}
		}
	}
	return reads, disabled, nil
}

func pfKeysWith(reads map[string][]any, host, filter string) []string {
	var out []string
	for k := range reads {
		if strings.HasPrefix(k, host+"|") && strings.HasSuffix(k, "|"+filter) {
			out = append(out, k)
		}
	}
	return out
}

// pfText: entries as one JSON text (for messages and substring checks).
func pfText(entries []any) string {
	b, _ := json.Marshal(entries)
	return string(b)
}

// TestPlatform: both stacks' objects on one gateway.
func TestPlatform(t *testing.T) {
	g := pfLoad(t, true)
	reads, disabled, err := pfAllReads(g)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	t.Run("team-host-team-and-overrides-not-defaults", func(t *testing.T) {
		for _, route := range []string{"checkout", "web"} {
			base := pfTeamHost + "|" + route + "|"
			if !strings.Contains(pfText(reads[base+pfPlatformOverrides]), `"descriptor_key":"platform_override"`) {
				t.Errorf("FAILED: team-host-team-and-overrides-not-defaults: route %s of %s: expected the overrides filter to read platform_override; got %s", route, pfTeamHost, pfText(reads[base+pfPlatformOverrides]))
			}
			if !strings.Contains(pfText(reads[base+pfTeamFilter]), `"descriptor_value":"everything"`) {
				t.Errorf("FAILED: team-host-team-and-overrides-not-defaults: route %s of %s: expected the team's filter to read rule=everything; got %s", route, pfTeamHost, pfText(reads[base+pfTeamFilter]))
			}
			if !disabled[base+pfPlatformDefaults] || len(reads[base+pfPlatformDefaults]) > 0 {
				t.Errorf("FAILED: team-host-team-and-overrides-not-defaults: route %s of %s: expected the defaults filter disabled; got disabled=%v, reads %s", route, pfTeamHost, disabled[base+pfPlatformDefaults], pfText(reads[base+pfPlatformDefaults]))
			}
		}
		t.Logf("FINDING: team-host-team-and-overrides-not-defaults: %s: the team's descriptors and the overrides on every route, the defaults filter disabled", pfTeamHost)
	})
	t.Run("other-host-defaults-and-overrides", func(t *testing.T) {
		for _, route := range []string{"checkout", "web"} {
			base := pfOtherHost + "|" + route + "|"
			d := pfText(reads[base+pfPlatformDefaults])
			if !strings.Contains(d, `"descriptor_key":"platform_default"`) || !strings.Contains(d, "platform_default_path") {
				t.Errorf("FAILED: other-host-defaults-and-overrides: route %s of %s: expected the defaults (per client, per path); got %s", route, pfOtherHost, d)
			}
			if !strings.Contains(pfText(reads[base+pfPlatformOverrides]), `"descriptor_key":"platform_override"`) {
				t.Errorf("FAILED: other-host-defaults-and-overrides: route %s of %s: expected the overrides; got %s", route, pfOtherHost, pfText(reads[base+pfPlatformOverrides]))
			}
			if len(reads[base+pfTeamFilter]) > 0 {
				t.Errorf("FAILED: other-host-defaults-and-overrides: route %s of %s: the team's filter reads %s", route, pfOtherHost, pfText(reads[base+pfTeamFilter]))
			}
		}
		t.Logf("FINDING: other-host-defaults-and-overrides: %s: the defaults and the overrides, nothing of the team's", pfOtherHost)
	})
	t.Run("chain-order", func(t *testing.T) {
		fs, _ := pfFilters(g.Listeners)
		var names []string
		for _, f := range fs {
			names = append(names, f.Name)
		}
		want := []string{pfPlatformOverrides, pfTeamFilter, pfPlatformDefaults}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("FAILED: chain-order: rate-limit filters of %s: expected %v; got %v", mtListener, want, names)
		} else {
			t.Logf("FINDING: chain-order: %s: overrides first, the team's, the defaults last: %v", mtListener, names)
		}
	})
	t.Run("model-agrees", func(t *testing.T) { pfAgree(t, "model-agrees", reads, g.Model["both"]) })
}

func pfAgree(t *testing.T, id string, reads map[string][]any, model map[string][]any) {
	t.Helper()
	for k := range model {
		if _, ok := reads[k]; !ok {
			t.Errorf("FAILED: %s: the model has %s, the generated routes do not: %s", id, k, pfText(model[k]))
		}
	}
	for k, v := range reads {
		m, ok := model[k]
		if !ok {
			t.Errorf("FAILED: %s: the generated routes have %s, the model does not: %s", id, k, pfText(v))
			continue
		}
		if !reflect.DeepEqual(v, m) {
			t.Errorf("FAILED: %s: %s: generated %s; model %s", id, k, pfText(v), pfText(m))
		}
	}
	if !t.Failed() {
		t.Logf("FINDING: %s: the listener model read from the renders and the generated routes agree on %d (virtual host, route, filter) reads", id, len(reads))
	}
}

// TestPlatformControl: without the platform's stack, only the team's descriptors; the model agrees.
func TestPlatformControl(t *testing.T) {
	g := pfLoad(t, false)
	reads, _, err := pfAllReads(g)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	t.Run("team-descriptors-only", func(t *testing.T) {
		var keys []string
		for k := range reads {
			keys = append(keys, k)
			if !strings.HasSuffix(k, "|"+pfTeamFilter) || !strings.HasPrefix(k, pfTeamHost+"|") {
				t.Errorf("FAILED: team-descriptors-only: without the platform, %s reads %s", k, pfText(reads[k]))
			}
		}
		if len(pfKeysWith(reads, pfTeamHost, pfTeamFilter)) != 2 {
			t.Errorf("FAILED: team-descriptors-only: without the platform, expected the team's filter on both routes of %s; got %v", pfTeamHost, keys)
		}
		if !t.Failed() {
			t.Logf("FINDING: team-descriptors-only: without the platform's stack: only the team's descriptors, on its own host (%d reads); its defaults-off switch names a filter that is not there and changes nothing", len(keys))
		}
	})
	t.Run("model-agrees-without-platform", func(t *testing.T) { pfAgree(t, "model-agrees-without-platform", reads, g.Model["teamOnly"]) })
}
