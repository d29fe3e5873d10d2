package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type ctxClientIPKey struct{}

// clientIP is the caller's address as withClientIP decided it ("" outside
// a request).
func clientIP(ctx context.Context) string {
	ip, _ := ctx.Value(ctxClientIPKey{}).(string)
	return ip
}

// ClientIP is the caller's address of a request this handler serves, as
// the trusted-proxy rules decided it; other adapters mounted on it (the
// web dashboard) use it for their throttles.
func ClientIP(r *http.Request) string { return clientIP(r.Context()) }

// withClientIP records the caller's address for the throttles. The TCP
// peer is the caller unless it is one of trusted (a load balancer or
// reverse proxy the operator named in QUITA_TRUSTED_PROXIES): only then is
// X-Forwarded-For read, from the right, skipping trusted hops. A client
// can write any X-Forwarded-For it likes, so trusting it by default would
// let every request pick a fresh throttle bucket.
func withClientIP(trusted []netip.Prefix) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ip := realClientIP(r, trusted)
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxClientIPKey{}, ip)))
		})
	}
}

// maxForwardedHops bounds how much of X-Forwarded-For is examined.
const maxForwardedHops = 16

func realClientIP(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-maxForwardedHops; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a garbled hop: the last trusted one is all we know
		}
		client = a.Unmap()
		if !isTrusted(client, trusted) {
			break
		}
	}
	return client.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads QUITA_TRUSTED_PROXIES: comma-separated CIDRs
// or single addresses ("10.0.0.0/8, 192.0.2.10"); empty trusts none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: %q is neither a CIDR nor an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Limits of failed API-key authentications per client address
// (security.md, item 16): each 401 costs a database lookup.
const (
	maxAuthFailuresPerIP = 60
	authFailureWindow    = time.Minute
)

// authFailures counts 401s per client address and, past the limit, refuses
// that address's unknown keys before they are looked up. A key this
// process has authenticated before still passes, so a client sharing an
// address with an attacker (a NAT, an untrusted proxy) keeps working. A
// counter error lets the request through: the lookup still decides, the
// counter only saves its cost.
type authFailures struct {
	counter ports.LoginAttempts

	mu sync.Mutex
	// good holds fingerprints of keys this process authenticated.
	good map[string]struct{}
}

func newAuthFailures(c ports.LoginAttempts) *authFailures {
	if c == nil {
		return nil
	}
	return &authFailures{counter: c, good: map[string]struct{}{}}
}

func authFailureKey(ip string) string {
	sum := sha256.Sum256([]byte(ip))
	return "apikey401:" + hex.EncodeToString(sum[:16])
}

func (f *authFailures) blocked(ctx context.Context, ip, key string) (time.Duration, bool) {
	if f == nil {
		return 0, false
	}
	// A key this process has authenticated passes whatever the address's
	// count: no need to ask the counter (a Redis round trip per request).
	f.mu.Lock()
	_, good := f.good[domain.APIKeyFingerprint(key)]
	f.mu.Unlock()
	if good {
		return 0, false
	}
	n, wait, err := f.counter.Failures(ctx, authFailureKey(ip))
	if err != nil || n < maxAuthFailuresPerIP {
		return 0, false
	}
	return max(wait, time.Second), true
}

func (f *authFailures) failed(ctx context.Context, ip string) {
	if f != nil {
		_, _, _ = f.counter.AddFailure(ctx, authFailureKey(ip), authFailureWindow)
	}
}

func (f *authFailures) succeeded(key string) {
	if f == nil {
		return
	}
	fp := domain.APIKeyFingerprint(key)
	f.mu.Lock()
	if _, ok := f.good[fp]; !ok {
		if len(f.good) >= 100_000 {
			clear(f.good)
		}
		f.good[fp] = struct{}{}
	}
	f.mu.Unlock()
}
