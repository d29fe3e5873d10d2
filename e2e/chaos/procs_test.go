//go:build chaos

package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cluster is the quitad binary, its settings and the process slots the
// clients send to. A slot keeps its port across restarts, as a backend
// keeps its address behind a load balancer. In cluster mode there is no
// slot: target is the load balancer (HAProxy) and the processes are the
// HA cluster's.
type cluster struct {
	bin     string
	env     []string
	logDir  string
	target  string // host:port every request goes to, when set
	mu      sync.Mutex
	procs   []*proc
	started time.Time
}

// proc is one slot: a quitad process, running or not.
type proc struct {
	name     string
	addr     string
	cmd      *exec.Cmd
	done     chan struct{}
	inUse    bool // in the clients' rotation
	restarts int
}

// buildQuitad compiles ./cmd/quitad from the module root into dir.
func buildQuitad(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "quitad")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/quitad")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/quitad: %v\n%s", err, out)
	}
	return bin
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(string(bytes.TrimSpace(out)))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func newCluster(t *testing.T, bin, logDir string, env []string, slots int) *cluster {
	t.Helper()
	c := &cluster{bin: bin, env: env, logDir: logDir, started: time.Now()}
	for i := range slots {
		c.procs = append(c.procs, &proc{name: string(rune('A' + i)), addr: freeAddr(t)})
	}
	t.Cleanup(c.stopAll)
	return c
}

// admin runs a quitad subcommand against the run's database and returns
// its standard output.
func (c *cluster) admin(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := c.adminErr(args...)
	if err != nil {
		t.Fatalf("quitad %v: %v\n%s", args, err, out)
	}
	return out
}

func (c *cluster) adminErr(args ...string) ([]byte, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return append(stdout.Bytes(), stderr.Bytes()...), err
	}
	return stdout.Bytes(), nil
}

// start launches slot p and waits until it answers /healthz.
func (c *cluster) start(p *proc) error {
	logf, err := os.OpenFile(filepath.Join(c.logDir, "quitad-"+p.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== start at +%v\n", time.Since(c.started).Round(time.Millisecond))
	cmd := exec.Command(c.bin, "serve")
	cmd.Env = append(append([]string{}, c.env...), "QUITA_ADDR="+p.addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	c.mu.Lock()
	p.cmd, p.done = cmd, done
	c.mu.Unlock()
	if err := waitHealthy(p.addr, done, 60*time.Second); err != nil {
		return err
	}
	c.mu.Lock()
	p.inUse = true
	c.mu.Unlock()
	return nil
}

func waitHealthy(addr string, done <-chan struct{}, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("quitad on %s exited while starting", addr)
		default:
		}
		if r, err := client.Get("http://" + addr + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("quitad on %s not healthy after %v", addr, limit)
}

// kill sends SIGKILL: no shutdown hook, no drained request, no released
// claim. keep says whether the slot stays in the clients' rotation (it is
// restarted) or leaves it.
func (c *cluster) kill(p *proc, keep bool) {
	c.mu.Lock()
	cmd, done := p.cmd, p.done
	p.inUse = keep
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// rotation lists the addresses clients may send to.
func (c *cluster) rotation() []string {
	if c.target != "" {
		return []string{c.target}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.procs {
		if p.inUse {
			out = append(out, p.addr)
		}
	}
	return out
}

// running lists the slots with a live process.
func (c *cluster) running() []*proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*proc
	for _, p := range c.procs {
		if p.cmd == nil {
			continue
		}
		select {
		case <-p.done:
		default:
			out = append(out, p)
		}
	}
	return out
}

func (c *cluster) stopAll() {
	for _, p := range c.procs {
		c.mu.Lock()
		cmd, done := p.cmd, p.done
		c.mu.Unlock()
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
	}
}

// newAccount creates the merchant the load runs on and lifts its request
// rate limit, which would otherwise throttle the clients (the rate limiter
// is not under test here).
func (c *cluster) newAccount(t *testing.T) (accountID, testKey string) {
	t.Helper()
	out := c.admin(t, "account", "create", "--name", "Loja Chaos", "--email", "chaos-"+randomHex(4)+"@quita.test",
		"--password", "chaos-password-"+randomHex(4))
	var acct struct {
		AccountID string `json:"accountId"`
		TestKey   string `json:"testKey"`
	}
	if err := json.Unmarshal(out, &acct); err != nil || acct.TestKey == "" {
		t.Fatalf("account create printed %q: %v", out, err)
	}
	c.admin(t, "account", "guards", "--account", acct.AccountID, "--rate", "100000", "--burst", "100000")
	return acct.AccountID, acct.TestKey
}

// ledgerVerify runs `quitad ledger verify` and returns its output and
// whether it passed.
func (c *cluster) ledgerVerify() (string, bool) {
	out, err := c.adminErr("ledger", "verify")
	return string(bytes.TrimSpace(out)), err == nil
}
