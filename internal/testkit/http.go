package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Response is a fully read HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Header is a set of request headers; the value "-" removes the header
// (e.g. the default Content-Type).
type Header map[string]string

// Send sends method url through client (nil: http.DefaultClient) and reads
// the whole answer. body is nil (no body), a string or []byte (sent as is)
// or any other value (sent JSON-encoded); with a body, Content-Type
// defaults to application/json. It returns transport errors, so goroutines
// other than the test's may call it.
func Send(client *http.Client, method, url string, body any, h Header) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h {
		if v == "-" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// Do is Send on http.DefaultClient for the test's own goroutine: a
// transport error fails t.
func Do(t testing.TB, method, url string, body any, h Header) *Response {
	t.Helper()
	r, err := Send(nil, method, url, body, h)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Decode decodes the JSON body into v, failing t when it is not JSON.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Want fails t unless the answer has status.
func (r *Response) Want(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// APIError is the error envelope's inner object.
type APIError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

// Error reads the error envelope; the zero APIError when there is none.
func (r *Response) Error() APIError {
	var b struct {
		Error APIError `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &b)
	return b.Error
}
