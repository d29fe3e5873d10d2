package pixsim_test

// The API Pix rules of due-date charges (cobv) pixsim keeps, in our own
// words, checked over HTTP as a PSP client sees them.

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// A clock tests move: Monday 2 March 2026, noon in Brasília.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *simClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// due on Friday 20 March 2026, 10 days after; a 2 % fine, 1 % a month of
// interest in calendar days, R$ 5.00 off until 10 March.
const cobvBody = `{"calendario":{"dataDeVencimento":"2026-03-20","validadeAposVencimento":10},
"devedor":{"cpf":"12345678909","nome":"Fulano de Tal"},
"valor":{"original":"100.00","multa":{"modalidade":2,"valorPerc":"2.00"},"juros":{"modalidade":3,"valorPerc":"1.00"},
"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-03-10","valorPerc":"5.00"}]}},
"chave":"k@example.com"}`

func startCobV(t *testing.T) (*pixsim.Server, *client, *simClock) {
	t.Helper()
	clock := &simClock{now: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	sim, c := startWith(t, pixsim.Config{Now: clock.Now})
	return sim, c, clock
}

// Rule: a cobv is created ATIVA with the receiving merchant, a cobv
// location, and validadeAposVencimento stated; GET answers it; a revision
// that changes something moves revisao.
func TestCobVCreateReadRevise(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	id := domain.DeriveTxID("pixsim", "cobv-1")
	code, cob := c.do("PUT", "/cobv/"+id, cobvBody)
	if code != 201 || cob["status"] != "ATIVA" || cob["revisao"] != 0.0 {
		t.Fatalf("create: %d %v", code, cob)
	}
	loc, _ := cob["loc"].(map[string]any)
	rec, _ := cob["recebedor"].(map[string]any)
	cal, _ := cob["calendario"].(map[string]any)
	if loc["tipoCob"] != "cobv" || rec["cnpj"] == nil || rec["cep"] == nil || cal["validadeAposVencimento"] != 10.0 ||
		cal["dataDeVencimento"] != "2026-03-20" || cob["pixCopiaECola"] == "" {
		t.Fatalf("answer: %v", cob)
	}
	if code, got := c.do("GET", "/cobv/"+id, ""); code != 200 || got["txid"] != id {
		t.Fatalf("get: %d %v", code, got)
	}
	if code, got := c.do("PATCH", "/cobv/"+id, `{"valor":{"original":"120.00"}}`); code != 200 || got["revisao"] != 1.0 {
		t.Fatalf("revise: %d %v", code, got)
	}
	if code, got := c.do("GET", "/cobv/"+id+"?revisao=0", ""); code != 200 || got["valor"].(map[string]any)["original"] != "100.00" {
		t.Errorf("revision 0: %d %v", code, got)
	}
	if code, p := c.do("GET", "/cobv/"+id+"?revisao=5", ""); code != 400 || p["type"] != pixsim.ProblemCobVQuery {
		t.Errorf("unknown revision: %d %v", code, p)
	}
	if code, p := c.do("GET", "/cobv/"+domain.DeriveTxID("pixsim", "none"), ""); code != 404 || p["type"] != pixsim.ProblemCobVNotFound {
		t.Errorf("unknown cobv: %d %v", code, p)
	}
	if code, got := c.do("PATCH", "/cobv/"+id, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`); code != 200 || got["status"] != "REMOVIDA_PELO_USUARIO_RECEBEDOR" {
		t.Errorf("removal: %d %v", code, got)
	}
}

// Rule: a cobv needs calendario, devedor (a valid CPF or CNPJ with a
// name), valor and chave, and its rules must be the spec's modalities.
func TestCobVRefusesWhatBreaksTheRules(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	for name, body := range map[string]string{
		"no devedor":       `{"calendario":{"dataDeVencimento":"2026-03-20"},"valor":{"original":"1.00"},"chave":"k@example.com"}`,
		"devedor unnamed":  `{"calendario":{"dataDeVencimento":"2026-03-20"},"devedor":{"cpf":"12345678909"},"valor":{"original":"1.00"},"chave":"k@example.com"}`,
		"juros modalidade": `{"calendario":{"dataDeVencimento":"2026-03-20"},"devedor":{"cpf":"12345678909","nome":"F"},"valor":{"original":"1.00","juros":{"modalidade":9,"valorPerc":"1.00"}},"chave":"k@example.com"}`,
		"due before today": `{"calendario":{"dataDeVencimento":"2026-02-20"},"devedor":{"cpf":"12345678909","nome":"F"},"valor":{"original":"1.00"},"chave":"k@example.com"}`,
		"no calendario":    `{"devedor":{"cpf":"12345678909","nome":"F"},"valor":{"original":"1.00"},"chave":"k@example.com"}`,
	} {
		if code, p := c.do("PUT", "/cobv/"+domain.DeriveTxID("pixsim", name), body); code != 400 || p["type"] != pixsim.ProblemCobVInvalid {
			t.Errorf("%s: %d %v, want 400 CobVOperacaoInvalida", name, code, p)
		}
	}
}

// Rule: the payer's bank pays the amount due on the day of payment: the
// discount before its date, the original until the due date, fine and
// interest after it; after the last payable day the cobv is closed.
func TestCobVPaysTheAmountDueThatDay(t *testing.T) {
	t.Parallel()
	sim, c, clock := startCobV(t)
	cases := []struct {
		date string
		want string
	}{
		{"2026-03-09", "95.00"},  // R$ 5.00 off until 10 March
		{"2026-03-20", "100.00"}, // the due date
		// 25 March, 5 days late: fine 2.00 + interest 1 %/30 a day × 5 × 100.00 = 0.1666… → 0.16.
		{"2026-03-25", "102.16"},
	}
	for i, tc := range cases {
		id := domain.DeriveTxID("pixsim", "pay", tc.date)
		if code, cob := c.do("PUT", "/cobv/"+id, cobvBody); code != 201 {
			t.Fatalf("create: %d %v", code, cob)
		}
		code, pix := c.do("POST", "/_sim/pay", `{"txid":"`+id+`","date":"`+tc.date+`"}`)
		if code != 200 || pix["valor"] != tc.want {
			t.Errorf("case %d, paid on %s: %d %v, want valor %s", i, tc.date, code, pix, tc.want)
		}
		if code, cob := c.do("GET", "/cobv/"+id, ""); code != 200 || cob["status"] != "CONCLUIDA" {
			t.Errorf("after payment: %d %v", code, cob["status"])
		}
	}
	late := domain.DeriveTxID("pixsim", "late")
	if code, _ := c.do("PUT", "/cobv/"+late, cobvBody); code != 201 {
		t.Fatal("create")
	}
	// The last payable day is 30 March (20 + 10); on the 31st it is closed.
	if code, p := c.do("POST", "/_sim/pay", `{"txid":"`+late+`","date":"2026-03-31"}`); code != 400 {
		t.Errorf("paid after the last day: %d %v", code, p)
	}
	// On the 31st the PSP has removed it: no payment of any day is taken.
	clock.set(time.Date(2026, 3, 31, 15, 0, 0, 0, time.UTC))
	if _, err := sim.Pay(t.Context(), pixsim.PayRequest{TxID: late, Date: "2026-03-25"}); !errors.Is(err, pixsim.ErrNotPayable) {
		t.Errorf("paid after the PSP removed it: %v", err)
	}
}
