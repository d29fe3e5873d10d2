// Package pixsim is a PSP simulator that speaks the subset of the Banco
// Central "API Pix" (v2) that Quita uses: the OAuth2 token endpoint (client
// credentials), immediate charges (cob), received Pix (pix), devoluções and
// the webhook with its callbacks. A control API pays cobs from a chosen
// payer, drops or duplicates callbacks and takes the PSP down.
//
// The package is the handler; cmd/pixsim serves it (optionally over mTLS)
// and tests run it in process with httptest.
package pixsim

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
)

// Problem types of API Pix (RFC 7807 "type" values).
const (
	problemBase           = "https://pix.bcb.gov.br/api/v2/error/"
	ProblemCobInvalid     = problemBase + "CobOperacaoInvalida"
	ProblemCobNotFound    = problemBase + "CobNaoEncontrado"
	ProblemPixNotFound    = problemBase + "PixNaoEncontrado"
	ProblemReturnInvalid  = problemBase + "DevolucaoOperacaoInvalida"
	ProblemReturnNotFound = problemBase + "DevolucaoNaoEncontrada"
	ProblemWebhookInvalid = problemBase + "WebhookOperacaoInvalida"
	ProblemUnavailable    = problemBase + "ServicoIndisponivel"
	ProblemUnauthorized   = problemBase + "AcessoNegado"
	ProblemRequestInvalid = problemBase + "RequisicaoInvalida"
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

var txidRE = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)
var returnIDRE = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)

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
	// Callbacks is the client that posts callbacks (default: 5 s timeout).
	Callbacks *http.Client
	// Now defaults to time.Now.
	Now func() time.Time
}

// Server is the simulated PSP. Safe for concurrent use.
type Server struct {
	cfg       Config
	down      atomic.Bool
	failCalls atomic.Int64
	mux       *http.ServeMux

	mu        sync.Mutex
	tokens    map[string]time.Time
	cobs      map[string]*Cob
	pix       map[string]*Pix
	pixOrder  []string
	webhooks  map[string]string
	cbMode    string
	failNext  bool
	tokenHits int
	apiHits   int
	delivered []Callback
}

// Callback is a delivered (or dropped) callback, for tests.
type Callback struct {
	URL     string
	E2EIDs  []string
	Status  int
	Dropped bool
}

// Cob is an immediate charge (API Pix "CobCompleta").
type Cob struct {
	Calendario struct {
		Criacao   string `json:"criacao"`
		Expiracao int    `json:"expiracao"`
	} `json:"calendario"`
	TxID    string  `json:"txid"`
	Revisao int     `json:"revisao"`
	Loc     *Loc    `json:"loc,omitempty"`
	Locat   string  `json:"location"`
	Status  string  `json:"status"`
	Devedor *Person `json:"devedor,omitempty"`
	Valor   struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              string `json:"chave"`
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
	PixCopiaECola      string `json:"pixCopiaECola"`
	Pix                []*Pix `json:"pix,omitempty"`
}

// Loc is a payload location.
type Loc struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
}

// Person is a devedor or (extension) pagador.
type Person struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome,omitempty"`
}

func (p *Person) doc() string {
	if p == nil {
		return ""
	}
	if p.CPF != "" {
		return p.CPF
	}
	return p.CNPJ
}

// Pix is a received Pix. Pagador is a PSP-specific extension, present only
// when the payer's document is disclosed.
type Pix struct {
	EndToEndID  string       `json:"endToEndId"`
	TxID        string       `json:"txid,omitempty"`
	Valor       string       `json:"valor"`
	Chave       string       `json:"chave"`
	Horario     string       `json:"horario"`
	InfoPagador string       `json:"infoPagador,omitempty"`
	Pagador     *Person      `json:"pagador,omitempty"`
	Devolucoes  []*Devolucao `json:"devolucoes,omitempty"`

	payer  Person
	amount int64
	at     time.Time
}

