package bcbpix_test

// Errors of Pix out that say nothing about the Pix must never read as a
// refusal of it: the payout worker releases a payout's money only on a
// refusal (ports.PixSender).

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// envioAnswers are the statuses a PSP's token endpoint, PUT /gn/pix/{id}
// and GET /gn/pix/enviados/id-envio/{id} answer (0: success).
type envioAnswers struct{ token, put, get int }

// envioPSP is a PSP giving fixed answers, counting token fetches and
// status queries.
type envioPSP struct {
	envioAnswers
	mu           sync.Mutex
	tokens, gets int
}

func (p *envioPSP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	p.mu.Lock()
	defer p.mu.Unlock()
	answer := func(status int, body string) {
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
	problem := func(status int) string {
		return `{"type":"https://pix.example/erro","title":"erro","status":` + strconv.Itoa(status) + `,"detail":"x"}`
	}
	switch {
	case r.URL.Path == "/oauth/token":
		p.tokens++
		if p.token != 0 {
			answer(p.token, `{"error":"invalid_client"}`)
			return
		}
		answer(0, `{"access_token":"t","token_type":"Bearer","expires_in":3600}`)
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/gn/pix/"):
		if p.put != 0 {
			answer(p.put, problem(p.put))
			return
		}
		answer(http.StatusCreated, `{"idEnvio":"x","e2eId":"E1","valor":"10.00","status":"EM_PROCESSAMENTO"}`)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/gn/pix/enviados/id-envio/"):
		p.gets++
		if p.get != 0 {
			answer(p.get, problem(p.get))
			return
		}
		answer(0, `{"idEnvio":"x","endToEndId":"E1","valor":"10.00","status":"REALIZADO"}`)
	default:
		answer(http.StatusNotFound, problem(http.StatusNotFound))
	}
}

// envioAdapter is the adapter over the PSP, its account configured for
// Pix out unless noPixSend.
func envioAdapter(t *testing.T, psp *envioPSP, noPixSend bool) *bcbpix.Acquirer {
	t.Helper()
	srv := httptest.NewServer(psp)
	t.Cleanup(srv.Close)
	sealer, err := bcbpix.NewSealer(testKey())
	if err != nil {
		t.Fatal(err)
	}
	a := bcbpix.New(newMemStore(), sealer, bcbpix.Options{Retry: []time.Duration{time.Millisecond, 2 * time.Millisecond},
		Log: slog.New(slog.DiscardHandler)})
	cfg := accountConfig(newPKI(t), srv.URL)
	if !noPixSend {
		cfg.PixSend = bcbpix.PixSendEfi
	}
	if err := a.Configure(context.Background(), acct, cfg); err != nil {
		t.Fatal(err)
	}
	return a
}

func sendReq() ports.PixSendRequest {
	return ports.PixSendRequest{Scope: scope(), SendID: txid("envio"), Amount: 1000,
		Key: domain.PixKey{Type: domain.PixKeyCPF, Value: "52998224725"}}
}

// TestPixSendCredentialErrorsAreNotRejections: a 401 the retries did not
// cure, a 403 and a token endpoint's 4xx are ports.ErrAcquirerUnauthorized,
// an account without Pix out or without a PSP ports.ErrAcquirerNotConfigured;
// none is ports.ErrAcquirerRejected, on the status query or on the send.
// A refused send is a rejection only when the PSP then has no such Pix.
func TestPixSendCredentialErrorsAreNotRejections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	status := func(a *bcbpix.Acquirer) error { _, err := a.PixSendStatus(ctx, scope(), txid("envio")); return err }
	send := func(a *bcbpix.Acquirer) error { _, err := a.SendPix(ctx, sendReq()); return err }
	for _, tc := range []struct {
		name      string
		psp       envioAnswers
		noPixSend bool
		call      func(*bcbpix.Acquirer) error
		want      error
	}{
		{"status: 401 after the retries", envioAnswers{get: 401}, false, status, ports.ErrAcquirerUnauthorized},
		{"status: 403", envioAnswers{get: 403}, false, status, ports.ErrAcquirerUnauthorized},
		{"status: token endpoint 401", envioAnswers{token: 401}, false, status, ports.ErrAcquirerUnauthorized},
		{"status: token endpoint 400", envioAnswers{token: 400}, false, status, ports.ErrAcquirerUnauthorized},
		{"status: no pix_send", envioAnswers{}, true, status, ports.ErrAcquirerNotConfigured},
		{"status: no PSP for the account", envioAnswers{}, false, func(a *bcbpix.Acquirer) error {
			_, err := a.PixSendStatus(ctx, ports.Scope{AccountID: "other", Mode: domain.ModeLive}, txid("envio"))
			return err
		}, ports.ErrAcquirerNotConfigured},
		{"send: 401", envioAnswers{put: 401, get: 401}, false, send, ports.ErrAcquirerUnauthorized},
		{"send: token endpoint 401", envioAnswers{token: 401}, false, send, ports.ErrAcquirerUnauthorized},
		{"send: no pix_send", envioAnswers{}, true, send, ports.ErrAcquirerNotConfigured},
		{"send: 400, then the status query 401", envioAnswers{put: 400, get: 401}, false, send, ports.ErrAcquirerUnauthorized},
		{"send: 400, then the status query 503", envioAnswers{put: 400, get: 503}, false, send, ports.ErrAcquirerUnavailable},
		{"send: 400, then the status query 400", envioAnswers{put: 400, get: 400}, false, send, ports.ErrAcquirerUnavailable},
		{"send: 409, then not found", envioAnswers{put: 409, get: 404}, false, send, ports.ErrAcquirerUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := envioAdapter(t, &envioPSP{envioAnswers: tc.psp}, tc.noPixSend)
			err := tc.call(a)
			if !errors.Is(err, tc.want) || errors.Is(err, ports.ErrAcquirerRejected) {
				t.Fatalf("error %v, want %v and no rejection", err, tc.want)
			}
			if strings.Contains(err.Error(), testClientSecret) {
				t.Errorf("error leaks the client secret: %v", err)
			}
		})
	}
	t.Run("a 401 is retried with a fresh token", func(t *testing.T) {
		t.Parallel()
		psp := &envioPSP{envioAnswers: envioAnswers{get: 401}}
		_ = status(envioAdapter(t, psp, false))
		psp.mu.Lock()
		defer psp.mu.Unlock()
		// The token fetched for the first attempt is kept once (it is newer
		// than the request); the next 401 drops it.
		if psp.gets != 3 || psp.tokens < 2 {
			t.Errorf("%d queries with %d tokens, want 3 queries (two retries) and a fresh token", psp.gets, psp.tokens)
		}
	})
	t.Run("send: 400, then not found is a rejection", func(t *testing.T) {
		t.Parallel()
		psp := &envioPSP{envioAnswers: envioAnswers{put: 400, get: 404}}
		if err := send(envioAdapter(t, psp, false)); !errors.Is(err, ports.ErrAcquirerRejected) {
			t.Fatalf("error %v, want a rejection", err)
		}
	})
	t.Run("send: 400, then the Pix is there", func(t *testing.T) {
		t.Parallel()
		psp := &envioPSP{envioAnswers: envioAnswers{put: 400}}
		res, err := envioAdapter(t, psp, false).SendPix(ctx, sendReq())
		if err != nil || res.Status != domain.PayoutPaid {
			t.Fatalf("%+v %v, want the Pix paid", res, err)
		}
	})
}
