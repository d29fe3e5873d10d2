package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browserTab starts headless Chromium with a desktop viewport for one
// test. Without Chromium the test is skipped on a laptop and FAILS under
// CI=true (`make services` installs it). Every JavaScript confirm() is
// accepted, as a merchant clicking OK would.
func browserTab(t *testing.T) (context.Context, *consoleLog) {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: run `make services`")
		}
		t.Skip("chromium is not installed; `make services` installs it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("lang", "pt-BR"), chromedp.Flag("accept-lang", "pt-BR,pt"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1366, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cl := &consoleLog{}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			cl.dialog(ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == "error" || m.Type == "warning" || m.IsException() {
				cl.add(m.String() + " " + m.URL)
			}
		}
	}()
	tctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return tctx, cl
}

// consoleLog keeps what the pages reported: a CSP violation, a failed
// request or a script error shows up here.
type consoleLog struct {
	mu      sync.Mutex
	msgs    []string
	dialogs []string
}

func (c *consoleLog) dialog(s string) {
	c.mu.Lock()
	c.dialogs = append(c.dialogs, s)
	c.mu.Unlock()
}

func (c *consoleLog) confirmed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.dialogs...)
}

func (c *consoleLog) add(s string) {
	c.mu.Lock()
	c.msgs = append(c.msgs, s)
	c.mu.Unlock()
}

// reset forgets what was reported so far (an expected 401 of a wrong
// password is reported as a failed load).
func (c *consoleLog) reset() {
	c.mu.Lock()
	c.msgs = nil
	c.mu.Unlock()
}

func (c *consoleLog) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.msgs {
		t.Errorf("browser console: %s", m)
	}
}

// artifactDir is artifacts/dashboard at the repository root.
func artifactDir(t *testing.T) string {
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
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
	out := filepath.Join(dir, "artifacts", "dashboard")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// a11yAudit lists what the page does wrong for assistive technology:
// a field without a label, a control without a name, an image without
// alt, not exactly one h1, no lang.
const a11yAudit = `(() => {
  const out = [];
  if (!document.documentElement.lang) out.push('no lang on <html>');
  if (document.querySelectorAll('h1').length !== 1) out.push('h1 count ' + document.querySelectorAll('h1').length);
  for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    if (!(el.labels && el.labels.length) && !el.getAttribute('aria-label')) out.push('unlabelled ' + (el.id || el.name));
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (!(el.textContent.trim() || el.getAttribute('aria-label'))) out.push('nameless ' + el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('img')) {
    if (!el.hasAttribute('alt')) out.push('img without alt ' + el.src);
  }
  return out.join('; ');
})()`

// screenshot audits the page (a11yAudit) and saves it as a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if problems := evalString(t, ctx, a11yAudit); problems != "" {
		t.Errorf("%s: accessibility: %s", name, problems)
	}
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifactDir(t), name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// do runs steps with a time limit and fails the test naming what it did.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
}

func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
