package xdscheck

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	udpatype "github.com/cncf/xds/go/udpa/type/v1"
	xdstype "github.com/cncf/xds/go/xds/type/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoycore "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	lrlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	exprv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/rate_limit_descriptors/expr/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"

	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	kubereg "istio.io/istio/pilot/pkg/serviceregistry/kube"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/test"
	"istio.io/istio/pkg/util/protomarshal"
	sigyaml "sigs.k8s.io/yaml"
)

// Names Envoy and Istio use on the wire (docs/names.md, "Neutral name to real identifier").
const (
	FilterRateLimit      = "envoy.filters.http.ratelimit"
	FilterLocalRateLimit = "envoy.filters.http.local_ratelimit"
	FilterRouter         = "envoy.filters.http.router"
	FilterHCM            = "envoy.filters.network.http_connection_manager"
	typeURLPrefix        = "type.googleapis.com/"
	localRateLimitType   = typeURLPrefix + "envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit"
	udpaTypedStructType  = typeURLPrefix + "udpa.type.v1.TypedStruct"
	xdsTypedStructType   = typeURLPrefix + "xds.type.v3.TypedStruct"
	httpProtocolOptions  = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

	// Rendered object names the checks attribute failures to.
	EFGlobal     = "filter-ratelimit"
	EFVhost      = "filter-ratelimit-svc"
	EFRouteAPI   = "filter-ratelimit-svc-api"
	EFLocal      = "filter-local-ratelimit-svc"
	IstioSystem  = "istio-system"
	domainSuffix = "cluster.local"
)

// Expect holds what the stack must produce, derived from the variant presets in
// docs/specification.md ("The two variants"), never read back from the rendered objects.
type Expect struct {
	Variant     string
	Placement   string // all-routes | single-route
	Domain      string
	Bucket      uint32
	APIRoute    bool
	APIPrefix   string
	GatewayPort uint32 // Gateway server port: listener 0.0.0.0_<port>, route config http.<port>, vhost *:<port>
	GatewayHost string // the Gateway server's host; Istio names the virtual host <host>:<port>
	AppPort     uint32 // productpage container/service port
	AppLabel    string
	// Where the EnvoyFilters live: the gateway filters in the gateway's namespace (config key
	// gatewayNamespace), the local bucket beside its workload (the stack's namespace), so that it
	// reaches no other namespace's app=productpage pods.
	GatewayNamespace string
	AppNamespace     string
	RLSCluster       string
	RLSAuthority     string
	RLSTimeout       time.Duration
	FillInterval     time.Duration
}

// ExpectFor derives the expectations for a variant letter and a local-limit placement.
func ExpectFor(variant, placement string) (Expect, error) {
	e := Expect{
		Variant:          variant,
		Placement:        placement,
		GatewayPort:      8080,
		GatewayHost:      "*",
		GatewayNamespace: IstioSystem,
		AppNamespace:     "default",
		AppPort:          9080,
		AppLabel:         "productpage",
		APIPrefix:        "/api/v1/products",
		RLSCluster:       "outbound|8081||ratelimit.default.svc.cluster.local",
		RLSAuthority:     "ratelimit.default.svc.cluster.local",
		RLSTimeout:       10 * time.Second,
		FillInterval:     60 * time.Second,
	}
	switch variant {
	case "A":
		e.Domain, e.Bucket, e.APIRoute = "ratelimit", 4, true
	case "B":
		e.Domain, e.Bucket, e.APIRoute = "productpage-ratelimit", 10, false
	default:
		return e, fmt.Errorf("unknown variant %q (want A or B)", variant)
	}
	switch placement {
	case "all-routes", "single-route":
	default:
		return e, fmt.Errorf("unknown local placement %q (want all-routes or single-route)", placement)
	}
	return e, nil
}

// GatewayListener is the gateway listener of the Gateway server: 0.0.0.0_<port>.
func (e Expect) GatewayListener() string { return fmt.Sprintf("0.0.0.0_%d", e.GatewayPort) }

// GatewayVhost is Istio's name for the virtual host of the Gateway server's host on its port
// (`*:8080`); the gateway EnvoyFilters must name exactly this one.
func (e Expect) GatewayVhost() string { return fmt.Sprintf("%s:%d", e.GatewayHost, e.GatewayPort) }

// FilterNamespace is the namespace the stack's EnvoyFilter of that name must live in.
func (e Expect) FilterNamespace(name string) string {
	if name == EFLocal {
		return e.AppNamespace
	}
	return e.GatewayNamespace
}

// FilterRef names the stack's EnvoyFilter the way failures print it.
func (e Expect) FilterRef(name string) string {
	return "EnvoyFilter " + e.FilterNamespace(name) + "/" + name
}

// Finding is the outcome of one expectation. Problem is empty when it holds.
type Finding struct {
	ID          string // stable identifier, e.g. "gateway/ratelimit-filter-before-router"
	Object      string // the rendered object responsible, e.g. "EnvoyFilter istio-system/filter-ratelimit"
	Expectation string
	Problem     string
}

func (f Finding) OK() bool { return f.Problem == "" }

func (f Finding) String() string {
	if f.OK() {
		return fmt.Sprintf("ok   %s: %s: %s", f.ID, f.Object, f.Expectation)
	}
	return fmt.Sprintf("FAIL %s: %s: expected %s; %s", f.ID, f.Object, f.Expectation, f.Problem)
}

type findings struct{ list []Finding }

func (fs *findings) add(id, object, expectation, problem string) {
	fs.list = append(fs.list, Finding{ID: id, Object: object, Expectation: expectation, Problem: problem})
}

// Generated is the Envoy configuration Istio built for the two proxies.
type Generated struct {
	GatewayListeners []*listenerv3.Listener
	GatewayRoutes    []*routev3.RouteConfiguration
	GatewayClusters  []*clusterv3.Cluster
	SidecarListeners []*listenerv3.Listener
}

