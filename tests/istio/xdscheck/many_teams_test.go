package xdscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Many teams, one gateway (many_teams.go). Input from tests/istio/run.sh:
//
//	XDSCHECK_MANY_DIR  the output of tests/istio/render-many-teams.ts: per-instance/{a,b}/all.yaml
//	                   (the package's default layout) and shared/{a,b}/all.yaml (FilterLayout.Shared)
//
// TestManyTeams checks the per-instance layout; TestManyTeamsControls runs the same checks on the
// shared layout, where each must fail for the leak it names. A pass logs "FINDING: <id>: ...", a
// failure "FAILED: <id>: <objects>: expected ...; got: ...".
func manyTeamsInput(t *testing.T, layout string) *MTInput {
	t.Helper()
	dir := os.Getenv("XDSCHECK_MANY_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_MANY_DIR not set (run tests/istio/run.sh)")
	}
	var teams [2][]Doc
	for i, team := range []string{"a", "b"} {
		docs, err := LoadDir(filepath.Join(dir, layout, team))
		if err != nil {
			t.Fatalf("FAILED: input: %v", err)
		}
		teams[i] = docs
	}
	in, err := NewMTInput(layout, teams[0], teams[1])
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	return in
}

func manyTeamsGenerated(t *testing.T, layout string) *MTGenerated {
	t.Helper()
	g, err := GenerateManyTeams(t, manyTeamsInput(t, layout))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	return g
}

// TestManyTeams: with the per-instance layout, two programs and a hand-written filter share the
// listener without reading each other's descriptors.
func TestManyTeams(t *testing.T) {
	g := manyTeamsGenerated(t, "per-instance")
	for _, f := range ManyTeamsFindings(g) {
		f := f
		t.Run(f.ID, func(t *testing.T) {
			if !f.OK() {
				t.Errorf("FAILED: %s: %s: expected %s; got: %s", f.ID, f.Object, f.Expectation, f.Problem)
			} else {
				t.Logf("FINDING: %s: %s", f.ID, f.Expectation)
			}
		})
	}
}

// mtControl: with the shared layout the check must fail, and the evidence read from the generated
// configuration must show the leak it names.
type mtControl struct {
	name, finding string
	evidence      func(g *MTGenerated, fs []mtFilter) (string, string)
}

// crossLeak: what team from's rate-limit filter sends on team on's virtual host.
func crossLeak(g *MTGenerated, fs []mtFilter, from, on mtTeam) (string, string) {
	gf, _ := g.teamFilters(fs, from)
	if gf == nil {
		return "", "no rate-limit filter calling " + from.Cluster
	}
	vh := findVhost(g.Routes, mtRouteConfig, on.Vhost)
	if vh == nil {
		return "", on.Vhost + " absent"
	}
	reads := gf.readsOnVhost(vh)
	if len(reads) == 0 {
		return "", fmt.Sprintf("%s's filter %s sends nothing on %s", strings.ToUpper(from.ID), gf.Name, on.Vhost)
	}
	return fmt.Sprintf("a request to %s calls %s's service too: %s", on.Vhost, strings.ToUpper(from.ID), strings.Join(reads, "; ")), ""
}

var mtControls = []mtControl{
	{
		name: "shared-names", finding: MTNames,
		evidence: func(g *MTGenerated, fs []mtFilter) (string, string) {
			_, names, _ := mtFilters(g.Listeners)
			n := 0
			for _, x := range names {
				if x == FilterRateLimit {
					n++
				}
			}
			if len(g.In.Collisions) == 0 || n < 2 {
				return "", fmt.Sprintf("collisions %v, %s %d time(s) on %s", g.In.Collisions, FilterRateLimit, n, mtListener)
			}
			return fmt.Sprintf("both programs render %v, and %s sits %d times on %s", g.In.Collisions, FilterRateLimit, n, mtListener), ""
		},
	},
	{
		name: "b-descriptors-to-a", finding: MTBForA,
		evidence: func(g *MTGenerated, fs []mtFilter) (string, string) { return crossLeak(g, fs, g.In.A, g.In.B) },
	},
	{
		name: "a-descriptors-to-b", finding: MTAForB,
		evidence: func(g *MTGenerated, fs []mtFilter) (string, string) { return crossLeak(g, fs, g.In.B, g.In.A) },
	},
	{
		name: "c-descriptors-to-a", finding: MTTeamC,
		evidence: func(g *MTGenerated, fs []mtFilter) (string, string) { return crossLeak(g, fs, g.In.A, g.In.C) },
	},
	{
		name: "pre-limit-shared-name", finding: MTPreLimit,
		evidence: func(g *MTGenerated, fs []mtFilter) (string, string) {
			if g.In.A.Local != g.In.B.Local {
				return "", fmt.Sprintf("the local filters are named apart (%s, %s)", g.In.A.Local, g.In.B.Local)
			}
			vh := findVhost(g.Routes, mtRouteConfig, g.In.B.Vhost)
			if vh == nil {
				return "", g.In.B.Vhost + " absent"
			}
			_, ls := g.teamFilters(fs, g.In.A)
			if len(ls) < 2 {
				return "", fmt.Sprintf("%d local filter(s) named %s on %s, want A's and B's", len(ls), g.In.A.Local, mtListener)
			}
			for _, l := range ls {
				if len(l.readsOnVhost(vh)) == 0 {
					return "", fmt.Sprintf("a local filter %s does not act on %s", l.Name, g.In.B.Vhost)
				}
			}
			return fmt.Sprintf("A's and B's local filters are both %s, so B's per-virtual-host config on %s drives both (%d local filters act on every B request)", g.In.A.Local, g.In.B.Vhost, len(ls)), ""
		},
	},
}

// TestManyTeamsControls: the old layout (shared names, route and virtual-host rate_limits) leaks.
func TestManyTeamsControls(t *testing.T) {
	g := manyTeamsGenerated(t, "shared")
	fs := ManyTeamsFindings(g)
	filters, _, problem := mtFilters(g.Listeners)
	for _, c := range mtControls {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if problem != "" {
				t.Fatalf("FAILED: %s: control: %s", c.name, problem)
			}
			f := FindingByID(fs, c.finding)
			ev, why := c.evidence(g, filters)
			switch {
			case f == nil:
				t.Errorf("FAILED: %s: control: check %s was not evaluated", c.name, c.finding)
			case f.OK():
				t.Errorf("FAILED: %s: control: with the shared layout check %s still passes (%s)", c.name, c.finding, strings.TrimSpace(why+" "+ev))
			case why != "":
				t.Errorf("FAILED: %s: control: check %s fails, but not for the leak it must show: %s; the check says: %s", c.name, c.finding, why, f.Problem)
			default:
				t.Logf("FINDING: %s: detected: %s; check %s fails: %s", c.name, ev, c.finding, f.Problem)
			}
		})
	}
}
