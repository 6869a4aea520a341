package xdscheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"istio.io/api/label"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	"istio.io/istio/pilot/pkg/serviceregistry/ambient"
	"istio.io/istio/pkg/activenotifier"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/gvr"
	kubelib "istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/kclient/clienttest"
	"istio.io/istio/pkg/kube/krt"
	"istio.io/istio/pkg/kube/multicluster"
	"istio.io/istio/pkg/test"
)

// The ambient mesh Istio's generator sees for the package's ambient render (docs/guide/ambient.md):
// the render's objects (the waypoint Gateway of class istio-waypoint and productpage's Service
// labelled istio.io/use-waypoint among them), plus what Istio and the cluster add around them: the
// Service Istio creates for the Gateway API ingress (<name>-istio), the waypoint's Service and the
// address Istio's controller writes into the waypoint Gateway's status, as Istio's own waypoint tests
// set one up (pilot/pkg/xds/waypoint_test.go), and another team's Service behind the same waypoint
// on the same port (reviews, labelled istio.io/use-waypoint too), so a patch that is not scoped to
// productpage's chain would show on that one. The ambient index is Istio's own
// (pilot/pkg/serviceregistry/ambient, as pilot/test/xds/fake.go builds it), fed by a fake Kubernetes
// client with the same objects; the binary must run with PILOT_ENABLE_AMBIENT=true.
const (
	ambientNamespace = "default"
	ambientIngress   = "bookinfo-gateway"
	ambientIngressNS = "istio-system"
	ambientWaypoint  = "waypoint"
	ambientIngressIP = "10.244.9.2"
	ambientWaypoint0 = "10.244.9.1"
	// ambientNeighbour: the other Service the waypoint serves (same port as productpage).
	ambientNeighbour = "reviews"
)

// ambientWaypointYAML: a waypoint as Istio's docs write one, for a render that has none of its own.
var ambientWaypointYAML = fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  gatewayClassName: istio-waypoint
  listeners:
  - {name: mesh, port: 15008, protocol: HBONE}
`, ambientWaypoint, ambientNamespace)

// ambientExtraYAML: the waypoint's Service and the ingress pods' Service, which Istio's controllers create in a cluster.
var ambientExtraYAML = fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {gateway.istio.io/managed: istio.io-mesh-controller, gateway.networking.k8s.io/gateway-name: %[1]s}
spec:
  ports:
  - {appProtocol: hbone, name: mesh, port: 15008}
  selector: {gateway.networking.k8s.io/gateway-name: %[1]s}
---
apiVersion: v1
kind: Service
metadata:
  name: %[3]s-istio
  namespace: %[4]s
  labels: {gateway.istio.io/managed: istio.io-gateway-controller, gateway.networking.k8s.io/gateway-name: %[3]s}
spec:
  ports:
  - {name: http, port: 8080}
  selector: {gateway.networking.k8s.io/gateway-name: %[3]s}
`, ambientWaypoint, ambientNamespace, ambientIngress, ambientIngressNS)

// isWaypointGateway: the waypoint Gateway (Gateway API, class istio-waypoint) of the scenario.
func isWaypointGateway(d Doc) bool {
	return d.Kind() == "Gateway" && d.APIVersion() == "gateway.networking.k8s.io/v1" && d.Name() == ambientWaypoint && d.Namespace() == ambientNamespace
}

// withWaypoint: the documents with the waypoint Gateway (the render's, else ambientWaypointYAML), its
// status address as Istio's controller writes it, and the neighbour Service enrolled in the waypoint.
func withWaypoint(docs []Doc) ([]Doc, error) {
	out := Clone(docs)
	has := false
	for _, d := range out {
		has = has || isWaypointGateway(d)
	}
	if !has {
		w, err := ParseYAML([]byte(ambientWaypointYAML))
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	for _, d := range out {
		if isWaypointGateway(d) {
			d["status"] = map[string]any{"addresses": []any{map[string]any{"type": "Hostname",
				"value": ambientWaypoint + "." + ambientNamespace + ".svc." + domainSuffix}}}
		}
		if d.Kind() == "Service" && d.Name() == ambientNeighbour && d.Namespace() == ambientNamespace {
			labels, _ := d.meta()["labels"].(map[string]any)
			labels["istio.io/use-waypoint"] = ambientWaypoint
		}
	}
	extra, err := ParseYAML([]byte(ambientExtraYAML))
	return append(out, extra...), err
}

// ambientMesh: the generator over one ambient scenario, and its two proxies.
type ambientMesh struct {
	cg       *core.ConfigGenTest
	ingress  *model.Proxy
	waypoint *model.Proxy
}

// kubeObjects: the documents as typed Kubernetes objects (Istio's codec), for the fake client.
func kubeObjects(docs []Doc) ([]runtime.Object, error) {
	decode := kubelib.IstioCodec.UniversalDeserializer().Decode
	var out []runtime.Object
	for _, d := range docs {
		b, _ := json.Marshal(d)
		o, _, err := decode(b, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.Ref(), err)
		}
		out = append(out, o)
	}
	return out, nil
}

