package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
)

// The developer commands (listen, trigger) talk to a Quita server over its
// public API only, like a merchant's code: they work against any server
// the machine can reach, and need nothing to reach the machine.

// devFlags are the flags every developer command shares.
type devFlags struct {
	*flag.FlagSet
	apiURL *string
	apiKey *string
}

func newDevFlags(name string, getenv func(string) string) devFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	def := getenv("QUITA_API_URL")
	if def == "" {
		def = "http://127.0.0.1:8080/v1"
	}
	return devFlags{FlagSet: fs,
		apiURL: fs.String("api-url", def, "the API base, with or without /v1 (env QUITA_API_URL)"),
		apiKey: fs.String("api-key", "", "the API key (env QUITA_API_KEY, which ps does not show)"),
	}
}

// api returns the base URL (ending in /v1) and the key, after Parse.
func (f devFlags) api(getenv func(string) string) (string, string, error) {
	key := *f.apiKey
	if key == "" {
		key = getenv("QUITA_API_KEY")
	}
	if key == "" {
		return "", "", errors.New("an API key is needed: --api-key or env QUITA_API_KEY")
	}
	u, err := url.Parse(strings.TrimRight(*f.apiURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("--api-url %q must be an absolute http(s) URL such as http://127.0.0.1:8080/v1", *f.apiURL)
	}
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	return u.String(), key, nil
}

// eventsAPI reads GET /v1/events.
type eventsAPI struct {
	base, key string
	http      *http.Client
}

func newEventsAPI(base, key string) *eventsAPI {
	// Longer than the longest long-poll (25 s).
	return &eventsAPI{base: base, key: key, http: &http.Client{Timeout: 45 * time.Second}}
}

type eventPage struct {
	Data    []domain.PublicEvent `json:"data"`
	HasMore bool                 `json:"has_more"`
}

// apiError is an error answer of the API.
type apiError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("the API answered %d %s: %s", e.Status, e.Code, e.Message)
}

// fatal reports whether retrying cannot help (credentials, a route the
// server does not have, a bad parameter).
func (e *apiError) fatal() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden ||
		e.Status == http.StatusNotFound || e.Status == http.StatusBadRequest
}

func (a *eventsAPI) list(ctx context.Context, q url.Values) (*eventPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/events?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("apikey", a.key)
	req.Header.Set("User-Agent", "quitad-devkit/1")
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var env struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &env)
		ae := &apiError{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			ae.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, ae
	}
	var p eventPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("decode the events page: %w", err)
	}
	return &p, nil
}

// listWithRetry is list, retrying what a retry can fix (network, 5xx,
// 429) with a backoff of up to 10 s until ctx ends; note says why.
func (a *eventsAPI) listWithRetry(ctx context.Context, q url.Values, note func(error)) (*eventPage, error) {
	backoff := time.Second
	for {
		p, err := a.list(ctx, q)
		if err == nil || ctx.Err() != nil {
			return p, err
		}
		var ae *apiError
		wait := backoff
		if errors.As(err, &ae) {
			if ae.fatal() {
				return nil, err
			}
			wait = max(wait, ae.RetryAfter)
		}
		note(err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// newestEventID is the id of the newest event of the key's account and
// mode ("" when it has none): the cursor "from now on".
func (a *eventsAPI) newestEventID(ctx context.Context) (string, error) {
	p, err := a.list(ctx, url.Values{"limit": {"1"}})
	if err != nil || len(p.Data) == 0 {
		return "", err
	}
	return p.Data[0].ID, nil
}
