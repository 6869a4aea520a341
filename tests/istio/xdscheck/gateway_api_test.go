package xdscheck

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"k8s.io/apimachinery/pkg/types"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/mesh"
)

// The package's GlobalRateLimit aimed at a Kubernetes Gateway API Gateway by name
// (tests/istio/render-gateway-api.ts: gateway.gatewayApiName "shop-gw", namespace "shop"). Its
// EnvoyFilters live in namespace shop with targetRefs [{group gateway.networking.k8s.io, kind
// Gateway, name shop-gw}] and no workloadSelector.
//
// Istio decides which proxies such a filter reaches in pilot/pkg/model/policyattachment.go,
// WorkloadPolicyMatcher.ShouldAttachPolicy (called for every EnvoyFilter by
// PushContext.getMatchedEnvoyFilters, push_context.go, with PolicyMatcherForProxy: the proxy's
// ConfigNamespace and Labels). A proxy is a Gateway API gateway when its labels carry
// gateway.networking.k8s.io/gateway-name (workloadGatewayName); a targetRef of group
// gateway.networking.k8s.io, kind Gateway then matches when its name equals that label's value AND
// the filter's namespace equals the proxy's namespace (the root namespace gets no exception, except
// for waypoints). A proxy without the label ignores every filter that has targetRefs.
//
// The test builds three Router proxies with the labels Istio's deployment controller puts on a
// Gateway API gateway's pods (manifests/charts/istio-control/istio-discovery/files/kube-gateway.yaml):
//
//	shop-gw         namespace shop,   gateway-name shop-gw   (the Gateway the limits target)
//	other-gw        namespace shop,   gateway-name other-gw  (another team's Gateway, same namespace)
//	team-c-shop-gw  namespace team-c, gateway-name shop-gw   (same Gateway name, other namespace)
//
// The routing is written here as Istio networking objects (the HTTPRoute translation is not under
// test): Gateways that select the gateway-name label, so all three proxies serve the same virtual
// host shop.example.com:80 with routes checkout and web (team-c's pod through Istio's cross-namespace
// Gateway selector matching). Every patch therefore has a place to land on each proxy, and only the
// attachment decides where it does.
//
//	XDSCHECK_GWAPI_DIR  directory with the render's all.yaml
//
// A pass logs "FINDING: <id>: <what was seen>", a failure "FAILED: <id>: <object>: expected ...; got: ...".
const (
	gwapiNamespace      = "shop"
	gwapiGateway        = "shop-gw"
	gwapiOtherGateway   = "other-gw"
	gwapiOtherNamespace = "team-c"
	gwapiHost           = "shop.example.com"
	gwapiPort           = 80
	gwapiDomain         = "shop"
	gwapiCluster        = "outbound|8081||ratelimit.shop.svc.cluster.local"
	gatewayNameLabel    = "gateway.networking.k8s.io/gateway-name"
	gatewayAPIGroup     = "gateway.networking.k8s.io"
)

var (
	gwapiVhost    = fmt.Sprintf("%s:%d", gwapiHost, gwapiPort)
	gwapiListener = fmt.Sprintf("0.0.0.0_%d", gwapiPort)
	gwapiRC       = fmt.Sprintf("http.%d", gwapiPort)
	// The three filters the component renders, in the Gateway's namespace (names: docs/names.md).
	gwapiFilters = []string{gwapiNamespace + "/" + EFGlobal, gwapiNamespace + "/" + EFVhost, gwapiNamespace + "/" + EFRouteAPI}
)

// gwapiPodLabels: the labels of the pods Istio deploys for a Gateway API Gateway of class istio
// (kube-gateway.yaml: the pod template's labels; canonical-name is the Deployment's name <gateway>-istio).
func gwapiPodLabels(gateway string) map[string]string {
	return map[string]string{
		gatewayNameLabel: gateway,
		"gateway.networking.k8s.io/gateway-class-name": "istio",
		"gateway.istio.io/managed":                     "istio.io-gateway-controller",
		"sidecar.istio.io/inject":                      "false",
		"service.istio.io/canonical-name":              gateway + "-istio",
		"service.istio.io/canonical-revision":          "latest",
	}
}

