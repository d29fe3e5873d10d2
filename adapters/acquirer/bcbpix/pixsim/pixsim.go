// Package pixsim is a PSP simulator that speaks the subset of the Banco
// Central "API Pix" (v2) that Quita uses: the OAuth2 token endpoint (client
// credentials), immediate charges (cob), received Pix (pix), devoluções and
// the webhook with its callbacks, and Pix Automático (locrec, rec,
// solicrec, cobr and their webhooks). A control API pays cobs from a chosen
// payer, plays the payer's side of Pix Automático, drops or duplicates
// callbacks and takes the PSP down.
//
// The package is the handler; cmd/pixsim serves it (optionally over mTLS)
// and tests run it in process with httptest. docs/bcbpix.md lists every
// operation and what the simulator simplifies in it.
//
// Files: pixsim.go (server, knobs, test accessors), model.go (bodies and
// problems), token.go, cob.go, pix.go, devolucao.go, webhook.go (the
// webhook and its callbacks), control.go (the /_sim API and Pay), pki.go
// (test certificates); Pix Automático: automatico.go (statuses, problem
// types, state), automatico_types.go (bodies), listquery.go, locrec.go
// (locations and the signed payload), rec.go, rec_revise.go, solicrec.go,
// cobr.go, cobr_tentativa.go, webhookrec.go, control_rec.go and
// control_cobr.go (the payer's side).
package pixsim

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Callback modes.
const (
	CallbacksNormal    = "normal"
	CallbacksDrop      = "drop"
	CallbacksDuplicate = "duplicate"
)

// Cob statuses.
const (
	CobActive    = "ATIVA"
	CobConcluded = "CONCLUIDA"
	CobRemoved   = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	CobRemovedBy = "REMOVIDA_PELO_PSP"
)

// Devolução statuses.
const (
	ReturnProcessing = "EM_PROCESSAMENTO"
	ReturnDone       = "DEVOLVIDO"
	ReturnFailed     = "NAO_REALIZADO"
)

// Config configures a simulator.
type Config struct {
	ClientID     string
	ClientSecret string
	// ISPB signs end-to-end ids (default 99999998).
	ISPB string
	// LocationHost is where payload locations live (default
	// "pixsim.local/qr/v2").
	LocationHost string
	// TokenTTL is the lifetime of access tokens (default one hour).
	TokenTTL time.Duration
	// CallbackCert is the client certificate presented on every callback:
	// API Pix protects the receiver's webhook with mutual TLS.
	CallbackCert *tls.Certificate
	// CallbackCAs, when set, are the only CAs trusted for https callback
	// URLs (default: the system roots).
	CallbackCAs *x509.CertPool
	// Callbacks replaces the client that posts callbacks (then CallbackCert
	// and CallbackCAs are not used). Default: 5 s timeout.
	Callbacks *http.Client
	// ReturnDelay is how long a devolução stays EM_PROCESSAMENTO before the
	// PSP settles it by itself and calls the webhook (default 0: at once,
	// after the PUT has been answered). A read after the delay also settles.
	ReturnDelay time.Duration
	// SendDelay is how long a sent Pix (PUT /gn/pix/{idEnvio}) stays
	// EM_PROCESSAMENTO before it settles and the webhook is called
	// (default 0: at once, after the PUT has been answered).
	SendDelay time.Duration
	// MaxPageSize caps paginacao.itensPorPagina of GET /pix, as a PSP may
	// (default 1000).
	MaxPageSize int
	// Now defaults to time.Now.
	Now func() time.Time
}

// Server is the simulated PSP. Safe for concurrent use. Close stops its
// background settlements.
type Server struct {
	cfg       Config
	down      atomic.Bool
	failCalls atomic.Int64
	loseCalls atomic.Int64
	mux       *http.ServeMux
	// bg counts settlements and callbacks running in the background.
	bg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once

	mu        sync.Mutex
	tokens    map[string]time.Time
	cobs      map[string]*cobRecord
	cobvs     map[string]*cobvRecord
	locs      int64
	pix       map[string]*Pix
	pixOrder  []string
	webhooks  map[string]webhook
	cbMode    string
	failNext  int // devoluções still to end NAO_REALIZADO
	tokenHits int
	apiHits   int
	delivered []Callback
	// envios are the Pix sent (Efí's Pix-send extension) by idEnvio.
	envios     map[string]*Envio
	envioOrder []string
	rejected   map[string]bool
	// auto is the Pix Automático state.
	auto automatico
}

