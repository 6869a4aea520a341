package xdscheck

import (
	"fmt"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"istio.io/istio/pilot/pkg/networking/core"
	"istio.io/istio/pkg/test"
)

// Many teams, one gateway (issue 26), on Istio's generated configuration. Team A and team B are
// two separate programs (tests/istio/render-many-teams.ts renders each in its own Pulumi mock
// run), each with its Gateway, VirtualService and GlobalRateLimit for its own host on the shared
// ingress gateway (istio=ingressgateway, port 8080); team C is a hand-written EnvoyFilter (below)
// with route-level rate_limits on its own host. All three virtual hosts sit in one route
// configuration (http.8080) of one listener (0.0.0.0_8080).
//
// What a filter reads is derived from the generated configuration as Envoy reads it:
//   - rate-limit filter (envoy.extensions.filters.http.ratelimit.v3.RateLimit) named N, stage S: on
//     a route, the most specific typed_per_filter_config[N] (route, else virtual host); when that
//     RateLimitPerRoute has rate_limits, those (under its domain when set) and nothing else; else
//     the route's rate_limits of stage S, plus the virtual host's of stage S unless vh_rate_limits
//     says IGNORE, or OVERRIDE (the default) while the route has rate_limits of its own;
//   - local rate-limit filter named N: on a route, the most specific typed_per_filter_config[N]
//     replaces the listener's config; the filter acts only where that config's filter_enabled is
//     above 0 % (Envoy's default for an absent filter_enabled is 0 %).
const (
	mtPort        = 8080
	mtRouteConfig = "http.8080"
	mtListener    = "0.0.0.0_8080"
	mtCHost       = "c.example.com"
	mtCCluster    = "outbound|8081||rls.team-c.svc.cluster.local"
	mtCFilter     = FilterRateLimit + "/team-c"
)

var mtGatewayLabels = map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"}

// mtTeamCYAML: team C's own Gateway and VirtualService, and its hand-written filter: its own HTTP
// filter name, stage 0 (the field's default), fail closed, route-level rate_limits on its own host.
const mtTeamCYAML = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: c-gateway, namespace: team-c}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 8080, name: http, protocol: HTTP}
    hosts: [c.example.com]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: c, namespace: team-c}
spec:
  hosts: [c.example.com]
  gateways: [team-c/c-gateway]
  http:
  - name: web
    route:
    - destination: {host: web.team-c.svc.cluster.local, port: {number: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-c}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8000}]
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: team-c-ratelimit, namespace: istio-system}
spec:
  workloadSelector:
    labels: {istio: ingressgateway}
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: GATEWAY
      listener:
        portNumber: 8080
        filterChain:
          filter:
            name: envoy.filters.network.http_connection_manager
            subFilter: {name: envoy.filters.http.router}
    patch:
      operation: INSERT_BEFORE
      value:
        name: envoy.filters.http.ratelimit/team-c
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
          domain: c
          failure_mode_deny: true
          rate_limit_service:
            grpc_service: {envoy_grpc: {cluster_name: "outbound|8081||rls.team-c.svc.cluster.local"}}
            transport_api_version: V3
  - applyTo: HTTP_ROUTE
    match:
      context: GATEWAY
      routeConfiguration:
        vhost:
          name: c.example.com:8080
          route: {name: web}
    patch:
      operation: MERGE
      value:
        route:
          rate_limits:
          - actions:
            - generic_key: {descriptor_key: team, descriptor_value: team-c}
