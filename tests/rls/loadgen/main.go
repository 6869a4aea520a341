// rls-loadgen: a lean closed-loop load generator for the rate-limit benchmark (npm run bench:rls).
//
// Mode "grpc" calls envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit; mode "redis"
// sends the raw-Redis baseline (one pipelined INCRBY+EXPIRE pair per decision). C workers share
// -conns connections (HTTP/2 streams multiplexed for gRPC, pipelined for Redis); each worker sends
// its next request when the previous one is answered. After -warmup, requests completed during
// -duration are counted. Prints one JSON object on stdout, including the process's own CPU time
// (getrusage) over the measured window, so the client's CPU per decision can be reported.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

type entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// workload is the file format of -workload: requests[i] is the descriptor list of request i,
// each descriptor a list of entries (what bench.ts derives from the gateway model).
type workload struct {
	Domain   string      `json:"domain"`
	Requests [][][]entry `json:"requests"`
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type outcome int

const (
	okCode outcome = iota
	overLimit
	failed
)

// caller makes request i on connection conn; it must be safe for concurrent use.
type caller func(ctx context.Context, conn, i int) (outcome, error)

type result struct {
	Mode               string  `json:"mode"`
	Target             string  `json:"target"`
	Concurrency        int     `json:"concurrency"`
	Conns              int     `json:"conns"`
	GOMAXPROCS         int     `json:"gomaxprocs"`
	WarmupSeconds      float64 `json:"warmupSeconds"`
	Seconds            float64 `json:"seconds"`
	Requests           int64   `json:"requests"`
	TotalRequests      int64   `json:"totalRequests"`
	OK                 int64   `json:"ok"`
	OverLimit          int64   `json:"overLimit"`
	Errors             int64   `json:"errors"`
	FirstError         string  `json:"firstError,omitempty"`
	DecisionsPerSecond float64 `json:"decisionsPerSecond"`
	P50ms              float64 `json:"p50ms"`
	P90ms              float64 `json:"p90ms"`
	P99ms              float64 `json:"p99ms"`
	Maxms              float64 `json:"maxms"`
	Meanms             float64 `json:"meanms"`
	CPUUserSeconds     float64 `json:"cpuUserSeconds"`
	CPUSystemSeconds   float64 `json:"cpuSystemSeconds"`
	CPUUsPerDecision   float64 `json:"cpuUsPerDecision"`
	// Whole run, warm-up included (matches a CPU window taken around the process by the caller).
	CPUTotalSeconds float64 `json:"cpuTotalSeconds"`
}

func cpuNow() (user, sys float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime)
}

func percentile(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)))
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return float64(sorted[i]) / 1e6
}

// parseDesc reads one request from "k=v,k=v;k=v" (descriptors separated by ';', entries by ',').
func parseDesc(s string) ([][]entry, error) {
	var req [][]entry
	for _, d := range strings.Split(s, ";") {
		var ents []entry
		for _, kv := range strings.Split(d, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("-desc %q: entry %q is not key=value", s, kv)
			}
			ents = append(ents, entry{k, v})
		}
		req = append(req, ents)
	}
	return req, nil
}

