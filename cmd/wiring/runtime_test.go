package wiring

import (
	"math"
	"runtime/debug"
	"testing"
)

// Not parallel: the collector's settings are process-wide.
func TestTuneGC(t *testing.T) {
	gc, mem := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(mem) })

	TuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != defaultMemoryLimit {
		t.Errorf("GOMEMLIMIT unset: limit %d, want %d", got, defaultMemoryLimit)
	}

	// What the operator set is left as the runtime read it.
	TuneGC(func(name string) string { return map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}[name] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent changed to %d", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit changed to %d", got)
	}
}