// ambientIndex: Istio's ambient index over a fake cluster holding the kube objects, synced.
func ambientIndex(t *testing.T, objs []runtime.Object) ambient.Index {
	client := kubelib.NewFakeClient(objs...)
	for _, g := range []schema.GroupVersionResource{gvr.KubernetesGateway, gvr.GatewayClass, gvr.WorkloadEntry, gvr.ServiceEntry,
		gvr.AuthorizationPolicy, gvr.PeerAuthentication, gvr.HTTPRoute, gvr.ReferenceGrant} {
		clienttest.MakeCRD(t, client, g)
	}
	stop := test.NewStop(t)
	mw := meshwatcher.NewTestWatcher(mesh.DefaultMeshConfig())
	mc := multicluster.NewController(multicluster.ControllerOptions{Client: client, ClusterID: "Kubernetes", SystemNamespace: ambientIngressNS,
		MeshConfig: mw, Debugger: krt.GlobalDebugHandler})
	idx := ambient.New(ambient.Options{
		SystemNamespace: ambientIngressNS, DomainSuffix: domainSuffix, ClusterID: "Kubernetes",
		XDSUpdater: model.NewEndpointIndexUpdater(model.NewEndpointIndex(model.DisabledCache{})), MeshConfig: mw,
		StatusNotifier: activenotifier.New(false), Debugger: krt.GlobalDebugHandler, MultiClusterController: mc,
	})
	if err := mc.Run(stop); err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	client.RunAndWait(stop)
	go idx.Run(stop)
	kubelib.WaitForCacheSync("ambient", stop, idx.HasSynced)
	return idx
}

// generateAmbient runs the generator over the render plus the scenario around it (withWaypoint, ambientExtraYAML).
func generateAmbient(t *testing.T, render []Doc) *ambientMesh {
	t.Helper()
	docs, err := withWaypoint(render)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	var kube []Doc
	for _, d := range docs {
		if d.Kind() == "Service" || (d.Kind() == "Gateway" && d.APIVersion() == "gateway.networking.k8s.io/v1") {
			kube = append(kube, d)
		}
	}
	text, services, err := istioAndServices(docs, 9)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	objs, err := kubeObjects(kube)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	// The same cluster IPs as the generator's registry (istioAndServices), so both see one mesh.
	for _, o := range objs {
		if svc, ok := o.(*corev1.Service); ok {
			for _, ms := range services {
				if ms.Attributes.Name == svc.Name && ms.Attributes.Namespace == svc.Namespace {
					svc.Spec.ClusterIP = ms.DefaultAddress
				}
			}
		}
	}
	idx := ambientIndex(t, objs)
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services, SkipRun: true})
	cg.Env().AmbientIndexes = idx
	cg.PushContext().GatewayAPIController = noGatewayAPIController{}
	for _, ms := range services {
		switch ms.Attributes.Name {
		case ambientWaypoint:
			cg.MemRegistry.AddInstance(podInstance(ms, ambientWaypoint0, 15008, map[string]string{gatewayNameLabel: ambientWaypoint}))
		case ambientIngress + "-istio":
			cg.MemRegistry.AddInstance(podInstance(ms, ambientIngressIP, 8080, gwapiPodLabels(ambientIngress)))
		}
	}
	cg.Run()
	cg.Env().PushContext().InitContext(cg.Env(), nil, nil)
	cg.PushContext().GatewayAPIController = noGatewayAPIController{}
	wlabels := map[string]string{label.IoK8sNetworkingGatewayGatewayName.Name: ambientWaypoint, label.GatewayManaged.Name: constants.ManagedGatewayMeshControllerLabel}
	return &ambientMesh{
		cg: cg,
		ingress: cg.SetupProxy(&model.Proxy{Type: model.Router, ID: ambientIngress + "-istio-0." + ambientIngressNS, ConfigNamespace: ambientIngressNS,
			IPAddresses: []string{ambientIngressIP}, Labels: gwapiPodLabels(ambientIngress),
			Metadata: &model.NodeMetadata{Namespace: ambientIngressNS, Labels: gwapiPodLabels(ambientIngress), IstioVersion: "1.30.3"}}),
		waypoint: cg.SetupProxy(&model.Proxy{Type: model.Waypoint, ID: ambientWaypoint + "-0." + ambientNamespace, ConfigNamespace: ambientNamespace,
			IPAddresses: []string{ambientWaypoint0}, Labels: wlabels,
			Metadata: &model.NodeMetadata{Namespace: ambientNamespace, Labels: wlabels, IstioVersion: "1.30.3"}}),
	}
}

