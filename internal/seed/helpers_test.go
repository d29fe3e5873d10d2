package seed_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/internal/seed"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
)

// seeded is a seeded database with the real server on it.
type seeded struct {
	res *seed.Result
	app *wiring.App
	url string
}

// seedAndServe seeds a fresh database with opts and serves it; both end
// with t.
func seedAndServe(t *testing.T, opts seed.Options) *seeded {
	t.Helper()
	ctx := context.Background()
	opts.DSN = testenv.PostgresDSN(t)
	res, err := seed.Seed(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, cleanup, err := wiring.InitializeApp(ctx, wiring.Config{DatabaseURL: opts.DSN, BaseURL: "http://seed.test/v1"},
		slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return &seeded{res: res, app: a, url: srv.URL + "/v1"}
}

// get sends GET path with the big account's key and decodes its 200.
func (s *seeded) get(t *testing.T, path string) map[string]any {
	t.Helper()
	var out map[string]any
	testkit.Do(t, http.MethodGet, s.url+path, nil, testkit.Header{"apikey": s.res.TestKey}).Want(t, http.StatusOK).Decode(t, &out)
	return out
}