// Devolucao is a devolução of a received Pix.
type Devolucao struct {
	ID        string `json:"id"`
	RtrID     string `json:"rtrId"`
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza"`
	Descricao string `json:"descricao,omitempty"`
	Horario   struct {
		Solicitacao string `json:"solicitacao"`
		Liquidacao  string `json:"liquidacao,omitempty"`
	} `json:"horario"`
	Status string `json:"status"`
	Motivo string `json:"motivo,omitempty"`

	amount int64
	fail   bool
}

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
	if cfg.Callbacks == nil {
		cfg.Callbacks = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, tokens: map[string]time.Time{}, cobs: map[string]*Cob{}, pix: map[string]*Pix{},
		webhooks: map[string]string{}, cbMode: CallbacksNormal}
	m := http.NewServeMux()
	m.HandleFunc("POST /oauth/token", s.token)
	m.HandleFunc("PUT /cob/{txid}", s.auth(s.putCob))
	m.HandleFunc("GET /cob/{txid}", s.auth(s.getCob))
	m.HandleFunc("PATCH /cob/{txid}", s.auth(s.patchCob))
	m.HandleFunc("GET /pix/{e2eid}", s.auth(s.getPix))
	m.HandleFunc("GET /pix", s.auth(s.listPix))
	m.HandleFunc("PUT /pix/{e2eid}/devolucao/{id}", s.auth(s.putReturn))
	m.HandleFunc("GET /pix/{e2eid}/devolucao/{id}", s.auth(s.getReturn))
	m.HandleFunc("PUT /webhook/{chave}", s.auth(s.putWebhook))
	m.HandleFunc("GET /webhook/{chave}", s.auth(s.getWebhook))
	m.HandleFunc("DELETE /webhook/{chave}", s.auth(s.deleteWebhook))
	m.HandleFunc("POST /_sim/pay", s.ctlPay)
	m.HandleFunc("POST /_sim/callbacks", s.ctlCallbacks)
	m.HandleFunc("POST /_sim/down", s.ctlDown)
	s.mux = m
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetDown makes every API Pix call (token included) answer 503.
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// FailNextCalls makes the next n API Pix calls (not the token endpoint)
// answer 503, as a PSP's transient failure would.
func (s *Server) FailNextCalls(n int) { s.failCalls.Store(int64(n)) }

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
func (s *Server) FailNextReturn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = true
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

// CobByTxID returns a copy of a cob, for tests.
func (s *Server) CobByTxID(txid string) (Cob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cobs[txid]
	if !ok {
		return Cob{}, false
	}
	return *c, true
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

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Problem is an RFC 7807 body as API Pix sends it.
type Problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
}

// Violacao names a field that broke a rule.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
}

func problem(w http.ResponseWriter, status int, typ, title, detail string, v ...Violacao) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Problem{Type: typ, Title: title, Status: status, Detail: detail, Violacoes: v})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) unavailable(w http.ResponseWriter) {
	problem(w, http.StatusServiceUnavailable, ProblemUnavailable, "Serviço Indisponível", "o PSP está indisponível")
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if s.down.Load() {
		s.unavailable(w)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		_ = r.ParseForm()
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(s.cfg.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.cfg.ClientSecret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok := randomToken()
	s.mu.Lock()
	s.tokens[tok] = s.now().Add(s.cfg.TokenTTL)
	s.tokenHits++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(s.cfg.TokenTTL / time.Second),
		"scope": "cob.write cob.read pix.read pix.write webhook.read webhook.write",
	})
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() || s.failCalls.Add(-1) >= 0 {
			s.unavailable(w)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, known := s.tokens[tok]
		if ok && known && s.now().Before(exp) {
			s.apiHits++
		} else {
			known = false
		}
		s.mu.Unlock()
		if !known {
			problem(w, http.StatusUnauthorized, ProblemUnauthorized, "Acesso Negado", "token ausente, inválido ou expirado")
			return
		}
		h(w, r)
	}
}

