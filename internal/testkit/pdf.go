package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// PDFText extracts the text of a PDF with poppler's pdftotext, the way a
// person copying from a viewer would get it (UTF-8, reading order). Without
// pdftotext the test is skipped, or fails under CI=true: `make test`
// (scripts/services.sh) installs Debian's poppler-utils.
func PDFText(t testing.TB, pdf []byte) string {
	t.Helper()
	bin := requireTool(t, "pdftotext")
	cmd := exec.Command(bin, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("pdftotext: %v: %s", err, errb.String())
	}
	return out.String()
}

// PDFPageToPNG renders the first page of a PDF at 100 dpi with poppler's
// pdftoppm into artifacts/<dir>/<name>.png at the repository root, for a
// person to look at, and returns the file's path. Missing pdftoppm is
// handled as in PDFText.
func PDFPageToPNG(t testing.TB, pdf []byte, dir, name string) string {
	t.Helper()
	bin := requireTool(t, "pdftoppm")
	out := filepath.Join(ArtifactDir(t, dir), name)
	cmd := exec.Command(bin, "-png", "-r", strconv.Itoa(100), "-f", "1", "-l", "1", "-singlefile", "-", out)
	cmd.Stdin = bytes.NewReader(pdf)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, errb.String())
	}
	return out + ".png"
}

// ArtifactDir is artifacts/<sub> at the repository root (the directory of
// go.mod), created if needed: screenshots and rendered pages that tests
// leave for people to inspect.
func ArtifactDir(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testkit: no go.mod above the test")
		}
		dir = parent
	}
	out := filepath.Join(dir, "artifacts", sub)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// requireTool finds a command-line tool a test needs: skipped without it on
// a laptop, a failure under CI=true, where a green run must mean the test
// ran.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s is not installed and CI is set, so this test fails instead of skipping: "+
			"run `make services` (scripts/services.sh installs Debian's poppler-utils)", name)
	}
	t.Skipf("%s is not installed; `make services` installs poppler-utils (%s)", name, strings.TrimSpace(err.Error()))
	return ""
}
