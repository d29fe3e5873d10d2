package bcbpix

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

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

// pspTime reads an RFC 3339 instant a PSP sent. One outside what a store
// keeps (ports.InTimeRange: "9999-12-31T23:00:00-03:00" is year 10000 in
// UTC) counts as one that does not parse.
func pspTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !ports.InTimeRange(t) {
		return time.Time{}, false
	}
	return t, true
}

func (p pixBody) received() (ports.ReceivedPix, error) {
	amount, err := domain.ParseDecimal(p.Valor)
	if err != nil || !domain.ValidEndToEndID(p.EndToEndID) {
		return ports.ReceivedPix{}, fmt.Errorf("%w: the PSP answered a malformed pix", ports.ErrAcquirerUnavailable)
	}
	at, _ := pspTime(p.Horario)
	r := ports.ReceivedPix{EndToEndID: p.EndToEndID, TxID: p.TxID, Amount: amount, PaidAt: at}
	if pg := p.Pagador; pg != nil {
		r.PayerTaxID = domain.NormalizeTaxID(pg.CPF + pg.CNPJ)
		// PSP data is never refused: a name longer than a name can be
		// is cut, so what is stored and printed on receipts is bounded,
		// and characters that would change how it displays are dropped.
		r.PayerName = domain.StripControls(truncateRunes(pg.Nome, domain.MaxNameLen))
	}
	for _, d := range p.Devolucoes {
		if dv, ok := d.devolution(); ok {
			r.Returned += dv.Amount
			r.Devolutions = append(r.Devolutions, dv)
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
