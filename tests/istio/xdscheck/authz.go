package xdscheck

// Least privilege in the configuration Istio generates: the rendered AuthorizationPolicies become
// RBAC filters on the inbound chains of the rate-limit service's and Redis's sidecars, and a small
// evaluator of Envoy's RBAC rules (the parts Istio emits for principals and ports) says which
// caller identity each chain lets through. Expected identities are written here, not read back
// from the policies: the gateway's default principal, and the rate-limit service's
// (ServiceAccount named after its Service, namespace default).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbachttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	rbacnetv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	corev1 "k8s.io/api/core/v1"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	kubereg "istio.io/istio/pilot/pkg/serviceregistry/kube"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/test"
)

const (
	FilterHTTPRBAC    = "envoy.filters.http.rbac"
	FilterNetworkRBAC = "envoy.filters.network.rbac"
	// Identities as Envoy sees them (spiffe:// + the AuthorizationPolicy principal).
	GatewayIdentity   = "spiffe://cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account"
	RatelimitIdentity = "spiffe://cluster.local/ns/default/sa/ratelimit"
	// Identities that must be refused (negative controls).
	ProductpageIdentity = "spiffe://cluster.local/ns/default/sa/bookinfo-productpage"
	OtherGatewayNS      = "spiffe://cluster.local/ns/other/sa/istio-ingressgateway-service-account"
)

// AuthzCase is one inbound port of one workload and who must (not) get through.
type AuthzCase struct {
	ID     string
	App    string // app label of the workload
	Port   uint32 // container port of the inbound chain
	Allow  []string
	Deny   []string
	Object string // rendered object the finding names
	TCP    bool   // network RBAC (TCP chain) instead of HTTP RBAC
	// Other ports of the workload that no identity may use, the allowed one included: the service's
	// JSON API and debug server (config dump, pprof), which it serves on its loopback only, so no
	// Service or container port names them and a connection to them reaches the sidecar's
	// passthrough chains, whose RBAC must refuse it.
	DenyPorts []uint32
}

// AuthzCases: the gateway alone on the gRPC port; the rate-limit service alone on Redis.
var AuthzCases = []AuthzCase{
	{ID: "authz/ratelimit-grpc", App: "ratelimit", Port: 8081, Allow: []string{GatewayIdentity},
		Deny: []string{ProductpageIdentity, RatelimitIdentity, OtherGatewayNS}, Object: "AuthorizationPolicy default/ratelimit-from-gateway", DenyPorts: []uint32{8080, 6070}},
	{ID: "authz/redis", App: "redis", Port: 6379, TCP: true, Allow: []string{RatelimitIdentity},
		Deny: []string{GatewayIdentity, ProductpageIdentity}, Object: "AuthorizationPolicy default/redis-from-ratelimit"},
}

type workloadInfo struct {
	labels map[string]string
	ip     string
	ns     string
	sa     string
}

// sidecarListeners runs Istio's generator for the sidecar of every rendered Deployment whose pods
// carry one of `apps`, and returns each one's listeners.
func sidecarListeners(t test.Failer, docs []Doc, apps []string) (map[string][]*listenerv3.Listener, error) {
	var istioYAML []Doc
	workloads := map[string]workloadInfo{}
	for i, d := range docs {
		if d.IsIstio() {
			istioYAML = append(istioYAML, d)
		}
		if d.Kind() != "Deployment" {
			continue
		}
		tmpl, _ := Dig(d, "spec", "template").(map[string]any)
		w := workloadInfo{labels: map[string]string{}, ip: fmt.Sprintf("10.244.2.%d", 10+i), ns: d.Namespace()}
		if l, ok := Dig(tmpl, "metadata", "labels").(map[string]any); ok {
			for k, v := range l {
				w.labels[k] = fmt.Sprint(v)
			}
		}
		w.sa, _ = Dig(tmpl, "spec", "serviceAccountName").(string)
		if app := w.labels["app"]; app != "" {
			if _, seen := workloads[app]; !seen {
				workloads[app] = w
			}
		}
	}
	text, err := ToYAML(istioYAML)
	if err != nil {
		return nil, err
	}
	var services []*model.Service
	var instances []*model.ServiceInstance
	for i, d := range docs {
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
		svc.Spec.ClusterIP = fmt.Sprintf("10.96.1.%d", 10+i)
		ms := kubereg.ConvertService(svc, nil, domainSuffix, cluster.ID("Kubernetes"), domainSuffix)
		services = append(services, ms)
		for _, w := range workloads {
			if len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, w.labels) {
				continue
			}
			instances = append(instances, serviceInstances(ms, svc, w.ip, w.labels, nil)...)
		}
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services, Instances: instances})
	out := map[string][]*listenerv3.Listener{}
	for _, app := range apps {
		w, ok := workloads[app]
		if !ok {
			continue
		}
		p := cg.SetupProxy(&model.Proxy{
			Type: model.SidecarProxy, ID: app + "-0." + w.ns, ConfigNamespace: w.ns, IPAddresses: []string{w.ip}, Labels: w.labels,
			Metadata: &model.NodeMetadata{Namespace: w.ns, Labels: w.labels, IstioVersion: "1.30.3", ServiceAccount: w.sa},
		})
		out[app] = cg.Listeners(p)
	}
	return out, nil
}

