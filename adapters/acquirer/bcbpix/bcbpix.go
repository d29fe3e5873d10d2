// Package bcbpix is the acquirer for PSP banks that implement the Banco
// Central "API Pix" (v2): immediate charges (cob), received Pix (pix),
// devoluções and the webhook, over OAuth2 client credentials and mutual
// TLS. Each merchant account brings its own PSP credentials, stored sealed
// with AES-GCM under the master key (see Sealer). docs/bcbpix.md.
package bcbpix

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Name is the provider name kept on charges created through API Pix.
const Name = "bcbpix"

// refPrefix starts every provider reference this adapter hands out, so a
// reference says which account's PSP to ask.
const refPrefix = Name + ":"

// Devolução statuses of API Pix.
const (
	ReturnProcessing = "EM_PROCESSAMENTO"
	ReturnDone       = "DEVOLVIDO"
	ReturnFailed     = "NAO_REALIZADO"
)

// Options tune the adapter; the zero value is production's.
type Options struct {
	// Timeout bounds one HTTP call (default 10 s).
	Timeout time.Duration
	// Retry is the back-off before each retry of an idempotent call
	// (default 100 ms, 400 ms, 1.2 s).
	Retry []time.Duration
	// Reload is how long a loaded account configuration is used before the
	// store is read again (default 1 min; Configure reloads at once).
	Reload time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	// Log defaults to slog.Default(). No secret is ever logged.
	Log *slog.Logger
}

// Acquirer implements ports.Acquirer, ports.RefundAcquirer and
// ports.PixReceiver over API Pix.
type Acquirer struct {
	store  ports.AcquirerAccountStore
	sealer *Sealer
	opts   Options

	mu      sync.Mutex
	clients map[string]*client
}

var (
	_ ports.Acquirer       = (*Acquirer)(nil)
	_ ports.RefundAcquirer = (*Acquirer)(nil)
	_ ports.PixReceiver    = (*Acquirer)(nil)
)

// New returns the adapter.
func New(store ports.AcquirerAccountStore, sealer *Sealer, opts Options) *Acquirer {
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Retry == nil {
		opts.Retry = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1200 * time.Millisecond}
	}
	if opts.Reload == 0 {
		opts.Reload = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Acquirer{store: store, sealer: sealer, opts: opts, clients: map[string]*client{}}
}

// Name implements ports.Acquirer.
func (a *Acquirer) Name() string { return Name }

// Configure validates and stores (sealed) an account's PSP configuration.
func (a *Acquirer) Configure(ctx context.Context, accountID string, cfg AccountConfig) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bcbpix: %w", err)
	}
	sealed, err := a.sealer.Seal(accountID, cfg)
	if err != nil {
		return err
	}
	if err := a.store.PutAcquirerAccount(ctx, ports.AcquirerAccount{AccountID: accountID, Provider: Name, Sealed: sealed,
		UpdatedAt: a.opts.Now().UTC()}); err != nil {
		return err
	}
	a.mu.Lock()
	if c, ok := a.clients[accountID]; ok {
		c.close()
		delete(a.clients, accountID)
	}
	a.mu.Unlock()
	a.opts.Log.InfoContext(ctx, "bcbpix account configured", "account", accountID)
	return nil
}

// RegisterWebhook points the PSP's callbacks for the account's Pix key at
// webhookURL (PUT /webhook/{chave}); the PSP appends "/pix".
func (a *Acquirer) RegisterWebhook(ctx context.Context, accountID, webhookURL string) error {
	c, err := a.client(ctx, accountID)
	if err != nil {
		return err
	}
	return c.do(ctx, "PUT", "/webhook/"+url.PathEscape(c.cfg.PixKey), map[string]string{"webhookUrl": webhookURL}, nil, true)
}

// client returns the account's client, loading its configuration when
// missing or older than Options.Reload.
func (a *Acquirer) client(ctx context.Context, accountID string) (*client, error) {
	now := a.opts.Now()
	a.mu.Lock()
	c, ok := a.clients[accountID]
	fresh := ok && now.Sub(c.loadedAt) < a.opts.Reload
	a.mu.Unlock()
	if fresh {
		return c, nil
	}
	rec, err := a.store.GetAcquirerAccount(ctx, accountID, Name)
	if errors.Is(err, ports.ErrNotFound) {
		return nil, fmt.Errorf("%w: the account has no PSP configured for API Pix", ports.ErrAcquirerRejected)
	}
	if err != nil {
		return nil, err
	}
	if ok && rec.UpdatedAt.Equal(c.updated) {
		a.mu.Lock()
		c.loadedAt = now
		a.mu.Unlock()
		return c, nil
	}
	cfg, err := a.sealer.Open(accountID, rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerUnavailable, err)
	}
	nc, err := newClient(cfg, a.opts.Timeout, a.opts.Retry)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
	}
	nc.loadedAt, nc.updated = now, rec.UpdatedAt
	a.mu.Lock()
	if old, ok := a.clients[accountID]; ok && old != nc {
		old.close()
	}
	a.clients[accountID] = nc
	a.mu.Unlock()
	return nc, nil
}

