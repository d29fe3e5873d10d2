package qr_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gozxingqr "github.com/makiuchi-d/gozxing/qrcode"

	"github.com/quitapix/quita/adapters/qr"
)

// dynamicBRCode is a real single-use dynamic BR Code (location URL), from
// testdata/brcode-vectors.txt.
const dynamicBRCode = "00020101021226700014br.gov.bcb.pix2548pix.example.com/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***630464E4"

// modules is dynamicBRCode's symbol width with its quiet zone: go-qrcode
// packs the 155 bytes (numeric, alphanumeric and byte segments) into
// version 8 at level M, 49 modules, plus 4 quiet modules on each side.
const modules = 49 + 2*4

func TestPNGIsASquareImageOfTheConfiguredSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 256, 512, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			want := size
			if size == 0 {
				want = qr.DefaultSize
			}
			img := decodePNG(t, mustPNG(t, qr.NewRenderer(size, 8), dynamicBRCode))
			if b := img.Bounds(); b.Dx() != want || b.Dy() != want {
				t.Errorf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), want, want)
			}
		})
	}
}

func TestPNGTooSmallSizeGrowsToOnePixelPerModule(t *testing.T) {
	t.Parallel()
	img := decodePNG(t, mustPNG(t, qr.NewRenderer(10, 8), dynamicBRCode))
	if b := img.Bounds(); b.Dx() != modules || b.Dy() != modules {
		t.Errorf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), modules, modules)
	}
	if got := decodeQR(t, img); got != dynamicBRCode {
		t.Errorf("decoded %q, want %q", got, dynamicBRCode)
	}
}

func TestPNGHasAQuietZone(t *testing.T) {
	t.Parallel()
	img := decodePNG(t, mustPNG(t, qr.NewRenderer(512, 8), dynamicBRCode))
	// 57 modules at 8 px = 456 px, centred: 28 px of margin, then 4 modules
	// (32 px) of quiet zone, then the finder patterns' dark corners.
	const scale = 512 / modules
	const margin = (512-modules*scale)/2 + 4*scale
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			inside := x >= margin && x < b.Max.X-margin && y >= margin && y < b.Max.Y-margin
			if !inside && isDark(img, x, y) {
				t.Fatalf("dark pixel at (%d,%d), inside the quiet zone", x, y)
			}
		}
	}
	for _, p := range []image.Point{{margin, margin}, {b.Max.X - margin - 1, margin}, {margin, b.Max.Y - margin - 1}} {
		if !isDark(img, p.X, p.Y) {
			t.Errorf("finder pattern corner at %v is light; the symbol is not where expected", p)
		}
	}
}

func isDark(img image.Image, x, y int) bool {
	r, _, _, _ := img.At(x, y).RGBA()
	return r < 0x8000
}

// TestPNGRoundTripsEveryVector reads each rendered PNG back with an
// independent decoder (ZXing's Go port) and expects the exact BR Code.
func TestPNGRoundTripsEveryVector(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(0, 0)
	for i, payload := range brCodeVectors(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			if got := decodeQR(t, decodePNG(t, mustPNG(t, r, payload))); got != payload {
				t.Errorf("decoded\n %q\nwant\n %q", got, payload)
			}
		})
	}
}

func TestPNGSecondCallHitsTheCache(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(512, 8)
	first := mustPNG(t, r, dynamicBRCode)
	if s := r.Stats(); s.Hits != 0 || s.Misses != 1 || s.Entries != 1 {
		t.Fatalf("after one call: %+v, want 0 hits, 1 miss, 1 entry", s)
	}
	second := mustPNG(t, r, dynamicBRCode)
	if s := r.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Fatalf("after two calls: %+v, want 1 hit, 1 miss", s)
	}
	if !bytes.Equal(first, second) {
		t.Error("cached PNG differs from the first render")
	}
}

// TestPNGCacheHitDoesNotRender is not parallel: AllocsPerRun needs the
// process to itself.
func TestPNGCacheHitDoesNotRender(t *testing.T) {
	r := qr.NewRenderer(512, 8)
	mustPNG(t, r, dynamicBRCode)
	// A hit costs a copy of the bytes, not a render (an image, the QR
	// encoder's state and the PNG encoder's buffers).
	allocs := testing.AllocsPerRun(100, func() { _, _ = r.PNG(dynamicBRCode) })
	if allocs > 1 {
		t.Errorf("cached PNG: %.0f allocations per call, want at most 1", allocs)
	}
}

func TestPNGReturnsTheCallersOwnBytes(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(128, 8)
	first := mustPNG(t, r, dynamicBRCode)
	want := bytes.Clone(first)
	clear(first)
	if got := mustPNG(t, r, dynamicBRCode); !bytes.Equal(got, want) {
		t.Error("changing a returned PNG changed the cached one")
	}
}