// inboundRBAC returns the RBAC rules of every inbound chain for `port` (HTTP or network filter).
func inboundRBAC(ls []*listenerv3.Listener, port uint32, tcp bool) ([]*rbacv3.RBAC, []string, error) {
	l := findListener(ls, model.VirtualInboundListenerName)
	if l == nil {
		return nil, nil, fmt.Errorf("no %s listener", model.VirtualInboundListenerName)
	}
	var rules []*rbacv3.RBAC
	var chains []string
	for _, fc := range l.FilterChains {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() != port {
			continue
		}
		chains = append(chains, fc.Name)
		if tcp {
			for _, f := range fc.Filters {
				if f.Name == FilterNetworkRBAC {
					r := &rbacnetv3.RBAC{}
					if err := f.GetTypedConfig().UnmarshalTo(r); err != nil {
						return nil, nil, err
					}
					if r.Rules != nil {
						rules = append(rules, r.Rules)
					}
				}
			}
			continue
		}
		if h := hcmOf(fc); h != nil {
			for _, f := range h.HttpFilters {
				if f.Name == FilterHTTPRBAC {
					r := &rbachttpv3.RBAC{}
					if err := f.GetTypedConfig().UnmarshalTo(r); err != nil {
						return nil, nil, err
					}
					if r.Rules != nil {
						rules = append(rules, r.Rules)
					}
				}
			}
		}
	}
	return rules, chains, nil
}

// passthroughRBAC: the RBAC rules (HTTP and network) of the virtual inbound listener's chains that
// match no destination port: what a connection to a port no container declares goes through.
func passthroughRBAC(ls []*listenerv3.Listener) []*rbacv3.RBAC {
	l := findListener(ls, model.VirtualInboundListenerName)
	if l == nil {
		return nil
	}
	var rules []*rbacv3.RBAC
	for _, fc := range l.FilterChains {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() != 0 {
			continue
		}
		for _, f := range fc.Filters {
			if f.Name == FilterNetworkRBAC {
				r := &rbacnetv3.RBAC{}
				if err := f.GetTypedConfig().UnmarshalTo(r); err == nil && r.Rules != nil {
					rules = append(rules, r.Rules)
				}
			}
		}
		if h := hcmOf(fc); h != nil {
			for _, f := range h.HttpFilters {
				if f.Name == FilterHTTPRBAC {
					r := &rbachttpv3.RBAC{}
					if err := f.GetTypedConfig().UnmarshalTo(r); err == nil && r.Rules != nil {
						rules = append(rules, r.Rules)
					}
				}
			}
		}
	}
	return rules
}

// Request is what the evaluator knows of a connection: the peer's identity and the local port.
type Request struct {
	Principal string
	Port      uint32
}

// Allowed evaluates Envoy RBAC rules: ALLOW lets through what some policy matches, DENY refuses it.
// Every RBAC filter of the chain must let the request through.
func Allowed(rules []*rbacv3.RBAC, r Request) bool {
	for _, rb := range rules {
		matched := false
		for _, p := range rb.Policies {
			if anyPermission(p.Permissions, r) && anyPrincipal(p.Principals, r) {
				matched = true
				break
			}
		}
		switch rb.Action {
		case rbacv3.RBAC_ALLOW:
			if !matched {
				return false
			}
		case rbacv3.RBAC_DENY:
			if matched {
				return false
			}
		}
	}
	return true
}

func anyPermission(ps []*rbacv3.Permission, r Request) bool {
	for _, p := range ps {
		if permission(p, r) {
			return true
		}
	}
	return false
}

func permission(p *rbacv3.Permission, r Request) bool {
	switch x := p.Rule.(type) {
	case *rbacv3.Permission_Any:
		return x.Any
	case *rbacv3.Permission_AndRules:
		for _, q := range x.AndRules.Rules {
			if !permission(q, r) {
				return false
			}
		}
		return true
	case *rbacv3.Permission_OrRules:
		return anyPermission(x.OrRules.Rules, r)
	case *rbacv3.Permission_NotRule:
		return !permission(x.NotRule, r)
	case *rbacv3.Permission_DestinationPort:
		return x.DestinationPort == r.Port
	case *rbacv3.Permission_DestinationPortRange:
		return int64(r.Port) >= int64(x.DestinationPortRange.Start) && int64(r.Port) < int64(x.DestinationPortRange.End)
	}
	return false // a rule this evaluator does not model never matches (so never grants)
}

func anyPrincipal(ps []*rbacv3.Principal, r Request) bool {
	for _, p := range ps {
		if principal(p, r) {
			return true
		}
	}
	return false
}

