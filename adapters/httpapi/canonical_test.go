package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// slowCanonical is the canonical form by definition: decoded (numbers as
// text) and encoded again by encoding/json.
func slowCanonical(body []byte) ([]byte, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

var canonicalSeeds = []string{
	`{"amount":1000,"payment_method":"pix","customer":{"name":"João da Silva","document":"12345678909"}}`,
	" {\n \"b\" : [1, 2.50, -0, 1e3, 1E+2, true, false, null, {}, []],\t\"a\":\"x\" } ",
	`{"a!":1,"a":2,"a ":3,"":4}`,
	`{"a":1,"a":2}`,
	`{"html":"<b>&amp;</b>"}`,
	`{"esc":"line\nbreak \"quoted\" \u00e9"}`,
	"{\"sep\":\"a\u2028b\"}",
	"{\"bad\":\"\xff\"}",
	`{"metadata":{"z":"1","y":{"x":[{"w":"2"}]}}}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	`{"a":1} trailing`,
	`{"a":01}`,
	`{"a":1.}`,
	`{"a":-}`,
	`"just a string"`,
	`12.5e-3`,
	``,
	`   `,
	`{"a":tru}`,
	`{"a" 1}`,
	`{"a":1,}`,
	`[1,]`,
	"{\"del\":\"\x7f\"}",
}

// TestCanonicalJSON: the fast canonical form is encoding/json's, byte for
// byte, on the bodies it takes, and it takes a merchant's ordinary create
// body (the point of it).
func TestCanonicalJSON(t *testing.T) {
	for _, s := range canonicalSeeds {
		got, gotOK := canonicalJSON([]byte(s))
		want, wantOK := slowCanonical([]byte(s))
		if gotOK != wantOK || !bytes.Equal(got, want) {
			t.Errorf("canonicalJSON(%q) = %q, %v; encoding/json gives %q, %v", s, got, gotOK, want, wantOK)
		}
	}
	for _, s := range canonicalSeeds[:3] {
		if _, ok := canonicalFast([]byte(s)); !ok {
			t.Errorf("the fast path refused %q", s)
		}
	}
	for _, s := range []string{`{"a":1,"a":2}`, `{"html":"<b>"}`, `{"esc":"\n"}`, "{\"sep\":\"\u2028\"}", "{\"bad\":\"\xff\"}", `{"a":1} x`} {
		if _, ok := canonicalFast([]byte(s)); ok {
			t.Errorf("the fast path took %q, which it must leave to encoding/json", s)
		}
	}
}

// FuzzCanonicalJSON: whatever the body, the canonical form (fast path or
// not) is encoding/json's decode-and-encode, so a fingerprint never
// changes with the path taken.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotOK := canonicalJSON(body)
		want, wantOK := slowCanonical(body)
		if gotOK != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("canonicalJSON(%q) = %q, %v; encoding/json gives %q, %v", body, got, gotOK, want, wantOK)
		}
	})
}