type gwapiProxy struct{ key, ns, gateway, ip string }

var (
	gwapiShop     = gwapiProxy{"shop-gw", gwapiNamespace, gwapiGateway, "10.244.3.1"}
	gwapiOther    = gwapiProxy{"other-gw", gwapiNamespace, gwapiOtherGateway, "10.244.3.2"}
	gwapiTeamC    = gwapiProxy{"team-c-shop-gw", gwapiOtherNamespace, gwapiGateway, "10.244.3.3"}
	gwapiProxyAll = []gwapiProxy{gwapiShop, gwapiOther, gwapiTeamC}
)

func (p gwapiProxy) ref() string {
	return fmt.Sprintf("gateway pod %s/%s-istio (%s=%s)", p.ns, p.gateway, gatewayNameLabel, p.gateway)
}

// gwapiRoutingYAML: the gateways' routing (see above) and the Services the routes go to.
const gwapiRoutingYAML = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: shop-gw-routes, namespace: shop}
spec:
  selector: {gateway.networking.k8s.io/gateway-name: shop-gw}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: [shop.example.com]
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: other-gw-routes, namespace: shop}
spec:
  selector: {gateway.networking.k8s.io/gateway-name: other-gw}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: [shop.example.com]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec:
  hosts: [shop.example.com]
  gateways: [shop-gw-routes, other-gw-routes]
  http:
  - name: checkout
    match: [{uri: {prefix: /checkout}}]
    route: [{destination: {host: checkout.shop.svc.cluster.local, port: {number: 8080}}}]
  - name: web
    route: [{destination: {host: web.shop.svc.cluster.local, port: {number: 8080}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: shop}
spec:
  selector: {app: checkout}
  ports: [{name: http, port: 8080, targetPort: 8080}]
`

// gwapiProxyConfig: what Istio generated for one proxy, and which EnvoyFilters it attached.
type gwapiProxyConfig struct {
	proxy     gwapiProxy
	listeners []*listenerv3.Listener
	routes    []*routev3.RouteConfiguration
	attached  []string // namespace/name of every EnvoyFilter with a patch for this proxy (PushContext.EnvoyFilters)
}

// generateGatewayAPI runs Istio's generator over the render plus the routing for the three proxies.
func generateGatewayAPI(t *testing.T, render []Doc) map[string]*gwapiProxyConfig {
	t.Helper()
	routing, err := ParseYAML([]byte(gwapiRoutingYAML))
	if err != nil {
		t.Fatalf("FAILED: input: routing: %v", err)
	}
	text, services, err := istioAndServices(append(Clone(render), routing...), 3)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	// The harness runs no Gateway API controller (istiod's answers the listener builder's question
	// for a gateway-name-labelled proxy, listener_builder.go buildHTTPConnectionManager); without one
	// it dereferences nil. No InferencePool exists here, so the stub answers false, as istiod would.
	cg.PushContext().GatewayAPIController = noGatewayAPIController{}
	out := map[string]*gwapiProxyConfig{}
	for _, gp := range gwapiProxyAll {
		p, ls, rcs := gatewayProxy(cg, gp.gateway+"-istio-0."+gp.ns, gp.ns, gp.ip, gwapiPodLabels(gp.gateway))
		pc := &gwapiProxyConfig{proxy: gp, listeners: ls, routes: rcs}
		seen := map[string]bool{}
		if m := cg.PushContext().EnvoyFilters(p); m != nil {
			for _, cps := range m.Patches {
				for _, cp := range cps {
					seen[cp.Namespace+"/"+cp.Name] = true
				}
			}
		}
		for k := range seen {
			pc.attached = append(pc.attached, k)
		}
		sort.Strings(pc.attached)
		out[gp.key] = pc
	}
	return out
}

// noGatewayAPIController: a Gateway API controller that knows no InferencePool and no Secret grant.
// Only HasInferencePool is called on the generator's path; the embedded store is never used.
type noGatewayAPIController struct{ model.ConfigStoreController }

func (noGatewayAPIController) HasInferencePool(types.NamespacedName) bool { return false }
func (noGatewayAPIController) Reconcile(*model.PushContext)               {}
func (noGatewayAPIController) SecretAllowed(config.GroupVersionKind, string, string) bool {
	return false
}

// rateLimitActionsText: a rate_limits list as "generic_key rule=x + remote_address | ...".
func rateLimitActionsText(rls []*routev3.RateLimit) string {
	var entries []string
	for _, rl := range rls {
		var as []string
		for _, a := range rl.Actions {
			switch {
			case a.GetGenericKey() != nil:
				as = append(as, fmt.Sprintf("generic_key %s=%s", a.GetGenericKey().GetDescriptorKey(), a.GetGenericKey().GetDescriptorValue()))
			case a.GetRemoteAddress() != nil:
				as = append(as, "remote_address")
			case a.GetMaskedRemoteAddress() != nil:
				as = append(as, maskedString(a.GetMaskedRemoteAddress()))
			default:
				as = append(as, jsonOf(a))
			}
		}
		entries = append(entries, strings.Join(as, " + "))
	}
	return strings.Join(entries, " | ")
}

// gwapiServesVhost: "" when the proxy has the HTTP listener and the virtual host with both routes.
func gwapiServesVhost(pc *gwapiProxyConfig) string {
	l := findListener(pc.listeners, gwapiListener)
	if l == nil {
		return fmt.Sprintf("no listener %s (listeners %v)", gwapiListener, listenerNames(pc.listeners))
	}
	hcm := false
	for _, fc := range l.FilterChains {
		hcm = hcm || hcmOf(fc) != nil
	}
	if !hcm {
		return fmt.Sprintf("listener %s has no HTTP connection manager", gwapiListener)
	}
	vh := findVhost(pc.routes, gwapiRC, gwapiVhost)
	if vh == nil {
		return fmt.Sprintf("no virtual host %s in %s (route configs %v)", gwapiVhost, gwapiRC, routeConfigSummary(pc.routes))
	}
	if findRoute(vh, "checkout") == nil || findRoute(vh, "web") == nil {
		return fmt.Sprintf("virtual host %s lacks route checkout or web (routes %v)", gwapiVhost, routeNames(vh))
	}
	return ""
}

// gwapiReached: everything of the rate limit on the proxy (filter, rate_limits, per-route config).
func gwapiReached(pc *gwapiProxyConfig) []string {
	var what []string
	if len(pc.attached) > 0 {
		what = append(what, fmt.Sprintf("Istio attaches EnvoyFilter(s) %v", pc.attached))
	}
	on := rateLimitFilterListeners(pc.listeners)
	for _, l := range sortedKeys(on) {
		what = append(what, fmt.Sprintf("%s on listener %s (domain %q)", FilterRateLimit, l, rateLimitDomain(pc.listeners, l)))
	}
	for _, rc := range pc.routes {
		for _, vh := range rc.VirtualHosts {
			for _, leak := range vhostRateLimitLeaks(vh) {
				what = append(what, fmt.Sprintf("%s/%s: %s", rc.Name, vh.Name, leak))
			}
		}
	}
	return what
}

// Finding IDs: <proxy key>/<expectation>.
const (
	GWShopAttached = "shop-gw/attached-filters"
	GWShopFilter   = "shop-gw/ratelimit-filter-before-router"
	GWShopVhost    = "shop-gw/vhost-rate-limits"
	GWShopRoute    = "shop-gw/route-checkout"
	GWOtherServes  = "other-gw/serves-same-vhost"
	GWOtherNot     = "other-gw/not-reached"
	GWTeamCServes  = "team-c-shop-gw/serves-same-vhost"
	GWTeamCNot     = "team-c-shop-gw/not-reached"
)

// gatewayAPIFindings evaluates the expectations. Expected values come from render-gateway-api.ts's
// arguments (domain shop, rules per-client and checkout), never from the render.
func gatewayAPIFindings(render []Doc, g map[string]*gwapiProxyConfig) []Finding {
	var fs findings
	efRef := func(name string) string {
		if d := Find(render, "EnvoyFilter", "", name); d != nil {
			return d.Ref()
		}
		return "EnvoyFilter " + name + " (not rendered)"
	}
	shop := g[gwapiShop.key]

	// (a) the targeted Gateway's pod gets exactly the three filters...
	exp := fmt.Sprintf("Istio attaches exactly the EnvoyFilters %v to %s (targetRefs Gateway %s, same namespace)", gwapiFilters, gwapiShop.ref(), gwapiGateway)
	prob := ""
	if strings.Join(shop.attached, ",") != strings.Join(gwapiFilters, ",") {
		prob = fmt.Sprintf("attached %v", shop.attached)
	}
	fs.add(GWShopAttached, efRef(EFGlobal)+", "+efRef(EFVhost)+", "+efRef(EFRouteAPI), exp, prob)

	// ...the rate-limit HTTP filter once, immediately before the router, on its listener...
	exp = fmt.Sprintf("%s: %s once, immediately before %s, on listener %s and no other, domain %q, cluster %s", gwapiShop.ref(), FilterRateLimit, FilterRouter, gwapiListener, gwapiDomain, gwapiCluster)
	var probs []string
	on := rateLimitFilterListeners(shop.listeners)
	if p, ok := on[gwapiListener]; !ok {
		probs = append(probs, fmt.Sprintf("absent from %s (listeners %v; attached %v)", gwapiListener, listenerNames(shop.listeners), shop.attached))
	} else if p != "" {
		probs = append(probs, "not directly before the router: "+p)
	} else if l := findListener(shop.listeners, gwapiListener); l != nil {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			for _, f := range h.HttpFilters {
				if f.Name != FilterRateLimit {
					continue
				}
				rl := &rlv3.RateLimit{}
				if err := f.GetTypedConfig().UnmarshalTo(rl); err != nil {
					probs = append(probs, "typed_config is not a RateLimit: "+err.Error())
				} else if c := rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName(); rl.Domain != gwapiDomain || c != gwapiCluster {
					probs = append(probs, fmt.Sprintf("domain %q cluster %q", rl.Domain, c))
				}
			}
		}
	}
	for _, l := range sortedKeys(on) {
		if l != gwapiListener {
			probs = append(probs, "also on listener "+l)
		}
	}
	fs.add(GWShopFilter, efRef(EFGlobal), exp, strings.Join(probs, "; "))

	// ...the virtual host's rate_limits...
	const wantVhost = "generic_key rule=per-client + masked_remote_address v4=32 v6=64"
	exp = fmt.Sprintf("%s: virtual host %s of %s carries rate_limits [%s] (rule per-client)", gwapiShop.ref(), gwapiVhost, gwapiRC, wantVhost)
	vh := findVhost(shop.routes, gwapiRC, gwapiVhost)
	switch {
	case vh == nil:
		fs.add(GWShopVhost, efRef(EFVhost), exp, fmt.Sprintf("no virtual host %s (route configs %v)", gwapiVhost, routeConfigSummary(shop.routes)))
	case rateLimitActionsText(vh.RateLimits) != wantVhost:
		fs.add(GWShopVhost, efRef(EFVhost), exp, fmt.Sprintf("rate_limits [%s]", rateLimitActionsText(vh.RateLimits)))
	default:
		fs.add(GWShopVhost, efRef(EFVhost), exp, "")
	}

	// ...and the route rule on route checkout only (web keeps none of its own).
	const wantRoute = "generic_key rule=checkout"
	exp = fmt.Sprintf("%s: route checkout carries rate_limits [%s] with vh_rate_limits INCLUDE; route web none of its own", gwapiShop.ref(), wantRoute)
	probs = nil
	if vh == nil {
		probs = append(probs, "no virtual host "+gwapiVhost)
	} else {
		if r := findRoute(vh, "checkout"); r == nil {
			probs = append(probs, fmt.Sprintf("no route checkout (routes %v)", routeNames(vh)))
		} else {
			if got := rateLimitActionsText(r.GetRoute().GetRateLimits()); got != wantRoute {
				probs = append(probs, fmt.Sprintf("route checkout rate_limits [%s]", got))
			}
			if p := vhRateLimitsProblem(r); p != "" {
				probs = append(probs, "route checkout: "+p)
			}
		}
		if r := findRoute(vh, "web"); r != nil && len(r.GetRoute().GetRateLimits()) > 0 {
			probs = append(probs, fmt.Sprintf("route web rate_limits [%s]", rateLimitActionsText(r.GetRoute().GetRateLimits())))
		}
	}
	fs.add(GWShopRoute, efRef(EFRouteAPI), exp, strings.Join(probs, "; "))

	// (b) and (c): they serve the same virtual host (so a patch would have somewhere to land), and
	// nothing of the rate limit reaches them.
	for _, c := range []struct {
		p             gwapiProxy
		serves, notID string
		why           string
	}{
		{gwapiOther, GWOtherServes, GWOtherNot, fmt.Sprintf("its pods carry %s=%s, not %s", gatewayNameLabel, gwapiOtherGateway, gwapiGateway)},
		{gwapiTeamC, GWTeamCServes, GWTeamCNot, fmt.Sprintf("same Gateway name %s, but namespace %s, not the filters' namespace %s", gwapiGateway, gwapiOtherNamespace, gwapiNamespace)},
	} {
		pc := g[c.p.key]
		serves := gwapiServesVhost(pc)
		fs.add(c.serves, "Gateway shop/shop-gw-routes, shop/other-gw-routes, VirtualService shop/shop (written by the test)",
			fmt.Sprintf("%s serves listener %s and virtual host %s with routes checkout and web, like shop-gw's pod", c.p.ref(), gwapiListener, gwapiVhost), serves)
		exp := fmt.Sprintf("%s (%s): Istio attaches none of the filters, no %s on any listener, no rate_limits or per-route rate-limit config on any virtual host", c.p.ref(), c.why, FilterRateLimit)
		reached := gwapiReached(pc)
		if serves != "" && len(reached) == 0 {
			reached = []string{"nothing to check: " + serves}
		}
		fs.add(c.notID, efRef(EFGlobal)+", "+efRef(EFVhost)+", "+efRef(EFRouteAPI), exp, strings.Join(reached, "; "))
	}
	return fs.list
}

func gwapiDocs(t *testing.T) []Doc {
	t.Helper()
	dir := os.Getenv("XDSCHECK_GWAPI_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_GWAPI_DIR not set (run tests/istio/run.sh)")
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{EFGlobal, EFVhost, EFRouteAPI} {
		if Find(docs, "EnvoyFilter", gwapiNamespace, name) == nil {
			t.Fatalf("FAILED: input: no EnvoyFilter %s/%s in %s", gwapiNamespace, name, dir)
		}
	}
	return docs
}

// TestGatewayAPI: the filters reach the pods of Gateway shop/shop-gw, and only those.
func TestGatewayAPI(t *testing.T) {
	docs := gwapiDocs(t)
	// The render targets the Gateway by name: targetRefs, no workloadSelector (the premise of the test).
	for _, name := range []string{EFGlobal, EFVhost, EFRouteAPI} {
		f := Find(docs, "EnvoyFilter", gwapiNamespace, name)
		refs, _ := Dig(f, "spec", "targetRefs").([]any)
		want := fmt.Sprintf(`[{"group":%q,"kind":"Gateway","name":%q}]`, gatewayAPIGroup, gwapiGateway)
		if b, _ := json.Marshal(refs); string(b) != want || Dig(f, "spec", "workloadSelector") != nil {
			t.Fatalf("FAILED: input: %s: expected targetRefs %s and no workloadSelector; got targetRefs %s, workloadSelector %v", f.Ref(), want, b, Dig(f, "spec", "workloadSelector"))
		}
	}
	for _, f := range gatewayAPIFindings(docs, generateGatewayAPI(t, docs)) {
		f := f
		t.Run(f.ID, func(t *testing.T) {
			if !f.OK() {
				t.Errorf("FAILED: %s: %s: expected %s; got: %s", f.ID, f.Object, f.Expectation, f.Problem)
			} else {
				t.Logf("FINDING: %s: %s: %s", f.ID, f.Object, f.Expectation)
			}
		})
	}
}

// shorten cuts a problem text for the one-line control summary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// setTarget rewrites the three filters: namespace, targetRefs (nil: none) and workloadSelector (nil: none).
func setTarget(ns string, refs []any, selector map[string]any) func([]Doc) {
	return func(docs []Doc) {
		for _, d := range docs {
			if d.Kind() != "EnvoyFilter" {
				continue
			}
			d["metadata"].(map[string]any)["namespace"] = ns
			spec := d["spec"].(map[string]any)
			delete(spec, "targetRefs")
			delete(spec, "workloadSelector")
			if refs != nil {
				spec["targetRefs"] = refs
			}
			if selector != nil {
				spec["workloadSelector"] = map[string]any{"labels": selector}
			}
		}
	}
}

func gatewayRef(group, name string) []any {
	return []any{map[string]any{"group": group, "kind": "Gateway", "name": name}}
}

// TestGatewayAPIControls: with the filters aimed elsewhere the checks must fail, each on the proxy
// the change moves the rate limit to or away from; so the checks above depend on Istio's attachment.
func TestGatewayAPIControls(t *testing.T) {
	docs := gwapiDocs(t)
	root := mesh.DefaultMeshConfig().GetRootNamespace()
	controls := []struct {
		name     string
		mutate   func([]Doc)
		wantFail []string
	}{
		// The name is matched against the pod's gateway-name label: the filters move to other-gw's pod.
		{"targetRefs-name-other-gw", setTarget(gwapiNamespace, gatewayRef(gatewayAPIGroup, gwapiOtherGateway), nil), []string{GWShopFilter, GWShopVhost, GWOtherNot}},
		// The filter's namespace must be the pod's: in team-c the same targetRef reaches team-c's shop-gw pod instead.
		{"targetRefs-in-namespace-team-c", setTarget(gwapiOtherNamespace, gatewayRef(gatewayAPIGroup, gwapiGateway), nil), []string{GWShopFilter, GWShopVhost, GWTeamCNot}},
		// No exception for the root namespace (only waypoints get one): from there the targetRef reaches nobody.
		{"targetRefs-in-root-namespace", setTarget(root, gatewayRef(gatewayAPIGroup, gwapiGateway), nil), []string{GWShopAttached, GWShopFilter, GWShopVhost}},
		// The group is matched too: Istio's own networking Gateway kind is not a Gateway API Gateway.
		{"targetRefs-group-networking-istio-io", setTarget(gwapiNamespace, gatewayRef("networking.istio.io", gwapiGateway), nil), []string{GWShopFilter, GWShopVhost}},
		// Why targetRefs: the same filters by label selector in the root namespace reach every pod with
		// that label, in any namespace (ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY defaults to true): team-c's
		// shop-gw pod is limited too.
		{"root-namespace-selector-gateway-name", setTarget(root, nil, map[string]any{gatewayNameLabel: gwapiGateway}), []string{GWTeamCNot}},
	}
	for _, c := range controls {
		c := c
		t.Run(c.name, func(t *testing.T) {
			mut := Clone(docs)
			c.mutate(mut)
			fs := gatewayAPIFindings(mut, generateGatewayAPI(t, mut))
			var seen []string
			for _, id := range c.wantFail {
				f := FindingByID(fs, id)
				switch {
				case f == nil:
					t.Errorf("FAILED: %s: control: check %s not evaluated", c.name, id)
				case f.OK():
					t.Errorf("FAILED: %s: control: with the filters changed (%s) the check %s still passed: %s", c.name, c.name, id, f.Expectation)
				default:
					seen = append(seen, fmt.Sprintf("%s fails (%s)", id, shorten(f.Problem, 180)))
				}
			}
			if !t.Failed() {
				t.Logf("FINDING: %s: %s", c.name, strings.Join(seen, "; "))
			}
		})
	}
}
