package bcbpix_test

// What a real PSP may legitimately do that pixsim does not by default.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/ports"
)

// A PUT on a cob the PSP already has (a retry after a lost answer) revises
// it, and the PSP counts the new expiracao from the first criacao: the
// adapter puts the cob's end back at the charge's.
func TestRevisedCobKeepsTheChargesExpiry(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	pki := newPKI(t)
	sim, psp := startPSPWith(t, pki, pixsim.Config{Now: clock})
	sealer, _ := bcbpix.NewSealer(testKey())
	a := bcbpix.New(newMemStore(), sealer, bcbpix.Options{Now: clock, Retry: []time.Duration{time.Millisecond}})
	ctx := context.Background()
	if err := a.Configure(ctx, acct, accountConfig(pki, psp.URL)); err != nil {
		t.Fatal(err)
	}
	req := createReq("rev", 5000)
	req.ExpiresAt = now.Add(time.Hour)
	first, err := a.CreatePixCharge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(10 * time.Minute) // the answer was lost; quitad retries later
	mu.Unlock()
	again, err := a.CreatePixCharge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cob, _ := sim.CobByTxID(req.TxID)
	created, _ := time.Parse(time.RFC3339Nano, cob.Calendario.Criacao)
	end := created.Add(time.Duration(cob.Calendario.Expiracao) * time.Second)
	if cob.Revisao == 0 || !end.Equal(req.ExpiresAt) {
		t.Errorf("cob revisao %d ends %s, want a revision ending at the charge's %s", cob.Revisao, end, req.ExpiresAt)
	}
	if !again.ExpiresAt.Equal(req.ExpiresAt) || again.BRCode != first.BRCode {
		t.Errorf("retry answered %+v, want the same BR Code and expiry %s", again, req.ExpiresAt)
	}
}

// What a real PSP may send and pixsim does not by default: an empty page
// as [], null or no field, and several pages (a PSP capping the page size).
func TestListPixEmptyAndCappedPages(t *testing.T) {
	t.Parallel()
	for _, pix := range []string{`"pix":[],`, `"pix":null,`, ``} {
		psp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/oauth/token" {
				_, _ = io.WriteString(w, `{"access_token":"t","token_type":"Bearer","expires_in":3600}`)
				return
			}
			_, _ = io.WriteString(w, `{`+pix+`"parametros":{"inicio":"2026-01-01T00:00:00Z","fim":"2026-01-02T00:00:00Z",
				"paginacao":{"paginaAtual":0,"itensPorPagina":100,"quantidadeDePaginas":1,"quantidadeTotalDeItens":0}}}`)
		}))
		a, _ := newAdapter(t, newPKI(t), psp.URL, acct)
		page, err := a.ListPix(context.Background(), ports.PixQuery{AccountID: acct, Start: time.Now().Add(-time.Hour), End: time.Now()})
		if err != nil || len(page.Pix) != 0 || page.More {
			t.Errorf("%q: %+v, %v; want an empty last page", pix, page, err)
		}
		psp.Close()
	}
	pki := newPKI(t)
	sim, psp := startPSPWith(t, pki, pixsim.Config{MaxPageSize: 2})
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	for i := range 5 {
		c, err := a.CreatePixCharge(ctx, createReq(fmt.Sprint("page", i), 100))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sim.Pay(ctx, pixsim.PayRequest{TxID: c.TxID}); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for p := 0; ; p++ {
		page, err := a.ListPix(ctx, ports.PixQuery{AccountID: acct, Start: time.Now().Add(-time.Hour), End: time.Now().Add(time.Hour), Page: p})
		if err != nil || p > 5 {
			t.Fatalf("page %d: %v", p, err)
		}
		seen += len(page.Pix)
		if !page.More {
			break
		}
	}
	if seen != 5 {
		t.Errorf("%d pix over the pages, want 5", seen)
	}
}

// fakePSP answers /pix/{e2eid} with body and a token to /oauth/token.
func fakePSP(t *testing.T, body string) string {
	t.Helper()
	psp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/oauth/token" {
			_, _ = io.WriteString(w, `{"access_token":"t","token_type":"Bearer","expires_in":3600}`)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(psp.Close)
	return psp.URL
}

// A PSP's horario outside the instants a store keeps (year 10000 or year
// 0 once in UTC) counts as missing, like one that does not parse: the Pix
// is still read, and Quita dates it when it sees it.
func TestPSPTimesOutsideTheStoreRangeAreIgnored(t *testing.T) {
	t.Parallel()
	const e2e = "E9999999920261124223201234abcdef"
	for _, c := range []struct {
		horario string
		zero    bool
	}{
		{"9999-12-31T23:59:59.999-03:00", true},
		{"0001-01-01T00:30:00+01:00", true},
		{"not a time", true},
		{"2026-11-24T22:32:01.5Z", false},
	} {
		url := fakePSP(t, `{"endToEndId":"`+e2e+`","txid":"quita01jd5k7q9w3e8r2t6y4u0i1o","valor":"10.00","horario":"`+c.horario+`",
			"devolucoes":[{"id":"D1","rtrId":"D9999999920261124224001234abcdef","valor":"1.00","status":"DEVOLVIDO","horario":{"solicitacao":"`+c.horario+`"}}]}`)
		a, _ := newAdapter(t, newPKI(t), url, acct)
		got, err := a.GetPix(context.Background(), acct, e2e)
		if err != nil {
			t.Fatalf("%s: %v", c.horario, err)
		}
		if got.PaidAt.IsZero() != c.zero || len(got.Devolutions) != 1 || got.Devolutions[0].At.IsZero() != c.zero {
			t.Errorf("horario %s: paid at %v, devolutions %+v; want zero times %v", c.horario, got.PaidAt, got.Devolutions, c.zero)
		}
	}
}

// A PSP's payer name (the pagador extension) of any size is kept cut to
// domain.MaxNameLen characters, without control or bidirectional
// formatting characters: PSP data is never refused, and what is stored,
// shown and drawn on receipts stays bounded and reads as it is.
func TestPSPPayerNameIsTruncated(t *testing.T) {
	t.Parallel()
	const e2e = "E9999999920261124223201234abcdef"
	for _, c := range []struct{ name, want string }{
		{strings.Repeat("Conceição ", 100_000), strings.Repeat("Conceição ", 14)},
		{"Maria Conceição", "Maria Conceição"},
		{`Maria \u202eSilva\u0007\u2066`, "Maria Silva"},
	} {
		url := fakePSP(t, `{"endToEndId":"`+e2e+`","txid":"quita01jd5k7q9w3e8r2t6y4u0i1o","valor":"10.00",
			"horario":"2026-11-24T22:32:01Z","pagador":{"cpf":"52998224725","nome":"`+c.name+`"}}`)
		a, _ := newAdapter(t, newPKI(t), url, acct)
		got, err := a.GetPix(context.Background(), acct, e2e)
		if err != nil {
			t.Fatal(err)
		}
		if got.PayerName != c.want || got.PayerTaxID != "52998224725" {
			t.Errorf("a %d-byte name read as %d characters (%.40q…), tax id %q", len(c.name), utf8.RuneCountInString(got.PayerName), got.PayerName, got.PayerTaxID)
		}
	}
}
