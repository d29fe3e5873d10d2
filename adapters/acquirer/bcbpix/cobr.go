package bcbpix

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// cobrRecebedor is the receiver's account a cobr credits.
type cobrRecebedor struct {
	Agencia   string `json:"agencia,omitempty"`
	Conta     string `json:"conta"`
	TipoConta string `json:"tipoConta"`
}

// cobrRequest is the body of PUT /cobr/{txid} (CobRSolicitada).
type cobrRequest struct {
	IDRec         string `json:"idRec"`
	InfoAdicional string `json:"infoAdicional,omitempty"`
	Calendario    struct {
		DataDeVencimento string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor struct {
		Original string `json:"original"`
	} `json:"valor"`
	AjusteDiaUtil bool          `json:"ajusteDiaUtil"`
	Recebedor     cobrRecebedor `json:"recebedor"`
}

// tentativaBody is one attempt of a cobr (CobRTentativas).
type tentativaBody struct {
	DataLiquidacao string `json:"dataLiquidacao"`
	Tipo           string `json:"tipo"`
	Status         string `json:"status"`
	EndToEndID     string `json:"endToEndId"`
	Rejeicao       *struct {
		Codigo string `json:"codigo"`
	} `json:"rejeicao"`
}

// cobrBody is a cobr as the PSP answers it (CobRCompleta) and as a
// webhookcobr callback carries it (CobRNotification), cut to what the
// adapter reads.
type cobrBody struct {
	IDRec      string `json:"idRec"`
	TxID       string `json:"txid"`
	Calendario struct {
		DataDeVencimento string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor struct {
		Original string `json:"original"`
	} `json:"valor"`
	Status       string          `json:"status"`
	Encerramento *encerramento   `json:"encerramento"`
	Tentativas   []tentativaBody `json:"tentativas"`
	Pix          []pixBody       `json:"pix"`
}

func cobrStatus(s string) (domain.CobRStatus, bool) {
	st := domain.CobRStatus(s)
	return st, st.Valid()
}

// attemptKind maps tentativas[].tipo: AGND, the debit of the due date;
// NTAG, a retry the receiver asked for; RIFL, the payer's PSP's retry on
// the same day after a failed settlement, which stands for the due
// date's debit.
func attemptKind(tipo string) (domain.AttemptKind, bool) {
	switch tipo {
	case "AGND", "RIFL":
		return domain.AttemptOnDueDate, true
	case "NTAG":
		return domain.AttemptRetry, true
	}
	return "", false
}

// recurringCharge is the port's view of a cobr the PSP answered.
func (b *cobrBody) recurringCharge() (*ports.RecurringCharge, error) {
	bad := func(what string) error {
		return fmt.Errorf("%w: the PSP answered a cobr with %s", ports.ErrAcquirerUnavailable, what)
	}
	st, ok := cobrStatus(b.Status)
	if !ok || !domain.ValidTxID(b.TxID) {
		return nil, bad("an unknown status or txid")
	}
	out := &ports.RecurringCharge{TxID: b.TxID, Status: st}
	for _, t := range b.Tentativas {
		day, err := bizdays.ParseDate(t.DataLiquidacao)
		kind, kok := attemptKind(t.Tipo)
		ast := domain.AttemptStatus(t.Status)
		if err != nil || !kok || !ast.Valid() {
			return nil, bad("a malformed attempt")
		}
		at := ports.RecurringAttempt{Date: day, Kind: kind, Status: ast}
		if domain.ValidEndToEndID(t.EndToEndID) {
			at.EndToEndID = t.EndToEndID
		}
		if t.Rejeicao != nil {
			at.RejectCode = truncateRunes(t.Rejeicao.Codigo, 8)
		}
		out.Attempts = append(out.Attempts, at)
	}
	for _, p := range b.Pix {
		r, err := p.received()
		if err != nil {
			return nil, err
		}
		out.Pix = append(out.Pix, r)
	}
	return out, nil
}

// CreateRecurringCharge implements ports.RecurringAcquirer with PUT
// /cobr/{txid}, asking for the debit to move to the next business day
// (ajusteDiaUtil). The receiver's account is the account configuration's
// Receiver; without one: ErrAcquirerNotConfigured. A txid the PSP already
// has (a retry after a lost answer) is read back (GET /cobr/{txid}) and
// answered when it is the same rec, due date and amount.
func (a *Acquirer) CreateRecurringCharge(ctx context.Context, req ports.RecurringChargeRequest) (*ports.RecurringCharge, error) {
	if !domain.ValidTxID(req.TxID) || !validRecID(req.RecID) || req.Amount <= 0 || req.DueDate.IsZero() {
		return nil, fmt.Errorf("%w: a cobr needs a txid, a rec, an amount and a due date", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	rc := c.cfg.Receiver
	if rc == nil {
		return nil, fmt.Errorf("%w: the account's PSP configuration has no receiver account for Pix Automático", ports.ErrAcquirerNotConfigured)
	}
	body := cobrRequest{IDRec: req.RecID, InfoAdicional: truncateRunes(req.Info, 140), AjusteDiaUtil: true,
		Recebedor: cobrRecebedor{Agencia: rc.Branch, Conta: rc.Number, TipoConta: rc.Type}}
	body.Calendario.DataDeVencimento = req.DueDate.String()
	body.Valor.Original = domain.FormatDecimal(req.Amount)
	path := "/cobr/" + req.TxID
	same := func(b cobrBody) bool {
		return b.IDRec == body.IDRec && b.Calendario.DataDeVencimento == body.Calendario.DataDeVencimento &&
			decimalEqual(b.Valor.Original, body.Valor.Original)
	}
	var out cobrBody
	err = c.do(ctx, "PUT", path, body, &out, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		var existing cobrBody
		if gerr := c.do(ctx, "GET", path, nil, &existing, true); gerr == nil && same(existing) {
			out, err = existing, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if out.TxID != req.TxID || !same(out) {
		return nil, fmt.Errorf("%w: the PSP answered a cobr with other terms", ports.ErrAcquirerUnavailable)
	}
	return out.recurringCharge()
}

// GetRecurringCharge implements ports.RecurringAcquirer with GET
// /cobr/{txid}.
func (a *Acquirer) GetRecurringCharge(ctx context.Context, scope ports.Scope, txid string) (*ports.RecurringCharge, error) {
	if !domain.ValidTxID(txid) {
		return nil, fmt.Errorf("%w: malformed txid", ports.ErrNotFound)
	}
	c, err := a.client(ctx, scope.AccountID)
	if err != nil {
		return nil, err
	}
	return getCobR(ctx, c, txid)
}

func getCobR(ctx context.Context, c *client, txid string) (*ports.RecurringCharge, error) {
	var out cobrBody
	if err := c.do(ctx, "GET", "/cobr/"+txid, nil, &out, true); err != nil {
		return nil, err
	}
	if out.TxID != txid {
		return nil, fmt.Errorf("%w: the PSP answered another cobr", ports.ErrAcquirerUnavailable)
	}
	return out.recurringCharge()
}

// RetryRecurringCharge implements ports.RecurringAcquirer with POST
// /cobr/{txid}/retentativa/{data}. The PSP takes one retry per day, so a
// retry it refuses, or whose answer is lost, is read back: a cobr holding
// a retry (NTAG) on that day is the answer.
func (a *Acquirer) RetryRecurringCharge(ctx context.Context, req ports.RetryRecurringChargeRequest) (*ports.RecurringCharge, error) {
	if !domain.ValidTxID(req.TxID) || req.Date.IsZero() {
		return nil, fmt.Errorf("%w: a retry needs a txid and a date", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	var out cobrBody
	err = c.do(ctx, "POST", "/cobr/"+req.TxID+"/retentativa/"+req.Date.String(), nil, &out, false)
	if err == nil {
		if out.TxID != req.TxID {
			return nil, fmt.Errorf("%w: the PSP answered another cobr", ports.ErrAcquirerUnavailable)
		}
		return out.recurringCharge()
	}
	if errors.Is(err, ports.ErrAcquirerRejected) || errors.Is(err, ports.ErrAcquirerUnavailable) {
		if cur, gerr := getCobR(ctx, c, req.TxID); gerr == nil {
			for _, t := range cur.Attempts {
				if t.Kind == domain.AttemptRetry && t.Date == req.Date {
					return cur, nil
				}
			}
		}
	}
	return nil, err
}

// CancelRecurringCharge implements ports.RecurringAcquirer with PATCH
// /cobr/{txid} {"status":"CANCELADA"}; a cobr the PSP refuses to cancel
// because it already ended counts as done. One whose debit day has come
// stays open: the refusal is returned.
func (a *Acquirer) CancelRecurringCharge(ctx context.Context, req ports.CancelRecurringChargeRequest) error {
	if !domain.ValidTxID(req.TxID) {
		return fmt.Errorf("%w: malformed txid", ports.ErrNotFound)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	err = c.do(ctx, "PATCH", "/cobr/"+req.TxID, map[string]string{"status": string(domain.CobRCancelled)}, nil, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		if cur, gerr := getCobR(ctx, c, req.TxID); gerr == nil && !cur.Status.Open() {
			return nil
		}
	}
	return err
}
