package bcbpix_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

const acct = "a1b2c3d4e5f6"

func scope() ports.Scope { return ports.Scope{AccountID: acct, Mode: domain.ModeLive} }

func txid(n string) string { return domain.DeriveTxID("test", n) }

func createReq(id string, amount int64) ports.CreatePixChargeRequest {
	return ports.CreatePixChargeRequest{Scope: scope(), ChargeID: id, TxID: txid(id), Amount: amount,
		ExpiresAt: time.Now().Add(time.Hour), Description: strings.Repeat("pedido ", 40), PayerTaxID: "529.982.247-25",
		PayerName: "Joao Souza", MerchantName: "LOJA", MerchantCity: "SAO PAULO"}
}

func TestCreatePixChargeOverMTLS(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()

	cob, err := a.CreatePixCharge(ctx, createReq("c1", 12345))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := sim.CobByTxID(txid("c1"))
	if !ok {
		t.Fatal("the PSP has no cob for the txid")
	}
	if got.Valor.Original != "123.45" || got.Chave != testPixKey || got.Status != pixsim.CobActive {
		t.Errorf("cob %+v", got)
	}
	if got.Devedor == nil || got.Devedor.CPF != "52998224725" || got.Devedor.Nome != "Joao Souza" {
		t.Errorf("devedor %+v", got.Devedor)
	}
	if n := len([]rune(got.SolicitacaoPagador)); n != 140 {
		t.Errorf("solicitacaoPagador has %d runes, want 140", n)
	}
	if exp := got.Calendario.Expiracao; exp < 3590 || exp > 3600 {
		t.Errorf("expiracao %d, want about 3600", exp)
	}
	if cob.BRCode != got.PixCopiaECola || cob.Location != got.Locat || cob.TxID != txid("c1") {
		t.Errorf("response %+v does not carry the PSP's cob", cob)
	}
	if cob.ProviderRef != "bcbpix:"+acct+":"+txid("c1") {
		t.Errorf("provider ref %q", cob.ProviderRef)
	}

	// A retry of the same txid (a lost answer) gets the same cob.
	again, err := a.CreatePixCharge(ctx, createReq("c1", 12345))
	if err != nil || again.BRCode != cob.BRCode {
		t.Fatalf("retry: %+v, %v", again, err)
	}

	// Status and cancel.
	st, err := a.ChargeStatus(ctx, cob.ProviderRef)
	if err != nil || st.Status != pixsim.CobActive || st.RawResponse["txid"] != txid("c1") || st.RawResponse["valor"] == nil {
		t.Errorf("status %+v, %v", st, err)
	}
	// The payer's document and name never leave through provider-status.
	if b, _ := json.Marshal(st.RawResponse); strings.Contains(string(b), "52998224725") || strings.Contains(string(b), "Joao") {
		t.Errorf("provider status shows the payer: %s", b)
	}
	if err := a.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: scope(), ChargeID: "c1", TxID: txid("c1")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := sim.CobByTxID(txid("c1")); got.Status != pixsim.CobRemoved {
		t.Errorf("after cancel: %s", got.Status)
	}
	// The PSP refuses a PUT on a cob that is no longer ATIVA; the same
	// charge is read back, another amount under its txid is a rejection.
	if _, err := a.CreatePixCharge(ctx, createReq("c1", 999)); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Errorf("conflicting txid: %v, want ErrAcquirerRejected", err)
	}
	// One token for all of it: cached until expiry.
	if tokens, api := sim.Hits(); tokens != 1 || api < 5 {
		t.Errorf("tokens %d api %d, want 1 token reused", tokens, api)
	}
}

