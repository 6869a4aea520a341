package xdscheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	kubereg "istio.io/istio/pilot/pkg/serviceregistry/kube"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/test"
)

// The shared-mesh scenario: the stack's render next to objects of other teams on the same mesh.
// The other teams' objects are written here, never read back from the render:
//
//   - shop: a tenant Gateway shop/shop-gateway on the shared ingress gateway (istio=ingressgateway),
//     port 8080, host shop.example.com, VirtualService shop/shop to Service shop/web:80; and a
//     second tenant Gateway shop/shop-admin on port 9090 (host admin.shop.example.com), so that
//     "the rate-limit filter only on the stack's port" has a listener where it must be absent;
//   - team-b: a second gateway deployment whose pods carry the stack gateway's labels
//     (istio=ingressgateway, app=istio-ingressgateway): a Router proxy in namespace team-b;
//   - other: a workload app=productpage (Service other/productpage:9080, sidecar) and a workload
//     other/legacy (Service :8080, sidecar) under the mesh's default mutual-TLS mode (no
//     PeerAuthentication of its own).
const (
	shopNamespace    = "shop"
	shopHost         = "shop.example.com"
	shopPort         = 8080
	shopAdminHost    = "admin.shop.example.com"
	shopAdminPort    = 9090
	shopCluster      = "outbound|80||web.shop.svc.cluster.local"
	teamBNamespace   = "team-b"
	otherNamespace   = "other"
	legacyPort       = 8080
	stackGatewayPort = 8080
	stackAppPort     = 9080
	stackNamespace   = "default"
	tlsTransport     = "tls"
	rawTransport     = "raw_buffer"
)

// sharedGatewayLabels: the labels of the stack's gateway pods; team-b's gateway pods carry them too.
var sharedGatewayLabels = map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"}

// otherTeamsYAML: the objects of the other teams (see above).
const otherTeamsYAML = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: shop-gateway, namespace: shop}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 8080, name: http, protocol: HTTP}
    hosts: [shop.example.com]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec:
  hosts: [shop.example.com]
  gateways: [shop/shop-gateway]
  http:
  - name: web
    route:
    - destination: {host: web.shop.svc.cluster.local, port: {number: 80}}
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: shop-admin, namespace: shop}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 9090, name: http-admin, protocol: HTTP}
    hosts: [admin.shop.example.com]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop-admin, namespace: shop}
