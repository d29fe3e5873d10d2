// Package qr renders a BR Code (Pix copy-and-paste payload) as the QR code
// PNG that Quita returns with a charge and shows on the checkout page.
//
// Rendering costs a couple of milliseconds of CPU and a charge's QR is asked
// for again and again (the create response, each checkout page load, each
// poll), so a Renderer keeps the most recently used PNGs in a bounded LRU.
package qr

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"
	"sync/atomic"

	"github.com/skip2/go-qrcode"
	"golang.org/x/sync/singleflight"
)

const (
	// DefaultSize is the PNG's width and height in pixels when NewRenderer
	// is given none: large enough to scan from a monitor across a desk.
	DefaultSize = 512
	// DefaultCacheEntries is the LRU bound when NewRenderer is given none.
	// A 512 px BR Code PNG is about 2–3 KB, so the default holds a few MB.
	DefaultCacheEntries = 1024
)

// ErrEmptyPayload is returned when asked to render an empty payload: a QR
// code of nothing would scan as nothing, which is never what a charge meant.
var ErrEmptyPayload = errors.New("qr: empty payload")

// Renderer draws BR Codes as square PNG QR codes at error-correction level
// M with the standard four-module quiet zone, and caches the results. It is
// safe for concurrent use.
type Renderer struct {
	size   int
	cache  *lru
	flight singleflight.Group

	hits, misses atomic.Uint64
}

// Stats counts cache use since the Renderer was made.
type Stats struct {
	Hits    uint64
	Misses  uint64
	Entries int
}

// NewRenderer returns a Renderer of size×size pixel PNGs that caches up to
// cacheEntries of them. A size or cacheEntries of zero or less takes the
// default (DefaultSize, DefaultCacheEntries).
func NewRenderer(size int, cacheEntries int) *Renderer {
	if size <= 0 {
		size = DefaultSize
	}
	if cacheEntries <= 0 {
		cacheEntries = DefaultCacheEntries
	}
	return &Renderer{size: size, cache: newLRU(cacheEntries)}
}

// PNG returns payload as a PNG image, from the cache when it can. The slice
// is the caller's own. The image is the Renderer's size square, or the
// smallest square that fits one pixel per module when that size is too
// small for the payload. Errors: ErrEmptyPayload, and the encoder's error
// for a payload too long for any QR version.
func (r *Renderer) PNG(payload string) ([]byte, error) {
	b, err := r.png(payload)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// DataURL returns payload's PNG as a "data:image/png;base64,..." URL, for
// an <img src> or a JSON field. Errors as PNG.
func (r *Renderer) DataURL(payload string) (string, error) {
	b, err := r.png(payload)
	if err != nil {
		return "", err
	}
	const prefix = "data:image/png;base64,"
	out := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(b)))
	copy(out, prefix)
	base64.StdEncoding.Encode(out[len(prefix):], b)
	return string(out), nil
}

// Stats reports cache hits, misses and the entries held now.
func (r *Renderer) Stats() Stats {
	return Stats{Hits: r.hits.Load(), Misses: r.misses.Load(), Entries: r.cache.len()}
}

// png returns the cached slice itself, which nobody may modify.
func (r *Renderer) png(payload string) ([]byte, error) {
	if payload == "" {
		return nil, ErrEmptyPayload
	}
	if b, ok := r.cache.get(payload); ok {
		r.hits.Add(1)
		return b, nil
	}
	r.misses.Add(1)
	// Concurrent misses for one payload (a checkout page opened on two
	// devices at once) share one render.
	v, err, _ := r.flight.Do(payload, func() (any, error) {
		if b, ok := r.cache.get(payload); ok {
			return b, nil
		}
		b, err := render(payload, r.size)
		if err != nil {
			return nil, err
		}
		r.cache.add(payload, b)
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// Private draws payloads that hold a secret (a TOTP otpauth:// URI) as
// size×size PNGs like Renderer, but keeps nothing: each call renders anew,
// so no secret outlives its request in a cache.
type Private struct{ Size int }

// PNG returns payload as a PNG image. Errors as Renderer.PNG.
func (p Private) PNG(payload string) ([]byte, error) {
	if payload == "" {
		return nil, ErrEmptyPayload
	}
	size := p.Size
	if size <= 0 {
		size = DefaultSize
	}
	return render(payload, size)
}

// palette puts white first so the zero pixel value is the background.
var palette = color.Palette{color.White, color.Black}

// pngEncoder uses the default compression: on a two-colour QR it gives the
// same bytes as BestCompression (about 900 for a 512 px BR Code) in half the
// time, while BestSpeed doubles the size. Its buffers, mostly the deflate
// state, are pooled across renders.
var pngEncoder = png.Encoder{BufferPool: &encoderBuffers{}}

type encoderBuffers struct{ pool sync.Pool }

func (p *encoderBuffers) Get() *png.EncoderBuffer {
	b, _ := p.pool.Get().(*png.EncoderBuffer)
	return b
}

func (p *encoderBuffers) Put(b *png.EncoderBuffer) { p.pool.Put(b) }

// render draws payload with every module the same whole number of pixels,
// centred in a size×size image. (go-qrcode's own Image scales by a
// fractional factor, which makes modules of uneven width that cheap phone
// cameras misread more often.) The leftover pixels widen the quiet zone.
func render(payload string, size int) ([]byte, error) {
	code, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("qr: encode %d-byte payload: %w", len(payload), err)
	}
	bitmap := code.Bitmap() // includes the 4-module quiet zone
	modules := len(bitmap)
	scale := size / modules
	if scale < 1 {
		scale, size = 1, modules
	}
	offset := (size - modules*scale) / 2

	img := image.NewPaletted(image.Rect(0, 0, size, size), palette)
	for my, row := range bitmap {
		y0 := offset + my*scale
		line := img.Pix[y0*img.Stride : y0*img.Stride+size]
		for mx, dark := range row {
			if dark {
				x0 := offset + mx*scale
				for x := x0; x < x0+scale; x++ {
					line[x] = 1
				}
			}
		}
		for y := y0 + 1; y < y0+scale; y++ {
			copy(img.Pix[y*img.Stride:y*img.Stride+size], line)
		}
	}

	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr: encode png: %w", err)
	}
	return buf.Bytes(), nil
}