// Generate runs Istio's configuration generator over the documents. The returned findings
// cover the inputs (parsing, workloads found); a nil Generated means nothing could be built.
func Generate(t test.Failer, docs []Doc, e Expect) (*Generated, []Finding) {
	var fs findings
	var istioYAML []Doc
	var services []*model.Service
	var instances []*model.ServiceInstance

	type workload struct {
		ref    string
		labels map[string]string
		ports  map[string]int32
		ip     string
	}
	var workloads []workload
	for i, d := range docs {
		if d.IsIstio() {
			istioYAML = append(istioYAML, d)
		}
		if d.Kind() == "Deployment" || d.Kind() == "StatefulSet" {
			tmpl, _ := Dig(d, "spec", "template").(map[string]any)
			w := workload{ref: d.Ref(), labels: map[string]string{}, ports: map[string]int32{},
				ip: fmt.Sprintf("10.244.0.%d", 10+i)}
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
	}

	text, err := ToYAML(istioYAML)
	if err == nil {
		var cfgs []config.Config
		cfgs, _, err = crd.ParseInputs(text)
		_ = cfgs
	}
	if err != nil {
		fs.add("input/istio-objects-valid", "rendered Istio objects", "every Istio object parses and passes Istio's validation", err.Error())
		return nil, fs.list
	}

	svcIP := 0
	for _, d := range docs {
		if d.Kind() != "Service" || d.APIVersion() != "v1" {
			continue
		}
		var svc corev1.Service
		b, _ := json.Marshal(d)
		if err := json.Unmarshal(b, &svc); err != nil {
			fs.add("input/services", d.Ref(), "a Kubernetes Service", err.Error())
			continue
		}
		if svc.Namespace == "" {
			svc.Namespace = "default"
		}
		if svc.Spec.ClusterIP == "" && svc.Spec.Type != corev1.ServiceTypeExternalName {
			svcIP++ // the API server would allocate one
			svc.Spec.ClusterIP = fmt.Sprintf("10.96.0.%d", 10+svcIP)
		}
		ms := kubereg.ConvertService(svc, nil, domainSuffix, cluster.ID("Kubernetes"), domainSuffix)
		services = append(services, ms)
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		for _, w := range workloads {
			if !selects(svc.Spec.Selector, w.labels) {
				continue
			}
			instances = append(instances, serviceInstances(ms, svc, w.ip, w.labels, w.ports)...)
		}
	}

	var app *workload
	for i := range workloads {
		if workloads[i].labels["app"] == e.AppLabel {
			app = &workloads[i]
			break
		}
	}
	if app == nil {
		fs.add("input/productpage-workload", "Deployment default/productpage-*",
			"a Deployment whose pods carry app="+e.AppLabel, "none rendered")
		return nil, fs.list
	}

	cg := core.NewConfigGenTest(t, core.TestOptions{
		ConfigString: text,
		Services:     services,
		Instances:    instances,
	})
	gw := cg.SetupProxy(&model.Proxy{
		Type:            model.Router,
		ID:              "istio-ingressgateway-0." + e.GatewayNamespace,
		ConfigNamespace: e.GatewayNamespace,
		IPAddresses:     []string{"10.244.1.1"},
		Labels:          map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"},
		Metadata: &model.NodeMetadata{
			Namespace:    e.GatewayNamespace,
			Labels:       map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"},
			IstioVersion: "1.30.3",
		},
	})
	sc := cg.SetupProxy(&model.Proxy{
		Type:            model.SidecarProxy,
		ID:              "productpage-0." + e.AppNamespace,
		ConfigNamespace: e.AppNamespace,
		IPAddresses:     []string{app.ip},
		Labels:          app.labels,
		Metadata: &model.NodeMetadata{
			Namespace:    e.AppNamespace,
			Labels:       app.labels,
			IstioVersion: "1.30.3",
		},
	})
	g := &Generated{}
	g.GatewayListeners = cg.Listeners(gw)
	g.GatewayRoutes = cg.RoutesFromListeners(gw, g.GatewayListeners)
	g.GatewayClusters = cg.Clusters(gw)
	g.SidecarListeners = cg.Listeners(sc)
	return g, fs.list
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Check generates the configuration and evaluates every expectation.
func Check(t test.Failer, docs []Doc, e Expect) []Finding { return check(t, docs, e, true) }

// OrderID is the expectation that runs the generator twice more (with another team's filter).
const OrderID = "gateway/ratelimit-after-priority-0-filter"

// check evaluates the expectations; withOrder=false leaves out OrderID (negative controls aimed
// at another expectation do not need it).
func check(t test.Failer, docs []Doc, e Expect, withOrder bool) []Finding {
	g, input := Generate(t, docs, e)
	if g == nil {
		return input
	}
	fs := &findings{list: input}
	checkGateway(fs, docs, g, e)
	checkGatewayScope(fs, docs, g, e)
	checkPreLimit(fs, docs, g, e)
	if withOrder {
		checkFilterOrder(fs, t, docs, e)
	}
	checkSidecar(fs, g, e)
	checkLocalScope(fs, docs, g, e)
	return fs.list
}

// ---------------------------------------------------------------- gateway

func checkGateway(fs *findings, docs []Doc, g *Generated, e Expect) {
	lname := e.GatewayListener()
	gwRef := "Gateway default/bookinfo-gateway"
	l := findListener(g.GatewayListeners, lname)
	var hcms []*hcmv3.HttpConnectionManager
	if l != nil {
		for _, fc := range l.FilterChains {
			if h := hcmOf(fc); h != nil {
				hcms = append(hcms, h)
			}
		}
	}
	if len(hcms) == 0 {
		fs.add("gateway/http-listener", gwRef,
			fmt.Sprintf("an HTTP listener %s on the ingress gateway", lname),
			fmt.Sprintf("listeners generated: %v", listenerNames(g.GatewayListeners)))
		// Everything below depends on the listener.
		fs.add("gateway/ratelimit-filter-before-router", e.FilterRef(EFGlobal), "the global filter on the gateway", "no listener to inspect")
		return
	}
	fs.add("gateway/http-listener", gwRef, fmt.Sprintf("an HTTP listener %s on the ingress gateway", lname), "")

	// 1. envoy.filters.http.ratelimit immediately before the router, with the stack's settings.
	exp := fmt.Sprintf("%s immediately before %s on %s", FilterRateLimit, FilterRouter, lname)
	var problem string
	var rlFilter *hcmv3.HttpFilter
	for _, h := range hcms {
		names := httpFilterNames(h)
		i := indexOf(names, FilterRateLimit)
		switch {
		case i < 0:
			problem = fmt.Sprintf("absent; HTTP filters are %v", names)
		case i+1 >= len(names) || names[i+1] != FilterRouter:
			problem = fmt.Sprintf("not directly before the router; HTTP filters are %v", names)
		case strings.Count(strings.Join(names, ","), FilterRateLimit) > 1:
			problem = fmt.Sprintf("inserted more than once; HTTP filters are %v", names)
		default:
			rlFilter = h.HttpFilters[i]
		}
	}
	fs.add("gateway/ratelimit-filter-before-router", e.FilterRef(EFGlobal), exp, problem)

	// XDSCHECK_STATUS_ON_ERROR: the HTTP status the render asked for (statusOnError); unset, Envoy's
	// default (no status_on_error, 500).
	wantStatus := os.Getenv("XDSCHECK_STATUS_ON_ERROR")
	// XDSCHECK_RATELIMIT_HEADERS: Envoy's enable_x_ratelimit_headers the render asked for (rateLimitHeaders); unset, draft-03.
	wantHeaders := orDefault(os.Getenv("XDSCHECK_RATELIMIT_HEADERS"), "DRAFT_VERSION_03")
	cfgExp := fmt.Sprintf("RateLimit config domain=%q timeout=%s failure_mode_deny=true status_on_error=%s enable_x_ratelimit_headers=%s grpc cluster %q authority %q transport V3",
		e.Domain, e.RLSTimeout, orDefault(wantStatus, "unset"), wantHeaders, e.RLSCluster, e.RLSAuthority)
	if rlFilter == nil {
		fs.add("gateway/ratelimit-filter-config", e.FilterRef(EFGlobal), cfgExp, "filter not found")
	} else {
		rl := &rlv3.RateLimit{}
		var probs []string
		if err := rlFilter.GetTypedConfig().UnmarshalTo(rl); err != nil {
			probs = append(probs, "typed_config is not a RateLimit: "+err.Error())
		} else {
			if rl.Domain != e.Domain {
				probs = append(probs, fmt.Sprintf("domain is %q", rl.Domain))
			}
			if rl.Timeout.AsDuration() != e.RLSTimeout {
				probs = append(probs, fmt.Sprintf("timeout is %s", rl.Timeout.AsDuration()))
			}
			if !rl.FailureModeDeny {
				probs = append(probs, "failure_mode_deny is false")
			}
			got := "unset"
			if s := rl.GetStatusOnError(); s != nil {
				got = fmt.Sprint(int32(s.GetCode()))
			}
			if got != orDefault(wantStatus, "unset") {
				probs = append(probs, fmt.Sprintf("status_on_error is %s", got))
			}
			if h := rl.EnableXRatelimitHeaders.String(); h != wantHeaders {
				probs = append(probs, fmt.Sprintf("enable_x_ratelimit_headers is %s", h))
			}
			eg := rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc()
			if eg.GetClusterName() != e.RLSCluster {
				probs = append(probs, fmt.Sprintf("cluster_name is %q", eg.GetClusterName()))
			}
			if eg.GetAuthority() != e.RLSAuthority {
				probs = append(probs, fmt.Sprintf("authority is %q", eg.GetAuthority()))
			}
			if v := rl.GetRateLimitService().GetTransportApiVersion(); v != envoycore.ApiVersion_V3 {
				probs = append(probs, fmt.Sprintf("transport_api_version is %s", v))
			}
		}
		fs.add("gateway/ratelimit-filter-config", e.FilterRef(EFGlobal), cfgExp, strings.Join(probs, "; "))
	}

	// 2. The rate-limit service cluster exists on the gateway and speaks HTTP/2 (gRPC).
	svcRef := "Service default/ratelimit"
	cExp := fmt.Sprintf("gateway cluster %s exists and uses HTTP/2 (gRPC)", e.RLSCluster)
	c := findCluster(g.GatewayClusters, e.RLSCluster)
	switch {
	case c == nil:
		fs.add("gateway/ratelimit-cluster", svcRef, cExp, fmt.Sprintf("absent; outbound clusters with 'ratelimit': %v", clusterNames(g.GatewayClusters, "ratelimit")))
	case !usesHTTP2(c):
		fs.add("gateway/ratelimit-cluster", svcRef, cExp, "cluster exists but is not HTTP/2 (name the Service port grpc-* or set appProtocol: grpc)")
	default:
		fs.add("gateway/ratelimit-cluster", svcRef, cExp, "")
	}

	// 3. Virtual host *:8080 sends the path without its query as PATH (CEL request.url_path), so a
	// query string never makes a counter of its own.
	rcName := fmt.Sprintf("http.%d", e.GatewayPort)
	vhName := e.GatewayVhost()
	vh := findVhost(g.GatewayRoutes, rcName, vhName)
	vExp := fmt.Sprintf("virtual host %s (route config %s) rate_limits with the CEL descriptor %s -> PATH", vhName, rcName, URLPathExpr)
	if vh == nil {
		fs.add("gateway/vhost-path-action", e.FilterRef(EFVhost), vExp, fmt.Sprintf("virtual host absent; route configs: %v", routeConfigSummary(g.GatewayRoutes)))
		return
	}
	if hasURLPathAction(vh.RateLimits, "PATH") {
		fs.add("gateway/vhost-path-action", e.FilterRef(EFVhost), vExp, "")
	} else {
		fs.add("gateway/vhost-path-action", e.FilterRef(EFVhost), vExp, fmt.Sprintf("virtual host rate_limits are %s", jsonOf(vh.RateLimits)))
	}

	// 4. Route-level header_value_match only on the api route (variant A); nowhere in variant B.
	if e.APIRoute {
		aExp := fmt.Sprintf("route %q on %s carries header_value_match PATH=api on :path (safe_regex)", "api", vhName)
		r := findRoute(vh, "api")
		var regex string
		switch {
		case r == nil:
			fs.add("gateway/api-route-action", e.FilterRef(EFRouteAPI), aExp, fmt.Sprintf("no route named api; routes: %v", routeNames(vh)))
		default:
			hvm := headerValueMatches(r)
			var probs []string
			if len(hvm) != 1 {
				probs = append(probs, fmt.Sprintf("%d header_value_match actions (route rate_limits %s)", len(hvm), jsonOf(r.GetRoute().GetRateLimits())))
			} else {
				h := hvm[0]
				if h.DescriptorKey != "PATH" || h.DescriptorValue != "api" {
					probs = append(probs, fmt.Sprintf("descriptor %q=%q", h.DescriptorKey, h.DescriptorValue))
				}
				if len(h.Headers) != 1 || h.Headers[0].Name != ":path" || h.Headers[0].GetSafeRegexMatch().GetRegex() == "" {
					probs = append(probs, fmt.Sprintf("headers are %s", jsonOf(h.Headers)))
				} else {
					regex = h.Headers[0].GetSafeRegexMatch().GetRegex()
				}
				if h.ExpectMatch != nil && !h.ExpectMatch.Value {
					probs = append(probs, "expect_match is false")
				}
			}
			if p := r.GetMatch().GetPrefix(); p != e.APIPrefix {
				probs = append(probs, fmt.Sprintf("route match prefix is %q, want %q (VirtualService bookinfo route api)", p, e.APIPrefix))
			}
			fs.add("gateway/api-route-action", e.FilterRef(EFRouteAPI), aExp, strings.Join(probs, "; "))
		}
		// The api route also applies the virtual host's rate_limits, so a path on it that the regex
		// does not match (/api/v1/products/100) is still counted per path.
		iExp := fmt.Sprintf("route %q on %s: %s per-route config vh_rate_limits INCLUDE", "api", vhName, FilterRateLimit)
		if r == nil {
			fs.add("gateway/api-route-includes-vhost", e.FilterRef(EFRouteAPI), iExp, "no route named api")
		} else {
			fs.add("gateway/api-route-includes-vhost", e.FilterRef(EFRouteAPI), iExp, vhRateLimitsProblem(r))
		}
		// What the regex admits, as Envoy evaluates it: an RE2 full match (spec section 2.6:
		// the API prefix, "/", a number 1..99). Go's regexp is RE2; anchoring makes it a full match.
		rExp := fmt.Sprintf("regex full-matches %s/N for N = 1..9, every decade 10..90, 11, 55, 99 and refuses 0, 00, 07, 100, 1000, the bare prefix and sub-paths", e.APIPrefix)
		if regex == "" {
			fs.add("gateway/api-regex-full-match", e.FilterRef(EFRouteAPI), rExp, "no regex generated")
		} else if re, err := regexp.Compile("^(?:" + regex + ")$"); err != nil {
			fs.add("gateway/api-regex-full-match", e.FilterRef(EFRouteAPI), rExp, fmt.Sprintf("regex %q does not compile: %v", regex, err))
		} else {
			var bad []string
			type probe struct {
				suffix string
				want   bool
			}
			// Every one-digit number and every decade: `[1-9]{1,2}` (the specification's literal
			// form) misses /10, /20 ... /90 although it means 1..99.
			var probes []probe
			for n := 1; n <= 9; n++ {
				probes = append(probes, probe{fmt.Sprintf("/%d", n), true}, probe{fmt.Sprintf("/%d0", n), true})
			}
			// `:path` carries the query: the regex must accept one after the number, and nothing else.
			probes = append(probes, probe{"/7?a=b", true}, probe{"/10?", true}, probe{"/99?x=%2F&y", true},
				probe{"/100?x=1", false}, probe{"/7/?x", false}, probe{"?n=7", false}, probe{"/7#f", false})
			probes = append(probes, probe{"/11", true}, probe{"/55", true}, probe{"/99", true},
				probe{"/0", false}, probe{"/00", false}, probe{"/07", false}, probe{"/100", false}, probe{"/1000", false},
				probe{"", false}, probe{"/", false}, probe{"/7/reviews", false}, probe{"/x", false})
			for _, c := range probes {
				if re.MatchString(e.APIPrefix+c.suffix) != c.want {
					bad = append(bad, fmt.Sprintf("%s%s matched=%v", e.APIPrefix, c.suffix, !c.want))
				}
			}
			fs.add("gateway/api-regex-full-match", e.FilterRef(EFRouteAPI), rExp+fmt.Sprintf(" (regex %q; /10 matched=%v)", regex, re.MatchString(e.APIPrefix+"/10")), strings.Join(bad, "; "))
		}
	} else {
		var probs []string
		if r := findRoute(vh, "api"); r != nil {
			probs = append(probs, "variant B has a route named api")
		}
		fs.add("gateway/no-api-route", "VirtualService default/bookinfo", "variant B: no route named api", strings.Join(probs, "; "))
		if d := Find(docs, "EnvoyFilter", "", EFRouteAPI); d != nil {
			fs.add("gateway/no-api-filter", e.FilterRef(EFRouteAPI), "variant B: no route-level EnvoyFilter", "rendered in variant B")
		} else {
			fs.add("gateway/no-api-filter", e.FilterRef(EFRouteAPI), "variant B: no route-level EnvoyFilter", "")
		}
	}
	var others []string
	for _, r := range vh.Routes {
		if r.Name == "api" && e.APIRoute {
			continue
		}
		if len(headerValueMatches(r)) > 0 {
			others = append(others, fmt.Sprintf("route %q (match %s)", r.Name, jsonOf(r.Match)))
		}
	}
	fs.add("gateway/other-routes-no-header-match", e.FilterRef(EFRouteAPI),
		"no header_value_match on routes other than api", strings.Join(others, "; "))
	if len(vh.Routes) == 0 {
		fs.add("gateway/routes-present", "VirtualService default/bookinfo", "the bookinfo routes on "+vhName, "no routes")
	}
}

// ---------------------------------------------------------------- gateway scope and order

// A tenant-free render has one Gateway server, so the gateway has one HTTP listener and one virtual
// host. There, a patch naming every virtual host (vhost name "") or matching every port (no
// listener.portNumber) lands in exactly the same place as one naming `*:8080` on port 8080: the
// generated configuration alone cannot tell them apart, although on a shared gateway the first two
// reach other teams' hosts and ports. So the scope checks read both: nothing of the stack outside
// its listener and virtual host in the generated configuration, and the rendered matches compared
// with the names derived from the Gateway's host and port (Expect), never with the render's own.

// FilterExtAuthz is the HTTP filter of the ordering probe (another team's authorization).
const FilterExtAuthz = "envoy.filters.http.ext_authz"

// probeFilterName: the ordering probe, an EnvoyFilter written here, never rendered by the stack.
const probeFilterName = "team-ext-authz"

// patchesOf returns the patches of an EnvoyFilter with one of the applyTo values, with their index.
func patchesOf(d Doc, applyTo ...string) map[int]map[string]any {
	out := map[int]map[string]any{}
	for i, p := range Patches(d) {
		if at, _ := p["applyTo"].(string); indexOf(applyTo, at) >= 0 {
			out[i] = p
		}
	}
	return out
}

// patchIndices: the patch indices in order (for stable messages).
func patchIndices(m map[int]map[string]any) []int {
	var out []int
	for i := 0; len(out) < len(m); i++ {
		if _, ok := m[i]; ok {
			out = append(out, i)
		}
	}
	return out
}

// rateLimitsOn lists what of the global rate limit a virtual host carries: rate_limits on the
// virtual host or on a route, or per-route configuration of the rate-limit filter.
func rateLimitsOn(vh *routev3.VirtualHost) []string {
	var out []string
	if len(vh.RateLimits) > 0 {
		out = append(out, fmt.Sprintf("%d virtual-host rate_limits", len(vh.RateLimits)))
	}
	if _, ok := vh.TypedPerFilterConfig[FilterRateLimit]; ok {
		out = append(out, "virtual-host typed_per_filter_config["+FilterRateLimit+"]")
	}
	for _, r := range vh.Routes {
		if len(r.GetRoute().GetRateLimits()) > 0 {
			out = append(out, fmt.Sprintf("route %q rate_limits", r.Name))
		}
		if _, ok := r.TypedPerFilterConfig[FilterRateLimit]; ok {
			out = append(out, fmt.Sprintf("route %q typed_per_filter_config[%s]", r.Name, FilterRateLimit))
		}
	}
	return out
}

// portMatchProblem: "" when the patch matches listener.portNumber want, else why not.
func portMatchProblem(name string, i int, p map[string]any, want uint32, without string) string {
	v, ok := Dig(p, "match", "listener", "portNumber").(float64)
	switch {
	case !ok:
		return fmt.Sprintf("%s patch %d has no match.listener.portNumber: %s", name, i, without)
	case uint32(v) != want:
		return fmt.Sprintf("%s patch %d matches listener.portNumber %v", name, i, v)
	}
	return ""
}

func checkGatewayScope(fs *findings, docs []Doc, g *Generated, e Expect) {
	// 1. The virtual-host patches name the stack's virtual host, and nothing else carries rate limits.
	vh := e.GatewayVhost()
	rcName := fmt.Sprintf("http.%d", e.GatewayPort)
	names := []string{EFVhost}
	if e.APIRoute {
		names = append(names, EFRouteAPI)
	}
	var objs, probs []string
	for _, rc := range g.GatewayRoutes {
		for _, v := range rc.VirtualHosts {
			if rc.Name == rcName && v.Name == vh {
				continue
			}
			if on := rateLimitsOn(v); len(on) > 0 {
				probs = append(probs, fmt.Sprintf("generated: virtual host %s of %s carries %s", v.Name, rc.Name, strings.Join(on, ", ")))
			}
		}
	}
	for _, n := range names {
		objs = append(objs, e.FilterRef(n))
		d := Find(docs, "EnvoyFilter", e.FilterNamespace(n), n)
		if d == nil {
			probs = append(probs, e.FilterRef(n)+" not rendered")
			continue
		}
		ps := patchesOf(d, "VIRTUAL_HOST", "HTTP_ROUTE")
		if len(ps) == 0 {
			probs = append(probs, n+": no VIRTUAL_HOST or HTTP_ROUTE patch")
		}
		for _, i := range patchIndices(ps) {
			got, _ := Dig(ps[i], "match", "routeConfiguration", "vhost", "name").(string)
			switch {
			case got == "":
				probs = append(probs, fmt.Sprintf("%s patch %d names no virtual host (vhost.name %q): Istio applies it to every virtual host of the gateway, other teams' hosts included (virtualHostMatch, envoyfilter/rc_patch.go)", n, i, got))
			case got != vh:
				probs = append(probs, fmt.Sprintf("%s patch %d names virtual host %q", n, i, got))
			}
		}
	}
	fs.add("gateway/vhost-patch-stack-vhost-only", strings.Join(objs, ", "),
		fmt.Sprintf("every VIRTUAL_HOST/HTTP_ROUTE patch names virtual host %q (the Gateway's host %q on port %d), and no other virtual host of the gateway carries rate limits", vh, e.GatewayHost, e.GatewayPort),
		strings.Join(probs, "; "))

	// 2. The rate-limit filter on the stack's listener only.
	lname := e.GatewayListener()
	probs = nil
	for _, l := range g.GatewayListeners {
		if l.Name == lname {
			continue
		}
		for _, fc := range l.FilterChains {
			if h := hcmOf(fc); h != nil && indexOf(httpFilterNames(h), FilterRateLimit) >= 0 {
				probs = append(probs, "generated: also on listener "+l.Name)
				break
			}
		}
	}
	if d := Find(docs, "EnvoyFilter", e.GatewayNamespace, EFGlobal); d == nil {
		probs = append(probs, e.FilterRef(EFGlobal)+" not rendered")
	} else {
		ps := patchesOf(d, "HTTP_FILTER")
		if len(ps) == 0 {
			probs = append(probs, EFGlobal+": no HTTP_FILTER patch")
		}
		for _, i := range patchIndices(ps) {
			if p := portMatchProblem(EFGlobal, i, ps[i], e.GatewayPort, "Istio inserts the filter on every HTTP listener of the gateway, other teams' ports included"); p != "" {
				probs = append(probs, p)
			}
		}
	}
	fs.add("gateway/ratelimit-filter-only-on-gateway-port", e.FilterRef(EFGlobal),
		fmt.Sprintf("%s on listener %s only: the HTTP_FILTER patch matches listener.portNumber %d", FilterRateLimit, lname, e.GatewayPort),
		strings.Join(probs, "; "))
}

// probeFilter is another team's HTTP filter on the stack's gateway, the way such a filter is usually
// written: an ext_authz inserted before the router, at the default priority 0, created at `created`.
func probeFilter(e Expect, created time.Time) Doc {
	return Doc{
		"apiVersion": "networking.istio.io/v1alpha3",
		"kind":       "EnvoyFilter",
		"metadata": map[string]any{"name": probeFilterName, "namespace": e.GatewayNamespace,
			"creationTimestamp": created.UTC().Format(time.RFC3339)},
		"spec": map[string]any{
			"workloadSelector": map[string]any{"labels": map[string]any{"istio": "ingressgateway"}},
			"configPatches": []any{map[string]any{
				"applyTo": "HTTP_FILTER",
				"match": map[string]any{"context": "GATEWAY", "listener": map[string]any{"filterChain": map[string]any{"filter": map[string]any{
					"name": FilterHCM, "subFilter": map[string]any{"name": FilterRouter}}}}},
				"patch": map[string]any{"operation": "INSERT_BEFORE", "value": map[string]any{
					"name": FilterExtAuthz,
					"typed_config": map[string]any{
						"@type":                 typeURLPrefix + "envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
						"transport_api_version": "V3",
						"grpc_service": map[string]any{"envoy_grpc": map[string]any{
							"cluster_name": "outbound|9000||ext-authz.team.svc.cluster.local"}},
					},
				}},
			}},
		},
	}
}

// checkFilterOrder: Istio applies a proxy's EnvoyFilters by priority (lower first), then root
// namespace first, then creation time, then name (PushContext.EnvoyFilters,
// pilot/pkg/model/push_context.go), and each INSERT_BEFORE of the router puts its filter directly
// before the router. So of two filters inserted before the router, the one applied later ends up
// closer to it. The stack's filter must run after another team's priority-0 filter (a request
// that filter refuses spends no quota) and before the router, whichever was created first.
func checkFilterOrder(fs *findings, t test.Failer, docs []Doc, e Expect) {
	// The stack's filters after the other team's: the pre-limit (when on), the rate limit, the router.
	tail := []string{FilterExtAuthz}
	if preLimitExpected(e) != nil {
		tail = append(tail, FilterLocalRateLimit)
	}
	tail = append(tail, FilterRateLimit, FilterRouter)
	exp := fmt.Sprintf("with another team's %s inserted before the router at priority 0 (EnvoyFilter %s/%s, written by the test), the HTTP filters on %s end [..., %s], created before or after the stack's filters",
		FilterExtAuthz, e.GatewayNamespace, probeFilterName, e.GatewayListener(), strings.Join(tail, ", "))
	stackCreated := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var probs, seen []string
	for _, c := range []struct {
		label  string
		offset time.Duration
	}{{"probe created before", -time.Hour}, {"probe created after", time.Hour}} {
		mut := Clone(docs)
		for _, d := range mut {
			if d.Kind() == "EnvoyFilter" && d.meta() != nil {
				d.meta()["creationTimestamp"] = stackCreated.Format(time.RFC3339)
			}
		}
		mut = append(mut, probeFilter(e, stackCreated.Add(c.offset)))
		g, in := Generate(t, mut, e)
		if g == nil {
			probs = append(probs, fmt.Sprintf("%s: nothing generated: %v", c.label, in))
			continue
		}
		l := findListener(g.GatewayListeners, e.GatewayListener())
		n := 0
		for _, fc := range l.GetFilterChains() {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			n++
			names := httpFilterNames(h)
			k := len(names)
			if k < len(tail) || strings.Join(names[k-len(tail):], ",") != strings.Join(tail, ",") {
				probs = append(probs, fmt.Sprintf("%s: HTTP filters %v", c.label, names))
			} else if len(seen) < 2 {
				seen = append(seen, fmt.Sprintf("%s: [... %s]", c.label, strings.Join(names[k-len(tail):], ", ")))
			}
		}
		if n == 0 {
			probs = append(probs, c.label+": no HTTP listener "+e.GatewayListener())
		}
	}
	if len(probs) == 0 {
		exp += " (" + strings.Join(seen, "; ") + ")"
	}
	fs.add(OrderID, e.FilterRef(EFGlobal), exp, strings.Join(probs, "; "))
}

// checkLocalScope: the local bucket's EnvoyFilter lives beside its workload and matches the
// application port, and the sidecar has the local filter on no other inbound chain (the
// passthrough chain virtualInbound-catchall-http included).
func checkLocalScope(fs *findings, docs []Doc, g *Generated, e Expect) {
	exp := fmt.Sprintf("EnvoyFilter %s in namespace %s (an EnvoyFilter in Istio's root namespace reaches app=%s pods in every namespace), its HTTP_FILTER patches match listener.portNumber %d, and no inbound chain of the sidecar for another port carries %s",
		EFLocal, e.AppNamespace, e.AppLabel, e.AppPort, FilterLocalRateLimit)
	var probs []string
	d := Find(docs, "EnvoyFilter", "", EFLocal)
	if d == nil {
		fs.add("sidecar/local-filter-scope", e.FilterRef(EFLocal), exp, "not rendered")
		return
	}
	if d.Namespace() != e.AppNamespace {
		probs = append(probs, "rendered in namespace "+d.Namespace())
	}
	ps := patchesOf(d, "HTTP_FILTER")
	if len(ps) == 0 {
		probs = append(probs, EFLocal+": no HTTP_FILTER patch")
	}
	for _, i := range patchIndices(ps) {
		if p := portMatchProblem(EFLocal, i, ps[i], e.AppPort, "Istio inserts the filter on every inbound HTTP chain of the sidecar, the passthrough chain for undeclared ports included"); p != "" {
			probs = append(probs, p)
		}
	}
	if l := findListener(g.SidecarListeners, model.VirtualInboundListenerName); l != nil {
		for _, fc := range l.FilterChains {
			if fc.GetFilterChainMatch().GetDestinationPort().GetValue() == e.AppPort {
				continue
			}
			if h := hcmOf(fc); h != nil && indexOf(httpFilterNames(h), FilterLocalRateLimit) >= 0 {
				probs = append(probs, fmt.Sprintf("generated: also on inbound chain %s (port %d)", fc.Name, fc.GetFilterChainMatch().GetDestinationPort().GetValue()))
			}
		}
	}
	fs.add("sidecar/local-filter-scope", e.FilterRef(EFLocal), exp, strings.Join(probs, "; "))
}

// ---------------------------------------------------------------- sidecar

func checkSidecar(fs *findings, g *Generated, e Expect) {
	ref := e.FilterRef(EFLocal)
	l := findListener(g.SidecarListeners, model.VirtualInboundListenerName)
	var chains []*listenerv3.FilterChain
	var hcms []*hcmv3.HttpConnectionManager
	if l != nil {
		for _, fc := range l.FilterChains {
			if fc.GetFilterChainMatch().GetDestinationPort().GetValue() != e.AppPort {
				continue
			}
			if h := hcmOf(fc); h != nil {
				chains = append(chains, fc)
				hcms = append(hcms, h)
			}
		}
	}
	fExp := fmt.Sprintf("%s before %s on every inbound HTTP chain for port %d", FilterLocalRateLimit, FilterRouter, e.AppPort)
	if len(hcms) == 0 {
		fs.add("sidecar/inbound-http-chain", "Service default/productpage",
			fmt.Sprintf("inbound HTTP filter chains for port %d on the productpage sidecar", e.AppPort),
			fmt.Sprintf("none; virtualInbound present=%v", l != nil))
		fs.add("sidecar/local-filter-present", ref, fExp, "no inbound HTTP chain to inspect")
		return
	}
	fs.add("sidecar/inbound-http-chain", "Service default/productpage",
		fmt.Sprintf("inbound HTTP filter chains for port %d on the productpage sidecar", e.AppPort), "")

	var probs []string
	var filters []*hcmv3.HttpFilter
	for i, h := range hcms {
		names := httpFilterNames(h)
		fi, ri := indexOf(names, FilterLocalRateLimit), indexOf(names, FilterRouter)
		switch {
		case fi < 0:
			probs = append(probs, fmt.Sprintf("chain %q: absent; HTTP filters are %v", chains[i].Name, names))
		case ri >= 0 && fi > ri:
			probs = append(probs, fmt.Sprintf("chain %q: after the router; HTTP filters are %v", chains[i].Name, names))
		default:
			filters = append(filters, h.HttpFilters[fi])
		}
	}
	fs.add("sidecar/local-filter-present", ref, fExp, strings.Join(probs, "; "))

	full := fmt.Sprintf("LocalRateLimit stat_prefix http_local_rate_limiter, token bucket %d/%d every %s, enabled+enforced 100%%, headers x-local-rate-limit: true and retry-after: %d, enable_x_ratelimit_headers DRAFT_VERSION_03",
		e.Bucket, e.Bucket, e.FillInterval, retryAfterOf(e.FillInterval))
	probs = nil
	// Never pass without looking at a filter: the config is checked only on chains where the
	// filter sits before the router, and every inbound HTTP chain must have one.
	if len(filters) < len(hcms) {
		probs = append(probs, fmt.Sprintf("%s found before the router on %d of %d inbound HTTP chains; nothing to check on the others", FilterLocalRateLimit, len(filters), len(hcms)))
	}
	for _, f := range filters {
		lrl, err := decodeLocalRateLimit(f.GetTypedConfig())
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		if e.Placement == "all-routes" {
			if p := bucketProblems(lrl, e); p != "" {
				probs = append(probs, p)
			}
		} else {
			if lrl.StatPrefix != "http_local_rate_limiter" {
				probs = append(probs, fmt.Sprintf("stat_prefix is %q", lrl.StatPrefix))
			}
			if lrl.TokenBucket != nil {
				probs = append(probs, "the HTTP_FILTER patch carries a token bucket (single-route placement keeps it per route)")
			}
		}
	}
	if e.Placement == "all-routes" {
		fs.add("sidecar/local-filter-config", ref, "filter config: "+full, strings.Join(probs, "; "))
	} else {
		fs.add("sidecar/local-filter-config", ref, "filter config holds only stat_prefix http_local_rate_limiter", strings.Join(probs, "; "))
	}

	// Per-route config on the inbound|http|<port> virtual host.
	vhName := fmt.Sprintf("inbound|http|%d", e.AppPort)
	probs = nil
	nroutes := 0
	for i, h := range hcms {
		rc := h.GetRouteConfig()
		var vh *routev3.VirtualHost
		for _, v := range rc.GetVirtualHosts() {
			if v.Name == vhName {
				vh = v
			}
		}
		if vh == nil {
			var names []string
			for _, v := range rc.GetVirtualHosts() {
				names = append(names, v.Name)
			}
			probs = append(probs, fmt.Sprintf("chain %q: no virtual host %s (have %v)", chains[i].Name, vhName, names))
			continue
		}
		for _, r := range vh.Routes {
			nroutes++
			a, ok := r.TypedPerFilterConfig[FilterLocalRateLimit]
			if e.Placement == "all-routes" {
				if ok {
					probs = append(probs, fmt.Sprintf("route %q carries a per-route override in the all-routes placement", r.Name))
				}
				continue
			}
			if !ok {
				probs = append(probs, fmt.Sprintf("chain %q route %q: no typed_per_filter_config[%s]", chains[i].Name, r.Name, FilterLocalRateLimit))
				continue
			}
			lrl, err := decodeLocalRateLimit(a)
			if err != nil {
				probs = append(probs, fmt.Sprintf("route %q: %v", r.Name, err))
				continue
			}
			if p := bucketProblems(lrl, e); p != "" {
				probs = append(probs, fmt.Sprintf("route %q: %s", r.Name, p))
			}
		}
	}
	if nroutes == 0 && len(probs) == 0 {
		probs = append(probs, "no routes on "+vhName)
	}
	if e.Placement == "single-route" {
		fs.add("sidecar/per-route-config", ref, fmt.Sprintf("every route of %s has typed_per_filter_config[%s]: %s", vhName, FilterLocalRateLimit, full), strings.Join(probs, "; "))
	} else {
		fs.add("sidecar/per-route-config", ref, fmt.Sprintf("routes of %s carry no per-route local limit (all-routes placement)", vhName), strings.Join(probs, "; "))
	}
}

func bucketProblems(l *lrlv3.LocalRateLimit, e Expect) string {
	var p []string
	if l.StatPrefix != "http_local_rate_limiter" {
		p = append(p, fmt.Sprintf("stat_prefix is %q", l.StatPrefix))
	}
	tb := l.GetTokenBucket()
	if tb.GetMaxTokens() != e.Bucket || tb.GetTokensPerFill().GetValue() != e.Bucket {
		p = append(p, fmt.Sprintf("token bucket max_tokens=%d tokens_per_fill=%d (want %d)", tb.GetMaxTokens(), tb.GetTokensPerFill().GetValue(), e.Bucket))
	}
	if tb.GetFillInterval().AsDuration() != e.FillInterval {
		p = append(p, fmt.Sprintf("fill_interval is %s", tb.GetFillInterval().AsDuration()))
	}
	for _, rf := range []struct {
		name, key string
		v         interface {
			GetRuntimeKey() string
			GetDefaultValue() *typev3.FractionalPercent
		}
	}{{"filter_enabled", "local_rate_limit_enabled", l.GetFilterEnabled()}, {"filter_enforced", "local_rate_limit_enforced", l.GetFilterEnforced()}} {
		if rf.v.GetRuntimeKey() != rf.key || rf.v.GetDefaultValue().GetNumerator() != 100 || rf.v.GetDefaultValue().GetDenominator() != typev3.FractionalPercent_HUNDRED {
			p = append(p, fmt.Sprintf("%s is %s (absent means 0%%: nothing enforced)", rf.name, jsonOf(rf.v)))
		}
	}
	found, retry := false, false
	for _, h := range l.GetResponseHeadersToAdd() {
		if h.GetHeader().GetKey() == "x-local-rate-limit" && h.GetHeader().GetValue() == "true" {
			found = true
		}
		if strings.EqualFold(h.GetHeader().GetKey(), "retry-after") && h.GetHeader().GetValue() == fmt.Sprint(retryAfterOf(e.FillInterval)) {
			retry = true
		}
	}
	if !found || !retry {
		p = append(p, fmt.Sprintf("response_headers_to_add is %s", jsonOf(l.GetResponseHeadersToAdd())))
	}
	if l.GetEnableXRatelimitHeaders().String() != "DRAFT_VERSION_03" {
		p = append(p, fmt.Sprintf("enable_x_ratelimit_headers is %s", l.GetEnableXRatelimitHeaders()))
	}
	return strings.Join(p, "; ")
}

// retryAfterOf: the Retry-After a refusal of the bucket carries, the fill interval in whole seconds (at least 1).
func retryAfterOf(fill time.Duration) int {
	s := int((fill + time.Second - 1) / time.Second)
	if s < 1 {
		return 1
	}
	return s
}

// decodeLocalRateLimit reads a LocalRateLimit from a typed config, unwrapping a TypedStruct.
// Unknown fields inside the TypedStruct are an error, as they are for Envoy.
func decodeLocalRateLimit(a *anypb.Any) (*lrlv3.LocalRateLimit, error) {
	out := &lrlv3.LocalRateLimit{}
	if a == nil {
		return nil, fmt.Errorf("typed_config absent")
	}
	var typeURL string
	var value proto.Message
	switch a.TypeUrl {
	case udpaTypedStructType:
		ts := &udpatype.TypedStruct{}
		if err := a.UnmarshalTo(ts); err != nil {
			return nil, err
		}
		typeURL, value = ts.TypeUrl, ts.Value
	case xdsTypedStructType:
		ts := &xdstype.TypedStruct{}
		if err := a.UnmarshalTo(ts); err != nil {
			return nil, err
		}
		typeURL, value = ts.TypeUrl, ts.Value
	case localRateLimitType:
		if err := a.UnmarshalTo(out); err != nil {
			return nil, err
		}
		return out, nil
	default:
		return nil, fmt.Errorf("typed_config type %q is not a LocalRateLimit", a.TypeUrl)
	}
	if typeURL != localRateLimitType {
		return nil, fmt.Errorf("TypedStruct type_url is %q, want %q", typeURL, localRateLimitType)
	}
	b, err := protojson.Marshal(value)
	if err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("TypedStruct value is not a valid LocalRateLimit: %v", err)
	}
	return out, nil
}

// ---------------------------------------------------------------- helpers

func findListener(ls []*listenerv3.Listener, name string) *listenerv3.Listener {
	for _, l := range ls {
		if l.Name == name {
			return l
		}
	}
	return nil
}

func listenerNames(ls []*listenerv3.Listener) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

func hcmOf(fc *listenerv3.FilterChain) *hcmv3.HttpConnectionManager {
	for _, f := range fc.Filters {
		if f.Name == FilterHCM {
			h := &hcmv3.HttpConnectionManager{}
			if err := f.GetTypedConfig().UnmarshalTo(h); err == nil {
				return h
			}
		}
	}
	return nil
}

func httpFilterNames(h *hcmv3.HttpConnectionManager) []string {
	var out []string
	for _, f := range h.HttpFilters {
		out = append(out, f.Name)
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func findCluster(cs []*clusterv3.Cluster, name string) *clusterv3.Cluster {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func clusterNames(cs []*clusterv3.Cluster, contains string) []string {
	var out []string
	for _, c := range cs {
		if strings.Contains(c.Name, contains) {
			out = append(out, c.Name)
		}
	}
	return out
}

func usesHTTP2(c *clusterv3.Cluster) bool {
	a, ok := c.TypedExtensionProtocolOptions[httpProtocolOptions]
	if !ok {
		return false
	}
	o := &upstreamhttpv3.HttpProtocolOptions{}
	if err := a.UnmarshalTo(o); err != nil {
		return false
	}
	return o.GetExplicitHttpConfig().GetHttp2ProtocolOptions() != nil
}

func findVhost(rcs []*routev3.RouteConfiguration, rc, vh string) *routev3.VirtualHost {
	for _, r := range rcs {
		if r.Name != rc {
			continue
		}
		for _, v := range r.VirtualHosts {
			if v.Name == vh {
				return v
			}
		}
	}
	return nil
}

func routeConfigSummary(rcs []*routev3.RouteConfiguration) []string {
	var out []string
	for _, r := range rcs {
		var vs []string
		for _, v := range r.VirtualHosts {
			vs = append(vs, v.Name)
		}
		out = append(out, fmt.Sprintf("%s%v", r.Name, vs))
	}
	return out
}

func findRoute(vh *routev3.VirtualHost, name string) *routev3.Route {
	for _, r := range vh.Routes {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func routeNames(vh *routev3.VirtualHost) []string {
	var out []string
	for _, r := range vh.Routes {
		out = append(out, fmt.Sprintf("%q", r.Name))
	}
	return out
}

// URLPathExpr is the CEL attribute for the request path without its query string.
const URLPathExpr = "request.url_path"

// hasURLPathAction: a rate_limits entry whose action is the CEL descriptor extension producing
// `key` from request.url_path (decoded from its typed config, as Envoy would load it).
func hasURLPathAction(rls []*routev3.RateLimit, key string) bool {
	for _, rl := range rls {
		for _, a := range rl.Actions {
			ext := a.GetExtension()
			if ext == nil || ext.GetName() != "envoy.rate_limit_descriptors.expr" {
				continue
			}
			d := &exprv3.Descriptor{}
			if err := ext.GetTypedConfig().UnmarshalTo(d); err != nil {
				continue
			}
			if d.GetDescriptorKey() == key && d.GetText() == URLPathExpr && !d.GetSkipIfError() {
				return true
			}
		}
	}
	return false
}

// vhRateLimitsProblem: "" when the route's rate-limit per-route config says INCLUDE.
func vhRateLimitsProblem(r *routev3.Route) string {
	a, ok := r.GetTypedPerFilterConfig()[FilterRateLimit]
	if !ok {
		return fmt.Sprintf("no typed_per_filter_config for %s (routes' own rate_limits then replace the virtual host's); route is %s", FilterRateLimit, jsonOf(r))
	}
	pr := &rlv3.RateLimitPerRoute{}
	if err := a.UnmarshalTo(pr); err != nil {
		return "typed_per_filter_config is not a RateLimitPerRoute: " + err.Error()
	}
	if pr.GetVhRateLimits() != rlv3.RateLimitPerRoute_INCLUDE {
		return fmt.Sprintf("vh_rate_limits is %s", pr.GetVhRateLimits())
	}
	return ""
}

func hasRequestHeadersAction(rls []*routev3.RateLimit, header, key string) bool {
	for _, rl := range rls {
		for _, a := range rl.Actions {
			if rh := a.GetRequestHeaders(); rh != nil && rh.HeaderName == header && rh.DescriptorKey == key {
				return true
			}
		}
	}
	return false
}

func headerValueMatches(r *routev3.Route) []*routev3.RateLimit_Action_HeaderValueMatch {
	var out []*routev3.RateLimit_Action_HeaderValueMatch
	for _, rl := range r.GetRoute().GetRateLimits() {
		for _, a := range rl.Actions {
			if h := a.GetHeaderValueMatch(); h != nil {
				out = append(out, h)
			}
		}
	}
	return out
}

func jsonOf(v any) string {
	if m, ok := v.(proto.Message); ok {
		b, err := protojson.Marshal(m)
		if err == nil {
			return string(b)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// LoadMeshConfig applies mesh-config text the way istiod does (mesh.ApplyMeshConfigDefaults) and
// returns the top-level fields a strict parse rejects, i.e. the ones current Istio ignores.
func LoadMeshConfig(text string) ([]string, error) {
	if _, err := mesh.ApplyMeshConfigDefaults(text); err != nil {
		return nil, err
	}
	var ignored []string
	var raw map[string]any
	if err := sigyaml.Unmarshal([]byte(text), &raw); err != nil {
		return nil, err
	}
	for k, v := range raw {
		one, _ := sigyaml.Marshal(map[string]any{k: v})
		if err := protomarshal.ApplyYAMLStrict(string(one), mesh.DefaultMeshConfig()); err != nil {
			ignored = append(ignored, k)
		}
	}
	return ignored, nil
}

// DumpGateway writes what the gateway model needs from Istio's generated configuration: the
// gateway's route configuration http.<port> (protobuf JSON, as Envoy receives it) and the
// rate-limit filter's domain and failure mode from the generated listener. The istio tier feeds it
// to the TypeScript gateway model (tests/istio/model-agree.ts) beside the rendered objects.
func DumpGateway(t test.Failer, docs []Doc, e Expect, out string) error {
	g, input := Generate(t, docs, e)
	if g == nil {
		return fmt.Errorf("nothing generated: %v", input)
	}
	rcName := fmt.Sprintf("http.%d", e.GatewayPort)
	var rc *routev3.RouteConfiguration
	for _, r := range g.GatewayRoutes {
		if r.GetName() == rcName {
			rc = r
		}
	}
	if rc == nil {
		return fmt.Errorf("no route configuration %s; have %v", rcName, routeConfigSummary(g.GatewayRoutes))
	}
	dump := map[string]any{"virtualHost": e.GatewayVhost()}
	var filters []map[string]any
	l := findListener(g.GatewayListeners, e.GatewayListener())
	if l != nil {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			for _, f := range h.HttpFilters {
				// Every rate-limit filter, by its type (the per-value side's has a name of its own), in chain order.
				rl := &rlv3.RateLimit{}
				if f.GetTypedConfig() == nil || !f.GetTypedConfig().MessageIs(rl) {
					continue
				}
				if err := f.GetTypedConfig().UnmarshalTo(rl); err != nil {
					return err
				}
				filters = append(filters, map[string]any{
					"name":            f.Name,
					"stage":           rl.Stage,
					"domain":          rl.Domain,
					"failureModeDeny": rl.FailureModeDeny,
					// What clients are told, as generated (the model builds the X-RateLimit headers from it).
					"rateLimitHeaders": rl.EnableXRatelimitHeaders == rlv3.RateLimit_DRAFT_VERSION_03,
					"cluster":          rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName(),
				})
				if f.Name == FilterRateLimit {
					dump["domain"] = rl.Domain
					dump["failureModeDeny"] = rl.FailureModeDeny
				}
			}
		}
	}
	if _, ok := dump["domain"]; !ok {
		return fmt.Errorf("no %s filter on the gateway listener", FilterRateLimit)
	}
	dump["rateLimitFilters"] = filters
	b, err := protojson.Marshal(rc)
	if err != nil {
		return err
	}
	dump["routeConfiguration"] = json.RawMessage(b)
	text, err := json.MarshalIndent(dump, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, text, 0o644)
}

// orDefault: v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