spec:
  hosts: [admin.shop.example.com]
  gateways: [shop/shop-admin]
  http:
  - route:
    - destination: {host: web.shop.svc.cluster.local, port: {number: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8000}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: shop/web, ports: [{name: http, containerPort: 8000}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: istio-ingressgateway, namespace: team-b}
spec:
  template:
    metadata: {labels: {istio: ingressgateway, app: istio-ingressgateway}}
    spec:
      containers: [{name: istio-proxy, image: istio/proxyv2}]
---
apiVersion: v1
kind: Service
metadata: {name: productpage, namespace: other}
spec:
  selector: {app: productpage}
  ports: [{name: http, port: 9080, targetPort: 9080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: productpage, namespace: other}
spec:
  template:
    metadata: {labels: {app: productpage, version: v1}}
    spec:
      containers: [{name: productpage, image: other/productpage, ports: [{containerPort: 9080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: legacy, namespace: other}
spec:
  selector: {app: legacy}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: legacy, namespace: other}
spec:
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: legacy, image: other/legacy, ports: [{containerPort: 8080}]}]
`

// OtherTeams parses the other teams' objects.
func OtherTeams() []Doc {
	docs, err := ParseYAML([]byte(otherTeamsYAML))
	if err != nil {
		panic(err)
	}
	return docs
}

// proxyConfig is what Istio generated for one proxy.
type proxyConfig struct {
	Ref       string // "gateway istio-system/istio-ingressgateway", "sidecar other/legacy"
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
}

// SharedGenerated: the configuration of the five proxies of the scenario.
type SharedGenerated struct {
	StackGateway, TeamBGateway                      proxyConfig
	StackProductpage, OtherProductpage, OtherLegacy proxyConfig
	Render                                          []Doc // the stack's objects (without the other teams')
}

type sharedWorkload struct {
	ns, name string
	labels   map[string]string
	ports    map[string]int32
	ip       string
}

// GenerateShared runs Istio's generator over the render plus the other teams' objects.
func GenerateShared(t test.Failer, render []Doc) (*SharedGenerated, error) {
	all := append(Clone(render), OtherTeams()...)
	var istio []Doc
	var workloads []sharedWorkload
	for i, d := range all {
		if d.IsIstio() {
			istio = append(istio, d)
		}
		if d.Kind() != "Deployment" && d.Kind() != "StatefulSet" {
			continue
		}
		tmpl, _ := Dig(d, "spec", "template").(map[string]any)
		w := sharedWorkload{ns: d.Namespace(), name: d.Name(), labels: map[string]string{}, ports: map[string]int32{},
			ip: fmt.Sprintf("10.244.%d.%d", 4+i/200, 10+i%200)}
		if l, ok := Dig(tmpl, "metadata", "labels").(map[string]any); ok {
			for k, v := range l {
				w.labels[k] = fmt.Sprint(v)
			}
		}
		cs, _ := Dig(tmpl, "spec", "containers").([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			ps, _ := cm["ports"].([]any)
			for _, p := range ps {
				pm, _ := p.(map[string]any)
				name, _ := pm["name"].(string)
				if n, ok := pm["containerPort"].(float64); ok && name != "" {
					w.ports[name] = int32(n)
				}
			}
		}
		workloads = append(workloads, w)
	}
	text, err := ToYAML(istio)
	if err != nil {
		return nil, err
	}

	var services []*model.Service
	var instances []*model.ServiceInstance
	svcIP := 0
	for _, d := range all {
		if d.Kind() != "Service" || d.APIVersion() != "v1" {
			continue
		}
		var svc corev1.Service
		b, _ := json.Marshal(d)
		if err := json.Unmarshal(b, &svc); err != nil {
			return nil, fmt.Errorf("%s: %v", d.Ref(), err)
		}
		if svc.Namespace == "" {
			svc.Namespace = "default"
		}
		if svc.Spec.ClusterIP == "" && svc.Spec.Type != corev1.ServiceTypeExternalName {
			svcIP++ // the API server would allocate one
			svc.Spec.ClusterIP = fmt.Sprintf("10.96.2.%d", 10+svcIP)
		}
		ms := kubereg.ConvertService(svc, nil, domainSuffix, cluster.ID("Kubernetes"), domainSuffix)
		services = append(services, ms)
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		for _, w := range workloads {
			// A Service selects pods of its own namespace only.
			if w.ns != svc.Namespace || !selects(svc.Spec.Selector, w.labels) {
				continue
			}
			instances = append(instances, serviceInstances(ms, svc, w.ip, w.labels, w.ports)...)
		}
	}
	find := func(ns, app string) *sharedWorkload {
		for i := range workloads {
			if workloads[i].ns == ns && workloads[i].labels["app"] == app {
				return &workloads[i]
			}
		}
		return nil
	}

	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services, Instances: instances})
	router := func(ns, ip string) proxyConfig {
		_, ls, rcs := gatewayProxy(cg, "istio-ingressgateway-0."+ns, ns, ip, sharedGatewayLabels)
		return proxyConfig{Ref: "gateway " + ns + "/istio-ingressgateway", Listeners: ls, Routes: rcs}
	}
	sidecar := func(w *sharedWorkload) proxyConfig {
		p := cg.SetupProxy(&model.Proxy{
			Type:            model.SidecarProxy,
			ID:              w.name + "-0." + w.ns,
			ConfigNamespace: w.ns,
			IPAddresses:     []string{w.ip},
			Labels:          w.labels,
			Metadata:        &model.NodeMetadata{Namespace: w.ns, Labels: w.labels, IstioVersion: "1.30.3"},
		})
		return proxyConfig{Ref: "sidecar " + w.ns + "/" + w.labels["app"], Listeners: cg.Listeners(p)}
	}
	g := &SharedGenerated{Render: render}
	g.StackGateway = router(IstioSystem, "10.244.1.1")
	g.TeamBGateway = router(teamBNamespace, "10.244.1.2")
	for _, s := range []struct {
		out     *proxyConfig
		ns, app string
	}{{&g.StackProductpage, stackNamespace, "productpage"}, {&g.OtherProductpage, otherNamespace, "productpage"}, {&g.OtherLegacy, otherNamespace, "legacy"}} {
		w := find(s.ns, s.app)
		if w == nil {
			return nil, fmt.Errorf("no Deployment with pods app=%s in namespace %s", s.app, s.ns)
		}
		*s.out = sidecar(w)
	}
	return g, nil
}

// ---------------------------------------------------------------- facts read from the generated config

// objRef names a rendered object found by kind and name in whichever namespace the render put it.
func objRef(docs []Doc, kind, name string) string {
	if d := Find(docs, kind, "", name); d != nil {
		return d.Ref()
	}
	return kind + " " + name + " (not rendered)"
}

// peerAuthRefs: every PeerAuthentication of the render, with its scope.
func peerAuthRefs(docs []Doc) string {
	var out []string
	for _, d := range docs {
		if d.Kind() != "PeerAuthentication" {
			continue
		}
		sel, _ := Dig(d, "spec", "selector", "matchLabels").(map[string]any)
		mode, _ := Dig(d, "spec", "mtls", "mode").(string)
		scope := "namespace-wide"
		if len(sel) > 0 {
			var kv []string
			for k, v := range sel {
				kv = append(kv, fmt.Sprintf("%s=%v", k, v))
			}
			sort.Strings(kv)
			scope = "selector " + strings.Join(kv, ",")
		} else if d.Namespace() == IstioSystem {
			scope = "mesh-wide (root namespace, no selector)"
		}
		out = append(out, fmt.Sprintf("%s (%s, %s)", d.Ref(), mode, scope))
	}
	if len(out) == 0 {
		return "PeerAuthentication (none rendered)"
	}
	return strings.Join(out, ", ")
}

// meshWideStrict: the render's PeerAuthentication in the root namespace without a selector, mode STRICT.
func meshWideStrict(docs []Doc) Doc {
	root := mesh.DefaultMeshConfig().GetRootNamespace()
	for _, d := range docs {
		if d.Kind() != "PeerAuthentication" || d.Namespace() != root {
			continue
		}
		sel, _ := Dig(d, "spec", "selector", "matchLabels").(map[string]any)
		if mode, _ := Dig(d, "spec", "mtls", "mode").(string); len(sel) == 0 && mode == "STRICT" {
			return d
		}
	}
	return nil
}

// rateLimitFilterListeners: every listener whose HTTP chains carry the rate-limit filter, mapped to
// "" when it sits once, immediately before the router, else to the chain's HTTP filter list.
func rateLimitFilterListeners(ls []*listenerv3.Listener) map[string]string {
	out := map[string]string{}
	for _, l := range ls {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			names := httpFilterNames(h)
			i := indexOf(names, FilterRateLimit)
			if i < 0 {
				continue
			}
			if i+1 < len(names) && names[i+1] == FilterRouter && strings.Count(strings.Join(names, ","), FilterRateLimit) == 1 {
				if _, seen := out[l.Name]; !seen {
					out[l.Name] = ""
				}
			} else {
				out[l.Name] = fmt.Sprintf("HTTP filters %v", names)
			}
		}
	}
	return out
}

func rateLimitDomain(ls []*listenerv3.Listener, listener string) string {
	l := findListener(ls, listener)
	if l == nil {
		return ""
	}
	for _, fc := range l.FilterChains {
		if h := hcmOf(fc); h != nil {
			for _, f := range h.HttpFilters {
				if f.Name == FilterRateLimit {
					rl := &rlv3.RateLimit{}
					if f.GetTypedConfig().UnmarshalTo(rl) == nil {
						return rl.Domain
					}
				}
			}
		}
	}
	return ""
}

// vhostRateLimitLeaks: every rate-limit setting on a virtual host and its routes.
func vhostRateLimitLeaks(vh *routev3.VirtualHost) []string {
	var out []string
	if len(vh.RateLimits) > 0 {
		out = append(out, fmt.Sprintf("virtual host rate_limits %s", rateLimitsText(vh.RateLimits)))
	}
	// The rate-limit filter's per-route config, and the pre-limit's (its buckets live there).
	for _, f := range []string{FilterRateLimit, FilterLocalRateLimit} {
		if _, ok := vh.TypedPerFilterConfig[f]; ok {
			out = append(out, "virtual host typed_per_filter_config["+f+"]")
		}
	}
	for _, r := range vh.Routes {
		if rls := r.GetRoute().GetRateLimits(); len(rls) > 0 {
			out = append(out, fmt.Sprintf("route %q rate_limits %s", r.Name, rateLimitsText(rls)))
		}
		for _, f := range []string{FilterRateLimit, FilterLocalRateLimit} {
			if _, ok := r.TypedPerFilterConfig[f]; ok {
				out = append(out, fmt.Sprintf("route %q typed_per_filter_config[%s]", r.Name, f))
			}
		}
	}
	return out
}

// rateLimitsText: rate_limits entries as protobuf JSON, typed configs decoded.
func rateLimitsText(rls []*routev3.RateLimit) string {
	var out []string
	for _, rl := range rls {
		out = append(out, jsonOf(rl))
	}
	return "[" + strings.Join(out, ",") + "]"
}

// routesTo: the routes of a virtual host that send traffic to the cluster.
func routesTo(vh *routev3.VirtualHost, clusterName string) int {
	n := 0
	for _, r := range vh.Routes {
		if r.GetRoute().GetCluster() == clusterName {
			n++
		}
	}
	return n
}

// inboundChain is one HTTP filter chain of a sidecar's virtualInbound listener.
type inboundChain struct {
	fc   *listenerv3.FilterChain
	hcm  *hcmv3.HttpConnectionManager // nil for a TCP chain
	port uint32                       // filter_chain_match.destination_port (0: any, the passthrough chains)
}

func (c inboundChain) label() string {
	return fmt.Sprintf("%s[port %d, %s]", c.fc.Name, c.port, c.fc.GetFilterChainMatch().GetTransportProtocol())
}

func inboundChains(ls []*listenerv3.Listener) []inboundChain {
	l := findListener(ls, model.VirtualInboundListenerName)
	if l == nil {
		return nil
	}
	var out []inboundChain
	for _, fc := range l.FilterChains {
		out = append(out, inboundChain{fc: fc, hcm: hcmOf(fc), port: fc.GetFilterChainMatch().GetDestinationPort().GetValue()})
	}
	return out
}

// localFilterOn: "" when the chain has no local rate limit anywhere, else where it is (HTTP filter
// list or per-route config).
func localFilterOn(c inboundChain) string {
	if c.hcm == nil {
		return ""
	}
	var where []string
	if i := indexOf(httpFilterNames(c.hcm), FilterLocalRateLimit); i >= 0 {
		where = append(where, "HTTP filter")
	}
	for _, vh := range c.hcm.GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.Routes {
			if _, ok := r.TypedPerFilterConfig[FilterLocalRateLimit]; ok {
				where = append(where, fmt.Sprintf("per-route config on %s route %q", vh.Name, r.Name))
			}
		}
	}
	return strings.Join(where, ", ")
}

// Inbound mutual-TLS mode as Istio builds it (pilot/pkg/networking/core/filterchain_options.go):
// for an HTTP port, STRICT gives one chain per port matching transport_protocol "tls" with a
// DownstreamTlsContext that requires the client certificate; PERMISSIVE adds a second chain for the
// same port matching transport_protocol "raw_buffer" with no transport socket (plain text); DISABLE
// keeps only the raw_buffer chain. So: plain text is accepted on a port exactly when one of its
// chains matches raw_buffer and has no transport socket.
type portTLS struct {
	mtls      []string // chains: transport_protocol tls + DownstreamTlsContext requiring a client certificate
	plaintext []string // chains: transport_protocol raw_buffer, no transport socket
	other     []string // anything else (described)
}

func inboundTLS(ls []*listenerv3.Listener, port uint32) portTLS {
	var out portTLS
	for _, c := range inboundChains(ls) {
		if c.port != port {
			continue
		}
		tp := c.fc.GetFilterChainMatch().GetTransportProtocol()
		ts := c.fc.GetTransportSocket()
		switch {
		case tp == rawTransport && ts == nil:
			out.plaintext = append(out.plaintext, c.label())
		case tp == tlsTransport && ts != nil:
			ctx := &tlsv3.DownstreamTlsContext{}
			if err := ts.GetTypedConfig().UnmarshalTo(ctx); err != nil {
				out.other = append(out.other, c.label()+": transport socket is not a DownstreamTlsContext")
			} else if !ctx.GetRequireClientCertificate().GetValue() {
				out.other = append(out.other, c.label()+": TLS without a required client certificate")
			} else {
				out.mtls = append(out.mtls, c.label())
			}
		default:
			out.other = append(out.other, fmt.Sprintf("%s: transport_protocol %q, transport socket %v", c.label(), tp, ts != nil))
		}
	}
	return out
}

func (p portTLS) String() string {
	return fmt.Sprintf("mTLS chains %v, plain-text chains %v, other %v", p.mtls, p.plaintext, p.other)
}

// ---------------------------------------------------------------- findings

// Shared-mesh finding IDs.
const (
	SMStackVhost         = "stack-gateway/stack-vhost-limited"
	SMTenantVhost        = "stack-gateway/tenant-vhost-no-rate-limits"
	SMFilterPort         = "stack-gateway/ratelimit-filter-only-on-8080"
	SMTeamB              = "team-b-gateway/ratelimit-filter"
	SMOtherProductpage   = "other-productpage/no-local-filter"
	SMStackLocal         = "stack-productpage/local-filter-9080-only"
	SMLegacyPlaintext    = "other-legacy/plaintext-accepted"
	SMStackProductStrict = "stack-productpage/mtls-strict"
)

// SharedFindings evaluates the scenario's expectations for the scoped render. Each finding names
// the rendered object responsible; an ok finding's Expectation says what was seen.
func SharedFindings(g *SharedGenerated) []Finding {
	var fs findings
	docs := g.Render
	gw := g.StackGateway
	rcName := fmt.Sprintf("http.%d", stackGatewayPort)
	stackVhostName := fmt.Sprintf("*:%d", stackGatewayPort)
	shopVhostName := fmt.Sprintf("%s:%d", shopHost, shopPort)

	// 1. The stack's virtual host keeps its limits.
	vh := findVhost(gw.Routes, rcName, stackVhostName)
	exp := fmt.Sprintf("the stack's virtual host %s (Gateway default/bookinfo-gateway, host *) in %s of the shared gateway carries rate_limits with the CEL PATH descriptor", stackVhostName, rcName)
	switch {
	case vh == nil:
		fs.add(SMStackVhost, objRef(docs, "EnvoyFilter", EFVhost), exp, "virtual host absent; route configs: "+strings.Join(routeConfigSummary(gw.Routes), " "))
	case !hasURLPathAction(vh.RateLimits, "PATH"):
		fs.add(SMStackVhost, objRef(docs, "EnvoyFilter", EFVhost), exp, "rate_limits are "+jsonOf(vh.RateLimits))
	default:
		fs.add(SMStackVhost, objRef(docs, "EnvoyFilter", EFVhost), exp, "")
	}

	// 2. The tenant's virtual host, on the same gateway and route configuration, gets nothing.
	tvh := findVhost(gw.Routes, rcName, shopVhostName)
	exp = fmt.Sprintf("the tenant's virtual host %s (Gateway shop/shop-gateway, VirtualService shop/shop) in %s of the shared gateway carries no rate_limits (virtual host or routes) and no typed_per_filter_config[%s] or [%s] (the pre-limit's buckets), so a tenant request makes no descriptor, never calls the service and meets no pre-limit", shopVhostName, rcName, FilterRateLimit, FilterLocalRateLimit)
	obj := objRef(docs, "EnvoyFilter", EFVhost) + ", " + objRef(docs, "EnvoyFilter", EFRouteAPI)
	switch {
	case tvh == nil:
		fs.add(SMTenantVhost, obj, exp, "tenant virtual host absent (nothing to check); route configs: "+strings.Join(routeConfigSummary(gw.Routes), " "))
	case routesTo(tvh, shopCluster) == 0:
		fs.add(SMTenantVhost, obj, exp, fmt.Sprintf("tenant virtual host has no route to %s (routes %v)", shopCluster, routeNames(tvh)))
	default:
		fs.add(SMTenantVhost, obj, exp, strings.Join(vhostRateLimitLeaks(tvh), "; "))
	}

	// 3. The rate-limit filter only on the stack's Gateway port, before the router.
	lname := fmt.Sprintf("0.0.0.0_%d", stackGatewayPort)
	tenantListener := fmt.Sprintf("0.0.0.0_%d", shopAdminPort)
	exp = fmt.Sprintf("%s immediately before %s on listener %s only; not on the tenant's listener %s (Gateway shop/shop-admin)", FilterRateLimit, FilterRouter, lname, tenantListener)
	on := rateLimitFilterListeners(gw.Listeners)
	var probs []string
	if findListener(gw.Listeners, tenantListener) == nil {
		probs = append(probs, fmt.Sprintf("tenant listener %s absent (nothing to check against); listeners %v", tenantListener, listenerNames(gw.Listeners)))
	}
	if p, ok := on[lname]; !ok {
		probs = append(probs, fmt.Sprintf("absent from %s", lname))
	} else if p != "" {
		probs = append(probs, fmt.Sprintf("on %s but not directly before the router: %s", lname, p))
	}
	for _, l := range sortedKeys(on) {
		if l != lname {
			probs = append(probs, fmt.Sprintf("also on listener %s", l))
		}
	}
	fs.add(SMFilterPort, objRef(docs, "EnvoyFilter", EFGlobal), exp, strings.Join(probs, "; "))

	// 4. team-b's gateway carries the stack gateway's labels.
	fs.list = append(fs.list, teamBFinding(g))

	// 5. The other team's productpage: no local bucket on any inbound chain.
	exp = fmt.Sprintf("sidecar %s/productpage (labels app=productpage, like the stack's): an inbound HTTP chain for port %d exists and no inbound chain carries %s (filter or per-route config)", otherNamespace, stackAppPort, FilterLocalRateLimit)
	probs = nil
	var checked int
	for _, c := range inboundChains(g.OtherProductpage.Listeners) {
		if c.hcm != nil && c.port == stackAppPort {
			checked++
		}
		if w := localFilterOn(c); w != "" {
			probs = append(probs, fmt.Sprintf("chain %s: %s", c.label(), w))
		}
	}
	if checked == 0 {
		probs = append([]string{fmt.Sprintf("no inbound HTTP chain for port %d (nothing to check)", stackAppPort)}, probs...)
	}
	fs.add(SMOtherProductpage, objRef(docs, "EnvoyFilter", EFLocal), exp, strings.Join(probs, "; "))

	// 6. The stack's productpage keeps its bucket on port 9080, and only there.
	exp = fmt.Sprintf("sidecar %s/productpage: %s before %s on every inbound HTTP chain for port %d, on no other inbound chain", stackNamespace, FilterLocalRateLimit, FilterRouter, stackAppPort)
	probs = nil
	var others []string
	checked = 0
	for _, c := range inboundChains(g.StackProductpage.Listeners) {
		if c.hcm == nil {
			continue
		}
		names := httpFilterNames(c.hcm)
		fi, ri := indexOf(names, FilterLocalRateLimit), indexOf(names, FilterRouter)
		if c.port == stackAppPort {
			checked++
			if fi < 0 || (ri >= 0 && fi > ri) {
				probs = append(probs, fmt.Sprintf("chain %s: HTTP filters %v", c.label(), names))
			}
			continue
		}
		others = append(others, c.label())
		if w := localFilterOn(c); w != "" {
			probs = append(probs, fmt.Sprintf("also on chain %s: %s", c.label(), w))
		}
	}
	if checked == 0 {
		probs = append([]string{fmt.Sprintf("no inbound HTTP chain for port %d", stackAppPort)}, probs...)
	}
	if len(probs) == 0 {
		exp += fmt.Sprintf(" (%d chain(s) for %d; other HTTP chains checked: %v)", checked, stackAppPort, others)
	}
	fs.add(SMStackLocal, objRef(docs, "EnvoyFilter", EFLocal), exp, strings.Join(probs, "; "))

	// 7. other/legacy (no PeerAuthentication of its own) still accepts plain text.
	pa := peerAuthRefs(docs)
	legacy := inboundTLS(g.OtherLegacy.Listeners, legacyPort)
	exp = fmt.Sprintf("sidecar %s/legacy (no PeerAuthentication of its own): port %d stays PERMISSIVE, i.e. an mTLS chain (transport_protocol tls, client certificate required) and a plain-text chain (transport_protocol raw_buffer, no transport socket)", otherNamespace, legacyPort)
	probs = nil
	if len(legacy.plaintext) == 0 {
		probs = append(probs, "no plain-text chain: plain text is refused (STRICT)")
	}
	if len(legacy.mtls) == 0 {
		probs = append(probs, "no mTLS chain")
	}
	if len(probs) > 0 || len(legacy.other) > 0 {
		probs = append(probs, legacy.String())
	}
	fs.add(SMLegacyPlaintext, pa, exp, strings.Join(probs, "; "))

	// 8. The stack's productpage is STRICT.
	stack := inboundTLS(g.StackProductpage.Listeners, stackAppPort)
	exp = fmt.Sprintf("sidecar %s/productpage: port %d STRICT, only mTLS chains (transport_protocol tls, client certificate required), no plain-text chain", stackNamespace, stackAppPort)
	if len(stack.mtls) == 0 || len(stack.plaintext) > 0 || len(stack.other) > 0 {
		fs.add(SMStackProductStrict, pa, exp, stack.String())
	} else {
		fs.add(SMStackProductStrict, pa, exp, "")
	}
	return fs.list
}

// teamBFinding: what reaches team-b's gateway, whose pods carry the stack gateway's labels. The
// stack's gateway filters select those labels; placed in Istio's root namespace (istio-system),
// their workloadSelector matches pods of every namespace (pilot/pkg/model/push_context.go,
// EnvoyFilters: root-namespace filters plus the proxy's own namespace). The stack's answer to that
// case is the preview-time preflight that refuses an ambiguous gateway selector, so the finding is
// ok when either nothing reaches team-b, or it is reached only because the filters sit in the root
// namespace; it records exactly what reached it.
func teamBFinding(g *SharedGenerated) Finding {
	root := mesh.DefaultMeshConfig().GetRootNamespace()
	tb := g.TeamBGateway
	on := rateLimitFilterListeners(tb.Listeners)
	ef := Find(g.Render, "EnvoyFilter", "", EFGlobal)
	obj := objRef(g.Render, "EnvoyFilter", EFGlobal)
	f := Finding{ID: SMTeamB, Object: obj}
	if len(on) == 0 {
		f.Expectation = fmt.Sprintf("gateway %s/istio-ingressgateway (labels %s): not reached, no %s on any listener (listeners %v)", teamBNamespace, labelString(sharedGatewayLabels), FilterRateLimit, listenerNames(tb.Listeners))
		return f
	}
	var what []string
	for _, l := range sortedKeys(on) {
		what = append(what, fmt.Sprintf("%s on %s (domain %q)", FilterRateLimit, l, rateLimitDomain(tb.Listeners, l)))
	}
	for _, rc := range tb.Routes {
		for _, vh := range rc.VirtualHosts {
			if len(vhostRateLimitLeaks(vh)) > 0 {
				what = append(what, fmt.Sprintf("rate_limits on %s/%s", rc.Name, vh.Name))
			}
		}
	}
	reached := strings.Join(what, ", ")
	if findVhost(tb.Routes, fmt.Sprintf("http.%d", stackGatewayPort), fmt.Sprintf("*:%d", stackGatewayPort)) != nil {
		// pilot/pkg/model/push_context.go: a Gateway's selector matches gateway pods of every
		// namespace unless istiod runs with PILOT_SCOPE_GATEWAY_TO_NAMESPACE=true.
		reached += " (team-b's gateway also serves Gateway default/bookinfo-gateway: Istio matches a Gateway's selector in every namespace unless PILOT_SCOPE_GATEWAY_TO_NAMESPACE is set)"
	}
	if ef != nil && ef.Namespace() == root {
		f.Expectation = fmt.Sprintf("reached: refused at preview by the gateway-selector preflight. Gateway %s/istio-ingressgateway (labels %s) gets %s, because %s sits in Istio's root namespace %s, where a workloadSelector matches pods of every namespace; the stack cannot scope it by namespace there, so its answer is the preview-time preflight that refuses a gateway selector other gateways share (that preflight is the program's; this check does not run it)", teamBNamespace, labelString(sharedGatewayLabels), reached, obj, root)
		return f
	}
	f.Expectation = fmt.Sprintf("gateway %s/istio-ingressgateway is not reached by the stack's gateway filters (they are outside the root namespace %s)", teamBNamespace, root)
	f.Problem = "reached anyway: " + reached
	return f
}

func labelString(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// FindingByID returns the finding with that ID, or nil.
func FindingByID(fs []Finding, id string) *Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}
