package wiring

import "runtime/debug"

// Garbage-collector defaults of a quitad that was not given GOGC or
// GOMEMLIMIT (docs/decisions.md, "The collector runs less often"). A
// create allocates ~50 KB that die with the request while the live heap
// stays at a few tens of MB, so the runtime's GOGC=100 collects very
// often for little: at 300 the server spends 0.42–0.44 ms of CPU per
// create instead of 0.48–0.49 (closed loop, back to back). The soft limit
// makes the collector work harder before the heap grows past it, so a
// burst cannot take the process far beyond its usual footprint.
const (
	defaultGCPercent   = 300
	defaultMemoryLimit = 512 << 20
)

// TuneGC applies those defaults for whichever of GOGC and GOMEMLIMIT
// getenv leaves unset; the Go runtime has already applied what is set.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
