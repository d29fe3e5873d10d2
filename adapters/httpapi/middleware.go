package httpapi

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxCaller
	ctxRequestState
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxRequestID).(string)
	return id
}

func callerFrom(ctx context.Context) app.Caller {
	c, _ := ctx.Value(ctxCaller).(app.Caller)
	return c
}

// statusRecorder remembers the status a handler wrote, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// requestLog gives each request an id (X-Request-Id), recovers panics into
// a 500 envelope and writes one access-log line. The line carries the
// route template, never query strings, bodies or headers, so no key or
// document reaches the log.
func requestLog(log *slog.Logger, sink RequestRecorder, metrics *httpMetrics) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			raw, err := domain.NewRawID(rand.Reader)
			if err != nil {
				raw = "unavailable"
			}
			id := domain.PrefixRequest + raw
			w.Header().Set("X-Request-Id", id)
			holder := &requestState{}
			ctx := context.WithValue(r.Context(), ctxRequestID, id)
			ctx = context.WithValue(ctx, ctxRequestState, holder)
			ctx = app.WithAdmissionPlace(ctx, holder)
			r = r.WithContext(ctx)
			rec := &statusRecorder{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					log.ErrorContext(ctx, "panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
					if rec.status == 0 {
						writeError(rec, r, errPanic)
					}
				}
				route := capText(r.URL.Path, maxLoggedPath)
				if cr := mux.CurrentRoute(r); cr != nil {
					if tpl, err := cr.GetPathTemplate(); err == nil {
						route = tpl
					}
				}
				logRequest(ctx, log, id, r.Method, route, rec.status, time.Since(start), holder)
				if metrics != nil {
					metrics.observe(r, rec.status, time.Since(start))
				}
				if k := holder.rec; k != nil && sink != nil {
					sink.Record(ports.RequestLogEntry{RequestID: id, AccountID: k.AccountID, Mode: string(k.Mode),
						KeyFingerprint: k.Fingerprint, Method: methodLabel(r.Method), Path: route, Status: rec.status,
						Duration: time.Since(start), CreatedAt: start.UTC()})
				}
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// logRequest writes the access-log line. It builds the record itself:
// Logger.InfoContext would box every value and walk the stack for a
// source position the handler does not print, for each request (a few
// per cent of the create path's CPU).
func logRequest(ctx context.Context, log *slog.Logger, id, method, route string, status int, took time.Duration, holder *requestState) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", id), slog.String("method", methodLabel(method)), slog.String("route", route),
		slog.Int("status", status), slog.Float64("duration_ms", float64(took.Microseconds())/1000))
	if k := holder.rec; k != nil {
		rec.AddAttrs(slog.String("account", k.AccountID), slog.String("mode", string(k.Mode)),
			slog.String("key_fingerprint", k.Fingerprint))
	}
	if u := holder.user; u != nil {
		rec.AddAttrs(slog.String("account", u.AccountID), slog.String("user", u.UserID))
	}
	if holder.code != "" {
		rec.AddAttrs(slog.String("error_code", holder.code))
	}
	_ = h.Handle(ctx, rec) // a log line that cannot be written is not the request's failure
}

// errPanic: a panic answers as any error classify does not know.
var errPanic = errInternal

// requestState is what the middlewares of one request hand each other
// through its context: the auth middlewares give the key record or the
// dashboard user back to the access log, which wraps them, and the
// admission limiter notes the place the request holds, which the app
// layer gives back around a wait on the outside (app.AdmissionPlace).
type requestState struct {
	rec  *ports.APIKeyRecord
	user *app.DashboardUser
	// code is the error code the answer's envelope carried ("" for none).
	code string
	// admission is the limiter that admitted the request (nil: none did),
	// and held whether the request holds one of its places now.
	admission *Admission
	held      bool
}

func stateOf(ctx context.Context) *requestState {
	s, _ := ctx.Value(ctxRequestState).(*requestState)
	return s
}

var _ app.AdmissionPlace = (*requestState)(nil)

// Leave gives the request's admission place back.
func (s *requestState) Leave() bool {
	if !s.held {
		return false
	}
	s.held = false
	s.admission.release()
	return true
}

