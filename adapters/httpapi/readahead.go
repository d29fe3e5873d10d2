package httpapi

import (
	"io"
	"net/http"
)

// smallBody is how much of a body is read ahead with no bound but the
// connection's: every body the API takes fits many times over (a create is
// ~300 bytes), and it is about what the kernel already buffers for a
// connection whose body nobody reads. The rest of a larger body, up to
// maxBody, is read only with one of the limiter's largeBodies tokens.
const smallBody = 64 << 10

// readAheadPrealloc is the largest declared body whose buffer is made at
// its full size before any of it arrives (a create is ~300 bytes).
const readAheadPrealloc = 4 << 10

// readAhead reads the body of r before the request takes an admission
// place, and puts it back as r.Body, so that the place covers the work
// and not the client's upload: a client trickling a body byte by byte for
// the server's ReadTimeout holds a connection, never a place. The read
// stops after maxBody+1 bytes (the handler's http.MaxBytesReader then
// answers 413 as before) or on an error, which the handler reads where it
// would have. GET, HEAD and OPTIONS bodies are left alone: no handler
// reads them. False: the body is larger than smallBody and the tokens
// for reading large bodies are all taken; the request is refused as one
// finding no place is.
func (a *Admission) readAhead(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	// The buffer grows with what arrives, never with what the client
	// declares: a Content-Length of 64 KiB trickled a byte at a time
	// holds a few bytes, not 64 KiB, so idle connections cannot pin memory.
	size := 512
	if n := r.ContentLength; n > 0 && n < readAheadPrealloc {
		size = int(n) + 1 // the read that finds EOF needs no growth
	}
	b := &bufferedBody{buf: make([]byte, 0, size), rest: r.Body}
	r.Body = b
	if b.fill(smallBody) {
		return true
	}
	select {
	case a.largeBodies <- struct{}{}:
	default:
		return false
	}
	b.fill(maxBody + 1)
	<-a.largeBodies
	return true
}

// bufferedBody is a body read ahead: buf, then what ended the read (EOF,
// an error) or, past maxBody, the unread rest of the original body.
type bufferedBody struct {
	buf  []byte
	off  int
	eof  bool  // buf is the whole body
	err  error // the read failed after buf
	rest io.ReadCloser
}

// fill reads into buf until it holds limit bytes (false) or the body
// ended or failed (true).
func (b *bufferedBody) fill(limit int) bool {
	for len(b.buf) < limit {
		if len(b.buf) == cap(b.buf) {
			b.buf = append(b.buf, 0)[:len(b.buf)] // grow as io.ReadAll does
		}
		n, err := b.rest.Read(b.buf[len(b.buf):min(cap(b.buf), limit)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			b.eof = true
			return true
		}
		if err != nil {
			b.err = err
			return true
		}
	}
	return false
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if b.off < len(b.buf) {
		n := copy(p, b.buf[b.off:])
		b.off += n
		return n, nil
	}
	switch {
	case b.eof:
		return 0, io.EOF
	case b.err != nil:
		return 0, b.err
	}
	return b.rest.Read(p)
}

func (b *bufferedBody) Close() error { return b.rest.Close() }

// whole returns the complete body, unread so far, without a copy; false
// when it is not available so (a read failed, it is over maxBody, or it
// was read), and the caller reads as from any body.
func (b *bufferedBody) whole() ([]byte, bool) {
	if !b.eof || b.off != 0 || len(b.buf) > maxBody {
		return nil, false
	}
	b.off = len(b.buf)
	return b.buf, true
}