type cobRequest struct {
	Calendario *struct {
		Expiracao *int `json:"expiracao"`
	} `json:"calendario"`
	Devedor *Person `json:"devedor"`
	Valor   *struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              string `json:"chave"`
	SolicitacaoPagador string `json:"solicitacaoPagador"`
}

func (s *Server) putCob(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	if !txidRE.MatchString(txid) {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "txid inválido",
			Violacao{Razao: "txid não respeita o schema", Propriedade: "txid"})
		return
	}
	var req cobRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "JSON inválido")
		return
	}
	var v []Violacao
	if req.Valor == nil {
		v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: "cob.valor.original"})
	}
	var amount int64
	if req.Valor != nil {
		a, err := domain.ParseDecimal(req.Valor.Original)
		if err != nil || a <= 0 || !strings.Contains(req.Valor.Original, ".") || len(req.Valor.Original) < 4 {
			v = append(v, Violacao{Razao: "valor não respeita o schema", Propriedade: "cob.valor.original"})
		}
		amount = a
	}
	if req.Chave == "" {
		v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: "cob.chave"})
	}
	if len([]rune(req.SolicitacaoPagador)) > 140 {
		v = append(v, Violacao{Razao: "máximo de 140 caracteres", Propriedade: "cob.solicitacaoPagador"})
	}
	if d := req.Devedor; d != nil {
		switch {
		case (d.CPF == "") == (d.CNPJ == ""):
			v = append(v, Violacao{Razao: "informe cpf ou cnpj", Propriedade: "cob.devedor"})
		case d.CPF != "" && !domain.ValidCPF(d.CPF), d.CNPJ != "" && !domain.ValidCNPJ(d.CNPJ):
			v = append(v, Violacao{Razao: "documento inválido", Propriedade: "cob.devedor"})
		case d.Nome == "":
			v = append(v, Violacao{Razao: "nome obrigatório com cpf/cnpj", Propriedade: "cob.devedor.nome"})
		}
	}
	exp := 86400
	if req.Calendario != nil && req.Calendario.Expiracao != nil {
		exp = *req.Calendario.Expiracao
		if exp <= 0 {
			v = append(v, Violacao{Razao: "expiracao deve ser positiva", Propriedade: "cob.calendario.expiracao"})
		}
	}
	if len(v) > 0 {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "A requisição não respeita o schema.", v...)
		return
	}
	_ = amount
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cobs[txid]; ok {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "txid já utilizado por outra cobrança")
		return
	}
	c := &Cob{TxID: txid, Status: CobActive, Devedor: req.Devedor, Chave: req.Chave, SolicitacaoPagador: req.SolicitacaoPagador}
	c.Calendario.Criacao = stamp(s.now())
	c.Calendario.Expiracao = exp
	c.Valor.Original = req.Valor.Original
	loc := s.cfg.LocationHost + "/cobv2/" + txid
	c.Loc = &Loc{ID: int64(len(s.cobs) + 1), Location: loc, TipoCob: "cob"}
	c.Locat = loc
	code, err := brcode.NewDynamic(loc, "PIXSIM RECEBEDOR", "SAO PAULO")
	if err != nil {
		problem(w, http.StatusInternalServerError, ProblemUnavailable, "Erro interno", "")
		return
	}
	c.PixCopiaECola = code
	s.cobs[txid] = c
	writeJSON(w, http.StatusCreated, c)
}

// expireLocked moves a cob past its expiry to REMOVIDA_PELO_PSP.
func (s *Server) expireLocked(c *Cob) {
	if c.Status != CobActive {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, c.Calendario.Criacao)
	if err == nil && !s.now().Before(t.Add(time.Duration(c.Calendario.Expiracao)*time.Second)) {
		c.Status = CobRemovedBy
	}
}