func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(64, 2)
	mustPNG(t, r, "a")
	mustPNG(t, r, "b")
	mustPNG(t, r, "a") // hit: b is now the least recently used
	mustPNG(t, r, "c") // evicts b
	if s := r.Stats(); s.Entries != 2 || s.Hits != 1 || s.Misses != 3 {
		t.Fatalf("%+v, want 2 entries, 1 hit, 3 misses", r.Stats())
	}
	mustPNG(t, r, "a")
	mustPNG(t, r, "c")
	if s := r.Stats(); s.Hits != 3 || s.Misses != 3 {
		t.Errorf("a and c should still be cached: %+v", s)
	}
	mustPNG(t, r, "b")
	if s := r.Stats(); s.Misses != 4 {
		t.Errorf("b should have been evicted: %+v", s)
	}
}

func TestDataURL(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(256, 8)
	url, err := r.DataURL(dynamicBRCode)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(url, prefix) {
		t.Fatalf("DataURL = %.40q..., want prefix %q", url, prefix)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(url, prefix))
	if err != nil {
		t.Fatalf("base64: %v", err)
	}
	if !bytes.Equal(raw, mustPNG(t, r, dynamicBRCode)) {
		t.Error("DataURL does not hold the PNG")
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(64, 8)
	if _, err := r.PNG(""); !errors.Is(err, qr.ErrEmptyPayload) {
		t.Errorf("PNG(\"\"): err = %v, want ErrEmptyPayload", err)
	}
	if _, err := r.DataURL(""); !errors.Is(err, qr.ErrEmptyPayload) {
		t.Errorf("DataURL(\"\"): err = %v, want ErrEmptyPayload", err)
	}
	// Level M holds at most 2331 bytes.
	if _, err := r.PNG(strings.Repeat("x", 3000)); err == nil {
		t.Error("PNG of 3000 bytes: want an error")
	}
	if s := r.Stats(); s.Entries != 0 {
		t.Errorf("errors were cached: %+v", s)
	}
}

func TestConcurrentCallersShareOneRender(t *testing.T) {
	t.Parallel()
	r := qr.NewRenderer(512, 8)
	const n = 20
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		pngs  [n][]byte
		errs  [n]error
	)
	for i := range n {
		wg.Go(func() {
			<-start
			pngs[i], errs[i] = r.PNG(dynamicBRCode)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(pngs[i], pngs[0]) {
			t.Fatalf("caller %d got a different PNG", i)
		}
	}
	if s := r.Stats(); s.Hits+s.Misses != n || s.Entries != 1 {
		t.Errorf("%+v, want %d calls and 1 entry", s, n)
	}
}

func BenchmarkPNGUncached(b *testing.B) {
	r := qr.NewRenderer(qr.DefaultSize, qr.DefaultCacheEntries)
	// Each iteration renders a new payload of the same length (and so the
	// same QR version), as each new charge does.
	base := dynamicBRCode[:len(dynamicBRCode)-8]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := r.PNG(fmt.Sprintf("%s%08d", base, i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPNGCached(b *testing.B) {
	r := qr.NewRenderer(qr.DefaultSize, qr.DefaultCacheEntries)
	if _, err := r.PNG(dynamicBRCode); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.PNG(dynamicBRCode); err != nil {
			b.Fatal(err)
		}
	}
}

func mustPNG(t *testing.T, r *qr.Renderer, payload string) []byte {
	t.Helper()
	b, err := r.PNG(payload)
	if err != nil {
		t.Fatalf("PNG(%.20q...): %v", payload, err)
	}
	return b
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	return img
}

func decodeQR(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("gozxing bitmap: %v", err)
	}
	res, err := gozxingqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		t.Fatalf("gozxing decode: %v", err)
	}
	return res.GetText()
}

// brCodeVectors reads the shared known-good BR Codes.
func brCodeVectors(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "brcode-vectors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no vectors in testdata/brcode-vectors.txt")
	}
	return out
}

// Private renders a secret's URI like Renderer, readable by a decoder,
// and keeps nothing: two calls render twice, and an empty payload is
// refused.
func TestPrivateRendersWithoutCaching(t *testing.T) {
	t.Parallel()
	const uri = "otpauth://totp/Quita:dona@loja.com.br?algorithm=SHA1&digits=6&issuer=Quita&period=30&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	p := qr.Private{Size: 320}
	b, err := p.PNG(uri)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b)
	if got := img.Bounds().Dx(); got != 320 {
		t.Errorf("width %d", got)
	}
	if got := decodeQR(t, img); got != uri {
		t.Errorf("decoded %q", got)
	}
	again, _ := p.PNG(uri)
	if &again[0] == &b[0] {
		t.Error("the second call returned the first call's bytes")
	}
	if _, err := p.PNG(""); !errors.Is(err, qr.ErrEmptyPayload) {
		t.Errorf("empty payload: %v", err)
	}
}