func TestErrorsMapToPorts(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	ctx := context.Background()

	tests := []struct {
		name  string
		setup func(*bcbpix.Acquirer)
		call  func(*bcbpix.Acquirer) error
		want  error
	}{
		{"schema violation is a rejection", nil, func(a *bcbpix.Acquirer) error {
			_, err := a.CreatePixCharge(ctx, createReq("bad", 0))
			return err
		}, ports.ErrAcquirerRejected},
		{"PSP down is unavailable", func(*bcbpix.Acquirer) { sim.SetDown(true) }, func(a *bcbpix.Acquirer) error {
			_, err := a.CreatePixCharge(ctx, createReq("down", 100))
			return err
		}, ports.ErrAcquirerUnavailable},
		{"unknown pix is not found", nil, func(a *bcbpix.Acquirer) error {
			_, err := a.GetPix(ctx, acct, "E99999998202611220000aaaaaaaaaaa")
			return err
		}, ports.ErrNotFound},
		{"cashout with no key and no payer document is unroutable", nil, func(a *bcbpix.Acquirer) error {
			_, err := a.Refund(ctx, ports.RefundRequest{Scope: scope(), RefundID: "r1", Strategy: domain.StrategyCashout, Amount: 1})
			return err
		}, ports.ErrRefundUnroutable},
		{"cashout to a non-key is unroutable", nil, func(a *bcbpix.Acquirer) error {
			_, err := a.Refund(ctx, ports.RefundRequest{Scope: scope(), RefundID: "r1", Strategy: domain.StrategyCashout, Amount: 1,
				DestinationKey: "not a key", PayerTaxID: "52998224725"})
			return err
		}, ports.ErrRefundUnroutable},
		{"unconfigured account is not configured", nil, func(a *bcbpix.Acquirer) error {
			_, err := a.CreatePixCharge(ctx, ports.CreatePixChargeRequest{Scope: ports.Scope{AccountID: "other", Mode: domain.ModeLive},
				TxID: txid("x"), Amount: 1, ExpiresAt: time.Now().Add(time.Hour)})
			return err
		}, ports.ErrAcquirerNotConfigured},
	}
	// Subtests share the simulator, so they run in order.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newAdapter(t, pki, psp.URL, acct)
			if tc.setup != nil {
				tc.setup(a)
				defer sim.SetDown(false)
			}
			err := tc.call(a)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), testClientSecret) {
				t.Errorf("error leaks the client secret: %v", err)
			}
		})
	}
}

func TestWrongClientSecretIsUnauthorized(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	_, psp := startPSP(t, pki)
	sealer, _ := bcbpix.NewSealer(testKey())
	a := bcbpix.New(newMemStore(), sealer, bcbpix.Options{Retry: []time.Duration{time.Millisecond}})
	cfg := accountConfig(pki, psp.URL)
	cfg.ClientSecret = "wrong-secret-value"
	if err := a.Configure(context.Background(), acct, cfg); err != nil {
		t.Fatal(err)
	}
	_, err := a.CreatePixCharge(context.Background(), createReq("c", 100))
	if !errors.Is(err, ports.ErrAcquirerUnauthorized) || errors.Is(err, ports.ErrAcquirerRejected) ||
		strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatalf("error %v, want refused credentials (not a rejection of the request) without the secret", err)
	}
}

