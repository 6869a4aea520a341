package xdscheck

// The managed-API path (spec 1.5, 2.8, 2.9) in Istio's own model: the rendered Ingress, Services
// and IngressClass go through Istio's Kubernetes-Ingress controller
// (istio.io/istio/pilot/pkg/config/kube/ingress, the code istiod runs), whose Gateway and
// VirtualService then go, with the rendered Istio objects, through the configuration generator for
// the ingress gateway. The checks read the gateway's route for the Ingress path and the cluster of
// the ESP Service.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoycore "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	knetworking "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/pilot/pkg/config/kube/crd"
	ingressctl "istio.io/istio/pilot/pkg/config/kube/ingress"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	kubereg "istio.io/istio/pilot/pkg/serviceregistry/kube"
	kubecontroller "istio.io/istio/pilot/pkg/serviceregistry/kube/controller"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/gvk"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/test"
)

// Names of the managed-API objects (spec 2.8, 2.9), derived from the specification, never read
// back from the render.
const (
	ESPService     = "esp-echo"
	ESPServicePort = 80
	IngressPath    = "/echo"
	IngressClass   = "istio"
	IngressName    = "simple-ingress"
)

// IngressExpect is what the managed-API path must produce.
type IngressExpect struct {
	Profile  string // seed | current
	PortMode string // http | tcp
	// Namespace of the ESP Service and the Ingress.
	Namespace string
}

// ESPCluster is the gateway's outbound cluster for the ESP Service port.
func (e IngressExpect) ESPCluster() string {
	return fmt.Sprintf("outbound|%d||%s.%s.svc.%s", ESPServicePort, ESPService, e.Namespace, domainSuffix)
}

// ESPSNI is the SNI Istio's mutual TLS uses towards the ESP Service port.
func (e IngressExpect) ESPSNI() string {
	return fmt.Sprintf("outbound_.%d_._.%s.%s.svc.%s", ESPServicePort, ESPService, e.Namespace, domainSuffix)
}

// v1beta1Backend is the backend of an extensions/v1beta1 Ingress path.
type v1beta1Backend struct {
	ServiceName string `json:"serviceName"`
	ServicePort any    `json:"servicePort"`
}

