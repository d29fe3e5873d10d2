package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/ports"
)

// The money writes keep their answer in the database with the resource
// (app/exactlyonce). Every other authenticated
// POST honours an Idempotency-Key header when one is sent (design.md,
// "Other POSTs honour the header when it is sent"): keyedWrites claims the
// key in the cache, runs the handler once, and records a 2xx answer for
// the same request to replay. The cache is the only guarantee of these
// writes (docs/decisions.md, "Idempotency of the other POSTs").
const (
	// keyedLockTTL and keyedRenewEvery are the money writes' defaults
	// (app.ChargesConfig): a dead request frees its key within 5 s, a
	// live one keeps it for as long as it runs.
	keyedLockTTL    = 5 * time.Second
	keyedRenewEvery = 2 * time.Second
	// keyedAnswerTTL is how long an answer is replayed, as for the money
	// writes' cache.
	keyedAnswerTTL = 24 * time.Hour
)

// ownsKey marks, where a route is registered, a handler that keeps the
// request's Idempotency-Key itself, so keyedWrites leaves its route alone:
// the money writes, which run exactly once per key durably
// (app/exactlyonce); and logout, which is idempotent by nature and must
// never be answered from a record (a later session of the same user
// logging out under an old key would be told 204 and stay signed in).
func ownsKey(h http.HandlerFunc) http.Handler { return keyOwner(h) }

// keyOwner is a handler marked by ownsKey.
type keyOwner http.HandlerFunc

func (k keyOwner) ServeHTTP(w http.ResponseWriter, r *http.Request) { k(w, r) }

// keyScope names whose key a request uses: with the key, it makes the
// cache entry's name, so two callers never meet each other's answers.
type keyScope func(r *http.Request) string

// apiKeyScope is DESIGN's (account, mode).
func apiKeyScope(r *http.Request) string {
	c := callerFrom(r.Context())
	return "apikey\x00" + c.Account.ID + "\x00" + string(c.Mode)
}

// dashboardScope is the account and the dashboard user: a dashboard
// answer (an API key's cleartext) is replayed to the user who got it,
// never to a colleague who picked the same key.
func dashboardScope(r *http.Request) string {
	u := dashboardUser(r.Context())
	return "dashboard\x00" + u.AccountID + "\x00" + u.UserID
}

// keyedWrites is the middleware; cache nil leaves every request as it is.
// It runs after authentication, which gives scope its caller.
func keyedWrites(cache ports.IdempotencyCache, scope keyScope, log *slog.Logger) mux.MiddlewareFunc {
	if log == nil {
		log = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		if cache == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent, hasKey := r.Header["Idempotency-Key"]
			if !hasKey || r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			if route := mux.CurrentRoute(r); route != nil && ownsKeyRoute(route) {
				next.ServeHTTP(w, r)
				return
			}
			k := &keyedWrite{cache: cache, log: log}
			if err := k.prepare(w, r, sent[0], scope); err != nil {
				writeError(w, r, err)
				return
			}
			k.serve(w, r, next)
		})
	}
}

// keyedWrite is one request under its key.
type keyedWrite struct {
	cache       ports.IdempotencyCache
	log         *slog.Logger
	ckey        string
	fingerprint string
}

// prepare checks the key (as for the money writes, 8 to 128 characters),
// reads the body for the fingerprint and puts it back for the handler.
func (k *keyedWrite) prepare(w http.ResponseWriter, r *http.Request, key string, scope keyScope) error {
	if key == "" {
		return badRequest("Idempotency-Key", "idempotency_key_invalid", "Idempotency-Key must be 8 to 128 characters of valid UTF-8")
	}
	key, err := checkIdempotencyKey("Idempotency-Key", key)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, false)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	k.ckey = scope(r) + "\x00" + key // a key holds no NUL (checkIdempotencyKey)
	k.fingerprint = keyedFingerprint(r.Method, r.URL.Path, body)
	return nil
}

// keyedFingerprint is fingerprint, but a body larger than any these routes
// take (smallBody) is hashed as sent rather than parsed: canonicalising a
// 1 MiB JSON array costs tens of MB while the request holds its place, for
// a body its handler refuses anyway.
func keyedFingerprint(method, path string, body []byte) string {
	if len(body) <= smallBody {
		return fingerprint(method, path, body)
	}
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (k *keyedWrite) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	ctx := r.Context()
	claim, err := k.cache.Begin(ctx, k.ckey, k.fingerprint, keyedLockTTL)
	if err != nil {
		// No cache, no guarantee: the write runs, as it would without a
		// key (the guarded Redis cache has logged its outage already).
		if !errors.Is(err, ports.ErrCacheUnavailable) {
			k.log.WarnContext(ctx, "idempotency cache unavailable; running the write unguarded", "err", err)
		}
		next.ServeHTTP(w, r)
		return
	}
	switch claim.State {
	case ports.ClaimCompleted:
		if claim.Fingerprint != k.fingerprint {
			writeError(w, r, app.ErrIdempotencyKeyReused)
			return
		}
		w.Header().Set("Idempotent-Replayed", "true")
		if len(claim.Body) == 0 {
			w.WriteHeader(claim.StatusCode)
			return
		}
		writeRaw(w, claim.StatusCode, claim.Body)
		return
	case ports.ClaimInFlight:
		if claim.Fingerprint != k.fingerprint {
			writeError(w, r, app.ErrIdempotencyKeyReused)
			return
		}
		writeError(w, r, &app.KeyInUseError{Remaining: claim.Remaining})
		return
	}

	stop := exactlyonce.RenewClaim(ctx, k.cache, k.ckey, k.fingerprint, keyedLockTTL, keyedRenewEvery)
	completed := false
	defer func() {
		stop()
		if !completed {
			// Detached: a cancelled request must still free its key, and
			// a panic unwinding through here too.
			if err := k.cache.Release(context.WithoutCancel(ctx), k.ckey, k.fingerprint); err != nil {
				k.log.WarnContext(ctx, "release idempotency claim", "err", err)
			}
		}
	}()
	buf := &answerBuffer{header: w.Header()}
	next.ServeHTTP(buf, r)
	status := buf.statusOrOK()
	// Only a 2xx is kept: a 4xx changed nothing and a 5xx or 503 may be
	// retried, so either runs again under the same key.
	if status >= 200 && status < 300 {
		stop()
		if err := k.cache.Complete(context.WithoutCancel(ctx), k.ckey, k.fingerprint, status, buf.body.Bytes(), keyedAnswerTTL); err != nil {
			k.log.WarnContext(ctx, "record idempotent answer", "err", err)
		} else {
			completed = true
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.body.Bytes())
}

// answerBuffer holds a handler's answer until it is recorded, so that a
// client that has the answer finds it recorded when it retries. Headers go
// straight to the real writer's map.
type answerBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *answerBuffer) Header() http.Header { return b.header }

func (b *answerBuffer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *answerBuffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *answerBuffer) statusOrOK() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// ownsKeyRoute reports whether route's handler was registered with
// ownsKey.
func ownsKeyRoute(route *mux.Route) bool {
	_, ok := route.GetHandler().(keyOwner)
	return ok
}
