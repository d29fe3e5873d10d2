package client

import (
	"net/url"
	"testing"
)

// TestOrigin: two spellings of one origin are equal; another scheme, host
// or port is another origin.
func TestOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/v1", "https://API.example.com:443/v1/x", true},
		{"http://api.example.com/v1", "http://api.example.com:80/", true},
		{"https://api.example.com./v1", "https://api.example.com/v1", true},
		{"http://[::1]:8080/v1", "http://[::1]:8080/x", true},
		{"https://api.example.com/v1", "http://api.example.com/v1", false},
		{"https://api.example.com/v1", "https://api.example.com:8443/v1", false},
		{"https://api.example.com/v1", "https://evil.example.com/v1", false},
		{"https://api.example.com/v1", "https://api.example.com.evil.io/v1", false},
		{"http://127.0.0.1:8080/v1", "http://localhost:8080/v1", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin(a) == origin(b); got != tc.same {
			t.Errorf("origin(%s) == origin(%s): %v (%s, %s), want %v", tc.a, tc.b, got, origin(a), origin(b), tc.same)
		}
	}
}