// IngressV1 returns the rendered Ingress as Istio reads it: networking.k8s.io/v1 (Istio watches no
// other version). An extensions/v1beta1 Ingress (seed profile) is converted as the API server
// serves it to a v1 client: serviceName/servicePort become service.name and port.number (or
// port.name), and a path without pathType gets ImplementationSpecific, the v1beta1 default
// (https://github.com/kubernetes/kubernetes/blob/release-1.21/pkg/apis/extensions/v1beta1/defaults.go).
func IngressV1(d Doc) (*knetworking.Ingress, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if d.APIVersion() == "networking.k8s.io/v1" {
		var ing knetworking.Ingress
		if err := json.Unmarshal(b, &ing); err != nil {
			return nil, err
		}
		return &ing, nil
	}
	if d.APIVersion() != "extensions/v1beta1" && d.APIVersion() != "networking.k8s.io/v1beta1" {
		return nil, fmt.Errorf("%s: unexpected apiVersion %s", d.Ref(), d.APIVersion())
	}
	var in struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			IngressClassName *string `json:"ingressClassName"`
			Rules            []struct {
				Host string `json:"host"`
				HTTP *struct {
					Paths []struct {
						Path     string                `json:"path"`
						PathType *knetworking.PathType `json:"pathType"`
						Backend  v1beta1Backend        `json:"backend"`
					} `json:"paths"`
				} `json:"http"`
			} `json:"rules"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	out := &knetworking.Ingress{ObjectMeta: in.Metadata}
	out.Spec.IngressClassName = in.Spec.IngressClassName
	for _, r := range in.Spec.Rules {
		rule := knetworking.IngressRule{Host: r.Host}
		if r.HTTP != nil {
			rule.HTTP = &knetworking.HTTPIngressRuleValue{}
			for _, p := range r.HTTP.Paths {
				pt := knetworking.PathTypeImplementationSpecific
				if p.PathType != nil {
					pt = *p.PathType
				}
				svc := &knetworking.IngressServiceBackend{Name: p.Backend.ServiceName}
				switch v := p.Backend.ServicePort.(type) {
				case float64:
					svc.Port.Number = int32(v)
				case string:
					svc.Port.Name = v
				}
				rule.HTTP.Paths = append(rule.HTTP.Paths, knetworking.HTTPIngressPath{Path: p.Path, PathType: &pt, Backend: knetworking.IngressBackend{Service: svc}})
			}
		}
		out.Spec.Rules = append(out.Spec.Rules, rule)
	}
	return out, nil
}

// IngressInputs picks the objects Istio's Ingress controller reads from a render.
func IngressInputs(docs []Doc) (ings []*knetworking.Ingress, classes []*knetworking.IngressClass, svcs []*corev1.Service, err error) {
	for _, d := range docs {
		b, _ := json.Marshal(d)
		switch {
		case d.Kind() == "Ingress":
			ing, e := IngressV1(d)
			if e != nil {
				return nil, nil, nil, e
			}
			if ing.Namespace == "" {
				ing.Namespace = "default"
			}
			ings = append(ings, ing)
		case d.Kind() == "IngressClass":
			var c knetworking.IngressClass
			if e := json.Unmarshal(b, &c); e != nil {
				return nil, nil, nil, e
			}
			classes = append(classes, &c)
		case d.Kind() == "Service" && d.APIVersion() == "v1":
			var s corev1.Service
			if e := json.Unmarshal(b, &s); e != nil {
				return nil, nil, nil, e
			}
			if s.Namespace == "" {
				s.Namespace = "default"
			}
			svcs = append(svcs, &s)
		}
	}
	return ings, classes, svcs, nil
}

type fakeXDS struct{}

func (fakeXDS) ConfigUpdate(*model.PushRequest) {}

// ConvertIngress runs Istio's Ingress controller over the objects with the given mesh config and
// returns the Gateways and VirtualServices it derives (none when Istio ignores the Ingress).
func ConvertIngress(t test.Failer, mc *meshconfig.MeshConfig, ings []*knetworking.Ingress, classes []*knetworking.IngressClass, svcs []*corev1.Service) []config.Config {
	var objs []runtime.Object
	for _, o := range ings {
		objs = append(objs, o.DeepCopy())
	}
	for _, o := range classes {
		objs = append(objs, o.DeepCopy())
	}
	for _, o := range svcs {
		objs = append(objs, o.DeepCopy())
	}
	kc := kube.NewFakeClient(objs...)
	stop := test.NewStop(t)
	c := ingressctl.NewController(kc, meshwatcher.NewTestWatcher(mc), kubecontroller.Options{DomainSuffix: domainSuffix}, fakeXDS{})
	kc.RunAndWait(stop)
	go c.Run(stop)
	kube.WaitForCacheSync("ingress", stop, c.HasSynced)
	// HasSynced covers the derived collections' initial computation; the short retry only guards
	// against a late event (an ignored Ingress costs this wait).
	var out []config.Config
	deadline := time.Now().Add(300 * time.Millisecond)
	for {
		out = append(c.List(gvk.Gateway, ""), c.List(gvk.VirtualService, "")...)
		if len(out) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out
}

// DefaultMesh is the mesh config of a default Istio install (ingressControllerMode STRICT,
// ingressClass istio).
func DefaultMesh() *meshconfig.MeshConfig {
	m := mesh.DefaultMeshConfig()
	return m
}

// IngressGenerated is the gateway's configuration for the managed-API path.
type IngressGenerated struct {
	Derived  []config.Config // what Istio's Ingress controller produced
	Routes   []*routev3.RouteConfiguration
	Clusters []*clusterv3.Cluster
}

// GenerateIngress converts the Ingress with Istio's controller and generates the ingress gateway's
// configuration from the result plus the rendered Istio objects (PeerAuthentication included).
func GenerateIngress(t test.Failer, docs []Doc, mc *meshconfig.MeshConfig) (*IngressGenerated, error) {
	ings, classes, svcs, err := IngressInputs(docs)
	if err != nil {
		return nil, err
	}
	derived := ConvertIngress(t, mc, ings, classes, svcs)

	var istioDocs []Doc
	for _, d := range docs {
		if d.IsIstio() {
			istioDocs = append(istioDocs, d)
		}
	}
	text, err := ToYAML(istioDocs)
	if err != nil {
		return nil, err
	}
	cfgs, _, err := crd.ParseInputs(text)
	if err != nil {
		return nil, err
	}
	for i := range cfgs {
		if cfgs[i].Namespace == "" {
			cfgs[i].Namespace = "default"
		}
	}
	cfgs = append(cfgs, derived...)

	services, instances := registry(docs, svcs)
	cg := core.NewConfigGenTest(t, core.TestOptions{Configs: cfgs, Services: services, Instances: instances, MeshConfig: mc})
	gw := cg.SetupProxy(&model.Proxy{
		Type:            model.Router,
		ID:              "istio-ingressgateway-0.istio-system",
		ConfigNamespace: IstioSystem,
		IPAddresses:     []string{"10.244.1.1"},
		Labels:          map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"},
		Metadata: &model.NodeMetadata{
			Namespace:    IstioSystem,
			Labels:       map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"},
			IstioVersion: "1.30.3",
		},
	})
	ls := cg.Listeners(gw)
	return &IngressGenerated{Derived: derived, Routes: cg.RoutesFromListeners(gw, ls), Clusters: cg.Clusters(gw)}, nil
}

// registry converts the Services with Istio's converter and gives each one endpoints from the
// rendered Deployments it selects. A pod template that asks for a sidecar gets the endpoint label
// the sidecar injector adds (security.istio.io/tlsMode: istio), which auto mutual TLS keys on.
func registry(docs []Doc, svcs []*corev1.Service) ([]*model.Service, []*model.ServiceInstance) {
	type workload struct {
		labels map[string]string
		ports  map[string]int32
		ip     string
		mesh   bool
	}
	var ws []workload
	for i, d := range docs {
		if d.Kind() != "Deployment" {
			continue
		}
		tmpl, _ := Dig(d, "spec", "template").(map[string]any)
		w := workload{labels: map[string]string{}, ports: map[string]int32{}, ip: fmt.Sprintf("10.244.2.%d", 10+i)}
		if l, ok := Dig(tmpl, "metadata", "labels").(map[string]any); ok {
			for k, v := range l {
				w.labels[k] = fmt.Sprint(v)
			}
		}
		w.mesh = w.labels["sidecar.istio.io/inject"] == "true"
		cs, _ := Dig(tmpl, "spec", "containers").([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			ps, _ := cm["ports"].([]any)
			for _, p := range ps {
				pm, _ := p.(map[string]any)
				if n, ok := pm["containerPort"].(float64); ok {
					if name, _ := pm["name"].(string); name != "" {
						w.ports[name] = int32(n)
					}
				}
			}
		}
		ws = append(ws, w)
	}
	var services []*model.Service
	var instances []*model.ServiceInstance
	for i, s := range svcs {
		svc := *s.DeepCopy()
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = fmt.Sprintf("10.96.1.%d", 10+i)
		}
		ms := kubereg.ConvertService(svc, nil, domainSuffix, cluster.ID("Kubernetes"), domainSuffix)
		services = append(services, ms)
		for _, w := range ws {
			if len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, w.labels) {
				continue
			}
			for _, si := range serviceInstances(ms, svc, w.ip, w.labels, w.ports) {
				if w.mesh {
					si.Endpoint.TLSMode = model.IstioMutualTLSModeLabel
				}
				instances = append(instances, si)
			}
		}
	}
	return services, instances
}

// IngressRoute finds, in route config http.80 of the gateway, the route whose path match is the
// prefix `path` ("/echo" written by Istio as a path-separated prefix or a plain prefix). It returns
// the route and a description of what the route config holds (for failure messages).
func IngressRoute(rcs []*routev3.RouteConfiguration, path string) (*routev3.Route, string) {
	var seen []string
	for _, rc := range rcs {
		if rc.GetName() != "http.80" {
			continue
		}
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				m := r.GetMatch()
				desc := fmt.Sprintf("%s: %s", vh.GetName(), matchString(m))
				seen = append(seen, desc)
				if m.GetPathSeparatedPrefix() == path || m.GetPrefix() == path {
					return r, ""
				}
			}
		}
	}
	var names []string
	for _, rc := range rcs {
		names = append(names, rc.GetName())
	}
	if len(seen) == 0 {
		return nil, fmt.Sprintf("no route config http.80 with routes (route configs: %v)", names)
	}
	return nil, fmt.Sprintf("routes of http.80: %v", seen)
}

func matchString(m *routev3.RouteMatch) string {
	switch {
	case m.GetPathSeparatedPrefix() != "":
		return "path_separated_prefix " + m.GetPathSeparatedPrefix()
	case m.GetPrefix() != "":
		return "prefix " + m.GetPrefix()
	case m.GetPath() != "":
		return "exact " + m.GetPath()
	case m.GetSafeRegex() != nil:
		return "regex " + m.GetSafeRegex().GetRegex()
	}
	return "other"
}

// IstioMutualTLS reports whether the cluster sends Istio mutual TLS to sidecar endpoints: a TLS
// transport socket (direct, or the auto-mTLS match on tlsMode=istio) with Istio's SNI and ALPN.
func IstioMutualTLS(c *clusterv3.Cluster, sni string) (bool, string) {
	type sock struct {
		where string
		ts    *envoycore.TransportSocket
	}
	var socks []sock
	if ts := c.GetTransportSocket(); ts != nil {
		socks = append(socks, sock{"transport_socket", ts})
	}
	for _, m := range c.GetTransportSocketMatches() {
		if m.GetTransportSocket() != nil {
			socks = append(socks, sock{"transport_socket_matches[" + m.GetName() + "]", m.GetTransportSocket()})
		}
	}
	var seen []string
	for _, s := range socks {
		u := &tlsv3.UpstreamTlsContext{}
		if err := s.ts.GetTypedConfig().UnmarshalTo(u); err != nil {
			seen = append(seen, fmt.Sprintf("%s: %s (not TLS)", s.where, s.ts.GetTypedConfig().GetTypeUrl()))
			continue
		}
		alpn := u.GetCommonTlsContext().GetAlpnProtocols()
		if u.GetSni() == sni && containsPrefix(alpn, "istio") {
			return true, s.where
		}
		seen = append(seen, fmt.Sprintf("%s: TLS sni=%q alpn=%v", s.where, u.GetSni(), alpn))
	}
	if len(seen) == 0 {
		return false, "no transport socket (plain text)"
	}
	return false, strings.Join(seen, "; ")
}

func containsPrefix(l []string, p string) bool {
	for _, s := range l {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
