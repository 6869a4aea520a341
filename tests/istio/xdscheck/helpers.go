package xdscheck

import (
	"encoding/json"
	"fmt"
	"sort"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corev1 "k8s.io/api/core/v1"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core"
	kubereg "istio.io/istio/pilot/pkg/serviceregistry/kube"
	"istio.io/istio/pkg/cluster"
)

// Helpers shared by the gateway scenarios (many teams, the user's gateway, the Gateway API Gateway).

// istioAndServices: the Istio objects of docs as one YAML stream for the generator, and every v1
// Service as Istio's registry sees it. The N-th document (0-based), when a Service, gets cluster IP
// 10.96.<subnet>.<10+N> (the API server would allocate one); an unreadable Service is an error
// naming it.
func istioAndServices(docs []Doc, subnet int) (string, []*model.Service, error) {
	var istio []Doc
	var services []*model.Service
	for i, d := range docs {
		if d.IsIstio() {
			istio = append(istio, d)
		}
		if d.Kind() != "Service" || d.APIVersion() != "v1" {
			continue
		}
		var svc corev1.Service
		b, _ := json.Marshal(d)
		if err := json.Unmarshal(b, &svc); err != nil {
			return "", nil, fmt.Errorf("%s: %v", d.Ref(), err)
		}
		svc.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", subnet, 10+i)
		services = append(services, kubereg.ConvertService(svc, nil, domainSuffix, cluster.ID("Kubernetes"), domainSuffix))
	}
	text, err := ToYAML(istio)
	if err != nil {
		return "", nil, err
	}
	return text, services, nil
}

// gatewayProxy sets up a gateway pod (a Router proxy of the pinned Istio version) with that ID,
// namespace, address and labels, and returns it with the listeners and route configurations the
// generator builds for it.
func gatewayProxy(cg *core.ConfigGenTest, id, ns, ip string, labels map[string]string) (*model.Proxy, []*listenerv3.Listener, []*routev3.RouteConfiguration) {
	p := cg.SetupProxy(&model.Proxy{
		Type:            model.Router,
		ID:              id,
		ConfigNamespace: ns,
		IPAddresses:     []string{ip},
		Labels:          labels,
		Metadata:        &model.NodeMetadata{Namespace: ns, Labels: labels, IstioVersion: "1.30.3"},
	})
	ls := cg.Listeners(p)
	return p, ls, cg.RoutesFromListeners(p, ls)
}

// sortedKeys: the map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
