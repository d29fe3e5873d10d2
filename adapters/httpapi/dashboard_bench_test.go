package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
	"github.com/quitapix/quita/quitatest"
)

// reportPercentiles adds p50/p99/max (ms) of the recorded durations.
func reportPercentiles(b *testing.B, ds []time.Duration) {
	b.Helper()
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkAuthenticate measures what the apikey middleware adds to every
// request on the production setup (Postgres + Redis): authentication (the
// key lookup by fingerprint, no slow hash, trusted for the production
// AuthCacheTTL of 1 s — revoke and rotate wait that long), the database
// lookup a cache miss costs once per key, process and second, the
// account's limit (cached per process) and the Redis GCRA call.
// Budget for authentication: p99 ≤ 0.3 ms.
func BenchmarkAuthenticate(b *testing.B) {
	redisURL, prefix := testenv.RedisURL(b)
	srv := quitatest.NewServer(b, quitatest.Options{DatabaseURL: testenv.PostgresDSN(b), RedisURL: redisURL, RedisPrefix: prefix,
		AuthCacheTTL: time.Duration(app.DefaultAuthCacheTTL)})
	acct := srv.NewAccount(b, "Loja Bench")
	d := srv.App.Dashboard
	ctx := context.Background()
	if err := d.GuardSettings.Set(ctx, acct.AccountID, ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000}); err != nil {
		b.Fatal(err)
	}
	mw := httpapi.APIKeyAuth(httpapi.Deps{Accounts: srv.App.Accounts, RateLimits: d.GuardSettings, Limiter: d.Limiter})(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	req := httptest.NewRequest(http.MethodGet, "/v1/charges", nil)
	req.Header.Set("apikey", acct.LiveKey)
	steps := map[string]func(){
		// The database read of a cache miss.
		"lookup-db": func() {
			if _, _, err := srv.App.DB.LookupAPIKey(ctx, domain.APIKeyFingerprint(acct.LiveKey)); err != nil {
				b.Fatal(err)
			}
		},
		// Authentication as requests see it.
		"lookup": func() {
			if _, _, err := srv.App.Accounts.Authenticate(ctx, acct.LiveKey); err != nil {
				b.Fatal(err)
			}
		},
		// The middleware itself, as every apikey route runs it.
		"middleware": func() {
			rec := httptest.NewRecorder()
			mw.ServeHTTP(rec, req)
			if rec.Code != http.StatusNoContent {
				b.Fatalf("middleware answered %d: %s", rec.Code, rec.Body)
			}
		},
		// The middleware's steps one after the other.
		"lookup+ratelimit": func() {
			caller, _, err := srv.App.Accounts.Authenticate(ctx, acct.LiveKey)
			if err != nil {
				b.Fatal(err)
			}
			limit, err := d.GuardSettings.RateLimit(ctx, caller.Account.ID)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.Limiter.Allow(ctx, caller.KeyFingerprint, limit); err != nil {
				b.Fatal(err)
			}
		},
	}
	for _, name := range []string{"lookup-db", "lookup", "lookup+ratelimit", "middleware"} {
		step := steps[name]
		b.Run(name, func(b *testing.B) {
			for range 200 { // warm the pools and the script cache
				step()
			}
			ds := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				step()
				ds = append(ds, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, ds)
		})
	}
}

// BenchmarkLogin measures a dashboard login (argon2id verify + token).
// Budget: p99 ≤ 250 ms.
func BenchmarkLogin(b *testing.B) {
	srv := quitatest.NewServer(b, quitatest.Options{DatabaseURL: testenv.PostgresDSN(b), JWTSecret: jwtSecret})
	email := "bench-login@dash.example.com"
	if _, err := srv.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{Name: "Loja", Email: email, Password: password}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	var i int
	for b.Loop() {
		// One address per login, so the per-address throttle never
		// measures itself.
		i++
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		t0 := time.Now()
		if _, err := srv.App.Dashboard.Sessions.Login(ctx, email, password, ip); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, ds)
}