func (s *Server) getCob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cobs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobNotFound, "Cobrança não encontrada.", "")
		return
	}
	s.expireLocked(c)
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) patchCob(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "JSON inválido")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cobs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobNotFound, "Cobrança não encontrada.", "")
		return
	}
	s.expireLocked(c)
	if req.Status != "" {
		if req.Status != CobRemoved {
			problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "status só aceita REMOVIDA_PELO_USUARIO_RECEBEDOR",
				Violacao{Razao: "valor inválido", Propriedade: "cob.status"})
			return
		}
		switch c.Status {
		case CobActive:
			c.Status = CobRemoved
			c.Revisao++
		case CobRemoved:
		default:
			problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "a cobrança não está ATIVA")
			return
		}
	}
	writeJSON(w, http.StatusOK, c)
}

// settleReturnsLocked completes devoluções in EM_PROCESSAMENTO: they are
// observed done on the next read, as a PSP settles them a moment later.
func (s *Server) settleReturnsLocked(p *Pix) bool {
	changed := false
	for _, d := range p.Devolucoes {
		if d.Status != ReturnProcessing {
			continue
		}
		changed = true
		if d.fail {
			d.Status, d.Motivo = ReturnFailed, "devolução recusada pelo PSP do pagador"
			continue
		}
		d.Status = ReturnDone
		d.Horario.Liquidacao = stamp(s.now())
	}
	return changed
}

func (s *Server) getPix(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.pix[r.PathValue("e2eid")]
	var out Pix
	if ok {
		s.settleReturnsLocked(p)
		out = copyPix(p)
	}
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func copyPix(p *Pix) Pix {
	out := *p
	out.Devolucoes = nil
	for _, d := range p.Devolucoes {
		dd := *d
		out.Devolucoes = append(out.Devolucoes, &dd)
	}
	return out
}

func (s *Server) listPix(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	end, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	if err1 != nil || err2 != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Consulta inválida.", "inicio e fim são obrigatórios (RFC 3339)")
		return
	}
	if q.Get("cpf") != "" && q.Get("cnpj") != "" {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Consulta inválida.", "cpf e cnpj não podem ser usados juntos")
		return
	}
	page, _ := strconv.Atoi(q.Get("paginacao.paginaAtual"))
	per, _ := strconv.Atoi(q.Get("paginacao.itensPorPagina"))
	if per <= 0 || per > 1000 {
		per = 100
	}
	if page < 0 {
		page = 0
	}
	s.mu.Lock()
	var all []Pix
	for _, id := range s.pixOrder {
		p := s.pix[id]
		if p.at.Before(start) || p.at.After(end) {
			continue
		}
		if t := q.Get("txid"); t != "" && p.TxID != t {
			continue
		}
		if d := q.Get("cpf"); d != "" && p.payer.CPF != d {
			continue
		}
		if d := q.Get("cnpj"); d != "" && p.payer.CNPJ != d {
			continue
		}
		if v := q.Get("txIdPresente"); v != "" && (v == "true") != (p.TxID != "") {
			continue
		}
		s.settleReturnsLocked(p)
		all = append(all, copyPix(p))
	}
	s.mu.Unlock()
	pages := (len(all) + per - 1) / per
	lo, hi := min(page*per, len(all)), min((page+1)*per, len(all))
	writeJSON(w, http.StatusOK, map[string]any{
		"parametros": map[string]any{
			"inicio": stamp(start), "fim": stamp(end),
			"paginacao": map[string]int{"paginaAtual": page, "itensPorPagina": per,
				"quantidadeDePaginas": pages, "quantidadeTotalDeItens": len(all)},
		},
		"pix": all[lo:hi],
	})
}

