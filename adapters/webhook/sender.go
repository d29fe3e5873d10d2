// Package webhook posts signed webhook deliveries over HTTP and keeps them
// away from internal addresses (SSRF): the URL guard checks where a URL
// resolves at registration, and the sender's dialer checks the address it
// actually connects to, so a DNS answer that changes after registration
// (rebinding) cannot reach loopback, private, link-local or metadata
// addresses either.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Policy says which addresses webhooks may reach.
type Policy struct {
	// AllowPrivate lets endpoints use http and loopback, private and
	// link-local addresses in every mode (QUITA_WEBHOOK_ALLOW_PRIVATE, for
	// development). Cloud metadata addresses stay refused.
	AllowPrivate bool
}

// metadataAddrs are cloud instance-metadata services: never reachable.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
}

// specialPurpose are the IANA IPv4 and IPv6 Special-Purpose Address
// Registries' blocks that are not globally reachable, plus the blocks that
// embed an IPv4 address a translator or tunnel would reach on our behalf
// (IPv4-compatible, NAT64, 6to4, Teredo). Private, loopback, link-local,
// multicast and unspecified addresses are refused by allowed's netip
// checks as well.
var specialPurpose = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		// IPv4 (RFC 6890 and successors)
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		// IPv6
		"::/96",          // unspecified, loopback and IPv4-compatible (::127.0.0.1)
		"::ffff:0:0/96",  // IPv4-mapped (also unmapped before the check)
		"64:ff9b::/96",   // NAT64 well-known prefix
		"64:ff9b:1::/48", // NAT64 local use
		"100::/64",       // discard-only
		"2001::/23",      // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
		"2001:db8::/32",  // documentation
		"2002::/16",      // 6to4
		"3fff::/20",      // documentation
		"5f00::/16",      // SRv6 SIDs
		"fc00::/7",       // unique local
		"fe80::/10",      // link-local
		"fec0::/10",      // site-local (deprecated)
		"ff00::/8",       // multicast
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

func isSpecialPurpose(ip netip.Addr) bool {
	for _, p := range specialPurpose {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// allowed reports whether a webhook may connect to ip under p.
func (p Policy) allowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, m := range metadataAddrs {
		if ip == m {
			return false
		}
	}
	if p.AllowPrivate {
		return ip.IsValid() && !ip.IsUnspecified() && !ip.IsMulticast()
	}
	return ip.IsValid() && ip.IsGlobalUnicast() && !ip.IsPrivate() && !isSpecialPurpose(ip) &&
		!ip.IsLoopback() && !ip.IsLinkLocalUnicast()
}

// Guard implements ports.URLGuard.
type Guard struct {
	Policy   Policy
	Resolver *net.Resolver
}

var _ ports.URLGuard = (*Guard)(nil)

// NewGuard returns a guard that resolves with the system resolver.
func NewGuard(p Policy) *Guard { return &Guard{Policy: p, Resolver: net.DefaultResolver} }

// CheckURL validates shape and scheme and resolves the host: every
// address must be allowed. A lookup that fails or answers nothing is a
// *domain.ValidationError wrapping ports.ErrURLUnresolved.
func (g *Guard) CheckURL(ctx context.Context, mode domain.Mode, rawURL string) error {
	requireHTTPS := mode == domain.ModeLive && !g.Policy.AllowPrivate
	u, err := domain.ValidateWebhookURL(rawURL, requireHTTPS)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !g.Policy.allowed(ip) {
			return fmt.Errorf("%w: %s is not a public address", ports.ErrURLForbidden, host)
		}
		return nil
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost") {
		if !g.Policy.AllowPrivate {
			return fmt.Errorf("%w: localhost is not a public address", ports.ErrURLForbidden)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.Resolver.LookupNetIP(rctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		// A refusal at registration; at delivery time a failed attempt
		// that is retried (ErrURLUnresolved): a lookup failure is not where
		// the name points.
		ve := domain.Invalid(domain.FieldWebhookURL, "%s host does not resolve", domain.FieldWebhookURL)
		ve.Err = ports.ErrURLUnresolved
		return ve
	}
	for _, a := range addrs {
		if !g.Policy.allowed(a) {
			return fmt.Errorf("%w: %s resolves to a non-public address", ports.ErrURLForbidden, host)
		}
	}
	return nil
}

// maxResponseRead bounds how much of a receiver's answer is read (and
// then discarded: the body is never stored).
const maxResponseRead = 4 << 10

// Sender implements ports.WebhookSender with net/http.
type Sender struct {
	client *http.Client
	now    func() time.Time
}

var _ ports.WebhookSender = (*Sender)(nil)

// errForbiddenAddr is returned by the dialer's control hook.
var errForbiddenAddr = errors.New("address not allowed")

// NewSender returns a sender whose dialer refuses addresses p does not
// allow, at connect time, whatever DNS said before. It never follows
// redirects, and gives up after domain.AttemptTimeout.
func NewSender(p Policy) *Sender {
	dialer := &net.Dialer{
		Timeout: 5 * time.Second,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !p.allowed(ap.Addr()) {
				return errForbiddenAddr
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and skip the guard
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: domain.AttemptTimeout,
	}
	return &Sender{
		client: &http.Client{
			Transport: tr,
			Timeout:   domain.AttemptTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
		now: time.Now,
	}
}

// Send posts one attempt.
func (s *Sender) Send(ctx context.Context, r ports.WebhookRequest) (domain.AttemptResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return domain.AttemptResult{Error: "invalid url", Permanent: true}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Quita-Webhooks/1")
	req.Header.Set(domain.SignatureHeader, r.Signature)
	req.Header.Set(domain.DeliveryIDHeader, r.DeliveryID)
	req.Header.Set(domain.EventTypeHeader, string(r.EventType))
	start := s.now()
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return domain.AttemptResult{}, ctx.Err()
		}
		return transportResult(err, s.now().Sub(start)), nil
	}
	// Read a little so the connection can be reused; never keep it.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	resp.Body.Close()
	res := domain.AttemptResult{StatusCode: resp.StatusCode, Elapsed: s.now().Sub(start)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), s.now())
	}
	return res, nil
}

// transportResult names a transport failure in a few words, without
// echoing the URL (which may carry a token in its query).
func transportResult(err error, elapsed time.Duration) domain.AttemptResult {
	res := domain.AttemptResult{Elapsed: elapsed}
	var (
		ne  net.Error
		dns *net.DNSError
	)
	switch {
	case errors.Is(err, errForbiddenAddr):
		res.Error, res.Permanent = "address not allowed (private, loopback, link-local or metadata)", true
	case errors.As(err, &dns):
		res.Error = "dns lookup failed"
	case errors.As(err, &ne) && ne.Timeout():
		res.Error = fmt.Sprintf("timeout after %s", domain.AttemptTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		res.Error = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		res.Error = "connection reset"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		res.Error = "tls handshake failed"
	default:
		res.Error = "request failed"
	}
	return res
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or
// unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return min(time.Duration(n)*time.Second, domain.MaxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), domain.MaxRetryAfter)
	}
	return 0
}
