package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/quitapix/quita/client"
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
	if u.Scheme != "https" && !loopbackHost(u.Hostname()) {
		return "", "", fmt.Errorf("--api-url %q must use https: the API key is sent to it, and listen signs what it answers "+
			"(http is accepted only for 127.0.0.0/8, ::1 and localhost)", *f.apiURL)
	}
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	return u.String(), key, nil
}

// loopbackHost reports whether host (a URL's hostname, without brackets)
// is this machine: "localhost" or a loopback address, so plain http to it
// never crosses a network.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// newAPIClient is the SDK client the developer commands use: long-polls
// wait 25 s, so requests may take a little longer than that.
func newAPIClient(base, key, agent string) *client.Client {
	return client.New(base, key, client.WithUserAgent(agent), client.WithHTTPClient(&http.Client{Timeout: 45 * time.Second}))
}

// retryable reports whether asking again can help: not for credentials, a
// route the server does not have or a bad parameter.
func retryable(err error) bool {
	var ae *client.Error
	if errors.As(err, &ae) {
		switch ae.HTTPStatus {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return false
		}
	}
	return true
}

// listEvents is Events.ListPage, asking again (after the SDK's own
// retries) with a backoff of up to 10 s for as long as a retry can help
// and ctx lives; note says why it waits.
func listEvents(ctx context.Context, c *client.Client, p client.EventListParams, note func(error)) (*client.EventList, error) {
	backoff := time.Second
	for {
		page, err := c.Events.ListPage(ctx, p)
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return page, err
		}
		note(err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// newestEventID is the id of the newest event of the key's account and
// mode ("" when it has none): the cursor "from now on".
func newestEventID(ctx context.Context, c *client.Client) (string, error) {
	p, err := c.Events.ListPage(ctx, client.EventListParams{Limit: 1})
	if err != nil || len(p.Data) == 0 {
		return "", err
	}
	return p.Data[0].ID, nil
}
