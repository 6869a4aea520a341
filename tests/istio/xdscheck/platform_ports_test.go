package xdscheck

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// The platform's overrides on every listener of its gateway pods (tests/istio/render-platform.ts):
// the platform renders with listenerPorts [8080], and a team's own Gateway in namespace team-c
// serves c.example.com on port 8443 of the same pods. On Istio's generated listener 0.0.0.0_8443 the
// overrides filter must be in the chain with its own rate_limits (the overrides' descriptors). The
// defaults filter, matched on port 8080, must not be there: the control that shows a filter matched
// on one port does not reach another, so this check can fail.
const pfTeamPortListener = "0.0.0.0_8443"

func TestPlatformEveryPort(t *testing.T) {
	g := pfLoad(t, true)
	fs, err := pfFiltersOn(g.Listeners, pfTeamPortListener)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	byName := map[string]pfFilter{}
	for _, f := range fs {
		byName[f.Name] = f
	}
	t.Run("team-gateway-8443-meets-overrides", func(t *testing.T) {
		o, ok := byName[pfPlatformOverrides]
		if !ok {
			t.Fatalf("FAILED: team-gateway-8443-meets-overrides: no %s on %s; rate-limit filters there: %v", pfPlatformOverrides, pfTeamPortListener, fs)
		}
		var text []string
		for _, rl := range o.Own {
			b, _ := protojson.Marshal(rl)
			text = append(text, string(b))
		}
		if !strings.Contains(strings.Join(text, " "), "platform_override") {
			t.Errorf("FAILED: team-gateway-8443-meets-overrides: %s on %s has no platform_override in its own rate_limits: %v", pfPlatformOverrides, pfTeamPortListener, text)
		}
		t.Logf("FINDING: team-gateway-8443-meets-overrides: %s carries the overrides filter with its own rate_limits", pfTeamPortListener)
	})
	t.Run("control-defaults-only-on-8080", func(t *testing.T) {
		if _, ok := byName[pfPlatformDefaults]; ok {
			t.Errorf("FAILED: control-defaults-only-on-8080: %s (listenerPorts [8080]) is on %s", pfPlatformDefaults, pfTeamPortListener)
		}
		fs8080, err := pfFilters(g.Listeners)
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		found := false
		for _, f := range fs8080 {
			found = found || f.Name == pfPlatformDefaults
		}
		if !found {
			t.Errorf("FAILED: control-defaults-only-on-8080: %s is not on %s either", pfPlatformDefaults, mtListener)
		}
		t.Logf("FINDING: control-defaults-only-on-8080: the port-matched defaults filter is on %s only", mtListener)
	})
}

// pfLoadWith: Istio's generator for the platform's render and the team render in dir `team`
// (team-all or team-listed, tests/istio/render-platform.ts).
func pfLoadWith(t *testing.T, team string) *pfGenerated {
	t.Helper()
	return pfLoadDirs(t, "platform", team)
}

// The rogue team: a rule that matches nothing and allVirtualHosts: true. On Istio's
// generated routes the platform's defaults stay on other.example.com (not disabled, reading
// platform_default). The control renders the same team with other.example.com in its
// virtualHosts (what its preview refuses with a cluster): there the defaults are disabled, so the
// check fails on a switch that reaches another namespace's host.
func TestPlatformRogueSwitch(t *testing.T) {
	onOther := func(g *pfGenerated) (bool, string) {
		reads, disabled, err := pfAllReads(g)
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		off, text := false, ""
		for _, route := range []string{"checkout", "web"} {
			key := pfOtherHost + "|" + route + "|" + pfPlatformDefaults
			off = off || disabled[key]
			text += pfText(reads[key])
		}
		return !off && strings.Contains(text, `"descriptor_key":"platform_default"`), text
	}
	t.Run("all-virtual-hosts-leaves-defaults-on-other-host", func(t *testing.T) {
		if on, text := onOther(pfLoadWith(t, "team-all")); !on {
			t.Errorf("FAILED: all-virtual-hosts-leaves-defaults-on-other-host: %s: the defaults are off or read nothing: %s", pfOtherHost, text)
		} else {
			t.Logf("FINDING: all-virtual-hosts-leaves-defaults-on-other-host: %s keeps the platform's defaults", pfOtherHost)
		}
	})
	t.Run("control-listed-host-switches-defaults-off", func(t *testing.T) {
		if on, _ := onOther(pfLoadWith(t, "team-listed")); on {
			t.Errorf("FAILED: control-listed-host-switches-defaults-off: with %s listed the defaults are still on: the check could not see a switch", pfOtherHost)
		} else {
			t.Logf("FINDING: control-listed-host-switches-defaults-off: listed, the defaults are off on %s (the preview refuses this host)", pfOtherHost)
		}
	})
}
