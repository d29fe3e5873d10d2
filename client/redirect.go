package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrCrossOriginRedirect is returned (wrapped in the call's error) when
// the server answers with a redirect to another scheme, host or port than
// the request's. The client never follows one: the request carries the
// API key (or the dashboard token), which net/http would send on to the
// new host. Point the client at the URL the API is really served from.
var ErrCrossOriginRedirect = errors.New("quita: refused to follow a redirect to another origin")

// maxRedirects is net/http's own bound, kept when the caller's client has
// no CheckRedirect.
const maxRedirects = 10

// sameOriginOnly returns a copy of hc (nil means the default client) whose
// redirects are followed only within the origin of the first request, then
// under hc's own CheckRedirect. hc itself is left unchanged: the caller
// may share it with code that follows redirects anywhere.
func sameOriginOnly(hc *http.Client) *http.Client {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	cp := *hc
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from, to := origin(via[0].URL), origin(req.URL); from != to {
			return fmt.Errorf("%w: %s redirected to %s", ErrCrossOriginRedirect, from, to)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("quita: stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &cp
}

// origin is u's scheme, host and port, lower-cased, with the scheme's
// default port made explicit, so that two spellings of one origin are
// equal.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), port)
}