func TestNoClientCertificateFails(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	_, psp := startPSP(t, pki)
	sealer, _ := bcbpix.NewSealer(testKey())
	a := bcbpix.New(newMemStore(), sealer, bcbpix.Options{Retry: []time.Duration{time.Millisecond}})
	cfg := accountConfig(pki, psp.URL)
	cfg.CertPEM, cfg.KeyPEM = "", ""
	if err := a.Configure(context.Background(), acct, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreatePixCharge(context.Background(), createReq("c", 100)); err == nil {
		t.Fatal("a PSP requiring mTLS answered without a client certificate")
	}
}

func TestDevolucoesPartialUpToTheAmount(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	if _, err := a.CreatePixCharge(ctx, createReq("p", 1000)); err != nil {
		t.Fatal(err)
	}
	p, err := sim.Pay(ctx, pixsim.PayRequest{TxID: txid("p"), PayerTaxID: "52998224725"})
	if err != nil {
		t.Fatal(err)
	}
	refund := func(id string, amount int64) (string, error) {
		return a.Refund(ctx, ports.RefundRequest{Scope: scope(), ChargeID: "p", RefundID: id, Method: domain.MethodPix,
			Strategy: domain.StrategyDevolution, EndToEndID: p.EndToEndID, Amount: amount})
	}
	steps := []struct {
		id     string
		amount int64
		want   error
	}{
		{"r1", 400, nil},
		{"r1", 400, nil}, // same id: the same devolução, not a second one
		{"r2", 600, nil},
		{"r3", 1, ports.ErrAcquirerRejected}, // beyond the Pix amount
	}
	var refs []string
	for _, s := range steps {
		ref, err := refund(s.id, s.amount)
		if !errors.Is(err, s.want) && !(s.want == nil && err == nil) {
			t.Fatalf("refund %s %d: %v, want %v", s.id, s.amount, err, s.want)
		}
		if err == nil {
			refs = append(refs, ref)
		}
	}
	if n := len(sim.Returns(p.EndToEndID)); n != 2 {
		t.Fatalf("%d devoluções at the PSP, want 2", n)
	}
	for _, ref := range refs {
		st, err := a.RefundStatus(ctx, ref)
		if err != nil || st != string(domain.RefundRefunded) {
			t.Errorf("refund %s status %q, %v; want REFUNDED", ref, st, err)
		}
	}
	got, err := a.GetPix(ctx, acct, p.EndToEndID)
	if err != nil || got.Returned != 1000 || got.Amount != 1000 || got.TxID != txid("p") {
		t.Errorf("pix %+v, %v", got, err)
	}
	// A devolução the payer's PSP refuses ends FAILED.
	if _, err := a.CreatePixCharge(ctx, createReq("f", 500)); err != nil {
		t.Fatal(err)
	}
	pf, _ := sim.Pay(ctx, pixsim.PayRequest{TxID: txid("f")})
	sim.FailNextReturn()
	ret, err := a.ReturnPix(ctx, ports.ReturnPixRequest{Scope: scope(), ChargeID: "f", EndToEndID: pf.EndToEndID, ReturnID: "Dfail1", Amount: 500})
	if err != nil || ret.Status != domain.PixReturnInProgress {
		t.Fatalf("return %+v, %v", ret, err)
	}
	if st, _ := a.RefundStatus(ctx, ret.ProviderRef); st != string(domain.RefundFailed) {
		t.Errorf("failed devolução maps to %q, want FAILED", st)
	}
	statusReq := ports.ReturnPixStatusRequest{Scope: scope(), EndToEndID: pf.EndToEndID, ReturnID: "Dfail1", ProviderRef: ret.ProviderRef}
	if st, err := a.ReturnPixStatus(ctx, statusReq); err != nil || st.Status != domain.PixReturnFailed || st.Failure == "" {
		t.Errorf("ReturnPixStatus of the refused devolução: %+v, %v; want FAILED with the motivo", st, err)
	}
	// The same id again is the same (refused) devolução, never a new one.
	again, err := a.ReturnPix(ctx, ports.ReturnPixRequest{Scope: scope(), ChargeID: "f", EndToEndID: pf.EndToEndID, ReturnID: "Dfail1", Amount: 500})
	if err != nil || again.Status != domain.PixReturnFailed || len(sim.Returns(pf.EndToEndID)) != 1 {
		t.Errorf("PUT again: %+v, %v, %d devoluções", again, err, len(sim.Returns(pf.EndToEndID)))
	}
	// A new id is a new attempt, which the PSP settles.
	next, err := a.ReturnPix(ctx, ports.ReturnPixRequest{Scope: scope(), ChargeID: "f", EndToEndID: pf.EndToEndID, ReturnID: "Dfail1R2", Amount: 500})
	if err != nil || next.Status != domain.PixReturnInProgress {
		t.Fatalf("second attempt %+v, %v", next, err)
	}
	statusReq.ReturnID = "Dfail1R2"
	if st, err := a.ReturnPixStatus(ctx, statusReq); err != nil || st.Status != domain.PixReturnReturned {
		t.Errorf("ReturnPixStatus of the second attempt: %+v, %v; want RETURNED", st, err)
	}
	statusReq.ReturnID = "Dunknown"
	if _, err := a.ReturnPixStatus(ctx, statusReq); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("ReturnPixStatus of an unknown id: %v, want ErrNotFound", err)
	}
}