type cobBody struct {
	Calendario struct {
		Criacao   string `json:"criacao,omitempty"`
		Expiracao int64  `json:"expiracao"`
	} `json:"calendario"`
	TxID    string   `json:"txid,omitempty"`
	Status  string   `json:"status,omitempty"`
	Devedor *devedor `json:"devedor,omitempty"`
	Valor   struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              string `json:"chave"`
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
	Location           string `json:"location,omitempty"`
	PixCopiaECola      string `json:"pixCopiaECola,omitempty"`
}

type devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// CreatePixCharge implements ports.Acquirer with PUT /cob/{txid}. A retry
// of a txid the PSP already has reads that cob back (GET /cob/{txid}) and
// accepts it when it is the same charge.
func (a *Acquirer) CreatePixCharge(ctx context.Context, req ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
	if !domain.ValidTxID(req.TxID) {
		return nil, fmt.Errorf("%w: txid %q", ports.ErrAcquirerRejected, req.TxID)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	var body cobBody
	secs := int64(req.ExpiresAt.Sub(a.opts.Now()).Round(time.Second) / time.Second)
	body.Calendario.Expiracao = max(secs, 1)
	body.Valor.Original = domain.FormatDecimal(req.Amount)
	body.Chave = c.cfg.PixKey
	body.SolicitacaoPagador = truncateRunes(req.Description, 140)
	if doc := domain.NormalizeTaxID(req.PayerTaxID); doc != "" && req.PayerName != "" {
		d := &devedor{Nome: truncateRunes(req.PayerName, 200)}
		if len(doc) == 14 {
			d.CNPJ = doc
		} else {
			d.CPF = doc
		}
		body.Devedor = d
	}
	path := "/cob/" + req.TxID
	var out cobBody
	err = c.do(ctx, "PUT", path, body, &out, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		// The txid may already be ours (a retry after a lost answer).
		var existing cobBody
		if gerr := c.do(ctx, "GET", path, nil, &existing, true); gerr == nil &&
			existing.Valor.Original == body.Valor.Original && existing.Chave == body.Chave {
			out, err = existing, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if out.PixCopiaECola == "" || out.Location == "" {
		return nil, fmt.Errorf("%w: the PSP answered a cob without pixCopiaECola or location", ports.ErrAcquirerUnavailable)
	}
	expires := req.ExpiresAt
	if t, err := time.Parse(time.RFC3339Nano, out.Calendario.Criacao); err == nil && out.Calendario.Expiracao > 0 {
		expires = t.Add(time.Duration(out.Calendario.Expiracao) * time.Second).Truncate(time.Second)
	}
	return &ports.CreatePixChargeResponse{
		BRCode:      out.PixCopiaECola,
		TxID:        req.TxID,
		Location:    out.Location,
		ExpiresAt:   expires,
		ProviderRef: refPrefix + req.AccountID + ":" + req.TxID,
	}, nil
}

// CancelPixCharge implements ports.Acquirer with PATCH /cob/{txid}
// {"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}.
func (a *Acquirer) CancelPixCharge(ctx context.Context, req ports.CancelPixChargeRequest) error {
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	return c.do(ctx, "PATCH", "/cob/"+req.TxID, map[string]string{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}, nil, true)
}

type devolucaoBody struct {
	ID        string `json:"id,omitempty"`
	RtrID     string `json:"rtrId,omitempty"`
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza,omitempty"`
	Descricao string `json:"descricao,omitempty"`
	Status    string `json:"status,omitempty"`
	Motivo    string `json:"motivo,omitempty"`
}

func (a *Acquirer) devolucao(ctx context.Context, accountID, e2eid, id string, amount int64, reason string) (devolucaoBody, error) {
	var out devolucaoBody
	if !domain.ValidEndToEndID(e2eid) {
		return out, fmt.Errorf("%w: a devolução needs the end-to-end id of the Pix", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, accountID)
	if err != nil {
		return out, err
	}
	body := devolucaoBody{Valor: domain.FormatDecimal(amount), Natureza: "ORIGINAL", Descricao: truncateRunes(reason, 140)}
	err = c.do(ctx, "PUT", "/pix/"+e2eid+"/devolucao/"+id, body, &out, true)
	return out, err
}

// ReturnPix implements ports.Acquirer with PUT /pix/{e2eid}/devolucao/{id}
// (natureza ORIGINAL); the return id is the devolução id, so a retry is the
// same devolução.
func (a *Acquirer) ReturnPix(ctx context.Context, req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	d, err := a.devolucao(ctx, req.AccountID, req.EndToEndID, req.ReturnID, req.Amount, req.Reason)
	if err != nil {
		return nil, err
	}
	return &ports.ReturnPixResponse{ProviderRef: refPrefix + req.AccountID + ":" + req.EndToEndID + ":" + req.ReturnID, Status: d.Status}, nil
}

// Refund implements ports.RefundAcquirer: a devolução of the original Pix,
// partial or repeated up to its amount. Cashout is not part of API Pix.
func (a *Acquirer) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	if req.Strategy == domain.StrategyCashout {
		return "", fmt.Errorf("%w: cashout refunds are not supported by the API Pix provider; use a devolution", ports.ErrAcquirerRejected)
	}
	if req.Method != "" && req.Method != domain.MethodPix {
		return "", fmt.Errorf("%w: the API Pix provider refunds only Pix", ports.ErrAcquirerRejected)
	}
	if _, err := a.devolucao(ctx, req.AccountID, req.EndToEndID, req.RefundID, req.Amount, "devolução solicitada pelo recebedor"); err != nil {
		return "", err
	}
	return refPrefix + req.AccountID + ":" + req.EndToEndID + ":" + req.RefundID, nil
}

// SupportsCashout implements ports.CashoutSupport: API Pix refunds only by
// devolução.
func (a *Acquirer) SupportsCashout(ports.Scope) bool { return false }

// parseRef splits a provider reference into the account and its parts.
func parseRef(ref string, parts int) (string, []string, error) {
	rest, ok := strings.CutPrefix(ref, refPrefix)
	f := strings.Split(rest, ":")
	if !ok || len(f) != parts+1 || f[0] == "" {
		return "", nil, fmt.Errorf("%w: not an API Pix reference", ports.ErrNotFound)
	}
	return f[0], f[1:], nil
}

// RefundStatus implements ports.RefundAcquirer with GET
// /pix/{e2eid}/devolucao/{id}: EM_PROCESSAMENTO → IN_PROGRESS, DEVOLVIDO →
// REFUNDED, NAO_REALIZADO → FAILED.
func (a *Acquirer) RefundStatus(ctx context.Context, providerRef string) (string, error) {
	acct, f, err := parseRef(providerRef, 2)
	if err != nil {
		return "", err
	}
	c, err := a.client(ctx, acct)
	if err != nil {
		return "", err
	}
	var out devolucaoBody
	if err := c.do(ctx, "GET", "/pix/"+f[0]+"/devolucao/"+f[1], nil, &out, true); err != nil {
		return "", err
	}
	return RefundState(out.Status), nil
}

// RefundState maps a devolução status to a refund status.
func RefundState(s string) string {
	switch s {
	case ReturnDone:
		return string(domain.RefundRefunded)
	case ReturnFailed:
		return string(domain.RefundFailed)
	default:
		return string(domain.RefundInProgress)
	}
}

// ChargeStatus implements ports.RefundAcquirer with GET /cob/{txid}: the
// live cob and the PSP's raw answer.
func (a *Acquirer) ChargeStatus(ctx context.Context, providerRef string) (ports.ProviderStatus, error) {
	acct, f, err := parseRef(providerRef, 1)
	if err != nil {
		return ports.ProviderStatus{}, err
	}
	c, err := a.client(ctx, acct)
	if err != nil {
		return ports.ProviderStatus{}, err
	}
	var raw map[string]any
	if err := c.do(ctx, "GET", "/cob/"+f[0], nil, &raw, true); err != nil {
		return ports.ProviderStatus{}, err
	}
	st, _ := raw["status"].(string)
	return ports.ProviderStatus{Status: st, RawResponse: raw}, nil
}

// Receipt implements ports.RefundAcquirer: API Pix has no receipts.
func (a *Acquirer) Receipt(context.Context, ports.ReceiptRequest) ([]byte, error) {
	return nil, fmt.Errorf("%w: API Pix has no receipts", ports.ErrAcquirerRejected)
}

// pixBody is a received Pix; pagador is a PSP-specific extension some PSPs
// add with the payer's document.
type pixBody struct {
	EndToEndID string `json:"endToEndId"`
	TxID       string `json:"txid"`
	Valor      string `json:"valor"`
	Horario    string `json:"horario"`
	Pagador    *struct {
		CPF  string `json:"cpf"`
		CNPJ string `json:"cnpj"`
		Nome string `json:"nome"`
	} `json:"pagador"`
	Devolucoes []devolucaoBody `json:"devolucoes"`
}

func (p pixBody) received() (ports.ReceivedPix, error) {
	amount, err := domain.ParseDecimal(p.Valor)
	if err != nil || !domain.ValidEndToEndID(p.EndToEndID) {
		return ports.ReceivedPix{}, fmt.Errorf("%w: the PSP answered a malformed pix", ports.ErrAcquirerUnavailable)
	}
	at, _ := time.Parse(time.RFC3339Nano, p.Horario)
	r := ports.ReceivedPix{EndToEndID: p.EndToEndID, TxID: p.TxID, Amount: amount, PaidAt: at}
	if pg := p.Pagador; pg != nil {
		r.PayerTaxID = domain.NormalizeTaxID(pg.CPF + pg.CNPJ)
		r.PayerName = pg.Nome
	}
	for _, d := range p.Devolucoes {
		if d.Status == ReturnFailed {
			continue
		}
		if v, err := domain.ParseDecimal(d.Valor); err == nil {
			r.Returned += v
		}
	}
	return r, nil
}

// ReceiverAccounts implements ports.PixReceiver.
func (a *Acquirer) ReceiverAccounts(ctx context.Context) ([]string, error) {
	recs, err := a.store.ListAcquirerAccounts(ctx, Name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.AccountID)
	}
	return out, nil
}

// GetPix implements ports.PixReceiver with GET /pix/{e2eid}.
func (a *Acquirer) GetPix(ctx context.Context, accountID, e2eid string) (*ports.ReceivedPix, error) {
	if !domain.ValidEndToEndID(e2eid) {
		return nil, fmt.Errorf("%w: malformed end-to-end id", ports.ErrNotFound)
	}
	c, err := a.client(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out pixBody
	if err := c.do(ctx, "GET", "/pix/"+e2eid, nil, &out, true); err != nil {
		return nil, err
	}
	r, err := out.received()
	if err != nil {
		return nil, err
	}
	if r.EndToEndID != e2eid {
		return nil, fmt.Errorf("%w: the PSP answered another pix", ports.ErrAcquirerUnavailable)
	}
	return &r, nil
}

// pageSize is how many Pix ListPix asks per page.
const pageSize = 100

// ListPix implements ports.PixReceiver with GET
// /pix?inicio&fim[&txid][&cpf|cnpj]&paginacao.paginaAtual&paginacao.itensPorPagina.
func (a *Acquirer) ListPix(ctx context.Context, q ports.PixQuery) (ports.PixPage, error) {
	c, err := a.client(ctx, q.AccountID)
	if err != nil {
		return ports.PixPage{}, err
	}
	v := url.Values{}
	// Whole seconds, widened outward so the window loses nothing.
	v.Set("inicio", q.Start.UTC().Truncate(time.Second).Format(time.RFC3339))
	v.Set("fim", q.End.UTC().Add(time.Second-1).Truncate(time.Second).Format(time.RFC3339))
	if q.TxID != "" {
		v.Set("txid", q.TxID)
	}
	if doc := domain.NormalizeTaxID(q.PayerTaxID); doc != "" {
		if len(doc) == 14 {
			v.Set("cnpj", doc)
		} else {
			v.Set("cpf", doc)
		}
	}
	v.Set("paginacao.paginaAtual", strconv.Itoa(q.Page))
	v.Set("paginacao.itensPorPagina", strconv.Itoa(pageSize))
	var out struct {
		Parametros struct {
			Paginacao struct {
				PaginaAtual         int `json:"paginaAtual"`
				QuantidadeDePaginas int `json:"quantidadeDePaginas"`
			} `json:"paginacao"`
		} `json:"parametros"`
		Pix []pixBody `json:"pix"`
	}
	if err := c.do(ctx, "GET", "/pix?"+v.Encode(), nil, &out, true); err != nil {
		return ports.PixPage{}, err
	}
	page := ports.PixPage{More: out.Parametros.Paginacao.PaginaAtual+1 < out.Parametros.Paginacao.QuantidadeDePaginas}
	for _, p := range out.Pix {
		r, err := p.received()
		if err != nil {
			return ports.PixPage{}, err
		}
		page.Pix = append(page.Pix, r)
	}
	return page, nil
}