// Callback is a delivered (or dropped) callback, for tests.
type Callback struct {
	URL    string
	E2EIDs []string
	// IDs are the idRec or txid a Pix Automático callback is about.
	IDs []string
	// Cause is "pix" (a Pix received), "devolucao" (a devolução reached
	// DEVOLVIDO or NAO_REALIZADO), "envio" (a sent Pix reached REALIZADO
	// or NAO_REALIZADO), "rec" (a recurrence changed status) or "cobr" (a
	// recurring charge or one of its attempts did).
	Cause   string
	Status  int
	Dropped bool
}

// Callback causes.
const (
	CausePix       = "pix"
	CauseDevolucao = "devolucao"
)

// New returns a simulator.
func New(cfg Config) *Server {
	if cfg.ISPB == "" {
		cfg.ISPB = "99999998"
	}
	if cfg.LocationHost == "" {
		cfg.LocationHost = "pixsim.local/qr/v2"
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = time.Hour
	}
	if cfg.MaxPageSize <= 0 {
		cfg.MaxPageSize = 1000
	}
	if cfg.Callbacks == nil {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: cfg.CallbackCAs}
		if cfg.CallbackCert != nil {
			tlsCfg.Certificates = []tls.Certificate{*cfg.CallbackCert}
		}
		cfg.Callbacks = &http.Client{Timeout: 5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, tokens: map[string]time.Time{}, cobs: map[string]*cobRecord{}, cobvs: map[string]*cobvRecord{}, pix: map[string]*Pix{},
		webhooks: map[string]webhook{}, cbMode: CallbacksNormal, closed: make(chan struct{}),
		envios: map[string]*Envio{}, rejected: map[string]bool{}, auto: newAutomatico()}
	m := http.NewServeMux()
	m.HandleFunc("POST /oauth/token", s.token)
	m.HandleFunc("PUT /cob/{txid}", s.auth(s.putCob))
	m.HandleFunc("GET /cob/{txid}", s.auth(s.getCob))
	m.HandleFunc("PATCH /cob/{txid}", s.auth(s.patchCob))
	m.HandleFunc("PUT /cobv/{txid}", s.auth(s.putCobV))
	m.HandleFunc("GET /cobv/{txid}", s.auth(s.getCobV))
	m.HandleFunc("PATCH /cobv/{txid}", s.auth(s.patchCobV))
	m.HandleFunc("GET /pix/{e2eid}", s.auth(s.getPix))
	m.HandleFunc("GET /pix", s.auth(s.listPix))
	m.HandleFunc("PUT /pix/{e2eid}/devolucao/{id}", s.auth(s.putReturn))
	m.HandleFunc("GET /pix/{e2eid}/devolucao/{id}", s.auth(s.getReturn))
	m.HandleFunc("PUT /webhook/{chave}", s.auth(s.putWebhook))
	m.HandleFunc("GET /webhook/{chave}", s.auth(s.getWebhook))
	m.HandleFunc("DELETE /webhook/{chave}", s.auth(s.deleteWebhook))
	m.HandleFunc("PUT /gn/pix/{idEnvio}", s.auth(s.putEnvio))
	m.HandleFunc("GET /gn/pix/enviados/id-envio/{idEnvio}", s.auth(s.getEnvio))
	m.HandleFunc("POST /locrec", s.auth(s.postLocRec))
	m.HandleFunc("GET /locrec", s.auth(s.listLocRec))
	m.HandleFunc("GET /locrec/{id}", s.auth(s.getLocRec))
	m.HandleFunc("DELETE /locrec/{id}/idRec", s.auth(s.deleteLocRecIDRec))
	m.HandleFunc("POST /rec", s.auth(s.postRec))
	m.HandleFunc("GET /rec", s.auth(s.listRec))
	m.HandleFunc("PATCH /rec/{idRec}", s.auth(s.patchRec))
	s.handleRecAndPayload(m) // GET /rec/{idRec}, the payload location and its keys
	m.HandleFunc("POST /solicrec", s.auth(s.postSolicRec))
	m.HandleFunc("GET /solicrec/{idSolicRec}", s.auth(s.getSolicRec))
	m.HandleFunc("PATCH /solicrec/{idSolicRec}", s.auth(s.patchSolicRec))
	m.HandleFunc("PUT /cobr/{txid}", s.auth(s.putCobR))
	m.HandleFunc("GET /cobr/{txid}", s.auth(s.getCobR))
	m.HandleFunc("PATCH /cobr/{txid}", s.auth(s.patchCobR))
	m.HandleFunc("POST /cobr", s.auth(s.postCobR))
	m.HandleFunc("GET /cobr", s.auth(s.listCobR))
	m.HandleFunc("POST /cobr/{txid}/retentativa/{data}", s.auth(s.postRetentativa))
	for _, hook := range []string{"/webhookrec", "/webhookcobr"} {
		m.HandleFunc("PUT "+hook, s.auth(s.putWebhookAuto))
		m.HandleFunc("GET "+hook, s.auth(s.getWebhookAuto))
		m.HandleFunc("DELETE "+hook, s.auth(s.deleteWebhookAuto))
	}
	m.HandleFunc("POST /_sim/pay", s.ctlPay)
	m.HandleFunc("POST /_sim/callbacks", s.ctlCallbacks)
	m.HandleFunc("POST /_sim/down", s.ctlDown)
	m.HandleFunc("POST /_sim/returns", s.ctlReturns)
	m.HandleFunc("POST /_sim/med", s.ctlMED)
	m.HandleFunc("POST /_sim/solicrec/accept", control(s.AcceptSolicRec))
	m.HandleFunc("POST /_sim/solicrec/reject", control(s.RejectSolicRec))
	m.HandleFunc("POST /_sim/solicrec/expire", control(s.ExpireSolicRec))
	m.HandleFunc("POST /_sim/rec/approve", control(s.ApproveRec))
	m.HandleFunc("POST /_sim/rec/reject", control(s.RejectRec))
	m.HandleFunc("POST /_sim/rec/cancel", control(s.CancelRecByPayer))
	m.HandleFunc("POST /_sim/rec/expire", control(s.ExpireRec))
	m.HandleFunc("POST /_sim/cobr/debit", control(s.DebitCobR))
	m.HandleFunc("POST /_sim/cobr/fail", control(s.FailCobR))
	m.HandleFunc("POST /_sim/cobr/cancel", control(s.CancelCobRByPayer))
	s.mux = m
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close cancels pending settlements and waits for the callbacks in flight.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.bg.Wait()
}

