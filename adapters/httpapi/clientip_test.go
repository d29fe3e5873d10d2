package httpapi

import (
	"net/http/httptest"
	"testing"
)

// X-Forwarded-For is read only from a trusted proxy, from the right, and
// never lets a client pick its own throttle bucket.
func TestClientIPTrustsForwardedForOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.10")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		trusted    bool
		want       string
	}{
		{"no proxies configured", "203.0.113.5:4000", []string{"1.2.3.4"}, false, "203.0.113.5"},
		{"untrusted peer", "203.0.113.5:4000", []string{"1.2.3.4"}, true, "203.0.113.5"},
		{"trusted peer", "10.1.2.3:4000", []string{"198.51.100.7"}, true, "198.51.100.7"},
		{"client-written entries left of the real one", "10.1.2.3:4000", []string{"6.6.6.6, 198.51.100.7"}, true, "198.51.100.7"},
		{"two trusted hops", "192.0.2.10:4000", []string{"198.51.100.7, 10.9.9.9"}, true, "198.51.100.7"},
		{"several headers", "10.1.2.3:4000", []string{"6.6.6.6", "198.51.100.7"}, true, "198.51.100.7"},
		{"garbled hop", "10.1.2.3:4000", []string{"198.51.100.7, not-an-ip"}, true, "10.1.2.3"},
		{"no header", "10.1.2.3:4000", nil, true, "10.1.2.3"},
		{"ipv4-mapped peer", "[::ffff:203.0.113.5]:4000", nil, false, "203.0.113.5"},
		{"ipv6 peer", "[2001:db8::1]:4000", []string{"1.2.3.4"}, true, "2001:db8::1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		var tp = trusted
		if !tc.trusted {
			tp = nil
		}
		if got := realClientIP(r, tp); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8,nonsense"); err == nil {
		t.Error("a bad proxy entry was accepted")
	}
}

func TestMethodLabelAndCapText(t *testing.T) {
	t.Parallel()
	for m, want := range map[string]string{"GET": "GET", "DELETE": "DELETE", "get": "OTHER", "PROPFIND": "OTHER", "": "OTHER"} {
		if got := methodLabel(m); got != want {
			t.Errorf("methodLabel(%q) = %q", m, got)
		}
	}
	if got := capText("ação-ação", 3); got != "aç…" {
		t.Errorf("capText cut a rune: %q", got)
	}
}
