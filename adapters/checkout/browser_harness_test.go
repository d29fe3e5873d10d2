package checkout_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/quitapix/quita/internal/testkit"
)

// browserContext starts headless Chromium for one test. Without Chromium
// the test is skipped on a laptop and FAILS under CI=true: `make test`
// installs it (scripts/services.sh).
func browserContext(t *testing.T) context.Context {
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
			t.Fatal("chromium is not installed: run `make services` (scripts/services.sh installs Debian's chromium)")
		}
		t.Skip("chromium is not installed; `make services` installs it")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Payers are Brazilian: the browser asks for pt-BR (tests of
		// English use ?lang=en).
		chromedp.Flag("lang", "pt-BR"),
		chromedp.Flag("accept-lang", "pt-BR,pt"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(390, 844),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// Start the browser outside any timeout (a timeout on the first run
	// would stop the whole browser).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// tab opens a new tab of the test's browser with a phone-sized viewport
// and a time limit, and records what its console reports.
func tab(t *testing.T, bctx context.Context, width, height int64) (context.Context, *consoleLog) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, chromedp.EmulateScale(2))); err != nil {
		t.Fatalf("viewport: %v", err)
	}
	cl := &consoleLog{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			cl.add(m)
		}
	}()
	ctx, cancelT := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(cancelT)
	return ctx, cl
}

// consoleLog keeps the errors and warnings a page reported: a CSP
// violation, a failed request or a script error shows up here.
type consoleLog struct {
	mu   sync.Mutex
	msgs []string
}

func (c *consoleLog) add(m chromedp.ConsoleMessage) {
	if m.Type != "error" && m.Type != "warning" && !m.IsException() {
		return
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m.String()+" "+m.URL)
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

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// Let the state's entrance animation finish.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getAnimations().every(a => a.playState === 'finished' || a.effect.getTiming().iterations === Infinity)`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Logf("animations still running before %s: %v", name, err)
	}
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(testkit.ArtifactDir(t, "checkout"), name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// waitState waits for the page to show a state's section.
func waitState(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`section[data-state="`+state+`"]`))); err != nil {
		current, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('checkout').dataset.status`))
		t.Fatalf("page never showed %q (it shows %q): %v", state, current, err)
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

// decodeQR reads the QR code in a PNG.
func decodeQR(t *testing.T, b []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("QR is not a PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		// Not a pure code (quiet zone, scaling): let the detector find it.
		res, err = qrcode.NewQRCodeReader().Decode(bmp, nil)
	}
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	return res.GetText()
}
