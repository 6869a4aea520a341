package xdscheck

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
)

// Side doors: another namespace's VirtualService with a host of its own, bound to the stack's Gateway
// default/bookinfo-gateway and routing to productpage (tests/istio/fixtures/side-door.yaml). Istio
// gives each host a Gateway server admits a virtual host of its own; the stack's patches name only
// its own (*:8080), so an admitted host would reach productpage with no gateway limit. The stack's
// Gateway admits only its own namespace's VirtualServices by default (server hosts default/*); the
// specification's "*" (gatewayHostScope=any-namespace) admits every namespace's, and the preflight
// refuses such a VirtualService there (program/side-doors.ts; the unit tier runs it on this file).
//
//	XDSCHECK_SHARED_DIR    the default render (Gateway hosts default/*)
//	XDSCHECK_SIDE_ANY_DIR  the same stack with --set gatewayHostScope=any-namespace (Gateway hosts *)
//	XDSCHECK_SIDE_DOOR     the side VirtualService
const (
	sideDoorHost       = "side.example.com"
	productpageCluster = "outbound|9080||productpage.default.svc.cluster.local"
)

// productpageClusters: the clusters of default/productpage port 9080 as routes name them: the side
// VirtualService's full name, and the stack's VirtualService's short host "productpage" as Istio
// resolves it in the generator harness (its proxies carry no DNS domain).
var productpageClusters = map[string]bool{productpageCluster: true, "outbound|9080||productpage.default": true}

// productpageRoutes: the routes of a virtual host to default/productpage.
func productpageRoutes(vh *routev3.VirtualHost) int {
	n := 0
	for _, r := range vh.Routes {
		if productpageClusters[r.GetRoute().GetCluster()] {
			n++
		}
	}
	return n
}

// sideDoorVhost: Istio's name for the side host's virtual host on the stack's port.
var sideDoorVhost = fmt.Sprintf("%s:%d", sideDoorHost, stackGatewayPort)

// productpageVhosts: every virtual host of the stack's gateway (any route configuration) with a
// route to productpage, and those of them without the stack's CEL PATH descriptor (no limit).
func productpageVhosts(g *SharedGenerated) (all, unlimited []string) {
	for _, rc := range g.StackGateway.Routes {
		for _, vh := range rc.VirtualHosts {
			if productpageRoutes(vh) == 0 {
				continue
			}
			name := rc.Name + "/" + vh.Name
			all = append(all, name)
			if !hasURLPathAction(vh.RateLimits, "PATH") {
				unlimited = append(unlimited, name)
			}
		}
	}
	sort.Strings(all)
	sort.Strings(unlimited)
	return all, unlimited
}

// sideVhostFound: the side host's virtual host in any route configuration of the stack's gateway.
func sideVhostFound(g *SharedGenerated) []string {
	var out []string
	for _, rc := range g.StackGateway.Routes {
		for _, vh := range rc.VirtualHosts {
			for _, d := range vh.Domains {
				if d == sideDoorHost || strings.HasPrefix(d, sideDoorHost+":") {
					out = append(out, rc.Name+"/"+vh.Name)
					break
				}
			}
		}
	}
	return out
}

func sideDoorDocs(t *testing.T) []Doc {
	t.Helper()
	return yamlFileDocs(t, "XDSCHECK_SIDE_DOOR")
}

// TestSideDoor: with the default hosts Istio binds no host of the side VirtualService, and every
// virtual host of the gateway that routes to productpage carries the stack's limits (the stack's
// own *:8080 among them: its VirtualService still binds). Control: with the specification's "*" the
// generator makes side.example.com:8080, routing to productpage with no rate-limit setting at all.
func TestSideDoor(t *testing.T) {
	side := sideDoorDocs(t)
	want := fmt.Sprintf("http.%d/%s", stackGatewayPort, stackStarVhost)

	t.Run("side-door-closed", func(t *testing.T) {
		g := generateShared(t, append(Clone(sharedDocs(t, "XDSCHECK_SHARED_DIR")), side...))
		all, unlimited := productpageVhosts(g)
		switch found := sideVhostFound(g); {
		case len(found) > 0:
			t.Errorf("FAILED: side-door-closed: VirtualService team-side/side: expected no virtual host for %s with the Gateway's hosts default/*; got: %v", sideDoorHost, found)
		case len(all) != 1 || all[0] != want:
			t.Errorf("FAILED: side-door-closed: VirtualService default/bookinfo: expected productpage reached through %s only; got: %v", want, all)
		case len(unlimited) > 0:
			t.Errorf("FAILED: side-door-closed: EnvoyFilter filter-ratelimit-svc: expected every virtual host routing to productpage limited; got unlimited: %v", unlimited)
		default:
			t.Logf("FINDING: side-door-closed: Gateway default/bookinfo-gateway (hosts default/*): no virtual host for team-side/side's %s; productpage is reached only through %s, which carries the CEL PATH descriptor", sideDoorHost, all[0])
		}
	})
	// Control: the same VirtualService with the Gateway's hosts "*" opens the door the preflight refuses.
	t.Run("side-door-open-control", func(t *testing.T) {
		g := generateShared(t, append(Clone(sharedDocs(t, "XDSCHECK_SIDE_ANY_DIR")), side...))
		_, unlimited := productpageVhosts(g)
		door := fmt.Sprintf("http.%d/%s", stackGatewayPort, sideDoorVhost)
		vh := findVhost(g.StackGateway.Routes, fmt.Sprintf("http.%d", stackGatewayPort), sideDoorVhost)
		switch {
		case vh == nil:
			t.Errorf("FAILED: side-door-open-control: Gateway default/bookinfo-gateway (hosts *): expected Istio to make %s; got: %v", sideDoorVhost, routeConfigSummary(g.StackGateway.Routes))
		case routesTo(vh, productpageCluster) == 0:
			t.Errorf("FAILED: side-door-open-control: VirtualService team-side/side: expected %s to route to %s; got routes %v", sideDoorVhost, productpageCluster, routeNames(vh))
		case len(vhostRateLimitLeaks(vh)) > 0:
			t.Errorf("FAILED: side-door-open-control: EnvoyFilter filter-ratelimit-svc: expected no rate-limit setting on %s (the patches name *:8080); got: %v", sideDoorVhost, vhostRateLimitLeaks(vh))
		case len(unlimited) != 1 || unlimited[0] != door:
			t.Errorf("FAILED: side-door-open-control: the closed check's rule: expected it to find exactly %s unlimited; got: %v", door, unlimited)
		default:
			t.Logf("FINDING: side-door-open-control: with hosts * Istio makes %s for team-side/side: %d route(s) to %s, no rate_limits, no per-filter config: the check above finds it unlimited", sideDoorVhost, routesTo(vh, productpageCluster), productpageCluster)
		}
	})
}