// podInstance: the endpoint of a Service on one pod.
func podInstance(ms *model.Service, ip string, port uint32, labels map[string]string) *model.ServiceInstance {
	return &model.ServiceInstance{Service: ms, ServicePort: ms.Ports[0],
		Endpoint: &model.IstioEndpoint{Addresses: []string{ip}, EndpointPort: port, ServicePortName: ms.Ports[0].Name, Namespace: ms.Attributes.Namespace, Labels: labels}}
}

// attachedFilters: namespace/name of every EnvoyFilter with a patch for the proxy (PushContext.EnvoyFilters).
func attachedFilters(cg *core.ConfigGenTest, p *model.Proxy) []string {
	seen := map[string]bool{}
	if m := cg.PushContext().EnvoyFilters(p); m != nil {
		for _, cps := range m.Patches {
			for _, cp := range cps {
				seen[cp.Namespace+"/"+cp.Name] = true
			}
		}
	}
	return sortedKeys(seen)
}

// aimedAtWaypoint: an EnvoyFilter whose targetRefs name the scenario's waypoint.
func aimedAtWaypoint(d Doc) bool {
	refs, _ := Dig(d, "spec", "targetRefs").([]any)
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["name"] == ambientWaypoint {
			return true
		}
	}
	return false
}

// renderFilters: namespace/name of every EnvoyFilter of the render aimed at the waypoint (waypoint
// true) or not (false: the ingress's), sorted.
func renderFilters(docs []Doc, waypoint bool) []string {
	var out []string
	for _, d := range docs {
		if d.Kind() == "EnvoyFilter" && aimedAtWaypoint(d) == waypoint {
			out = append(out, d.Namespace()+"/"+d.Name())
		}
	}
	sort.Strings(out)
	return out
}

// The chain names of the scenario's waypoint: productpage's (where the bucket belongs) and its neighbour's.
var (
	pageChain      = fmt.Sprintf("inbound-vip|9080|http|productpage.%s.svc.%s", ambientNamespace, domainSuffix)
	neighbourChain = fmt.Sprintf("inbound-vip|9080|http|%s.%s.svc.%s", ambientNeighbour, ambientNamespace, domainSuffix)
)

// waypointLanding: listener/chain of every waypoint chain holding the named HTTP filter (filters, and
// whether it is before the router), and of every chain whose routes carry its per-route config (routes).
func waypointLanding(m *ambientMesh, name string) (filters, routes []string, beforeRouter bool) {
	beforeRouter = true
	for _, l := range m.cg.Listeners(m.waypoint) {
		for _, fc := range l.FilterChains {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			names := httpFilterNames(h)
			if i := indexOf(names, name); i >= 0 {
				filters = append(filters, l.Name+"/"+fc.Name)
				beforeRouter = beforeRouter && i < indexOf(names, "envoy.filters.http.router")
			}
			for _, vh := range h.GetRouteConfig().GetVirtualHosts() {
				n := 0
				for _, r := range vh.Routes {
					if _, ok := r.TypedPerFilterConfig[name]; ok {
						n++
					}
				}
				if n > 0 && n == len(vh.Routes) {
					routes = append(routes, l.Name+"/"+fc.Name)
				}
			}
		}
	}
	return filters, routes, beforeRouter
}

