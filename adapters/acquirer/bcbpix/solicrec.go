package bcbpix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// destinatario is the payer's account a solicrec goes to.
type destinatario struct {
	Agencia          string `json:"agencia,omitempty"`
	Conta            string `json:"conta"`
	ISPBParticipante string `json:"ispbParticipante"`
	CPF              string `json:"cpf,omitempty"`
	CNPJ             string `json:"cnpj,omitempty"`
}

// solicRecBody is a solicrec as sent (SolicRecSolicitada) and answered
// (SolicRecCompleta), cut to what the adapter reads.
type solicRecBody struct {
	IDSolicRec string `json:"idSolicRec,omitempty"`
	IDRec      string `json:"idRec"`
	Calendario struct {
		DataExpiracaoSolicitacao string `json:"dataExpiracaoSolicitacao"`
	} `json:"calendario"`
	Destinatario destinatario `json:"destinatario"`
	Status       string       `json:"status,omitempty"`
}

// payerAccountGiven reports whether pa names an account a solicrec can go
// to.
func payerAccountGiven(pa *ports.PayerAccount) bool {
	return pa != nil && pa.Number != "" && pa.ISPB != ""
}

func (s solicRecBody) result() (*ports.AuthorizationRequestResult, error) {
	st := domain.SolicRecStatus(s.Status)
	if s.IDSolicRec == "" || !st.Valid() {
		return nil, fmt.Errorf("%w: the PSP answered a malformed solicrec", ports.ErrAcquirerUnavailable)
	}
	return &ports.AuthorizationRequestResult{SolicRecID: s.IDSolicRec, Status: st}, nil
}

// RequestAuthorization implements ports.RecurringAcquirer with POST
// /solicrec. The API Pix sends a solicrec to one account at the payer's
// bank (destinatario): without req.PayerAccount it is refused
// (ErrPayerAccountRequired). The PSP keeps one open solicrec per rec, so a
// POST the PSP refuses (a retry) or whose answer is lost reads the rec
// (GET /rec/{idRec}) and answers its open solicrec to the same account.
func (a *Acquirer) RequestAuthorization(ctx context.Context, req ports.AuthorizationRequest) (*ports.AuthorizationRequestResult, error) {
	doc := domain.NormalizeTaxID(req.DebtorTaxID)
	pa := req.PayerAccount
	switch {
	case !validRecID(req.RecID):
		return nil, fmt.Errorf("%w: malformed idRec", ports.ErrAcquirerRejected)
	case !payerAccountGiven(pa):
		return nil, ports.ErrPayerAccountRequired
	case doc == "" || req.ExpiresAt.IsZero():
		return nil, fmt.Errorf("%w: an authorisation request needs the payer's document and an expiry", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	body := solicRecBody{IDRec: req.RecID, Destinatario: destinatario{Agencia: pa.Branch, Conta: pa.Number, ISPBParticipante: pa.ISPB}}
	if len(doc) == 14 {
		body.Destinatario.CNPJ = doc
	} else {
		body.Destinatario.CPF = doc
	}
	body.Calendario.DataExpiracaoSolicitacao = req.ExpiresAt.UTC().Truncate(time.Second).Format(time.RFC3339)
	var out solicRecBody
	err = c.do(ctx, "POST", "/solicrec", body, &out, false)
	if errors.Is(err, ports.ErrAcquirerRejected) || errors.Is(err, ports.ErrAcquirerUnavailable) {
		var rec recBody
		if gerr := c.do(ctx, "GET", "/rec/"+req.RecID, nil, &rec, true); gerr == nil {
			for _, s := range rec.Solicitacao {
				if domain.SolicRecStatus(s.Status).Open() && s.Destinatario == body.Destinatario {
					out, err = s, nil
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if out.IDRec != "" && out.IDRec != req.RecID {
		return nil, fmt.Errorf("%w: the PSP answered a solicrec of another rec", ports.ErrAcquirerUnavailable)
	}
	return out.result()
}
