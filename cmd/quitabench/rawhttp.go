package main

// The load generator's HTTP/1.1 client. net/http's client costs the
// generator 0.07–0.3 ms of CPU per request (two goroutines and their
// channel hand-offs per connection, a cloned request, a header map each
// way, a timer), which on 2 cores it takes from the server it measures:
// at twice the closed loop's rate that is half a core. This
// one writes each request from a template into a per-connection buffer
// and reads back only what the figures need — the status, whether
// Retry-After was set — and discards the body, on keep-alive connections
// it opens as the open loop needs them, one request at a time on each, as
// a merchant's backend would. Only plain http to the server under test.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// rawClient sends requests to one http:// server over keep-alive
// connections.
type rawClient struct {
	addr, host, prefix string // prefix: the base URL's path, e.g. "/v1"
	timeout            time.Duration

	mu   sync.Mutex
	idle []*rawConn
}

type rawConn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte // the request being written
}

func newRawClient(base string, timeout time.Duration) (*rawClient, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("load generator: %q is not an http:// URL", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &rawClient{addr: addr, host: u.Host, prefix: u.Path, timeout: timeout}, nil
}

func (rc *rawClient) dial() (*rawConn, error) {
	c, err := net.DialTimeout("tcp", rc.addr, rc.timeout)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 8<<10), buf: make([]byte, 0, 1024)}, nil
}

// take returns an idle connection, or a new one when none is idle.
func (rc *rawClient) take() (*rawConn, error) {
	rc.mu.Lock()
	if n := len(rc.idle); n > 0 {
		c := rc.idle[n-1]
		rc.idle = rc.idle[:n-1]
		rc.mu.Unlock()
		return c, nil
	}
	rc.mu.Unlock()
	return rc.dial()
}

func (rc *rawClient) give(c *rawConn) {
	rc.mu.Lock()
	rc.idle = append(rc.idle, c)
	rc.mu.Unlock()
}

// do sends the request write appends to the connection's buffer and answers the
// response's status and whether it carried Retry-After; status 0 is no
// answer within the timeout, or a transport error.
func (rc *rawClient) do(write func(b []byte) []byte) (status int, retry bool) {
	c, err := rc.take()
	if err != nil {
		return 0, false
	}
	status, retry, keep, err := rc.roundTrip(c, write)
	if err != nil || !keep {
		c.c.Close()
		if err != nil {
			return 0, false
		}
		return status, retry
	}
	rc.give(c)
	return status, retry
}

func (rc *rawClient) roundTrip(c *rawConn, write func(b []byte) []byte) (status int, retry, keep bool, err error) {
	if err := c.c.SetDeadline(time.Now().Add(rc.timeout)); err != nil {
		return 0, false, false, err
	}
	c.buf = write(c.buf[:0])
	if _, err := c.c.Write(c.buf); err != nil {
		return 0, false, false, err
	}
	return readResponse(c.r)
}

// requestHead appends a request line for the base URL's path followed by
// path, and the headers every request carries.
func (rc *rawClient) requestHead(b []byte, method, path string) []byte {
	return rc.requestLine(b, method, rc.prefix, path)
}

// requestLine is requestHead for prefix instead of the base URL's path.
func (rc *rawClient) requestLine(b []byte, method, prefix, path string) []byte {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, prefix...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, rc.host...)
	return append(b, "\r\n"...)
}

// appendPost appends a JSON POST of body with the API key and a fresh
// Idempotency-Key made of keyPrefix and 24 random hex digits.
func (rc *rawClient) appendPost(b []byte, path, apiKey, keyPrefix string, body []byte) []byte {
	b = rc.requestHead(b, "POST", path)
	b = append(b, "apikey: "...)
	b = append(b, apiKey...)
	b = append(b, "\r\nContent-Type: application/json\r\nIdempotency-Key: "...)
	b = append(b, keyPrefix...)
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	b = hex.AppendEncode(b, raw[:])
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// appendGet appends a GET of path with the API key, if any.
func (rc *rawClient) appendGet(b []byte, path, apiKey string) []byte {
	b = rc.requestHead(b, "GET", path)
	if apiKey != "" {
		b = append(b, "apikey: "...)
		b = append(b, apiKey...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

var errBadResponse = errors.New("load generator: malformed HTTP response")

// readResponse reads one response: its status, whether it set
// Retry-After, whether the connection stays open; the body is discarded
// (by Content-Length, chunked, or to the end of the connection).
func readResponse(r *bufio.Reader) (status int, retry, keep bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, false, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, false, errBadResponse
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, false, false, errBadResponse
	}
	keep = line[7] == '1' // HTTP/1.1 keeps the connection unless told otherwise
	length, chunked := -1, false
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return 0, false, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, false, errBadResponse
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, false, errBadResponse
			}
		case bytes.EqualFold(name, []byte("Retry-After")):
			retry = true
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.Contains(bytes.ToLower(value), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			switch {
			case bytes.EqualFold(value, []byte("close")):
				keep = false
			case bytes.EqualFold(value, []byte("keep-alive")):
				keep = true
			}
		}
	}
	switch {
	case status == 204 || status == 304 || status/100 == 1:
	case chunked:
		err = discardChunked(r)
	case length >= 0:
		_, err = r.Discard(length)
	default:
		keep = false
		_, err = io.Copy(io.Discard, r)
	}
	if err != nil {
		return 0, false, false, err
	}
	return status, retry, keep, nil
}

func discardChunked(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseInt(string(size), 16, 64)
		if err != nil || n < 0 {
			return errBadResponse
		}
		if n == 0 {
			for { // trailers, then the blank line
				line, err := r.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if _, err := r.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}