// Idle waits until no settlement or callback runs in the background: what
// a test calls before it looks at what the PSP did by itself.
func (s *Server) Idle() { s.bg.Wait() }

// SetDown makes every API Pix call (token included) answer 503.
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// FailNextCalls makes the next n API Pix calls (not the token endpoint)
// answer 503, as a PSP's transient failure would.
func (s *Server) FailNextCalls(n int) { s.failCalls.Store(int64(n)) }

// LoseNextAnswers makes the next n API Pix calls take effect but answer
// 503, as when the PSP's answer is lost on the way back.
func (s *Server) LoseNextAnswers(n int) { s.loseCalls.Store(int64(n)) }

// RevokeTokens invalidates every access token issued so far.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

// SetCallbacks sets how callbacks are delivered: CallbacksNormal,
// CallbacksDrop or CallbacksDuplicate.
func (s *Server) SetCallbacks(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cbMode = mode
}

// FailNextReturn makes the next devolução end NAO_REALIZADO.
func (s *Server) FailNextReturn() { s.FailNextReturns(1) }

// FailNextReturns makes the next n devoluções end NAO_REALIZADO, as a
// payer's bank refusing them would (n = 0 lets them succeed again).
func (s *Server) FailNextReturns(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = max(n, 0)
}

// Hits reports how many tokens were issued and API calls served.
func (s *Server) Hits() (tokens, api int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenHits, s.apiHits
}

// Callbacks returns the callbacks sent or dropped so far.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Callback(nil), s.delivered...)
}

// CobByTxID returns a copy of a cob as GET /cob/{txid} shows it, for tests.
func (s *Server) CobByTxID(txid string) (Cob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cobs[txid]
	if !ok {
		return Cob{}, false
	}
	return c.view(), true
}

// Returns lists the devoluções of a Pix, for tests.
func (s *Server) Returns(e2eid string) []Devolucao {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pix[e2eid]
	if !ok {
		return nil
	}
	out := make([]Devolucao, 0, len(p.Devolucoes))
	for _, d := range p.Devolucoes {
		out = append(out, *d)
	}
	return out
}

// Webhook returns the URL registered for a key.
func (s *Server) Webhook(chave string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhooks[chave].URL
}

// Webhooks lists the keys with a registered webhook.
func (s *Server) Webhooks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.webhooks))
	for k := range s.webhooks {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String describes the simulator without any secret.
func (s *Server) String() string { return fmt.Sprintf("pixsim(ispb=%s)", s.cfg.ISPB) }

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
