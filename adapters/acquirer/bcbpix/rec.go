package bcbpix

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Pix Automático's mandates (API Pix 2.9: /locrec, /rec, /solicrec). The
// recurring charges are in cobr.go, the callbacks in recurring_callbacks.go.

var _ ports.RecurringAcquirer = (*Acquirer)(nil)

// recTerms are the fields of a rec this adapter sends (RecSolicitada) and
// compares when it looks for the rec an earlier try opened.
type recTerms struct {
	Vinculo struct {
		Objeto   string  `json:"objeto,omitempty"`
		Contrato string  `json:"contrato"`
		Devedor  devedor `json:"devedor"`
	} `json:"vinculo"`
	Calendario struct {
		DataInicial   string `json:"dataInicial"`
		DataFinal     string `json:"dataFinal,omitempty"`
		Periodicidade string `json:"periodicidade"`
	} `json:"calendario"`
	Valor *struct {
		ValorRec string `json:"valorRec,omitempty"`
	} `json:"valor,omitempty"`
	PoliticaRetentativa string `json:"politicaRetentativa"`
}

// recRequest is the body of POST /rec.
type recRequest struct {
	recTerms
	Loc      *int64 `json:"loc,omitempty"`
	Ativacao *struct {
		DadosJornada struct {
			TxID string `json:"txid"`
		} `json:"dadosJornada"`
	} `json:"ativacao,omitempty"`
}

// recBody is a rec as the PSP answers it (RecCompleta), cut to what the
// adapter reads.
type recBody struct {
	recTerms
	IDRec  string `json:"idRec"`
	Status string `json:"status"`
	Loc    *struct {
		ID       int64  `json:"id"`
		Location string `json:"location"`
	} `json:"loc"`
	Encerramento *encerramento `json:"encerramento"`
	Ativacao     struct {
		TipoJornada  string `json:"tipoJornada"`
		DadosJornada *struct {
			TxID string `json:"txid"`
		} `json:"dadosJornada"`
	} `json:"ativacao"`
	Solicitacao []solicRecBody `json:"solicitacao"`
	DadosQR     *struct {
		PixCopiaECola string `json:"pixCopiaECola"`
	} `json:"dadosQR"`
}

// encerramento says why a rec or a cobr ended.
type encerramento struct {
	Rejeicao *struct {
		Codigo string `json:"codigo"`
	} `json:"rejeicao"`
	Cancelamento *struct {
		Solicitante string `json:"solicitante"`
		Codigo      string `json:"codigo"`
	} `json:"cancelamento"`
}

// cancelledByPayer reports whether the payer or the payer's PSP ended it.
func (e *encerramento) cancelledByPayer() bool {
	return e != nil && e.Cancelamento != nil &&
		(e.Cancelamento.Solicitante == "USUARIO_PAGADOR" || e.Cancelamento.Solicitante == "PSP_PAGADOR")
}

// recFindWindow is how far back CreateRecurrence looks for the rec an
// earlier try of the same create opened: the life of an idempotency key.
const recFindWindow = 24 * time.Hour

// recFindPages bounds the pages of GET /rec one create reads.
const recFindPages = 10

func recStatus(s string) (domain.RecStatus, bool) {
	switch st := domain.RecStatus(s); st {
	case domain.RecCreated, domain.RecApproved, domain.RecRejected, domain.RecExpired, domain.RecCancelled:
		return st, true
	}
	return "", false
}

// termsOf is the rec req asks for.
func termsOf(req ports.CreateRecurrenceRequest) (recTerms, error) {
	var t recTerms
	doc := domain.NormalizeTaxID(req.DebtorTaxID)
	if doc == "" || req.DebtorName == "" || req.Contract == "" || !req.Interval.Valid() || !req.RetryPolicy.Valid() ||
		!req.Journey.Valid() || req.StartDate.IsZero() || req.Amount < 0 {
		return t, fmt.Errorf("%w: a rec needs its debtor, contract, interval, start date, retry policy and journey", ports.ErrAcquirerRejected)
	}
	t.Vinculo.Contrato = truncateRunes(req.Contract, domain.MaxContractLen)
	t.Vinculo.Objeto = truncateRunes(req.Object, domain.MaxSubscriptionDescriptionLen)
	t.Vinculo.Devedor.Nome = truncateRunes(req.DebtorName, 140)
	if len(doc) == 14 {
		t.Vinculo.Devedor.CNPJ = doc
	} else {
		t.Vinculo.Devedor.CPF = doc
	}
	t.Calendario.DataInicial = req.StartDate.String()
	if !req.EndDate.IsZero() {
		t.Calendario.DataFinal = req.EndDate.String()
	}
	t.Calendario.Periodicidade = req.Interval.Periodicidade()
	if req.Amount > 0 {
		t.Valor = &struct {
			ValorRec string `json:"valorRec,omitempty"`
		}{ValorRec: domain.FormatDecimal(req.Amount)}
	}
	t.PoliticaRetentativa = req.RetryPolicy.PoliticaRetentativa()
	return t, nil
}

