package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// RateLimitSource names the per-account request limit.
type RateLimitSource interface {
	RateLimit(ctx context.Context, accountID string) (ports.RateLimit, error)
	// ActiveKeys counts the account's unrevoked API keys (cached).
	ActiveKeys(ctx context.Context, accountID string) (int, error)
}

// APIKeyAuth is the middleware of every apikey route: authentication
// (missing or invalid key → 401) and the per-key rate limit (→ 429). It is
// exported for benchmarks and for embedders that mount their own routes.
func APIKeyAuth(d Deps) mux.MiddlewareFunc {
	lim := newLimiter(d.RateLimits, d.Limiter)
	var acting ActingFor
	if d.Subaccounts != nil {
		acting = d.Subaccounts
	}
	auth := requireAPIKey(d.Accounts, acting, newAuthFailures(d.AuthFailures))
	return func(next http.Handler) http.Handler {
		return auth(lim.enforce(next))
	}
}

// keyLimiter applies the per-key GCRA limit after requireAPIKey has
// authenticated the key. Its call usually answers in the process (a busy
// key spends tokens it leased from the shared bucket) and the key's
// account comes from the process's key cache, so the two are asked one
// after the other: overlapping them cost every request a goroutine for a
// round trip saved about once a second per key.
//
// Anything that keeps the limiter from deciding (settings or Redis errors)
// lets the request through: the limiter protects the service, it must
// never fail it.
type keyLimiter struct {
	src     RateLimitSource
	limiter ports.RateLimiter
}

type limitAnswer struct {
	limit ports.RateLimit
	d     ports.RateDecision
	err   error
}

func newLimiter(src RateLimitSource, l ports.RateLimiter) *keyLimiter {
	return &keyLimiter{src: src, limiter: l}
}

// accountLimitFactor scales a key's limit into its account's: keys share
// the account budget, so minting keys cannot multiply it (security.md,
// item 16), while a few keys still each get their full rate.
//
// So the account's limit can only refuse when the account has more than
// accountLimitFactor keys: each key's bucket (burst B, rate R) admits at
// most B + R·t requests in any t, k keys at most k(B + R·t), and the
// account's (4B, 4R) at least 4B + 4R·t — more whenever k ≤ 4. Its Redis
// call is skipped then (one round trip of four per create);
// from a fifth key on, the account's bucket is charged and starts full.
const accountLimitFactor = 4

// ask decides a request of key fingerprint in scope. The account's bucket
// is one per mode: test traffic never spends live traffic's budget.
func (l *keyLimiter) ask(ctx context.Context, scope ports.Scope, fingerprint string) limitAnswer {
	accountID := scope.AccountID
	limit, err := l.src.RateLimit(ctx, accountID)
	if err != nil {
		return limitAnswer{err: err}
	}
	d, err := l.limiter.Allow(ctx, fingerprint, limit)
	if err != nil || !d.Allowed {
		return limitAnswer{limit: limit, d: d, err: err}
	}
	if keys, err := l.src.ActiveKeys(ctx, accountID); err == nil && keys <= accountLimitFactor {
		return limitAnswer{limit: limit, d: d}
	}
	acct := ports.RateLimit{Rate: limit.Rate * accountLimitFactor, Burst: limit.Burst * accountLimitFactor, Period: limit.Period}
	ad, err := l.limiter.Allow(ctx, "acct:"+accountID+":"+string(scope.Mode), acct)
	if err != nil {
		return limitAnswer{limit: limit, d: d}
	}
	if !ad.Allowed {
		d = ports.RateDecision{RetryAfter: ad.RetryAfter, ResetAfter: max(d.ResetAfter, ad.ResetAfter)}
	}
	return limitAnswer{limit: limit, d: d}
}

func (l *keyLimiter) enforce(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := callerFrom(r.Context())
		if l.src == nil || l.limiter == nil || caller.KeyFingerprint == "" {
			next.ServeHTTP(w, r)
			return
		}
		ans := l.ask(r.Context(), caller.Scope(), caller.KeyFingerprint)
		if ans.err != nil {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("RateLimit-Limit", strconv.Itoa(ans.limit.Burst))
		h.Set("RateLimit-Remaining", strconv.Itoa(max(ans.d.Remaining, 0)))
		h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(ans.d.ResetAfter)))
		if !ans.d.Allowed {
			writeError(w, r, &app.ThrottledError{RetryAfter: ans.d.RetryAfter})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ceilSeconds rounds up to whole seconds, at least 1 for any wait.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}
