// Package golden reads the golden vectors in the repository's testdata/ for
// tests in any package, so each test does not work out its own relative path.
package golden

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// dirs are searched in order. The shared tree beside the checkout is the
// source of truth while it exists; the repository keeps a copy so the tests
// still run in a clone that has only the module.
func dirs() []string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return []string{filepath.Join(root, "..", "shared", "testdata"), filepath.Join(root, "testdata")}
}

// Read returns the golden file name, failing tb if no directory holds it.
func Read(tb testing.TB, name string) []byte {
	tb.Helper()
	for _, dir := range dirs() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			return b
		}
		if !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("read %s: %v", name, err)
		}
	}
	tb.Fatalf("golden file %s found in none of %v", name, dirs())
	return nil
}

// Lines returns the non-blank, non-comment lines of a golden file, failing
// tb if there are none: a test over zero vectors proves nothing.
func Lines(tb testing.TB, name string) []string {
	tb.Helper()
	var out []string
	for _, line := range strings.Split(string(Read(tb, name)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		tb.Fatalf("golden file %s has no vectors", name)
	}
	return out
}