// sameTerms reports whether the PSP's rec got holds the terms want.
func sameTerms(got, want recTerms) bool {
	gv, wv := got.Valor, want.Valor
	amountSame := (gv == nil || gv.ValorRec == "") == (wv == nil) && (wv == nil || decimalEqual(gv.ValorRec, wv.ValorRec))
	return got.Vinculo == want.Vinculo && got.Calendario == want.Calendario && amountSame &&
		got.PoliticaRetentativa == want.PoliticaRetentativa
}

// CreateRecurrence implements ports.RecurringAcquirer. For the QR
// journeys it opens a location (POST /locrec) and the rec on it (POST
// /rec, with ativacao.dadosJornada.txid naming the first payment's cob
// for qr_code_with_first_payment), then reads the rec's QR code (GET
// /rec/{idRec}[?txid]). A PSP chooses the idRec, so before opening one
// the adapter looks for the rec an earlier try of the same create opened
// (findRec) and answers that one instead.
func (a *Acquirer) CreateRecurrence(ctx context.Context, req ports.CreateRecurrenceRequest) (*ports.Recurrence, error) {
	terms, err := termsOf(req)
	if err != nil {
		return nil, err
	}
	if req.Journey == domain.JourneyQRCodeWithFirstPayment && !domain.ValidTxID(req.FirstPaymentTxID) {
		return nil, fmt.Errorf("%w: JORNADA_3 needs the first payment's txid", ports.ErrAcquirerRejected)
	}
	if req.Journey == domain.JourneyAuthorizationRequest && !payerAccountGiven(req.PayerAccount) {
		return nil, ports.ErrPayerAccountRequired // its solicrec could go nowhere
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	found, err := a.findRec(ctx, c, req, terms)
	if err != nil {
		return nil, err
	}
	idRec := ""
	if found != nil {
		idRec = found.IDRec
	} else {
		body := recRequest{recTerms: terms}
		if req.Journey.QR() {
			var loc struct {
				ID int64 `json:"id"`
			}
			// A location no rec takes is harmless: it serves nothing.
			if err := c.do(ctx, "POST", "/locrec", map[string]any{}, &loc, false); err != nil {
				return nil, err
			}
			body.Loc = &loc.ID
		}
		if req.Journey == domain.JourneyQRCodeWithFirstPayment {
			body.Ativacao = &struct {
				DadosJornada struct {
					TxID string `json:"txid"`
				} `json:"dadosJornada"`
			}{}
			body.Ativacao.DadosJornada.TxID = req.FirstPaymentTxID
		}
		var out recBody
		if err := c.do(ctx, "POST", "/rec", body, &out, false); err != nil {
			return nil, err
		}
		if out.IDRec == "" {
			return nil, fmt.Errorf("%w: the PSP answered a rec without idRec", ports.ErrAcquirerUnavailable)
		}
		idRec = out.IDRec
	}
	return a.readRec(ctx, c, idRec, req.FirstPaymentTxID)
}

// findRec is the rec an earlier try of req opened, or nil: a CRIADA rec
// of the same debtor, opened in the last recFindWindow, with req's terms,
// a location when the journey is a QR code's and none otherwise, for
// qr_code_with_first_payment the same first payment, and no authorisation
// request sent (one is sent only after the create answered). Of several,
// the newest. Two subscriptions of one debtor with the same contract and
// terms cannot be told apart at the PSP: the merchant's contract names
// the mandate.
func (a *Acquirer) findRec(ctx context.Context, c *client, req ports.CreateRecurrenceRequest, terms recTerms) (*recBody, error) {
	now := a.opts.Now().UTC().Truncate(time.Second)
	v := url.Values{}
	v.Set("inicio", now.Add(-recFindWindow).Format(time.RFC3339))
	v.Set("fim", now.Add(time.Minute).Format(time.RFC3339))
	if d := terms.Vinculo.Devedor; d.CNPJ != "" {
		v.Set("cnpj", d.CNPJ)
	} else {
		v.Set("cpf", d.CPF)
	}
	v.Set("status", string(domain.RecCreated))
	v.Set("paginacao.itensPorPagina", "100")
	var match *recBody
	for page := 0; page < recFindPages; page++ {
		v.Set("paginacao.paginaAtual", strconv.Itoa(page))
		var out struct {
			Parametros struct {
				Paginacao struct {
					QuantidadeDePaginas int `json:"quantidadeDePaginas"`
				} `json:"paginacao"`
			} `json:"parametros"`
			Recs []recBody `json:"recs"`
		}
		if err := c.do(ctx, "GET", "/rec?"+v.Encode(), nil, &out, true); err != nil {
			return nil, err
		}
		for i := range out.Recs {
			r := &out.Recs[i]
			if r.Status != string(domain.RecCreated) || !sameTerms(r.recTerms, terms) || (r.Loc != nil) != req.Journey.QR() ||
				len(r.Solicitacao) > 0 {
				continue
			}
			txid := ""
			if d := r.Ativacao.DadosJornada; d != nil {
				txid = d.TxID
			}
			if req.Journey == domain.JourneyQRCodeWithFirstPayment && txid != req.FirstPaymentTxID ||
				req.Journey != domain.JourneyQRCodeWithFirstPayment && txid != "" {
				continue
			}
			match = r // the list is oldest first
		}
		if page+1 >= out.Parametros.Paginacao.QuantidadeDePaginas {
			break
		}
	}
	return match, nil
}

// readRec reads rec idRec (GET /rec/{idRec}), with the composite QR code
// of the first payment txid when set.
func (a *Acquirer) readRec(ctx context.Context, c *client, idRec, txid string) (*ports.Recurrence, error) {
	if !validRecID(idRec) {
		return nil, fmt.Errorf("%w: malformed idRec", ports.ErrNotFound)
	}
	path := "/rec/" + idRec
	if txid != "" {
		path += "?txid=" + url.QueryEscape(txid)
	}
	var out recBody
	if err := c.do(ctx, "GET", path, nil, &out, true); err != nil {
		return nil, err
	}
	if out.IDRec != idRec {
		return nil, fmt.Errorf("%w: the PSP answered another rec", ports.ErrAcquirerUnavailable)
	}
	return out.recurrence()
}

// recurrence is the port's view of a rec the PSP answered.
func (r *recBody) recurrence() (*ports.Recurrence, error) {
	st, ok := recStatus(r.Status)
	if !ok {
		return nil, fmt.Errorf("%w: the PSP answered a rec with status %q", ports.ErrAcquirerUnavailable, truncateRunes(r.Status, 20))
	}
	out := &ports.Recurrence{RecID: r.IDRec, Status: st,
		CancelledByPayer: st == domain.RecCancelled && r.Encerramento.cancelledByPayer()}
	if r.Loc != nil {
		out.Location = r.Loc.Location
	}
	if r.DadosQR != nil {
		out.BRCode = r.DadosQR.PixCopiaECola
	}
	return out, nil
}

// validRecID reports whether s has an idRec's form (29 of [a-zA-Z0-9]),
// so that it can go into a path as it is.
func validRecID(s string) bool {
	if len(s) != 29 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// GetRecurrence implements ports.RecurringAcquirer with GET /rec/{idRec};
// a rec still CRIADA that names a first payment is read with it, so its
// QR code is the composite one.
func (a *Acquirer) GetRecurrence(ctx context.Context, scope ports.Scope, recID string) (*ports.Recurrence, error) {
	if !validRecID(recID) {
		return nil, fmt.Errorf("%w: malformed idRec", ports.ErrNotFound)
	}
	c, err := a.client(ctx, scope.AccountID)
	if err != nil {
		return nil, err
	}
	var out recBody
	if err := c.do(ctx, "GET", "/rec/"+recID, nil, &out, true); err != nil {
		return nil, err
	}
	if out.IDRec != recID {
		return nil, fmt.Errorf("%w: the PSP answered another rec", ports.ErrAcquirerUnavailable)
	}
	if d := out.Ativacao.DadosJornada; d != nil && out.Status == string(domain.RecCreated) && domain.ValidTxID(d.TxID) {
		return a.readRec(ctx, c, recID, d.TxID)
	}
	return out.recurrence()
}

// CancelRecurrence implements ports.RecurringAcquirer with PATCH
// /rec/{idRec} {"status":"CANCELADA"}; a rec the PSP refuses to cancel
// because it already ended (CANCELADA, REJEITADA, EXPIRADA) counts as
// cancelled.
func (a *Acquirer) CancelRecurrence(ctx context.Context, req ports.CancelRecurrenceRequest) error {
	if !validRecID(req.RecID) {
		return fmt.Errorf("%w: malformed idRec", ports.ErrNotFound)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	path := "/rec/" + req.RecID
	err = c.do(ctx, "PATCH", path, map[string]string{"status": string(domain.RecCancelled)}, nil, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		var cur recBody
		if gerr := c.do(ctx, "GET", path, nil, &cur, true); gerr == nil {
			switch domain.RecStatus(cur.Status) {
			case domain.RecCancelled, domain.RecRejected, domain.RecExpired:
				return nil
			}
		}
	}
	return err
}
