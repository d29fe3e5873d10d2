package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/quitapix/quita/client"
)

// headerRecorder is a server that keeps the credential headers of every
// request it gets.
type headerRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	hr := &headerRecorder{}
	hr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hr.mu.Lock()
		hr.seen = append(hr.seen, r.Header.Clone())
		hr.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[],"has_more":false,"next_cursor":null}`))
	}))
	t.Cleanup(hr.srv.Close)
	return hr
}

func (hr *headerRecorder) requests() []http.Header {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return hr.seen
}

// redirector answers every request with status and a Location of target
// plus the request's path and query.
func redirector(t *testing.T, status int, target func() string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target()+r.URL.RequestURI())
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestClientNeverFollowsARedirectToAnotherOrigin: an API URL that
// redirects to another port, host or scheme gets ErrCrossOriginRedirect,
// and the other server never sees the API key, the dashboard token or any
// request at all — with the default client, with a caller's client that
// has no redirect policy, and with one that follows every redirect (which
// is left as it was).
func TestClientNeverFollowsARedirectToAnotherOrigin(t *testing.T) {
	t.Parallel()
	const key = "qt_test_redirectedkeyredirectedkey0"
	const token = "dashboard-token-never-forwarded"
	followAll := func(*http.Request, []*http.Request) error { return nil }
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, to := range []string{"port", "host", "scheme"} {
			for _, hcName := range []string{"default", "plain", "follow-all"} {
				t.Run(http.StatusText(status)+"/"+to+"/"+hcName, func(t *testing.T) {
					t.Parallel()
					other := newHeaderRecorder(t)
					var from *httptest.Server
					from = redirector(t, status, func() string {
						u, _ := url.Parse(other.srv.URL)
						switch to {
						case "host":
							u.Host = "localhost:" + u.Port()
						case "scheme":
							u, _ = url.Parse(from.URL)
							u.Scheme = "https"
						}
						return u.String()
					})
					var opts []client.Option
					var hc *http.Client
					switch hcName {
					case "plain":
						hc = &http.Client{}
					case "follow-all":
						hc = &http.Client{CheckRedirect: followAll}
					}
					if hc != nil {
						opts = append(opts, client.WithHTTPClient(hc))
					}
					c := client.New(from.URL+"/v1", key, append(opts, client.WithMaxRetries(0))...)
					calls := map[string]func() error{
						"apikey": func() error {
							_, err := c.Events.ListPage(context.Background(), client.EventListParams{})
							return err
						},
						"token": func() error {
							_, err := c.With(client.WithToken(token)).APIKeys.List(context.Background())
							return err
						},
					}
					for name, call := range calls {
						if err := call(); !errors.Is(err, client.ErrCrossOriginRedirect) {
							t.Errorf("%s: err = %v, want ErrCrossOriginRedirect", name, err)
						}
					}
					for _, h := range other.requests() {
						if h.Get("apikey") != "" || strings.Contains(h.Get("Authorization"), token) {
							t.Errorf("the other origin received a credential: apikey %q, Authorization %q", h.Get("apikey"), h.Get("Authorization"))
						}
					}
					if n := len(other.requests()); n != 0 {
						t.Errorf("the other origin received %d request(s)", n)
					}
					if hc != nil && hcName == "plain" && hc.CheckRedirect != nil {
						t.Error("the caller's http.Client was modified")
					}
				})
			}
		}
	}
}

// TestClientFollowsARedirectWithinTheOrigin: a redirect to another path
// of the same server is followed, still authenticated, and a caller's
// CheckRedirect still decides after the origin check.
func TestClientFollowsARedirectWithinTheOrigin(t *testing.T) {
	t.Parallel()
	const key = "qt_test_sameoriginkeysameoriginkey00"
	var (
		mu   sync.Mutex
		keys []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("apikey"))
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/old/") {
			http.Redirect(w, r, "/v1/"+strings.TrimPrefix(r.URL.Path, "/old/v1/"), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[],"has_more":false,"next_cursor":null}`))
	}))
	t.Cleanup(srv.Close)
	base := srv.URL + "/old/v1"
	if _, err := client.New(base, key).Events.ListPage(context.Background(), client.EventListParams{}); err != nil {
		t.Fatalf("same-origin redirect: %v", err)
	}
	mu.Lock()
	if len(keys) != 2 || keys[0] != key || keys[1] != key {
		t.Errorf("apikey per request %q, want the key on both", keys)
	}
	mu.Unlock()

	stop := errors.New("caller stops here")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return stop }}
	_, err := client.New(base, key, client.WithHTTPClient(hc), client.WithMaxRetries(0)).Events.ListPage(context.Background(), client.EventListParams{})
	if !errors.Is(err, stop) {
		t.Errorf("caller's CheckRedirect: err = %v, want its error", err)
	}
}