`

// mtTeam: one team as the check sees it.
type mtTeam struct {
	ID      string // a, b, c
	Host    string // a.example.com
	Vhost   string // a.example.com:8080
	Cluster string // its rate-limit service's cluster
	Docs    []Doc  // its program's objects (team C: the hand-written ones)
	// The HTTP filter names its EnvoyFilters insert (from its objects), global and local.
	Global, Local string
}

func newTeam(id string, docs []Doc) mtTeam {
	t := mtTeam{ID: id, Host: id + ".example.com", Docs: docs}
	t.Vhost = fmt.Sprintf("%s:%d", t.Host, mtPort)
	t.Cluster = fmt.Sprintf("outbound|8081||ratelimit.team-%s.svc.cluster.local", id)
	if id == "c" {
		t.Cluster = mtCCluster
	}
	for _, d := range docs {
		if d.Kind() != "EnvoyFilter" {
			continue
		}
		for _, p := range Patches(d) {
			if p["applyTo"] != "HTTP_FILTER" {
				continue
			}
			name, _ := Dig(p, "patch", "value", "name").(string)
			switch {
			case strings.HasPrefix(name, FilterLocalRateLimit):
				t.Local = name
			case strings.HasPrefix(name, FilterRateLimit):
				t.Global = name
			}
		}
	}
	return t
}

// MTInput: the three teams of one layout, and the EnvoyFilter names the programs collided on.
type MTInput struct {
	Layout     string
	A, B, C    mtTeam
	Collisions []string // "EnvoyFilter istio-system/filter-ratelimit" rendered by both A and B
	Renamed    []string // what the generator got instead (B's copy under another name)
}

// NewMTInput: A's and B's renders plus team C's objects. Two programs that render an object of the
// same kind, namespace and name cannot both have it in a cluster (the second `pulumi up` fails on
// it or takes it over): those collisions are recorded, and B's copy is handed to the generator
// under the name "<name>-team-b", so the listener shows what both filters would do side by side.
func NewMTInput(layout string, a, b []Doc) (*MTInput, error) {
	c, err := ParseYAML([]byte(mtTeamCYAML))
	if err != nil {
		return nil, err
	}
	in := &MTInput{Layout: layout, A: newTeam("a", a), C: newTeam("c", c)}
	seen := map[string]bool{}
	for _, d := range append(Clone(a), c...) {
		seen[d.Ref()] = true
	}
	bb := Clone(b)
	for _, d := range bb {
		if d.Kind() == "EnvoyFilter" && seen[d.Ref()] {
			in.Collisions = append(in.Collisions, d.Ref())
			d.meta()["name"] = d.Name() + "-team-b"
			in.Renamed = append(in.Renamed, d.Ref())
		}
	}
	in.B = newTeam("b", bb)
	return in, nil
}

// MTGenerated: the shared gateway's listener and route configuration.
type MTGenerated struct {
	In        *MTInput
	Listeners []*listenerv3.Listener
	Routes    []*routev3.RouteConfiguration
}

// GenerateManyTeams runs Istio's generator for the shared gateway pod (istio-system, labels
// istio=ingressgateway, app=istio-ingressgateway).
func GenerateManyTeams(t test.Failer, in *MTInput) (*MTGenerated, error) {
	var all []Doc
	all = append(all, in.A.Docs...)
	all = append(all, in.B.Docs...)
	all = append(all, in.C.Docs...)
	text, services, err := istioAndServices(all, 3)
	if err != nil {
		return nil, err
	}
	cg := core.NewConfigGenTest(t, core.TestOptions{ConfigString: text, Services: services})
	_, ls, rcs := gatewayProxy(cg, "istio-ingressgateway-0.istio-system", IstioSystem, "10.244.3.1", mtGatewayLabels)
	return &MTGenerated{In: in, Listeners: ls, Routes: rcs}, nil
}

// mtFilter: one rate-limit or local rate-limit HTTP filter of the listener.
type mtFilter struct {
	Name            string
	Local           bool
	Stage           uint32
	Domain, Cluster string // rate-limit filter
	LocalEnabled    bool   // local filter: the listener-level config enables it
}

func (f mtFilter) String() string {
	if f.Local {
		return fmt.Sprintf("%s (local, listener-level enabled %v)", f.Name, f.LocalEnabled)
	}
	return fmt.Sprintf("%s (domain %q, stage %d, %s)", f.Name, f.Domain, f.Stage, f.Cluster)
}

// mtFilters: the HTTP filters of the listener's HTTP chain, and every HTTP filter name in order.
func mtFilters(ls []*listenerv3.Listener) ([]mtFilter, []string, string) {
	l := findListener(ls, mtListener)
	if l == nil {
		return nil, nil, fmt.Sprintf("no listener %s; have %v", mtListener, listenerNames(ls))
	}
	for _, fc := range l.FilterChains {
		h := hcmOf(fc)
		if h == nil {
			continue
		}
		var out []mtFilter
		for _, f := range h.HttpFilters {
			switch {
			case strings.HasPrefix(f.Name, FilterLocalRateLimit):
				lc, err := decodeLocalRateLimit(f.GetTypedConfig())
				if err != nil {
					return nil, nil, fmt.Sprintf("HTTP filter %s: %v", f.Name, err)
				}
				out = append(out, mtFilter{Name: f.Name, Local: true, Stage: lc.GetStage(), LocalEnabled: lc.GetFilterEnabled().GetDefaultValue().GetNumerator() > 0})
			case strings.HasPrefix(f.Name, FilterRateLimit):
				rl := &rlv3.RateLimit{}
				if err := f.GetTypedConfig().UnmarshalTo(rl); err != nil {
					return nil, nil, fmt.Sprintf("HTTP filter %s: %v", f.Name, err)
				}
				out = append(out, mtFilter{Name: f.Name, Stage: rl.Stage, Domain: rl.Domain,
					Cluster: rl.GetRateLimitService().GetGrpcService().GetEnvoyGrpc().GetClusterName()})
			}
		}
		return out, httpFilterNames(h), ""
	}
	return nil, nil, "no HTTP connection manager on " + mtListener
}

// descriptorText: a rate_limits entry as the descriptor it produces ("rule=everything").
func descriptorText(rl *routev3.RateLimit) string {
	var parts []string
	for _, a := range rl.Actions {
		if g := a.GetGenericKey(); g != nil {
			k := g.GetDescriptorKey()
			if k == "" {
				k = "generic_key"
			}
			parts = append(parts, k+"="+g.GetDescriptorValue())
		} else {
			parts = append(parts, jsonOf(a))
		}
	}
	return strings.Join(parts, "/")
}

func perFilter(vh *routev3.VirtualHost, r *routev3.Route, name string) *anypb.Any {
	if a, ok := r.GetTypedPerFilterConfig()[name]; ok {
		return a
	}
	return vh.GetTypedPerFilterConfig()[name]
}

// reads: what the filter does on one route of a virtual host: the descriptors it sends (rate-limit
// filter, prefixed with the domain they go under) or where it acts (local filter); nil when nothing.
func (f mtFilter) reads(vh *routev3.VirtualHost, r *routev3.Route) []string {
	a := perFilter(vh, r, f.Name)
	if f.Local {
		enabled := f.LocalEnabled
		if a != nil {
			lc, err := decodeLocalRateLimit(a)
			if err != nil {
				return []string{"unreadable per-route config: " + err.Error()}
			}
			enabled = lc.GetFilterEnabled().GetDefaultValue().GetNumerator() > 0
		}
		if !enabled {
			return nil
		}
		return []string{fmt.Sprintf("%s acts on route %q of %s", f.Name, r.Name, vh.Name)}
	}
	domain := f.Domain
	vhMode := rlv3.RateLimitPerRoute_OVERRIDE
	var rls []*routev3.RateLimit
	if a != nil {
		pr := &rlv3.RateLimitPerRoute{}
		if err := a.UnmarshalTo(pr); err != nil {
			return []string{"unreadable per-route config: " + err.Error()}
		}
		if pr.GetDomain() != "" {
			domain = pr.GetDomain()
		}
		vhMode = pr.GetVhRateLimits()
		rls = pr.GetRateLimits()
	}
	if len(rls) == 0 {
		rls = stageRateLimits(vh, r, f.Stage, vhMode)
	}
	var out []string
	for _, rl := range rls {
		out = append(out, fmt.Sprintf("route %q: %s to %s (domain %q)", r.Name, descriptorText(rl), f.Cluster, domain))
	}
	return out
}

// stageRateLimits: the rate_limits a filter of `stage` reads when no per-route config gives its own:
// the route's entries of that stage, then the virtual host's as vhMode says (OVERRIDE: only when the
// route has none; INCLUDE: always).
func stageRateLimits(vh *routev3.VirtualHost, r *routev3.Route, stage uint32, vhMode rlv3.RateLimitPerRoute_VhRateLimitsOptions) []*routev3.RateLimit {
	var rls []*routev3.RateLimit
	own := r.GetRoute().GetRateLimits()
	for _, rl := range own {
		if rl.GetStage().GetValue() == stage {
			rls = append(rls, rl)
		}
	}
	if vhMode == rlv3.RateLimitPerRoute_INCLUDE || (vhMode == rlv3.RateLimitPerRoute_OVERRIDE && len(own) == 0) {
		for _, rl := range vh.RateLimits {
			if rl.GetStage().GetValue() == stage {
				rls = append(rls, rl)
			}
		}
	}
	return rls
}

// readsOnVhost: what the filter does on every route of the virtual host.
func (f mtFilter) readsOnVhost(vh *routev3.VirtualHost) []string {
	var out []string
	for _, r := range vh.Routes {
		out = append(out, f.reads(vh, r)...)
	}
	return out
}

// ---------------------------------------------------------------- findings

// Many-teams finding IDs.
const (
	MTNames    = "filter-names-unique"
	MTBForA    = "b-vhost-no-descriptor-for-a"
	MTAForB    = "a-vhost-no-descriptor-for-b"
	MTTeamC    = "c-hand-written-own-host-only"
	MTPreLimit = "pre-limit-own-hosts-only"
)

// team's filters on the listener: its rate-limit filter (by its service's cluster: a shared name
// cannot tell the filters apart) and every local filter carrying its local filter's name.
func (g *MTGenerated) teamFilters(fs []mtFilter, t mtTeam) (global *mtFilter, locals []mtFilter) {
	for i := range fs {
		f := fs[i]
		if !f.Local && f.Cluster == t.Cluster && global == nil {
			global = &fs[i]
		}
		if f.Local && t.Local != "" && f.Name == t.Local {
			locals = append(locals, f)
		}
	}
	return global, locals
}

// ManyTeamsFindings evaluates the five expectations on the generated listener and routes.
func ManyTeamsFindings(g *MTGenerated) []Finding {
	var fs findings
	in := g.In
	filters, names, problem := mtFilters(g.Listeners)
	teams := []mtTeam{in.A, in.B, in.C}
	vhosts := map[string]*routev3.VirtualHost{}
	var missing []string
	for _, t := range teams {
		vh := findVhost(g.Routes, mtRouteConfig, t.Vhost)
		if vh == nil {
			missing = append(missing, t.Vhost)
		}
		vhosts[t.ID] = vh
	}
	if problem == "" && len(missing) > 0 {
		problem = fmt.Sprintf("virtual host(s) %v absent from %s; route configs: %s", missing, mtRouteConfig, strings.Join(routeConfigSummary(g.Routes), " "))
	}
	efs := func(t mtTeam) string {
		var out []string
		for _, d := range t.Docs {
			if d.Kind() == "EnvoyFilter" {
				out = append(out, d.Ref())
			}
		}
		return strings.Join(out, ", ")
	}
	if problem != "" {
		for _, id := range []string{MTNames, MTBForA, MTAForB, MTTeamC, MTPreLimit} {
			fs.add(id, "input", "a listener and three virtual hosts to check", problem)
		}
		return fs.list
	}

	// 1. Names: no EnvoyFilter object rendered by both programs; every HTTP filter name of the
	// listener once; each team's rate-limit filter present, with its own domain and service.
	exp := fmt.Sprintf("A's, B's and C's EnvoyFilters named apart; every HTTP filter on %s named once; A's, B's and C's rate-limit filters each on it once, calling its own service", mtListener)
	var probs []string
	if len(in.Collisions) > 0 {
		probs = append(probs, fmt.Sprintf("both programs render %v (B's copy given to the generator as %v)", in.Collisions, in.Renamed))
	}
	count := map[string]int{}
	for _, n := range names {
		count[n]++
	}
	for _, n := range sortedKeys(count) {
		if count[n] > 1 {
			probs = append(probs, fmt.Sprintf("HTTP filter %s %d times on %s", n, count[n], mtListener))
		}
	}
	var seenRL []string
	for _, t := range teams {
		gf, _ := g.teamFilters(filters, t)
		if gf == nil {
			probs = append(probs, fmt.Sprintf("no rate-limit filter calling %s (team %s)", t.Cluster, t.ID))
			continue
		}
		seenRL = append(seenRL, gf.String())
	}
	if len(probs) == 0 {
		exp += fmt.Sprintf(": HTTP filters %v; rate-limit filters %s", names, strings.Join(seenRL, "; "))
	}
	fs.add(MTNames, efs(in.A)+"; "+efs(in.B), exp, strings.Join(probs, "; "))

	// 2./3. Each team's virtual host: its own rate-limit filter reads its descriptors there, the
	// other team's rate-limit and local filters read nothing there.
	cross := func(id string, own, other mtTeam) {
		vh := vhosts[own.ID]
		exp := fmt.Sprintf("on %s's virtual host %s (%s), team %s's filters (rate-limit filter calling %s, local filter %s) find no descriptor and no per-route config; %s's own rate-limit filter sends its descriptors to its own service", strings.ToUpper(own.ID), own.Vhost, mtRouteConfig, strings.ToUpper(other.ID), other.Cluster, other.Local, strings.ToUpper(own.ID))
		var probs []string
		og, ol := g.teamFilters(filters, other)
		if og != nil {
			for _, w := range og.readsOnVhost(vh) {
				probs = append(probs, fmt.Sprintf("%s's rate-limit filter %s sends %s", strings.ToUpper(other.ID), og.Name, w))
			}
		}
		for _, l := range ol {
			for _, w := range l.readsOnVhost(vh) {
				probs = append(probs, fmt.Sprintf("%s's local filter: %s", strings.ToUpper(other.ID), w))
			}
		}
		mg, _ := g.teamFilters(filters, own)
		var ownReads []string
		if mg != nil {
			ownReads = mg.readsOnVhost(vh)
		}
		if len(ownReads) == 0 {
			probs = append(probs, fmt.Sprintf("%s's own rate-limit filter sends nothing on %s (nothing would be limited; the check would pass vacuously)", strings.ToUpper(own.ID), own.Vhost))
		}
		if len(probs) == 0 {
			exp += ": " + strings.Join(ownReads, "; ")
		}
		fs.add(id, efs(own)+"; "+efs(other), exp, strings.Join(mtUnique(probs), "; "))
	}
	cross(MTBForA, in.B, in.A)
	cross(MTAForB, in.A, in.B)

	// 4. Team C's hand-written filter: its route-level rate_limits (stage 0) on its own host are
	// read by its filter only; it reads nothing on A's and B's hosts; A's and B's read nothing on C's.
	exp = fmt.Sprintf("team C's hand-written filter %s (stage 0, route-level rate_limits) sends its descriptors on %s only; on A's and B's virtual hosts it finds none; A's and B's rate-limit filters find none on %s", mtCFilter, in.C.Vhost, in.C.Vhost)
	probs = nil
	cg, _ := g.teamFilters(filters, in.C)
	var cReads []string
	if cg != nil {
		cReads = cg.readsOnVhost(vhosts["c"])
		for _, t := range []mtTeam{in.A, in.B} {
			for _, w := range cg.readsOnVhost(vhosts[t.ID]) {
				probs = append(probs, fmt.Sprintf("on %s C's filter sends %s", t.Vhost, w))
			}
		}
	}
	if len(cReads) == 0 {
		probs = append(probs, fmt.Sprintf("C's filter sends nothing on its own %s", in.C.Vhost))
	}
	for _, t := range []mtTeam{in.A, in.B} {
		if tg, _ := g.teamFilters(filters, t); tg != nil {
			for _, w := range tg.readsOnVhost(vhosts["c"]) {
				probs = append(probs, fmt.Sprintf("%s's rate-limit filter %s sends %s", strings.ToUpper(t.ID), tg.Name, w))
			}
		}
	}
	if len(probs) == 0 {
		exp += ": " + strings.Join(cReads, "; ")
	}
	fs.add(MTTeamC, "EnvoyFilter istio-system/team-c-ratelimit (hand-written); "+efs(in.A)+"; "+efs(in.B), exp, strings.Join(probs, "; "))

	// 5. Each pre-limit acts on its own team's virtual host only.
	exp = fmt.Sprintf("A's local filter %s acts on %s only and B's %s on %s only (not enabled at listener level, enabled by per-route config under its own name)", in.A.Local, in.A.Vhost, in.B.Local, in.B.Vhost)
	probs = nil
	var where []string
	for _, t := range []mtTeam{in.A, in.B} {
		_, ls := g.teamFilters(filters, t)
		if len(ls) == 0 {
			probs = append(probs, fmt.Sprintf("no local filter %q on %s", t.Local, mtListener))
		}
		acted := map[string]bool{}
		for _, l := range ls {
			if l.LocalEnabled {
				probs = append(probs, fmt.Sprintf("%s is enabled at listener level (acts on every virtual host)", l.Name))
			}
			for _, u := range teams {
				if len(l.readsOnVhost(vhosts[u.ID])) > 0 {
					acted[u.Vhost] = true
				}
			}
		}
		var on []string
		for _, v := range sortedKeys(acted) {
			on = append(on, v)
			if v != t.Vhost {
				probs = append(probs, fmt.Sprintf("%s's local filter %s acts on %s", strings.ToUpper(t.ID), t.Local, v))
			}
		}
		if !acted[t.Vhost] {
			probs = append(probs, fmt.Sprintf("%s's local filter %s does not act on its own %s", strings.ToUpper(t.ID), t.Local, t.Vhost))
		}
		where = append(where, fmt.Sprintf("%s on %v", t.Local, on))
	}
	if len(probs) == 0 {
		exp += ": " + strings.Join(where, ", ")
	}
	fs.add(MTPreLimit, efs(in.A)+"; "+efs(in.B), exp, strings.Join(probs, "; "))
	return fs.list
}

// mtUnique: the strings in their first order, each once (two filters of one shared name act alike).
func mtUnique(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
