package xdscheck

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/pilot/pkg/networking/core"
	"istio.io/istio/pkg/config/mesh"
)

// Every spelling of a limited path (issue 62): for each of Istio's meshConfig.pathNormalization
// settings, the shop gateway Istio's generator produces. Its HTTP connection manager must normalize
// as the gateway model assumes (gateway-model/model.ts PathNormalization, written from Istio's
// listener_builder.go), and every spelling of /login that setting passes on must send the
// login-per-client rule's descriptor from the GENERATED rate_limits (the rule of render-user.ts:
// exact /login per client), while other paths must not.
//
// The normalization below is written from Envoy's source (docs/security.md has the links): escaped
// slashes decoded first (UNESCAPE_AND_FORWARD), then, with normalize_path, dot segments' `;`
// parameters dropped, backslashes made slashes, %2E read as a dot and dot segments resolved (every
// other escape, letter case and `;` kept), then merge_slashes.

type pathSetting struct {
	name      string
	setting   meshconfig.MeshConfig_ProxyPathNormalization_NormalizationType
	normalize bool
	merge     bool
	unescape  bool
}

var pathSettings = []pathSetting{
	{"NONE", meshconfig.MeshConfig_ProxyPathNormalization_NONE, false, false, false},
	{"BASE", meshconfig.MeshConfig_ProxyPathNormalization_BASE, true, false, false},
	{"MERGE_SLASHES", meshconfig.MeshConfig_ProxyPathNormalization_MERGE_SLASHES, true, true, false},
	{"DECODE_AND_MERGE_SLASHES", meshconfig.MeshConfig_ProxyPathNormalization_DECODE_AND_MERGE_SLASHES, true, true, true},
}

// loginSpellings: spellings of /login some common backend routes to the login handler.
var loginSpellings = []string{
	"/login", "/login?next=/x", "/login/", "/LOGIN", "/Login", "/login;jsessionid=x", "//login", "/logi%6E", "/logi%6e",
	"/login%2e", "/login.", "/login.json", "/login//", "/LOGIN/;a=b", "/%6C%6F%67%69%6E", "/login%2F",
}

// notLogin: paths no backend takes for /login.
var notLogin = []string{"/logout", "/loginx", "/logins", "/x/login", "/login/x", "/logi", "/logi%6Ex", "/x?r=/login"}

var dotSegment = regexp.MustCompile(`^\.\.?;`)

