package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// trickle yields its bytes one per Read, then EOF.
type trickle struct{ left int }

func (t *trickle) Read(p []byte) (int, error) {
	if t.left == 0 {
		return 0, io.EOF
	}
	t.left--
	p[0] = 'x'
	return 1, nil
}

func (t *trickle) Close() error { return nil }

// A body's read-ahead buffer grows with the bytes that arrive, whatever
// the client declared: a request declaring 60 KB that sends 10 bytes holds
// a small buffer, so many such connections cannot pin memory.
func TestReadAheadBuffersWhatArrives(t *testing.T) {
	t.Parallel()
	a := NewAdmission(AdmissionConfig{MaxInFlight: 1})
	r, _ := http.NewRequest(http.MethodPost, "/v1/charges", nil)
	r.Body, r.ContentLength = &trickle{left: 10}, 60_000
	if !a.readAhead(r) {
		t.Fatal("refused")
	}
	b := r.Body.(*bufferedBody)
	if len(b.buf) != 10 || cap(b.buf) > readAheadPrealloc {
		t.Errorf("10 bytes read into a buffer of capacity %d, want at most %d", cap(b.buf), readAheadPrealloc)
	}
	// A small declared body is read into a buffer of its size at once.
	r, _ = http.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(strings.Repeat("y", 300)))
	if !a.readAhead(r) {
		t.Fatal("refused")
	}
	if b := r.Body.(*bufferedBody); len(b.buf) != 300 || cap(b.buf) != 301 {
		t.Errorf("a 300-byte body in a buffer of %d/%d", len(b.buf), cap(b.buf))
	}
}
