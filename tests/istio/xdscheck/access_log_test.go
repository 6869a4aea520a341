package xdscheck

import (
	"os"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	filev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"istio.io/istio/pilot/pkg/networking/core"
)

// GlobalRateLimit's accessLog (tests/istio/render-access-log.ts): the shop's gateway pods get a file
// access log in the JSON format replay reads, the rules' headers in it and the secret one
// (authorization) not; another gateway's pods in the same namespace get none. Expected values are
// the fields replay reads (docs/explain-and-replay.md), written here, not read from the render.
//
//	XDSCHECK_ACCESS_LOG_DIR  directory with the setup's all.yaml
//	XDSCHECK_ACCESS_LOG_DROP  when set, the access-log EnvoyFilter is removed first (negative control)
//	XDSCHECK_ACCESS_LOG_WIDEN when set, its workload selector is removed first (negative control:
//	                          then every pod of the namespace gets the log)

// replayLogs: the JSON formats of the file access logs on the HTTP connection managers of the listeners, as text.
func replayLogs(t *testing.T, ls []*listenerv3.Listener) []string {
	t.Helper()
	var out []string
	for _, l := range ls {
		for _, fc := range l.GetFilterChains() {
			h := hcmOf(fc)
			if h == nil {
				continue
			}
			for _, al := range h.GetAccessLog() {
				f := &filev3.FileAccessLog{}
				if al.GetTypedConfig().UnmarshalTo(f) != nil || f.GetLogFormat().GetJsonFormat() == nil {
					continue
				}
				b, _ := protojson.Marshal(f.GetLogFormat().GetJsonFormat())
				out = append(out, l.GetName()+" "+f.GetPath()+" "+string(b))
			}
		}
	}
	return out
}

func accessLogDocs(t *testing.T) []Doc {
	dir := os.Getenv("XDSCHECK_ACCESS_LOG_DIR")
	if dir == "" {
		t.Skip("XDSCHECK_ACCESS_LOG_DIR not set (run tests/istio/run.sh)")
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("XDSCHECK_ACCESS_LOG_WIDEN") != "" {
		for _, d := range docs {
			if d.Kind() == "EnvoyFilter" && strings.HasSuffix(d.Name(), "-access-log") {
				delete(d["spec"].(map[string]any), "workloadSelector")
			}
		}
	}
	if os.Getenv("XDSCHECK_ACCESS_LOG_DROP") != "" {
		var kept []Doc
		for _, d := range docs {
			if !(d.Kind() == "EnvoyFilter" && strings.HasSuffix(d.Name(), "-access-log")) {
				kept = append(kept, d)
			}
		}
		docs = kept
	}
	return docs
}

// TestAccessLog: where the access log lands in what Istio generates.
func TestAccessLog(t *testing.T) {
	docs := accessLogDocs(t)
	text, services, err := istioAndServices(docs, 3)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	_, shop, _ := gatewayProxy(cg, "shop-gateway-0.shop", "shop", "10.244.3.1", map[string]string{"app": "shop-gateway"})
	_, other, _ := gatewayProxy(cg, "other-gateway-0.shop", "shop", "10.244.3.2", map[string]string{"app": "other-gateway"})
	t.Run("shop-gateway-has-replay-log", func(t *testing.T) {
		logs := replayLogs(t, shop)
		if len(logs) != 1 {
			t.Fatalf("FAILED: shop-gateway-has-replay-log: want one replay access log on the shop gateway, found %d: %v", len(logs), logs)
		}
		for _, want := range []string{"0.0.0.0_80 /dev/stdout ", `"%START_TIME%"`, `"%REQ(:METHOD)%"`, `"%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%"`, `"%REQ(:AUTHORITY)%"`, `"%DOWNSTREAM_REMOTE_ADDRESS%"`, `"%REQ(X-API-KEY)%"`} {
			if !strings.Contains(logs[0], want) {
				t.Errorf("FAILED: shop-gateway-has-replay-log: the access log lacks %s: %s", want, logs[0])
			}
		}
		if strings.Contains(logs[0], "AUTHORIZATION") {
			t.Errorf("FAILED: shop-gateway-has-replay-log: the secret header is logged: %s", logs[0])
		}
	})
	t.Run("other-gateway-has-none", func(t *testing.T) {
		if len(other) == 0 {
			t.Fatalf("FAILED: other-gateway-has-none: the other gateway has no listener: the check would be empty")
		}
		if logs := replayLogs(t, other); len(logs) != 0 {
			t.Errorf("FAILED: other-gateway-has-none: the access log reaches another gateway's pods: %v", logs)
		}
	})
}
