package bcbpix

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/quitapix/quita/ports"
)

// Problem is an RFC 7807 problem body as API Pix answers errors.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Violacoes []struct {
		Razao       string `json:"razao"`
		Propriedade string `json:"propriedade"`
	} `json:"violacoes"`
}

// Error describes the problem without the request (no secret is in it).
func (p *Problem) Error() string {
	msg := fmt.Sprintf("PSP answered %d", p.Status)
	if p.Title != "" {
		msg += ": " + p.Title
	}
	if p.Detail != "" {
		msg += " (" + p.Detail + ")"
	}
	for _, v := range p.Violacoes {
		msg += "; " + v.Propriedade + ": " + v.Razao
	}
	return msg
}

// client talks to one account's PSP: one mTLS transport (connections are
// reused) and one token source that caches the access token until shortly
// before it expires.
type client struct {
	cfg      AccountConfig
	base     string
	http     *http.Client
	tokens   *tokenCache
	loadedAt time.Time
	updated  time.Time
	retry    []time.Duration
}

// tokenCache holds the access token until shortly before it expires (one
// fetch at a time), and drops it when the PSP stops accepting it (401).
type tokenCache struct {
	cfg clientcredentials.Config
	ctx context.Context

	mu      sync.Mutex
	tok     *oauth2.Token
	fetched time.Time
}

// Token implements oauth2.TokenSource.
func (c *tokenCache) Token() (*oauth2.Token, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok.Valid() {
		return c.tok, nil
	}
	t, err := c.cfg.Token(c.ctx)
	if err != nil {
		return nil, err
	}
	c.tok, c.fetched = t, time.Now()
	return t, nil
}

// drop forgets the token unless it was fetched after since (a request
// that started before a refresh does not discard the fresh token).
func (c *tokenCache) drop(since time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetched.Before(since) {
		c.tok = nil
	}
}

func newClient(cfg AccountConfig, timeout time.Duration, retry []time.Duration) (*client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CertPEM != "" {
		pair, err := tls.X509KeyPair([]byte(cfg.CertPEM), []byte(cfg.KeyPEM))
		if err != nil {
			return nil, errors.New("bcbpix: client certificate and key do not load")
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	if cfg.CAPEM != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.CAPEM)) {
			return nil, errors.New("bcbpix: CA holds no certificate")
		}
		tlsCfg.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 5 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	plain := &http.Client{Transport: tr, Timeout: timeout}
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.tokenURL(),
		AuthStyle: oauth2.AuthStyleInHeader}
	// The token source outlives any request: it refreshes through the same
	// mTLS transport and caches the token until it is about to expire.
	ts := &tokenCache{cfg: cc, ctx: context.WithValue(context.Background(), oauth2.HTTPClient, plain)}
	return &client{
		cfg:    cfg,
		base:   strings.TrimRight(cfg.BaseURL, "/"),
		http:   &http.Client{Transport: &oauth2.Transport{Source: ts, Base: tr}, Timeout: timeout},
		tokens: ts,
		retry:  retry,
	}, nil
}

func (c *client) close() {
	if t, ok := c.http.Transport.(*oauth2.Transport); ok {
		if b, ok := t.Base.(*http.Transport); ok {
			b.CloseIdleConnections()
		}
	}
}

// do sends one API Pix call and decodes a 2xx body into out. Safe (idempotent)
// calls are retried with back-off on 5xx and transport failures. Errors:
// ports.ErrNotFound (404), ports.ErrAcquirerUnauthorized (401 even with a
// fresh token, 403, token endpoint 4xx: about the credentials, not the
// request), ports.ErrAcquirerRejected (other 4xx: the request's content),
// ports.ErrAcquirerUnavailable (5xx, 429, transport, token endpoint down).
func (c *client) do(ctx context.Context, method, path string, body, out any, idempotent bool) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	attempts := 1
	if idempotent {
		attempts += len(c.retry)
	}
	var last error
	for i := range attempts {
		if i > 0 {
			t := time.NewTimer(c.retry[i-1])
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%w: %s %s: %v", ports.ErrAcquirerUnavailable, method, opName(path), last)
			case <-t.C:
			}
		}
		retry, err := c.once(ctx, method, path, payload, out)
		if err == nil || !retry {
			return err
		}
		last = err
	}
	return last
}

// opName is the operation without ids, for messages.
func opName(path string) string {
	if i := strings.IndexAny(path[1:], "/?"); i >= 0 {
		return path[:i+1]
	}
	return path
}

func (c *client) once(ctx context.Context, method, path string, payload []byte, out any) (retry bool, err error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	started := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return transportError(method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return true, fmt.Errorf("%w: %s %s: read body: %v", ports.ErrAcquirerUnavailable, method, opName(path), err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil || len(bytes.TrimSpace(raw)) == 0 {
			return false, nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return false, fmt.Errorf("%w: %s %s: undecodable answer", ports.ErrAcquirerUnavailable, method, opName(path))
		}
		return false, nil
	}
	p := &Problem{Status: resp.StatusCode}
	_ = json.Unmarshal(raw, p)
	p.Status = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		// The PSP no longer accepts the cached token (revoked, or its
		// clock differs): fetch a new one and try again.
		// A 401 the retries did not cure is about the credentials, never
		// about the request: it must not read as a refusal of it.
		c.tokens.drop(started)
		return true, fmt.Errorf("%w: %w", ports.ErrAcquirerUnauthorized, p)
	case resp.StatusCode == http.StatusForbidden:
		// The credentials lack a scope or a permission (API Pix's 403).
		return false, fmt.Errorf("%w: %w", ports.ErrAcquirerUnauthorized, p)
	case resp.StatusCode == http.StatusNotFound:
		return false, fmt.Errorf("%w: %w", ports.ErrNotFound, p)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("%w: %w", ports.ErrAcquirerUnavailable, p)
	default:
		return false, fmt.Errorf("%w: %w", ports.ErrAcquirerRejected, p)
	}
}

// transportError maps a failed round trip. A token endpoint that refused
// the credentials is ports.ErrAcquirerUnauthorized (it says nothing about
// the request); anything else (down, timeout, TLS) may pass. The
// underlying error is not echoed: it may quote the token endpoint's
// answer.
func transportError(method, path string, err error) (bool, error) {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return false, fmt.Errorf("%w: the PSP refused Quita's OAuth2 client credentials (%d %s)",
				ports.ErrAcquirerUnauthorized, re.Response.StatusCode, re.ErrorCode)
		}
		return true, fmt.Errorf("%w: the PSP token endpoint is unavailable", ports.ErrAcquirerUnavailable)
	}
	var ue interface{ Timeout() bool }
	if errors.As(err, &ue) && ue.Timeout() {
		return true, fmt.Errorf("%w: %s %s: timeout", ports.ErrAcquirerUnavailable, method, opName(path))
	}
	var tlsErr *tls.CertificateVerificationError
	if errors.As(err, &tlsErr) {
		return false, fmt.Errorf("%w: %s %s: the PSP's TLS certificate is not trusted", ports.ErrAcquirerUnavailable, method, opName(path))
	}
	return true, fmt.Errorf("%w: %s %s: PSP unreachable", ports.ErrAcquirerUnavailable, method, opName(path))
}