func principal(p *rbacv3.Principal, r Request) bool {
	switch x := p.Identifier.(type) {
	case *rbacv3.Principal_Any:
		return x.Any
	case *rbacv3.Principal_AndIds:
		for _, q := range x.AndIds.Ids {
			if !principal(q, r) {
				return false
			}
		}
		return true
	case *rbacv3.Principal_OrIds:
		return anyPrincipal(x.OrIds.Ids, r)
	case *rbacv3.Principal_NotId:
		return !principal(x.NotId, r)
	case *rbacv3.Principal_Authenticated_:
		return stringMatch(x.Authenticated.GetPrincipalName(), r.Principal)
	case *rbacv3.Principal_FilterState:
		if strings.Contains(x.FilterState.Key, "principal") {
			return stringMatch(x.FilterState.GetStringMatch(), r.Principal)
		}
	}
	return false
}

func stringMatch(m *matcherv3.StringMatcher, s string) bool {
	if m == nil {
		return false
	}
	switch x := m.MatchPattern.(type) {
	case *matcherv3.StringMatcher_Exact:
		return x.Exact == s
	case *matcherv3.StringMatcher_Prefix:
		return strings.HasPrefix(s, x.Prefix)
	case *matcherv3.StringMatcher_Suffix:
		return strings.HasSuffix(s, x.Suffix)
	case *matcherv3.StringMatcher_Contains:
		return strings.Contains(s, x.Contains)
	case *matcherv3.StringMatcher_SafeRegex:
		re, err := regexp.Compile("^(?:" + x.SafeRegex.Regex + ")$")
		return err == nil && re.MatchString(s)
	}
	return false
}

// identities lists the exact principals the rules name (for the report).
func identities(rules []*rbacv3.RBAC) []string {
	seen := map[string]bool{}
	var walk func(p *rbacv3.Principal)
	walk = func(p *rbacv3.Principal) {
		switch x := p.Identifier.(type) {
		case *rbacv3.Principal_AndIds:
			for _, q := range x.AndIds.Ids {
				walk(q)
			}
		case *rbacv3.Principal_OrIds:
			for _, q := range x.OrIds.Ids {
				walk(q)
			}
		case *rbacv3.Principal_Authenticated_:
			seen[x.Authenticated.GetPrincipalName().GetExact()] = true
		case *rbacv3.Principal_FilterState:
			seen[x.FilterState.GetStringMatch().GetExact()] = true
		}
	}
	for _, rb := range rules {
		for _, p := range rb.Policies {
			for _, q := range p.Principals {
				walk(q)
			}
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckAuthz runs the cases against the configuration Istio generates for the rendered objects.
func CheckAuthz(t test.Failer, docs []Doc) []Finding {
	var fs findings
	apps := []string{}
	for _, c := range AuthzCases {
		apps = append(apps, c.App)
	}
	listeners, err := sidecarListeners(t, docs, apps)
	if err != nil {
		fs.add("authz/generate", "rendered objects", "Istio generates the sidecars' listeners", err.Error())
		return fs.list
	}
	for _, c := range AuthzCases {
		exp := fmt.Sprintf("RBAC on every inbound chain for port %d of app=%s lets through only %v", c.Port, c.App, c.Allow)
		ls, ok := listeners[c.App]
		if !ok {
			fs.add(c.ID, c.Object, exp, "no Deployment with app="+c.App+" rendered")
			continue
		}
		rules, chains, err := inboundRBAC(ls, c.Port, c.TCP)
		if err != nil {
			fs.add(c.ID, c.Object, exp, err.Error())
			continue
		}
		var probs []string
		if len(chains) == 0 {
			probs = append(probs, "no inbound chain for the port")
		}
		if len(rules) < len(chains) || len(rules) == 0 {
			probs = append(probs, fmt.Sprintf("%d RBAC filter(s) on %d chain(s) %v: traffic to the port is not restricted", len(rules), len(chains), chains))
		} else {
			for _, id := range c.Allow {
				if !Allowed(rules, Request{Principal: id, Port: c.Port}) {
					probs = append(probs, "refuses "+id)
				}
			}
			for _, id := range c.Deny {
				if Allowed(rules, Request{Principal: id, Port: c.Port}) {
					probs = append(probs, "lets through "+id)
				}
			}
			for _, port := range c.DenyPorts {
				other, named, _ := inboundRBAC(ls, port, false)
				if len(named) == 0 {
					// No chain of its own: the passthrough chains (HTTP and TCP) take the connection.
					other = passthroughRBAC(ls)
				}
				if len(other) == 0 {
					probs = append(probs, fmt.Sprintf("port %d has no RBAC", port))
				}
				for _, id := range append([]string{c.Allow[0]}, c.Deny...) {
					if len(other) > 0 && Allowed(other, Request{Principal: id, Port: port}) {
						probs = append(probs, fmt.Sprintf("port %d is open to %s", port, id))
					}
				}
			}
		}
		fs.add(c.ID, c.Object, fmt.Sprintf("%s (rules name %v)", exp, identities(rules)), strings.Join(probs, "; "))
	}
	return fs.list
}