func TestListPixPagesAndFilters(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	const n = 105
	for i := range n {
		id := "l" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		if _, err := a.CreatePixCharge(ctx, createReq(id, 100)); err != nil {
			t.Fatal(err)
		}
		doc := "52998224725"
		if i%2 == 1 {
			doc = "11144477735"
		}
		if _, err := sim.Pay(ctx, pixsim.PayRequest{TxID: txid(id), PayerTaxID: doc, Disclose: i == 0}); err != nil {
			t.Fatal(err)
		}
	}
	start, end := time.Now().Add(-time.Minute), time.Now().Add(time.Minute)
	total := 0
	for page := 0; ; page++ {
		pg, err := a.ListPix(ctx, ports.PixQuery{AccountID: acct, Start: start, End: end, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		total += len(pg.Pix)
		if !pg.More {
			break
		}
	}
	if total != n {
		t.Errorf("paged %d pix, want %d", total, n)
	}
	pg, err := a.ListPix(ctx, ports.PixQuery{AccountID: acct, Start: start, End: end, PayerTaxID: "111.444.777-35"})
	if err != nil || len(pg.Pix) != n/2 || pg.More {
		t.Errorf("cpf filter: %d pix more=%v, %v; want %d", len(pg.Pix), pg.More, err, n/2)
	}
	for _, p := range pg.Pix {
		if p.PayerTaxID != "" {
			t.Errorf("undisclosed payer shows %q", p.PayerTaxID)
		}
	}
}

func TestSealer(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	s, err := bcbpix.NewSealer(testKey())
	if err != nil {
		t.Fatal(err)
	}
	cfg := accountConfig(pki, "https://psp.example.com/api/v2")
	sealed, err := s.Seal("acct1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{testClientSecret, "PRIVATE KEY", testClientID} {
		if bytes.Contains(sealed, []byte(secret)) {
			t.Errorf("sealed configuration shows %q", secret)
		}
	}
	back, err := s.Open("acct1", sealed)
	if err != nil || back != cfg {
		t.Fatalf("open: %v (equal %v)", err, back == cfg)
	}
	if _, err := s.Open("acct2", sealed); err == nil {
		t.Error("a configuration sealed for one account opens for another")
	}
	other, _ := bcbpix.NewSealer(make([]byte, 32))
	if _, err := other.Open("acct1", sealed); err == nil {
		t.Error("opens under another master key")
	}
	if s := cfg.String(); strings.Contains(s, testClientSecret) || strings.Contains(s, "PRIVATE") {
		t.Errorf("String shows a secret: %s", s)
	}
	keys := []struct {
		in string
		ok bool
	}{
		{strings.Repeat("ab", 32), true},
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", true},
		{"short", false},
		{"", false},
	}
	for _, k := range keys {
		if _, err := bcbpix.ParseMasterKey(k.in); (err == nil) != k.ok {
			t.Errorf("ParseMasterKey(%q): %v", k.in, err)
		}
	}
}

func TestIdempotentCallsRetryTransientFailures(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct) // two retries configured
	ctx := context.Background()
	tests := []struct {
		name  string
		fails int
		want  error
	}{
		{"two 503s then success", 2, nil},
		{"more 503s than retries", 3, ports.ErrAcquirerUnavailable},
	}
	for i, tc := range tests {
		sim.FailNextCalls(tc.fails)
		_, err := a.CreatePixCharge(ctx, createReq(fmt.Sprint("retry", i), 100))
		sim.FailNextCalls(0)
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestRevokedTokenIsRefreshed(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	for i := range 3 {
		if i == 1 {
			sim.RevokeTokens()
		}
		if _, err := a.CreatePixCharge(ctx, createReq(fmt.Sprint("tok", i), 100)); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if tokens, _ := sim.Hits(); tokens != 2 {
		t.Errorf("%d tokens fetched, want 2 (one after the revocation)", tokens)
	}
}
