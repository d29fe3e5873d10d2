package bcbpix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type cobBody struct {
	Calendario struct {
		Criacao   string `json:"criacao,omitempty"`
		Expiracao int64  `json:"expiracao"`
	} `json:"calendario"`
	TxID    string   `json:"txid,omitempty"`
	Revisao int      `json:"revisao,omitempty"`
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

// truncateRunes is s cut to at most n characters, reading no further
// than that (a PSP's text may be of any size).
func truncateRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
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
	if req.Due != nil {
		return a.createCobV(ctx, c, req)
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
	if v, err := domain.ParseDecimal(out.Valor.Original); err != nil || v != req.Amount || out.Chave != body.Chave {
		return nil, fmt.Errorf("%w: the PSP answered a cob for another amount or key", ports.ErrAcquirerUnavailable)
	}
	if out, err = a.keepExpiry(ctx, c, path, out, req.ExpiresAt); err != nil {
		return nil, err
	}
	expires := req.ExpiresAt
	if t, ok := pspTime(out.Calendario.Criacao); ok && out.Calendario.Expiracao > 0 {
		if end := t.Add(time.Duration(out.Calendario.Expiracao) * time.Second).Truncate(time.Second); end.After(t) && ports.InTimeRange(end) {
			expires = end
		}
	}
	return &ports.CreatePixChargeResponse{
		BRCode:      out.PixCopiaECola,
		TxID:        req.TxID,
		Location:    out.Location,
		ExpiresAt:   expires,
		ProviderRef: refPrefix + req.AccountID + ":" + req.TxID,
	}, nil
}

// keepExpiry corrects a revised cob's lifetime. A PUT on a cob the PSP
// already has (a retry after a lost answer) revises it, and the PSP counts
// the new expiracao from the cob's first criacao, not from the retry: the
// cob would outlive the charge by the time between the two. One PATCH of
// calendario.expiracao puts the end back where the charge's is.
func (a *Acquirer) keepExpiry(ctx context.Context, c *client, path string, out cobBody, expiresAt time.Time) (cobBody, error) {
	if out.Revisao == 0 {
		return out, nil
	}
	created, ok := pspTime(out.Calendario.Criacao)
	if !ok {
		return out, nil
	}
	want := max(int64(expiresAt.Sub(created).Round(time.Second)/time.Second), 1)
	if want == out.Calendario.Expiracao {
		return out, nil
	}
	var fixed cobBody
	patch := map[string]any{"calendario": map[string]int64{"expiracao": want}}
	if err := c.do(ctx, "PATCH", path, patch, &fixed, true); err != nil {
		return out, err
	}
	if fixed.PixCopiaECola == "" || fixed.Location == "" {
		fixed.PixCopiaECola, fixed.Location = out.PixCopiaECola, out.Location
	}
	return fixed, nil
}

// CancelPixCharge implements ports.Acquirer with PATCH /cob/{txid}
// {"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}.
func (a *Acquirer) CancelPixCharge(ctx context.Context, req ports.CancelPixChargeRequest) error {
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	removal := map[string]string{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
	err = c.do(ctx, "PATCH", "/cob/"+req.TxID, removal, nil, true)
	if errors.Is(err, ports.ErrNotFound) {
		// A txid is a cob's or a cobv's; the caller need not know which.
		if verr := c.do(ctx, "PATCH", "/cobv/"+req.TxID, removal, nil, true); verr == nil {
			return nil
		}
	}
	return err
}

// ChargeStatus implements ports.RefundAcquirer with GET /cob/{txid}: the
// live cob and the PSP's answer, cut to publicCob's fields.
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
	return ports.ProviderStatus{Status: st, RawResponse: publicCob(raw)}, nil
}

// cobFields and pixFields are the parts of a PSP's cob (and of each Pix
// received for it) that provider-status may show: the charge's own terms
// and the payment's identifiers. The payer (devedor, the Pix's pagador and
// infoPagador), free-text fields that may name people, and anything a PSP
// adds beyond the API Pix schema stay out (security.md, item 12).
var (
	cobFields       = []string{"txid", "revisao", "status", "calendario", "valor", "chave", "loc", "location", "pixCopiaECola"}
	pixFields       = []string{"endToEndId", "txid", "valor", "horario"}
	devolucaoFields = []string{"id", "rtrId", "valor", "status", "horario", "natureza"}
)

func publicCob(raw map[string]any) map[string]any {
	out := pick(raw, cobFields)
	pixes, _ := raw["pix"].([]any)
	if len(pixes) == 0 {
		return out
	}
	list := make([]any, 0, len(pixes))
	for _, p := range pixes {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		px := pick(pm, pixFields)
		if devs, ok := pm["devolucoes"].([]any); ok {
			ds := make([]any, 0, len(devs))
			for _, d := range devs {
				if dm, ok := d.(map[string]any); ok {
					ds = append(ds, pick(dm, devolucaoFields))
				}
			}
			px["devolucoes"] = ds
		}
		list = append(list, px)
	}
	out["pix"] = list
	return out
}

func pick(m map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
