package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PixCallbackAuth authenticates API Pix callbacks (the bcbpix adapter):
// the token is the secret last segment of the webhook URL registered at
// the account's PSP. ok is false for an unknown account or a wrong token;
// err means the configuration could not be read.
type PixCallbackAuth interface {
	VerifyCallback(ctx context.Context, accountID, token string) (ok bool, err error)
}

// RecurringCallbacks applies the PSP's Pix Automático callbacks of an
// account already authenticated (the bcbpix adapter): each rec or cobr
// the body names is read back from the PSP before anything changes. A
// body that is not a callback's is ports.ErrMalformedCallback; any other
// error means nothing was lost and the PSP should send it again.
type RecurringCallbacks interface {
	NotifyRecurrences(ctx context.Context, accountID string, body []byte) (applied, ignored int, err error)
	NotifyRecurringCharges(ctx context.Context, accountID string, body []byte) (applied, ignored int, err error)
}

// Limits of the PSP callback (security.md, item 9). A refused callback costs
// a configuration read; an accepted one up to 100 PSP reads.
const (
	maxCallbackFailuresPerIP = 20
	callbackFailureWindow    = time.Minute
)

// DefaultPSPCallbackLimit is the per-account budget of authenticated
// callbacks: a PSP sends one per Pix or groups them, and anything refused
// is retried by the PSP or picked up by reconciliation.
var DefaultPSPCallbackLimit = ports.RateLimit{Rate: 1200, Burst: 200, Period: time.Minute}

// ProvidersController receives acquirer notifications. The API Pix
// callback (POST <registered url>/pix with {"pix":[...]}) carries no API
// key: the PSP proves itself with the account's callback token in the path
// and, when PSP CAs are configured, with its client certificate (mutual
// TLS). Even then its body is never trusted, only the end-to-end ids it
// names, each read back from the PSP before anything changes
// (app.PixReceiptService.Notify).
type ProvidersController struct {
	receipts *app.PixReceiptService
	// recurring, when set, takes the Pix Automático callbacks
	// (<registered url>/rec and /cobr).
	recurring RecurringCallbacks
	// payouts, when set, takes the notifications of sent Pix (items with
	// gnExtras.idEnvio, Efí's Pix-send extension).
	payouts *app.PayoutService
	auth    PixCallbackAuth
	// cas, when set, verify the PSP's client certificate.
	cas      *x509.CertPool
	failures ports.LoginAttempts
	limiter  ports.RateLimiter
	// limit is each account's callback budget; zero means the default.
	limit ports.RateLimit
	log   *slog.Logger
}

func (c *ProvidersController) callbackLimit() ports.RateLimit {
	if c.limit == (ports.RateLimit{}) {
		return DefaultPSPCallbackLimit
	}
	return c.limit
}

// Routes registers the callbacks on the root router (before /v1's
// API-key middleware): /pix, and with a RecurringCallbacks the Pix
// Automático ones, /rec (webhookrec) and /cobr (webhookcobr), which the
// PSP posts under the same registered URL.
func (c *ProvidersController) Routes(r *mux.Router) {
	const base = "/v1/providers/bcbpix/{accountId}/{token}"
	r.HandleFunc(base+"/pix", c.bcbpix).Methods(http.MethodPost).Name("providers.bcbpix.pix")
	if c.recurring != nil {
		r.HandleFunc(base+"/rec", c.recurringCallback("recs", c.recurring.NotifyRecurrences)).
			Methods(http.MethodPost).Name("providers.bcbpix.rec")
		r.HandleFunc(base+"/cobr", c.recurringCallback("cobsr", c.recurring.NotifyRecurringCharges)).
			Methods(http.MethodPost).Name("providers.bcbpix.cobr")
	}
}

type pixCallback struct {
	Pix []struct {
		EndToEndID string `json:"endToEndId"`
		GnExtras   *struct {
			IDEnvio string `json:"idEnvio"`
		} `json:"gnExtras"`
	} `json:"pix"`
}

func notFound() *apiError {
	return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found", Message: "no such resource"}
}

func tooMany(wait time.Duration) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limited",
		Message: "too many callbacks; retry after " + strconv.Itoa(int(max(wait, time.Second)/time.Second)) + " s"}
}

