package e2e_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs more tests at once than the default (GOMAXPROCS): these
// tests spend most of their time waiting on PostgreSQL (creating and
// dropping a database per test) and on HTTP round trips, not on the CPU.
// An explicit -parallel wins.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}