func (s *Server) putReturn(w http.ResponseWriter, r *http.Request) {
	e2e, id := r.PathValue("e2eid"), r.PathValue("id")
	var req struct {
		Valor     string `json:"valor"`
		Natureza  string `json:"natureza"`
		Descricao string `json:"descricao"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "JSON inválido")
		return
	}
	amount, err := domain.ParseDecimal(req.Valor)
	if !returnIDRE.MatchString(id) || err != nil || amount <= 0 {
		problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", "id ou valor inválido",
			Violacao{Razao: "valor não respeita o schema", Propriedade: "valor"})
		return
	}
	if req.Natureza == "" {
		req.Natureza = "ORIGINAL"
	}
	if req.Natureza != "ORIGINAL" && req.Natureza != "RETIRADA" {
		problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", "natureza inválida")
		return
	}
	s.mu.Lock()
	p, ok := s.pix[e2e]
	if !ok {
		s.mu.Unlock()
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	var total int64
	for _, d := range p.Devolucoes {
		if d.ID == id {
			out := *d
			s.mu.Unlock()
			if d.amount != amount {
				problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", "id já utilizado com outro valor")
				return
			}
			writeJSON(w, http.StatusCreated, out)
			return
		}
		if d.Status != ReturnFailed {
			total += d.amount
		}
	}
	if total+amount > p.amount {
		s.mu.Unlock()
		problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", "a soma das devoluções excede o valor do Pix")
		return
	}
	if s.now().Sub(p.at) > 90*24*time.Hour {
		s.mu.Unlock()
		problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", "prazo de 90 dias excedido")
		return
	}
	rtr, _ := domain.NewEndToEndID(s.cfg.ISPB, s.now(), rand.Reader)
	d := &Devolucao{ID: id, RtrID: "D" + rtr[1:], Valor: req.Valor, Natureza: req.Natureza, Descricao: req.Descricao,
		Status: ReturnProcessing, amount: amount, fail: s.failNext}
	s.failNext = false
	d.Horario.Solicitacao = stamp(s.now())
	p.Devolucoes = append(p.Devolucoes, d)
	out := *d
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) getReturn(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pix[r.PathValue("e2eid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	s.settleReturnsLocked(p)
	for _, d := range p.Devolucoes {
		if d.ID == r.PathValue("id") {
			writeJSON(w, http.StatusOK, d)
			return
		}
	}
	problem(w, http.StatusNotFound, ProblemReturnNotFound, "Devolução não encontrada.", "")
}

func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "JSON inválido")
		return
	}
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problem(w, http.StatusBadRequest, ProblemWebhookInvalid, "Webhook inválido.", "webhookUrl inválida",
			Violacao{Razao: "URL inválida", Propriedade: "webhookUrl"})
		return
	}
	s.mu.Lock()
	s.webhooks[r.PathValue("chave")] = req.WebhookURL
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	u, ok := s.webhooks[r.PathValue("chave")]
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, ProblemWebhookInvalid, "Webhook não encontrado.", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": u, "chave": r.PathValue("chave"), "criacao": stamp(s.now())})
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delete(s.webhooks, r.PathValue("chave"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// PayRequest pays a cob as the payer's bank would.
type PayRequest struct {
	TxID string `json:"txid"`
	// Amount in centavos; 0 pays the cob's original amount.
	Amount int64 `json:"amount"`
	// PayerTaxID is the payer's CPF or CNPJ (what GET /pix?cpf= matches).
	PayerTaxID string `json:"payer_document"`
	PayerName  string `json:"payer_name"`
	// Disclose adds the payer ("pagador") to the Pix, a PSP-specific
	// extension; without it the document is never shown.
	Disclose bool `json:"disclose"`
}

// ErrNotPayable: the cob does not exist or is not ATIVA.
var ErrNotPayable = errors.New("pixsim: cob not payable")

// Pay settles a cob and sends the callback (unless dropped). It returns the
// Pix as GET /pix/{e2eid} shows it.
func (s *Server) Pay(ctx context.Context, req PayRequest) (Pix, error) {
	s.mu.Lock()
	c, ok := s.cobs[req.TxID]
	if ok {
		s.expireLocked(c)
	}
	if !ok || c.Status != CobActive {
		s.mu.Unlock()
		return Pix{}, ErrNotPayable
	}
	amount := req.Amount
	if amount == 0 {
		amount, _ = domain.ParseDecimal(c.Valor.Original)
	}
	now := s.now()
	e2e, err := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	if err != nil {
		s.mu.Unlock()
		return Pix{}, err
	}
	payer := Person{Nome: req.PayerName}
	if doc := domain.NormalizeTaxID(req.PayerTaxID); len(doc) == 14 {
		payer.CNPJ = doc
	} else {
		payer.CPF = doc
	}
	p := &Pix{EndToEndID: e2e, TxID: c.TxID, Valor: domain.FormatDecimal(amount), Chave: c.Chave, Horario: stamp(now),
		payer: payer, amount: amount, at: now}
	if req.Disclose && payer.doc() != "" {
		pp := payer
		p.Pagador = &pp
	}
	c.Status = CobConcluded
	c.Pix = append(c.Pix, p)
	s.pix[e2e] = p
	s.pixOrder = append(s.pixOrder, e2e)
	out := copyPix(p)
	hook, mode := s.webhooks[c.Chave], s.cbMode
	s.mu.Unlock()
	if hook != "" {
		s.callback(ctx, hook, mode, []Pix{out})
	}
	return out, nil
}

// callback posts {"pix":[...]} to <hook>/pix, as API Pix does.
func (s *Server) callback(ctx context.Context, hook, mode string, pix []Pix) {
	ids := make([]string, 0, len(pix))
	for _, p := range pix {
		ids = append(ids, p.EndToEndID)
	}
	target := strings.TrimRight(hook, "/") + "/pix"
	if mode == CallbacksDrop {
		s.mu.Lock()
		s.delivered = append(s.delivered, Callback{URL: target, E2EIDs: ids, Dropped: true})
		s.mu.Unlock()
		return
	}
	n := 1
	if mode == CallbacksDuplicate {
		n = 2
	}
	body, _ := json.Marshal(map[string]any{"pix": pix})
	for range n {
		status := 0
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			if resp, err := s.cfg.Callbacks.Do(req); err == nil {
				status = resp.StatusCode
				_ = resp.Body.Close()
			}
		}
		s.mu.Lock()
		s.delivered = append(s.delivered, Callback{URL: target, E2EIDs: ids, Status: status})
		s.mu.Unlock()
	}
}

// NotifyReturns sends a callback for the Pix with its devoluções (what a PSP
// does when a devolução settles).
func (s *Server) NotifyReturns(ctx context.Context, e2eid string) error {
	s.mu.Lock()
	p, ok := s.pix[e2eid]
	if !ok {
		s.mu.Unlock()
		return ErrNotPayable
	}
	s.settleReturnsLocked(p)
	out := copyPix(p)
	hook, mode := s.webhooks[p.Chave], s.cbMode
	s.mu.Unlock()
	if hook != "" {
		s.callback(ctx, hook, mode, []Pix{out})
	}
	return nil
}

// Webhook returns the URL registered for a key.
func (s *Server) Webhook(chave string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhooks[chave]
}

func (s *Server) ctlPay(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
		return
	}
	p, err := s.Pay(r.Context(), req)
	if err != nil {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança não pagável.", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) ctlCallbacks(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Mode string `json:"mode"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil ||
		(req.Mode != CallbacksNormal && req.Mode != CallbacksDrop && req.Mode != CallbacksDuplicate) {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "mode: normal, drop or duplicate")
		return
	}
	s.SetCallbacks(req.Mode)
	writeJSON(w, http.StatusOK, map[string]string{"mode": req.Mode})
}

func (s *Server) ctlDown(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Down bool `json:"down"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
		return
	}
	s.SetDown(req.Down)
	writeJSON(w, http.StatusOK, map[string]bool{"down": req.Down})
}

// sortedKeys is used by tests through Webhooks.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Webhooks lists the keys with a registered webhook.
func (s *Server) Webhooks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.webhooks)
}

// String describes the simulator without any secret.
func (s *Server) String() string { return fmt.Sprintf("pixsim(ispb=%s)", s.cfg.ISPB) }
