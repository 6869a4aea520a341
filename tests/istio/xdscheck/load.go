// Package xdscheck feeds the objects rendered by the mesh-ratelimit stack to Istio's own
// configuration generator (istio.io/istio/pilot/pkg/networking/core) and checks that the
// stack's EnvoyFilters land in the Envoy configuration Istio generates for the ingress
// gateway and for the productpage sidecar.
package xdscheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"istio.io/istio/pilot/pkg/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigyaml "sigs.k8s.io/yaml"
)

// Doc is one rendered Kubernetes object, kept as generic JSON so that negative controls can
// mutate it before it is handed to Istio.
type Doc map[string]any

func (d Doc) Kind() string       { s, _ := d["kind"].(string); return s }
func (d Doc) APIVersion() string { s, _ := d["apiVersion"].(string); return s }
func (d Doc) meta() map[string]any {
	m, _ := d["metadata"].(map[string]any)
	return m
}
func (d Doc) Name() string { s, _ := d.meta()["name"].(string); return s }
func (d Doc) Namespace() string {
	s, _ := d.meta()["namespace"].(string)
	if s == "" {
		return "default"
	}
	return s
}

// Ref names the object the way failure messages print it: "EnvoyFilter istio-system/filter-ratelimit".
func (d Doc) Ref() string { return fmt.Sprintf("%s %s/%s", d.Kind(), d.Namespace(), d.Name()) }

// IsIstio reports whether the object belongs to an Istio API group.
func (d Doc) IsIstio() bool {
	av := d.APIVersion()
	return strings.HasPrefix(av, "networking.istio.io/") || strings.HasPrefix(av, "security.istio.io/") ||
		strings.HasPrefix(av, "telemetry.istio.io/") || strings.HasPrefix(av, "extensions.istio.io/")
}

// Clone deep-copies the documents (via JSON) so mutations never leak between checks.
func Clone(docs []Doc) []Doc {
	b, err := json.Marshal(docs)
	if err != nil {
		panic(err)
	}
	var out []Doc
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// LoadDir reads DIR/all.yaml when present, otherwise every *.yaml file of DIR.
func LoadDir(dir string) ([]Doc, error) {
	files := []string{filepath.Join(dir, "all.yaml")}
	if _, err := os.Stat(files[0]); err != nil {
		files, _ = filepath.Glob(filepath.Join(dir, "*.yaml"))
		sort.Strings(files)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no YAML files in %s", dir)
	}
	var docs []Doc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ds, err := ParseYAML(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		docs = append(docs, ds...)
	}
	return docs, nil
}

// ParseYAML splits a multi-document YAML stream into objects (empty documents skipped).
func ParseYAML(b []byte) ([]Doc, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 1<<20)
	var out []Doc
	for {
		var d Doc
		if err := dec.Decode(&d); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
		if len(d) == 0 {
			continue
		}
		out = append(out, d)
	}
}

// ToYAML renders documents back into one multi-document YAML stream.
func ToYAML(docs []Doc) (string, error) {
	var sb strings.Builder
	for _, d := range docs {
		b, err := sigyaml.Marshal(map[string]any(d))
		if err != nil {
			return "", err
		}
		sb.WriteString("---\n")
		sb.Write(b)
	}
	return sb.String(), nil
}

// Find returns the first object of that kind and name (namespace ignored when ns == "").
func Find(docs []Doc, kind, ns, name string) Doc {
	for _, d := range docs {
		if d.Kind() == kind && d.Name() == name && (ns == "" || d.Namespace() == ns) {
			return d
		}
	}
	return nil
}

// Patches returns spec.configPatches of an EnvoyFilter document.
func Patches(d Doc) []map[string]any {
	spec, _ := d["spec"].(map[string]any)
	raw, _ := spec["configPatches"].([]any)
	var out []map[string]any
	for _, p := range raw {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Dig walks nested maps by keys, creating nothing; nil when absent.
func Dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// serviceInstances: the endpoints a Service gets on one pod it selects (its address, labels and named
// container ports), one per Service port, with the targetPort resolved as Kubernetes does (a number,
// or the name of a container port; with no named ports given, a name keeps the Service port).
func serviceInstances(ms *model.Service, svc corev1.Service, ip string, labels map[string]string, namedPorts map[string]int32) []*model.ServiceInstance {
	var out []*model.ServiceInstance
	for _, sp := range svc.Spec.Ports {
		mp, found := ms.Ports.GetByPort(int(sp.Port))
		if !found || mp == nil {
			continue
		}
		target := sp.Port
		if sp.TargetPort.IntVal != 0 {
			target = sp.TargetPort.IntVal
		} else if sp.TargetPort.StrVal != "" && namedPorts != nil {
			target = namedPorts[sp.TargetPort.StrVal]
		}
		out = append(out, &model.ServiceInstance{
			Service:     ms,
			ServicePort: mp,
			Endpoint: &model.IstioEndpoint{
				Addresses:       []string{ip},
				EndpointPort:    uint32(target),
				ServicePortName: mp.Name,
				Labels:          labels,
				Namespace:       svc.Namespace,
			},
		})
	}
	return out
}
