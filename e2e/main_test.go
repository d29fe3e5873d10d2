package e2e_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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
	code := m.Run()
	if c, err := contract(); err == nil {
		checked, spent, problems := c.report()
		if len(problems) > 0 {
			fmt.Fprintf(os.Stderr, "openapi contract: %d mismatch(es) in %d checked exchanges:\n", len(problems), checked)
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, "  "+p)
			}
			code = 1
		} else if testing.Verbose() {
			fmt.Printf("openapi contract: %d exchanges checked in %s, no mismatch; answers seen:\n  %s\n", checked,
				spent.Round(time.Millisecond), strings.Join(c.coverage(), "\n  "))
		}
	}
	os.Exit(code)
}
