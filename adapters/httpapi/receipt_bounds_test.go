package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
)

// The pay test helper refuses a payer_name longer than a name can be
// (domain.MaxNameLen, 140 characters) before anything is paid, and takes
// one of exactly that length.
func TestPayHelperBoundsThePayerName(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			id := e.create(1000, "BRL", "PIX")
			for _, name := range []string{strings.Repeat("M", 1<<19), strings.Repeat("ã", domain.MaxNameLen+1)} {
				r := e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, map[string]any{"payer_name": name})
				wantParam(t, r, 400, "parameter_invalid", "payer_name")
				if strings.Contains(string(r.Raw), name[:10]) {
					t.Errorf("the refusal repeats the name: %.200s", r.Raw)
				}
			}
			if g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil); g.str("status") != "WAITING_PAYMENT" {
				t.Fatalf("a refused pay changed the payment: %s", g.Raw)
			}
			e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey,
				map[string]any{"payer_name": strings.Repeat("ã", domain.MaxNameLen)}), 200, "")
		})
	}
}

// A receipt is drawn from what is stored, whatever it holds: a payer name
// and a description of a megabyte each (put there behind the API's back,
// as a PSP or an older version could have) print cut, on one page, in a
// document of a few dozen kilobytes.
func TestReceiptOfHugeStoredTextsIsOnePage(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			id := e.create(1000, "BRL", "PIX")
			e.payPix(id)
			huge := strings.Repeat("Maria Conceição ", 1<<16)
			meta, _ := json.Marshal(map[string]string{"description": huge})
			raw := strings.TrimPrefix(id, domain.PrefixTransaction)
			res, err := e.srv.App.DB.Bun().NewUpdate().Table("charges").Set("settlement_payer_name = ?", huge).
				Set("metadata = ?", string(meta)).Where("id = ?", raw).Exec(context.Background())
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("planting the texts: %d rows, %v", n, err)
			}
			pdf := receiptPDF(t, e, "/payments/"+id+"/receipt", e.acct.TestKey, "comprovante-"+id+".pdf")
			text := testkit.PDFText(t, pdf)
			if pages := strings.Count(text, "\f"); pages != 1 {
				t.Errorf("%d pages", pages)
			}
			wantReceiptText(t, text, "Maria Conceição Maria", "…", id)
			if len(pdf) > 64<<10 {
				t.Errorf("the receipt is %d bytes", len(pdf))
			}
		})
	}
}