// envoyNormalizedPath: `:path` as the connection manager h leaves it.
func envoyNormalizedPath(h *hcmv3.HttpConnectionManager, p string) string {
	path, query := p, ""
	if i := strings.IndexByte(p, '?'); i >= 0 {
		path, query = p[:i], p[i:]
	}
	if h.GetPathWithEscapedSlashesAction() == hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD {
		path = strings.NewReplacer("%2F", "/", "%2f", "/", "%5C", `\`, "%5c", `\`).Replace(path)
	}
	if h.GetNormalizePath().GetValue() {
		segs := strings.Split(strings.NewReplacer(`\`, "/", "%2E", ".", "%2e", ".").Replace(path), "/")
		var out []string
		for i, s := range segs {
			if i == 0 && s == "" {
				continue
			}
			if m := dotSegment.FindString(s); m != "" {
				s = m[:len(m)-1]
			}
			last := i == len(segs)-1
			switch s {
			case ".":
			case "..":
				if len(out) > 0 {
					out = out[:len(out)-1]
				}
			default:
				out = append(out, s)
				continue
			}
			if last {
				out = append(out, "")
			}
		}
		path = "/" + strings.Join(out, "/")
	}
	if h.GetMergeSlashes() {
		for strings.Contains(path, "//") {
			path = strings.ReplaceAll(path, "//", "/")
		}
	}
	return path + query
}

// shopGatewayWith: the shop gateway's listeners and routes as Istio generates them under setting.
func shopGatewayWith(t *testing.T, docs []Doc, s pathSetting) ([]*listenerv3.Listener, []*routev3.RouteConfiguration) {
	t.Helper()
	text, services, err := istioAndServices(docs, 1)
	if err != nil {
		t.Fatalf("FAILED: input: %v", err)
	}
	mc := mesh.DefaultMeshConfig()
	mc.PathNormalization = &meshconfig.MeshConfig_ProxyPathNormalization{Normalization: s.setting}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services, MeshConfig: mc})
	_, ls, rcs := gatewayProxy(cg, "shop-gateway-0.shop", userNamespace, "10.244.2.1", userGatewayLabels)
	return ls, rcs
}

// shopHCM: the connection manager of the shop gateway's port-80 listener.
func shopHCM(ls []*listenerv3.Listener) *hcmv3.HttpConnectionManager {
	if l := findListener(ls, fmt.Sprintf("0.0.0.0_%d", userPort)); l != nil {
		for _, fc := range l.FilterChains {
			if h := hcmOf(fc); h != nil {
				return h
			}
		}
	}
	return nil
}

// loginSpellingProblems: each request that sends login-per-client's descriptor when it must not, or not when it must.
func loginSpellingProblems(h *hcmv3.HttpConnectionManager, vh *routev3.VirtualHost) []string {
	var problems []string
	check := func(p string, want bool) {
		n := envoyNormalizedPath(h, p)
		_, got, err := userDescriptors(vh, userRequest{path: n, addr: clientA})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
			return
		}
		sent := false
		for _, d := range got {
			sent = sent || d == loginPerClient(clientA)
		}
		if sent != want {
			problems = append(problems, fmt.Sprintf("%s (normalized %s): login-per-client sent %v, want %v", p, n, sent, want))
		}
	}
	for _, p := range loginSpellings {
		check(p, true)
	}
	for _, p := range notLogin {
		check(p, false)
	}
	return problems
}

// TestPathSpellings: under each pathNormalization setting, the generated connection manager's
// normalization and every spelling of /login through it and the generated rate_limits.
func TestPathSpellings(t *testing.T) {
	docs := userDocs(t)
	for _, s := range pathSettings {
		s := s
		t.Run(s.name, func(t *testing.T) {
			ls, rcs := shopGatewayWith(t, docs, s)
			h := shopHCM(ls)
			if h == nil {
				t.Fatalf("FAILED: %s: no HTTP connection manager on the shop gateway's listener", s.name)
			}
			unescape := h.GetPathWithEscapedSlashesAction() == hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD
			if h.GetNormalizePath().GetValue() != s.normalize || h.GetMergeSlashes() != s.merge || unescape != s.unescape {
				t.Errorf("FAILED: %s: normalize_path %v, merge_slashes %v, path_with_escaped_slashes_action %v; the model assumes normalize %v, merge %v, unescape %v",
					s.name, h.GetNormalizePath().GetValue(), h.GetMergeSlashes(), h.GetPathWithEscapedSlashesAction(), s.normalize, s.merge, s.unescape)
			}
			vh := findVhost(rcs, fmt.Sprintf("http.%d", userPort), userVhost)
			if vh == nil {
				t.Fatalf("FAILED: %s: no virtual host %s", s.name, userVhost)
			}
			for _, p := range loginSpellingProblems(h, vh) {
				t.Errorf("FAILED: %s: %s", s.name, p)
			}
		})
	}
}

// TestPathSpellingsControl: the check fails on the matcher of one spelling (the regex the rule had
// before it counted every spelling), naming a spelling that gets through.
func TestPathSpellingsControl(t *testing.T) {
	docs := Clone(userDocs(t))
	f := Find(docs, "EnvoyFilter", userNamespace, "filter-ratelimit-svc")
	if f == nil {
		t.Fatalf("FAILED: no EnvoyFilter filter-ratelimit-svc in the render")
	}
	if err := setRuleRegex("login-per-client", `(?:/login)(?:\?.*)?`)(f); err != nil {
		t.Fatalf("FAILED: %v", err)
	}
	ls, rcs := shopGatewayWith(t, docs, pathSettings[1])
	problems := loginSpellingProblems(shopHCM(ls), findVhost(rcs, fmt.Sprintf("http.%d", userPort), userVhost))
	if !strings.Contains(strings.Join(problems, "; "), "/LOGIN (normalized /LOGIN): login-per-client sent false, want true") {
		t.Errorf("FAILED: control: the one-spelling matcher was not caught for /LOGIN; problems: %v", problems)
	}
}

// spellingLabel names a `:path` matcher by what it does: `spellings(/login)` when it matches the
// spellings of the exact path /login and not its neighbours, `spellings(/search*)` the same for a
// prefix (and what follows a slash); "" for any other matcher. The action-string checks use it:
// the request checks say what each spelling sends.
func spellingLabel(re string) string {
	encodeLast := func(p string) string { return fmt.Sprintf("%s%%%02X", p[:len(p)-1], p[len(p)-1]) }
	all := func(ps []string, want bool) bool {
		for _, p := range ps {
			if ok, err := re2FullMatch(re, p); err != nil || ok != want {
				return false
			}
		}
		return true
	}
	for _, p := range []string{"/login"} {
		yes := []string{p, strings.ToUpper(p), p + "/", p + ";x=1", "/" + p, encodeLast(p), p + ".", p + "?q=1"}
		if all(yes, true) && all([]string{p + "x", "/x" + p, p + "/x"}, false) {
			return "spellings(" + p + ")"
		}
	}
	for _, p := range []string{"/search", "/api"} {
		yes := []string{p, strings.ToUpper(p) + "/x", "/" + p + "//x", p + ";v=1/x", p + "?q=1", encodeLast(p) + "/x"}
		if all(yes, true) && all([]string{p + "x", "/x" + p}, false) {
			return "spellings(" + p + "*)"
		}
	}
	return ""
}
