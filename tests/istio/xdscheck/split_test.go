package xdscheck

import (
	"os"
	"testing"
)

// TestSplitDump generates the gateway's configuration for a render with the per-value counters in a
// store of their own (counterStore split, the default) and dumps it with every rate-limit filter on
// the listener (XDSCHECK_SPLIT_DIR, XDSCHECK_VARIANT, XDSCHECK_SPLIT_DUMP). What each request sends
// to which service is then checked by tests/istio/model-agree.ts --split against the render.
func TestSplitDump(t *testing.T) {
	dir, out := os.Getenv("XDSCHECK_SPLIT_DIR"), os.Getenv("XDSCHECK_SPLIT_DUMP")
	if dir == "" || out == "" {
		t.Skip("XDSCHECK_SPLIT_DIR and XDSCHECK_SPLIT_DUMP not set (run tests/istio/run.sh)")
	}
	e, err := ExpectFor(os.Getenv("XDSCHECK_VARIANT"), "all-routes")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := DumpGateway(t, docs, e, out); err != nil {
		t.Fatalf("FAILED: dump: %v", err)
	}
}
