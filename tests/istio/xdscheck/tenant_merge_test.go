package xdscheck

import (
	"fmt"
	"os"
	"testing"
)

// A tenant VirtualService with host "*" on the stack's gateway port, through a Gateway of its own
// (tests/istio/fixtures/tenant-star.yaml): Istio's generator merges its routes into the stack's
// virtual host "*:8080", which carries the stack's rate_limits. The preflight names this tenant
// (program/host-sharers.ts; the unit tier runs it on the same file).
//
//	XDSCHECK_SHARED_DIR   the default render (as for TestSharedMesh)
//	XDSCHECK_TENANT_STAR  the tenant's objects
const tenantStarCluster = "outbound|80||web.team-star.svc.cluster.local"

func tenantStarDocs(t *testing.T) []Doc {
	t.Helper()
	return yamlFileDocs(t, "XDSCHECK_TENANT_STAR")
}

// yamlFileDocs: the objects of the YAML file the environment variable names (the test is skipped without it).
func yamlFileDocs(t *testing.T, env string) []Doc {
	t.Helper()
	file := os.Getenv(env)
	if file == "" {
		t.Skip(env + " not set (run tests/istio/run.sh)")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ParseYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// stackStarVhost: the stack's virtual host in the shared gateway's route configuration.
var stackStarVhost = fmt.Sprintf("*:%d", stackGatewayPort)

// TestTenantStarMerge: with the tenant, the stack's virtual host routes the tenant's /star prefix
// to the tenant's Service and carries the stack's CEL PATH descriptor: the tenant's requests are
// limited (and fail closed) with the stack's.
func TestTenantStarMerge(t *testing.T) {
	render := sharedDocs(t, "XDSCHECK_SHARED_DIR")
	tenant := tenantStarDocs(t)
	rc := fmt.Sprintf("http.%d", stackGatewayPort)

	t.Run("tenant-star-merge", func(t *testing.T) {
		g := generateShared(t, append(Clone(render), tenant...))
		vh := findVhost(g.StackGateway.Routes, rc, stackStarVhost)
		switch {
		case vh == nil:
			t.Errorf("FAILED: tenant-star-merge: virtual host %s absent in %s", stackStarVhost, rc)
		case routesTo(vh, tenantStarCluster) == 0:
			t.Errorf("FAILED: tenant-star-merge: the stack's virtual host %s has no route to the tenant's %s (routes %v)", stackStarVhost, tenantStarCluster, routeNames(vh))
		case !hasURLPathAction(vh.RateLimits, "PATH"):
			t.Errorf("FAILED: tenant-star-merge: the merged virtual host %s lacks the stack's CEL PATH descriptor: %s", stackStarVhost, rateLimitsText(vh.RateLimits))
		default:
			t.Logf("FINDING: tenant-star-merge: VirtualService team-star/star (host *) is merged into the stack's virtual host %s: %d route(s) to %s under the stack's rate_limits (CEL PATH)", stackStarVhost, routesTo(vh, tenantStarCluster), tenantStarCluster)
		}
	})
	// Control: without the tenant, no route of the stack's virtual host leads to the tenant.
	t.Run("tenant-star-control", func(t *testing.T) {
		g := generateShared(t, Clone(render))
		vh := findVhost(g.StackGateway.Routes, rc, stackStarVhost)
		if vh == nil || routesTo(vh, tenantStarCluster) != 0 {
			t.Errorf("FAILED: tenant-star-control: without the tenant the stack's virtual host should exist and have no route to %s", tenantStarCluster)
		} else {
			t.Logf("FINDING: tenant-star-control: without the tenant, %s has %d routes and none to %s", stackStarVhost, len(vh.Routes), tenantStarCluster)
		}
	})
}