// admit runs the checks every PSP callback passes before its body is
// read: the account's prefix, the per-address failure limit, the PSP's
// client certificate (when CAs are configured), the account's callback
// token, the account's callback budget, and the body's bounds. It answers
// the refusal itself and reports whether the callback may proceed, with
// its account and body.
func (c *ProvidersController) admit(w http.ResponseWriter, r *http.Request) (acct string, body []byte, ok bool) {
	ctx := r.Context()
	acct, token := mux.Vars(r)["accountId"], mux.Vars(r)["token"]
	if !strings.HasPrefix(acct, domain.PrefixAccount) || len(acct) == len(domain.PrefixAccount) {
		writeError(w, r, notFound())
		return "", nil, false
	}
	ip := clientIP(ctx)
	sum := sha256.Sum256([]byte(ip))
	failKey := "bcbpixcb401:" + hex.EncodeToString(sum[:16])
	if c.failures != nil {
		if n, wait, err := c.failures.Failures(ctx, failKey); err == nil && n >= maxCallbackFailuresPerIP {
			w.Header().Set("Retry-After", strconv.Itoa(int(max(wait, time.Second)/time.Second)))
			writeError(w, r, tooMany(wait))
			return "", nil, false
		}
	}
	deny := func(e *apiError, why string) {
		if c.failures != nil {
			_, _, _ = c.failures.AddFailure(ctx, failKey, callbackFailureWindow)
		}
		c.log.WarnContext(ctx, "PSP callback refused", "account", acct, "reason", why)
		writeError(w, r, e)
	}
	if c.cas != nil && !verifiedClient(r, c.cas) {
		deny(&apiError{Status: http.StatusForbidden, Type: typePermission, Code: "client_certificate_required",
			Message: "this callback requires the PSP's client certificate"}, "no valid client certificate")
		return "", nil, false
	}
	valid, err := c.auth.VerifyCallback(ctx, acct, token)
	if err != nil {
		writeError(w, r, err) // the PSP retries
		return "", nil, false
	}
	if !valid {
		deny(notFound(), "unknown account or wrong callback token")
		return "", nil, false
	}
	if c.limiter != nil {
		if d, err := c.limiter.Allow(ctx, "bcbpixcb:"+acct, c.callbackLimit()); err == nil && !d.Allowed {
			w.Header().Set("Retry-After", strconv.Itoa(int(max(d.RetryAfter, time.Second)/time.Second)))
			writeError(w, r, tooMany(d.RetryAfter))
			return "", nil, false
		}
	}
	body, err = readBody(w, r, false)
	if err != nil {
		writeError(w, r, err)
		return "", nil, false
	}
	return acct, body, true
}

func (c *ProvidersController) bcbpix(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	acct, body, ok := c.admit(w, r)
	if !ok {
		return
	}
	var cb pixCallback
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &cb); err != nil {
			writeError(w, r, badRequest("pix", "body_invalid", "the callback body must be {\"pix\":[...]}"))
			return
		}
	}
	ids := make([]string, 0, len(cb.Pix))
	var sent []string
	for _, p := range cb.Pix {
		if p.GnExtras != nil && p.GnExtras.IDEnvio != "" {
			sent = append(sent, p.GnExtras.IDEnvio) // a Pix this account sent
			continue
		}
		ids = append(ids, p.EndToEndID)
	}
	sentApplied, err := c.notifySent(ctx, acct, sent)
	if err != nil {
		writeError(w, r, err) // the PSP retries
		return
	}
	res, err := c.receipts.Notify(ctx, acct, ids)
	if errors.Is(err, app.ErrUnknownReceiver) {
		writeError(w, r, notFound())
		return
	}
	if err != nil {
		// The PSP retries a failed callback; every step is idempotent.
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"applied": res.Applied + sentApplied, "ignored": res.Ignored + len(sent) - sentApplied})
}

// recurringCallback serves a Pix Automático callback (member: the body's
// list, "recs" or "cobsr") with notify, the adapter's read-back of each
// item: 200 {"applied","ignored"}; a body that is not the callback's, 400;
// any other failure 503, so the PSP sends it again (every step is
// idempotent).
func (c *ProvidersController) recurringCallback(member string, notify func(context.Context, string, []byte) (int, int, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct, body, ok := c.admit(w, r)
		if !ok {
			return
		}
		applied, ignored, err := notify(r.Context(), acct, body)
		switch {
		case errors.Is(err, ports.ErrMalformedCallback):
			writeError(w, r, badRequest(member, "body_invalid", "the callback body must be {\""+member+"\":[...]} as the API Pix defines it"))
		case err != nil:
			c.log.WarnContext(r.Context(), "PSP callback not applied; the PSP retries", "account", acct, "list", member, "err", err)
			writeError(w, r, &apiError{Status: http.StatusServiceUnavailable, Type: typeProvider, Code: "callback_not_applied",
				Message: "the callback could not be applied now; send it again", retryAfter: 5})
		default:
			writeJSON(w, http.StatusOK, map[string]int{"applied": applied, "ignored": ignored})
		}
	}
}

// notifySent applies the notifications of Pix the account sent (payouts),
// each read back from the PSP; a send id no payout of the account has is
// ignored (a cashout refund's: the refund worker reads it).
func (c *ProvidersController) notifySent(ctx context.Context, acct string, sendIDs []string) (int, error) {
	if c.payouts == nil {
		return 0, nil
	}
	applied := 0
	for i, id := range sendIDs {
		if i >= 100 {
			break
		}
		err := c.payouts.ApplySendNotification(ctx, acct, id)
		switch {
		case err == nil:
			applied++
		case errors.Is(err, ports.ErrNotFound), errors.Is(err, app.ErrPayoutsNotSupported):
		default:
			return applied, err
		}
	}
	return applied, nil
}

// verifiedClient reports whether the connection presented a client
// certificate that chains to cas for client authentication. quitad's TLS
// listener only requests the certificate (API clients present none), so
// the chain is verified here.
func verifiedClient(r *http.Request, cas *x509.CertPool) bool {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return false
	}
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := r.TLS.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: cas, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err == nil
}
