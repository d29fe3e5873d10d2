package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary stands in for quitad when QUITABENCH_FAKE_QUITAD says
// how: exit at once as a process whose port was taken, serve on
// QUITA_ADDR, or never answer. Each start appends a line to
// QUITABENCH_FAKE_LOG.
func TestMain(m *testing.M) {
	mode := os.Getenv("QUITABENCH_FAKE_QUITAD")
	if mode == "" {
		os.Exit(m.Run())
	}
	if f, err := os.OpenFile(os.Getenv("QUITABENCH_FAKE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "quitad: listen tcp "+os.Getenv("QUITA_ADDR")+": bind: address already in use")
		os.Exit(1)
	case "serve":
		_ = http.ListenAndServe(os.Getenv("QUITA_ADDR"), http.NotFoundHandler())
	case "hang":
		time.Sleep(time.Hour)
	}
	os.Exit(2)
}

func fakeQuitad(t *testing.T, mode string) (bin string, env []string, starts func() []int) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "starts")
	return bin, []string{"QUITABENCH_FAKE_QUITAD=" + mode, "QUITABENCH_FAKE_LOG=" + log}, func() []int {
		b, _ := os.ReadFile(log)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
		return pids
	}
}

func TestStartRetriesAProcessThatExitsAtOnce(t *testing.T) {
	bin, env, starts := fakeQuitad(t, "exit")
	b := &refundBench{bin: bin, env: env, http: &http.Client{Timeout: time.Second}}
	p, err := b.start("QUITA_EXTRA=1")
	if p != nil || !errors.Is(err, errExitedEarly) {
		t.Fatalf("start = %v, %v; want errExitedEarly", p, err)
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error %q does not carry the process's stderr", err)
	}
	if n := len(starts()); n != 3 {
		t.Errorf("started %d times, want 3", n)
	}
}

func TestStartAnswersOnceServing(t *testing.T) {
	bin, env, starts := fakeQuitad(t, "serve")
	client := &http.Client{Timeout: time.Second}
	p, err := startQuitad(bin, env, client, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r, err := client.Get(strings.TrimSuffix(p.base, "/v1") + "/healthz")
	if err != nil {
		t.Fatalf("the started process does not answer at %s: %v", p.base, err)
	}
	r.Body.Close()
	p.stop()
	if n := len(starts()); n != 1 {
		t.Errorf("started %d times, want 1", n)
	}
	if _, err := client.Get(strings.TrimSuffix(p.base, "/v1") + "/healthz"); err == nil {
		t.Error("the process still answers after stop")
	}
}

func TestStartKillsAProcessThatNeverAnswers(t *testing.T) {
	bin, env, starts := fakeQuitad(t, "hang")
	p, err := startQuitad(bin, env, &http.Client{Timeout: time.Second}, 300*time.Millisecond)
	if p != nil || err == nil || errors.Is(err, errExitedEarly) || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("startQuitad = %v, %v; want a did-not-answer error", p, err)
	}
	pids := starts()
	if len(pids) != 1 {
		t.Fatalf("started %d times, want 1", len(pids))
	}
	if err := syscall.Kill(pids[0], 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d is still there (kill 0: %v)", pids[0], err)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := &tailBuffer{max: 8}
	if got := tb.String(); got != "(nothing on stderr)" {
		t.Errorf("empty = %q", got)
	}
	fmt.Fprint(tb, "0123456")
	fmt.Fprint(tb, "789abc")
	if got := tb.String(); got != "56789abc" {
		t.Errorf("tail = %q, want 56789abc", got)
	}
}