// Reenter takes a place again of the limiter that admitted the request;
// its refusal is the limiter's 503.
func (s *requestState) Reenter(ctx context.Context) error {
	if s.admission == nil || s.held {
		return nil
	}
	if !s.admission.acquire(ctx) {
		s.admission.shed.Add(1)
		return s.admission.errOverloaded()
	}
	s.held = true
	return nil
}

// RequestRecorder receives one entry per API-key request for the
// dashboard's request logs. Record must not block.
type RequestRecorder interface {
	Record(e ports.RequestLogEntry)
}

// Authenticator resolves an API key to its caller.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (app.Caller, *ports.APIKeyRecord, error)
}

// ActingFor decides which account a request runs as when its key names
// one in Quita-Account (app.SubaccountService.ActAs).
type ActingFor interface {
	ActAs(ctx context.Context, caller app.Caller, accountID string) (app.Caller, error)
}

// requireAPIKey authenticates the apikey header. Missing or invalid → 401,
// never 404, whatever the route. A client address with too many recent
// 401s gets 429 before its key is looked up (failures may be nil: no limit).
// A Quita-Account header makes the request run as the account it names,
// as acting decides (nil: only the key's own account may be named); the
// caller every handler reads is that account's.
func requireAPIKey(auth Authenticator, acting ActingFor, failures *authFailures) mux.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("apikey")
			if key == "" {
				writeError(w, r, &apiError{Status: http.StatusUnauthorized, Type: typeAuthentication,
					Code: "api_key_missing", Message: "send your API key in the apikey header"})
				return
			}
			ip := clientIP(r.Context())
			if wait, blocked := failures.blocked(r.Context(), ip, key); blocked {
				writeError(w, r, &app.ThrottledError{RetryAfter: wait})
				return
			}
			caller, rec, err := auth.Authenticate(r.Context(), key)
			if errors.Is(err, app.ErrUnauthenticated) {
				failures.failed(r.Context(), ip)
			}
			if err != nil {
				writeError(w, r, err)
				return
			}
			failures.succeeded(key)
			if h := stateOf(r.Context()); h != nil {
				h.rec = rec
			}
			if id := r.Header.Get(actAsHeader); id != "" {
				if caller, err = actAs(r.Context(), acting, caller, id); err != nil {
					writeError(w, r, err)
					return
				}
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxCaller, caller)))
		})
	}
}

// actAs is the caller the request runs as for Quita-Account: id. Every
// account that is not the key's own or one of its live sub-accounts is the
// same 404, existing or not.
func actAs(ctx context.Context, acting ActingFor, caller app.Caller, id string) (app.Caller, error) {
	if _, ok := domain.ParseAccountID(id); !ok {
		return app.Caller{}, badRequest(actAsHeader, "parameter_invalid", actAsHeader+" must be an account id (acct_...)")
	}
	if acting == nil {
		if id == caller.Account.ID {
			return caller, nil
		}
		return app.Caller{}, errActAsUnknown
	}
	c, err := acting.ActAs(ctx, caller, id)
	if errors.Is(err, ports.ErrNotFound) {
		return app.Caller{}, errActAsUnknown
	}
	return c, err
}

// rejectUnstorableText answers 400 for a path or query value that holds a
// NUL character or invalid UTF-8: neither database can compare such text,
// and the request could only fail later as a 500.
func rejectUnstorableText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		texts := []string{r.URL.Path}
		for _, vs := range r.URL.Query() {
			texts = append(texts, vs...)
		}
		for _, s := range texts {
			if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
				writeError(w, r, badRequest("", "parameter_invalid", "the path and query must be valid UTF-8 without NUL characters"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// maxLoggedPath bounds the raw path of an unmatched request in the access
// log: a request line may be up to MaxHeaderBytes long.
const maxLoggedPath = 256

// capText cuts s to at most n bytes on a rune boundary, marking the cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// methodLabel maps the request method to one of a fixed set, so a client
// cannot grow the metrics, the access log or the request-log table by
// inventing methods (security.md, item 3).
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
