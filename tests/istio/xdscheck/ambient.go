package xdscheck

import (
	"encoding/json"
	"fmt"
	"sort"
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
// the render's objects, plus what Istio and the cluster add around them: the Service Istio creates
// for the Gateway API Gateway (<name>-istio), and a waypoint (Gateway of class istio-waypoint, its
// Service) that serves productpage (label istio.io/use-waypoint), as Istio's own waypoint tests set
// one up (pilot/pkg/xds/waypoint_test.go). The ambient index is Istio's own
// (pilot/pkg/serviceregistry/ambient, as pilot/test/xds/fake.go builds it), fed by a fake Kubernetes
// client with the same objects; the binary must run with PILOT_ENABLE_AMBIENT=true.
const (
	ambientNamespace = "default"
	ambientIngress   = "bookinfo-gateway"
	ambientIngressNS = "istio-system"
	ambientWaypoint  = "waypoint"
	ambientIngressIP = "10.244.9.2"
	ambientWaypoint0 = "10.244.9.1"
)

// ambientExtraYAML: the waypoint and the ingress pods' Service, which Istio's controllers create in a cluster.
var ambientExtraYAML = fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  gatewayClassName: istio-waypoint
  listeners:
  - {name: mesh, port: 15008, protocol: HBONE}
status:
  addresses:
  - {type: Hostname, value: %[1]s.%[2]s.svc.cluster.local}
---
apiVersion: v1
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

// generateAmbient runs the generator over the render plus ambientExtraYAML, productpage served by the waypoint.
func generateAmbient(t *testing.T, render []Doc) *ambientMesh {
	t.Helper()
	extra, err := ParseYAML([]byte(ambientExtraYAML))
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	docs := append(Clone(render), extra...)
	var kube []Doc
	for _, d := range docs {
		if d.Kind() == "Service" && d.Name() == "productpage" {
			labels, _ := d.meta()["labels"].(map[string]any)
			labels["istio.io/use-waypoint"] = ambientWaypoint
		}
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

// renderFilters: namespace/name of every EnvoyFilter of the render, sorted.
func renderFilters(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		if d.Kind() == "EnvoyFilter" {
			out = append(out, d.Namespace()+"/"+d.Name())
		}
	}
	sort.Strings(out)
	return out
}