func grpcCaller(target, domain string, reqs [][][]entry, conns int, hitsAddend uint, timeout time.Duration) (caller, func(), error) {
	msgs := make([]*rlsv3.RateLimitRequest, len(reqs))
	for i, r := range reqs {
		m := &rlsv3.RateLimitRequest{Domain: domain, HitsAddend: uint32(hitsAddend)}
		for _, d := range r {
			desc := &rlcommon.RateLimitDescriptor{}
			for _, e := range d {
				desc.Entries = append(desc.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: e.Key, Value: e.Value})
			}
			m.Descriptors = append(m.Descriptors, desc)
		}
		msgs[i] = m
	}
	ccs := make([]*grpc.ClientConn, conns)
	clients := make([]rlsv3.RateLimitServiceClient, conns)
	closeAll := func() {
		for _, cc := range ccs {
			if cc != nil {
				cc.Close()
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for k := range ccs {
		cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		ccs[k] = cc
		cc.Connect()
		for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
			if !cc.WaitForStateChange(ctx, s) {
				closeAll()
				return nil, nil, fmt.Errorf("connection %d to %s not ready within 10s (state %s)", k, target, s)
			}
		}
		clients[k] = rlsv3.NewRateLimitServiceClient(cc)
	}
	call := func(ctx context.Context, conn, i int) (outcome, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := clients[conn].ShouldRateLimit(cctx, msgs[i%len(msgs)])
		if err != nil {
			return failed, err
		}
		if res.OverallCode == rlsv3.RateLimitResponse_OVER_LIMIT {
			return overLimit, nil
		}
		return okCode, nil
	}
	return call, closeAll, nil
}

// redisConn pipelines requests from many workers over one connection: writers append under a
// lock and queue a reply slot; one reader goroutine answers the slots in order.
type redisConn struct {
	mu      sync.Mutex
	c       net.Conn
	w       *bufio.Writer
	pending chan chan error
}

func resp(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// readReply reads one simple/integer/error/bulk reply; it returns the error reply as an error.
func readReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return nil
	case '-':
		return errors.New(line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n >= 0 {
			_, err = r.Discard(n + 2)
		}
		return err
	}
	return fmt.Errorf("unexpected reply %q", line)
}

func dialRedis(addr, password string) (*redisConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	rc := &redisConn{c: c, w: bufio.NewWriter(c), pending: make(chan chan error, 1<<16)}
	r := bufio.NewReaderSize(c, 64<<10)
	if password != "" {
		if _, err := c.Write(resp("AUTH", password)); err != nil {
			c.Close()
			return nil, err
		}
		if err := readReply(r); err != nil {
			c.Close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	go func() {
		for slot := range rc.pending {
			e1 := readReply(r)
			e2 := readReply(r)
			slot <- errors.Join(e1, e2)
		}
	}()
	return rc, nil
}

// pair sends INCRBY key 1 and EXPIRE key 60 back to back and waits for both replies.
func (rc *redisConn) pair(key string) error {
	slot := make(chan error, 1)
	rc.mu.Lock()
	rc.w.Write(resp("INCRBY", key, "1"))
	rc.w.Write(resp("EXPIRE", key, "60"))
	err := rc.w.Flush()
	if err == nil {
		rc.pending <- slot
	}
	rc.mu.Unlock()
	if err != nil {
		return err
	}
	return <-slot
}

func redisCaller(addr, password string, conns int) (caller, func(), error) {
	rcs := make([]*redisConn, conns)
	closeAll := func() {
		for _, rc := range rcs {
			if rc != nil {
				rc.c.Close()
			}
		}
	}
	for k := range rcs {
		rc, err := dialRedis(addr, password)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		rcs[k] = rc
	}
	call := func(_ context.Context, conn, i int) (outcome, error) {
		// The key shape bench.ts's raw-Redis row uses: one of 90 catch-all paths, minute window.
		key := "bench_PATH_/static/asset-" + strconv.Itoa(i%90) + ".js_" + strconv.FormatInt(time.Now().Unix()/60*60, 10)
		if err := rcs[conn].pair(key); err != nil {
			return failed, err
		}
		return okCode, nil
	}
	return call, closeAll, nil
}

func main() {
	mode := flag.String("mode", "grpc", "grpc (RLS v3 ShouldRateLimit) or redis (raw INCRBY+EXPIRE pair per decision)")
	target := flag.String("target", "127.0.0.1:8081", "host:port of the service's gRPC listener (or of Redis with -mode redis)")
	domain := flag.String("domain", "", "rate-limit domain (overrides the workload file's)")
	concurrency := flag.Int("concurrency", 64, "closed-loop workers")
	conns := flag.Int("conns", 4, "connections shared by the workers")
	duration := flag.Duration("duration", 8*time.Second, "measured time")
	warmup := flag.Duration("warmup", time.Second, "time before measuring")
	wlFile := flag.String("workload", "", `JSON file {"domain": D, "requests": [[[{"key":K,"value":V},...],...],...]}: requests sent round-robin`)
	hitsAddend := flag.Uint("hits-addend", 0, "hits_addend of each request (0: the service counts 1)")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of each call")
	count := flag.Int64("count", 0, "stop after this many calls in all (0: run for -warmup plus -duration); with a workload of as many requests, each is sent once")
	var descs multiFlag
	flag.Var(&descs, "desc", `one request, repeatable, round-robin: "k=v,k=v;k=v" (';' separates descriptors); e.g. -desc PATH=/productpage`)
	flag.Parse()
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "rls-loadgen: "+format+"\n", a...)
		os.Exit(2)
	}
	if *concurrency < 1 || *conns < 1 {
		fail("-concurrency and -conns must be >= 1")
	}

	var call caller
	var closeAll func()
	var err error
	switch *mode {
	case "grpc":
		var wl workload
		if *wlFile != "" {
			b, err := os.ReadFile(*wlFile)
			if err != nil {
				fail("%v", err)
			}
			if err := json.Unmarshal(b, &wl); err != nil {
				fail("%s: %v", *wlFile, err)
			}
		}
		for _, d := range descs {
			r, err := parseDesc(d)
			if err != nil {
				fail("%v", err)
			}
			wl.Requests = append(wl.Requests, r)
		}
		if *domain != "" {
			wl.Domain = *domain
		}
		if wl.Domain == "" || len(wl.Requests) == 0 {
			fail("grpc mode needs a domain and at least one request (-workload and/or -desc, -domain)")
		}
		call, closeAll, err = grpcCaller(*target, wl.Domain, wl.Requests, *conns, *hitsAddend, *timeout)
	case "redis":
		call, closeAll, err = redisCaller(*target, os.Getenv("REDIS_PASSWORD"), *conns)
	default:
		fail("unknown -mode %q", *mode)
	}
	if err != nil {
		fail("%v", err)
	}
	defer closeAll()

	u0, s0 := cpuNow()
	start := time.Now()
	warmupEnd := start.Add(*warmup)
	end := warmupEnd.Add(*duration)
	var next, total atomic.Int64
	var firstErr atomic.Pointer[string]
	var mu sync.Mutex
	var lat []int64
	var nOK, nOver, nErr int64
	var lastDone time.Time
	// CPU at the start of the measured window.
	var uw, sw float64
	windowMark := time.AfterFunc(*warmup, func() { uw, sw = cpuNow() })
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			mine := make([]int64, 0, 1<<14)
			var ok, over, errs int64
			var last time.Time
			ctx := context.Background()
			for {
				t := time.Now()
				if !t.Before(end) {
					break
				}
				n := next.Add(1) - 1
				if *count > 0 && n >= *count {
					break
				}
				i := int(n)
				out, err := call(ctx, w%*conns, i)
				now := time.Now()
				total.Add(1)
				if now.Before(warmupEnd) {
					continue
				}
				mine = append(mine, now.Sub(t).Nanoseconds())
				last = now
				switch out {
				case okCode:
					ok++
				case overLimit:
					over++
				default:
					errs++
					if firstErr.Load() == nil {
						s := err.Error()
						firstErr.CompareAndSwap(nil, &s)
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			nOK += ok
			nOver += over
			nErr += errs
			if last.After(lastDone) {
				lastDone = last
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	windowMark.Stop()
	u1, s1 := cpuNow()
	if uw == 0 && sw == 0 {
		uw, sw = u0, s0
	}
	slices.Sort(lat)
	elapsed := lastDone.Sub(warmupEnd).Seconds()
	res := result{
		Mode: *mode, Target: *target, Concurrency: *concurrency, Conns: *conns, GOMAXPROCS: runtime.GOMAXPROCS(0),
		WarmupSeconds: warmup.Seconds(), Seconds: elapsed,
		Requests: int64(len(lat)), TotalRequests: total.Load(), OK: nOK, OverLimit: nOver, Errors: nErr,
		P50ms: percentile(lat, 50), P90ms: percentile(lat, 90), P99ms: percentile(lat, 99),
		CPUUserSeconds: u1 - uw, CPUSystemSeconds: s1 - sw, CPUTotalSeconds: (u1 - u0) + (s1 - s0),
	}
	if len(lat) > 0 {
		res.Maxms = float64(lat[len(lat)-1]) / 1e6
		var sum int64
		for _, v := range lat {
			sum += v
		}
		res.Meanms = float64(sum) / float64(len(lat)) / 1e6
		res.CPUUsPerDecision = (res.CPUUserSeconds + res.CPUSystemSeconds) * 1e6 / float64(len(lat))
	}
	if elapsed > 0 {
		res.DecisionsPerSecond = float64(len(lat)) / elapsed
	}
	if p := firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(res)
	if res.Requests == 0 || res.Errors == res.Requests {
		os.Exit(1)
	}
}