// bucketFilterName: the HTTP filter the bucket's EnvoyFilters insert (the local rate-limit filter's name).
func bucketFilterName(bucket []Doc) string {
	for _, d := range bucket {
		for _, p := range Patches(d) {
			if p["applyTo"] == "HTTP_FILTER" {
				name, _ := Dig(p, "patch", "value", "name").(string)
				return name
			}
		}
	}
	return ""
}

// waypointBucketProblem: the bucket's EnvoyFilters (those of `bucket` aimed at the waypoint) reach the
// waypoint and nothing else of the render does; its HTTP filter is on productpage's chain of
// main_internal only, before the router; per route (perRoute): every route of that chain's route
// configuration carries the bucket, and no other chain's.
func waypointBucketProblem(m *ambientMesh, bucket []Doc, perRoute bool) outcome {
	want, got := renderFilters(bucket, true), attachedFilters(m.cg, m.waypoint)
	name := bucketFilterName(bucket)
	filters, routes, before := waypointLanding(m, name)
	only := []string{"main_internal/" + pageChain}
	var problems []string
	if len(want) == 0 || !containsAll(got, want) {
		problems = append(problems, fmt.Sprintf("waypoint: expected the bucket's filters %v; got %v", want, got))
	}
	if strings.Join(filters, ",") != only[0] || !before {
		problems = append(problems, fmt.Sprintf("HTTP filter %s: expected in [%s] before the router; got [%s] (before the router: %v)", name, only[0], strings.Join(filters, ", "), before))
	}
	if perRoute && strings.Join(routes, ",") != only[0] {
		problems = append(problems, fmt.Sprintf("per-route bucket: expected on every route of [%s]; got [%s]", only[0], strings.Join(routes, ", ")))
	}
	return orFinding(len(problems) > 0, strings.Join(problems, "; "),
		fmt.Sprintf("%v reach the waypoint; %s on [%s] only, before the router (not %s, not connect_terminate)%s", want, name, only[0], neighbourChain,
			map[bool]string{true: ", its bucket on every route there", false: ""}[perRoute]))
}

// containsAll: every one of want is in got.
func containsAll(got, want []string) bool {
	for _, w := range want {
		if indexOf(got, w) < 0 {
			return false
		}
	}
	return true
}

// waypointControl: the bucket broken one way; the bucket check must fail on it.
type waypointControl struct {
	name     string
	docs     []Doc
	bucket   []Doc
	perRoute bool
}

// waypointControls: the render's bucket (and the per-route one) each broken in one way the check guards against.
func waypointControls(render, routed []Doc) []waypointControl {
	edit := func(docs []Doc, f func(p map[string]any, spec map[string]any)) ([]Doc, []Doc) {
		out := Clone(docs)
		var bucket []Doc
		for _, d := range out {
			if d.Kind() == "EnvoyFilter" && aimedAtWaypoint(d) {
				spec := d["spec"].(map[string]any)
				for _, p := range Patches(d) {
					f(p, spec)
				}
				bucket = append(bucket, d)
			}
		}
		return out, bucket
	}
	chain := func(p map[string]any) map[string]any {
		fc, _ := Dig(p, "match", "listener", "filterChain").(map[string]any)
		return fc
	}
	var out []waypointControl
	add := func(name string, perRoute bool, docs []Doc, f func(p, spec map[string]any)) {
		d, b := edit(docs, f)
		if perRoute {
			d = append(Clone(render), d...)
		}
		out = append(out, waypointControl{name, d, b, perRoute})
	}
	add("chain-missing", false, render, func(p, _ map[string]any) {
		if fc := chain(p); fc != nil {
			fc["name"] = strings.Replace(pageChain, "|9080|", "|9081|", 1)
		}
	})
	add("other-waypoint", false, render, func(_, spec map[string]any) {
		spec["targetRefs"] = []any{map[string]any{"group": gatewayAPIGroup, "kind": "Gateway", "name": "other-waypoint"}}
	})
	add("chain-unscoped", false, render, func(p, _ map[string]any) {
		if fc := chain(p); fc != nil {
			delete(fc, "name")
		}
	})
	add("routes-unscoped", true, routed, func(p, _ map[string]any) {
		if rc, _ := Dig(p, "match", "routeConfiguration").(map[string]any); rc != nil {
			delete(rc, "name")
		}
	})
	return out
}
