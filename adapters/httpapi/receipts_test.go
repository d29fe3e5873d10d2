package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testkit"
)

// TestReceiptEndpoints fetches the receipts of a paid Pix and of its refund
// through the API, on SQLite and Postgres, and reads the PDFs' text as a
// person would: the merchant's accented name, the amount in Brazilian
// format, Brasília time, BCB-masked documents — and never the payer's
// document in clear.
func TestReceiptEndpoints(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			acct, err := e.srv.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{
				Name: "Padaria São João", Email: "padaria-" + d.name + "@example.com", Password: "padaria-password",
				Document: "11.222.333/0001-81",
			})
			if err != nil {
				t.Fatal(err)
			}
			key := acct.TestKey
			r := e.call("POST", "/payments", key, map[string]any{"amount": 123456, "paymentMethods": []string{"PIX"},
				"metadata": map[string]any{"description": "Pão de queijo e café"}, "idempotencyKey": e.key()})
			e.want(r, 201, "")
			id := r.str("id")
			e.want(e.call("GET", "/payments/"+id+"/receipt", key, nil), 422, "receipt_unavailable")
			e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", key,
				map[string]any{"payer_document": "529.982.247-25", "payer_name": "Maria Conceição"}), 200, "")
			g := e.call("GET", "/payments/"+id, key, nil)
			paidAt, err := time.Parse(time.RFC3339Nano, g.str("paidAt"))
			if err != nil {
				t.Fatalf("paidAt: %s", g.Raw)
			}
			brt, _ := time.LoadLocation("America/Sao_Paulo")
			when := paidAt.In(brt).Format("02/01/2006 às 15:04:05") + " (horário de Brasília, UTC-03:00)"

			pdf := receiptPDF(t, e, "/payments/"+id+"/receipt", key, "comprovante-"+id+".pdf")
			text := testkit.PDFText(t, pdf)
			wantReceiptText(t, text, "Comprovante de pagamento Pix", "R$ 1.234,56", when,
				"Padaria São João", "**.222.333/0001-**", "Quita Sandbox",
				"Maria Conceição", "***.982.247-**", "Quita Sandbox (ISPB 99999999)",
				"Pão de queijo e café", id, g.str("endToEndId"), "AMBIENTE DE TESTES")
			noPayerDocument(t, pdf, text)
			testkit.PDFPageToPNG(t, pdf, "receipts", "api-payment-"+d.name)

			en := testkit.PDFText(t, receiptPDF(t, e, "/payments/"+id+"/receipt?lang=en", key, "receipt-"+id+".pdf"))
			wantReceiptText(t, en, "Pix payment receipt", "R$ 1,234.56", "Brasília time", "Padaria São João", "***.982.247-**")
			bad := e.call("GET", "/payments/"+id+"/receipt?lang=es", key, nil)
			e.want(bad, 400, "parameter_invalid")
			if bad.param() != "lang" {
				t.Errorf("lang=es names %q: %s", bad.param(), bad.Raw)
			}
			// Another account's key sees no such payment.
			e.want(e.call("GET", "/payments/"+id+"/receipt", e.acct.TestKey, nil), 404, "")

			rf := e.call("POST", "/payments/"+id+"/refund", key, map[string]any{"amount": 50000, "reason": "Produto esgotado",
				"strategy": "devolution", "idempotencyKey": e.key()})
			e.want(rf, 201, "")
			refundID := rf.str("id")
			refundPath := "/payments/" + id + "/refunds/" + refundID + "/receipt"
			e.want(e.call("GET", refundPath, key, nil), 422, "receipt_unavailable")
			e.advanceRefunds()
			rpdf := receiptPDF(t, e, refundPath, key, "comprovante-devolucao-"+refundID+".pdf")
			rtext := testkit.PDFText(t, rpdf)
			wantReceiptText(t, rtext, "Comprovante de devolução Pix", "Valor devolvido", "R$ 500,00",
				"Quem recebeu a devolução", "Maria Conceição", "***.982.247-**", "Quem devolveu", "Padaria São João",
				"Produto esgotado", refundID, g.str("endToEndId"))
			noPayerDocument(t, rpdf, rtext)
			testkit.PDFPageToPNG(t, rpdf, "receipts", "api-refund-"+d.name)
			// The raw refund id works too; a refund of another payment does not.
			e.want(e.call("GET", "/payments/"+id+"/refunds/"+strings.TrimPrefix(refundID, "re_")+"/receipt?lang=en", key, nil), 200, "")
			other := e.call("POST", "/payments", key, map[string]any{"amount": 1000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
			e.want(e.call("GET", "/payments/"+other.str("id")+"/refunds/"+refundID+"/receipt", key, nil), 404, "")
			e.want(e.call("GET", "/payments/"+id+"/refunds/re_"+strings.Repeat("z", 26)+"/receipt", key, nil), 404, "")

			// A payout of the remaining balance to a CPF key: its receipt once
			// paid, the key masked.
			po := e.postPayout(key, e.key(), map[string]any{"amount": 20000, "description": "Retirada semanal",
				"destination": map[string]any{"pix_key": "529.982.247-25"}})
			e.want(po, 201, "")
			payoutID := po.str("id")
			e.want(e.call("GET", "/payouts/"+payoutID+"/receipt", key, nil), 422, "receipt_unavailable")
			e.want(e.call("POST", "/test_helpers/payouts/"+payoutID+"/pay", key, nil), 200, "")
			ppdf := receiptPDF(t, e, "/payouts/"+payoutID+"/receipt", key, "comprovante-transferencia-"+payoutID+".pdf")
			ptext := testkit.PDFText(t, ppdf)
			wantReceiptText(t, ptext, "Comprovante de transferência Pix", "R$ 200,00", "Destino", "Chave Pix", "***.982.247-**",
				"Origem", "Padaria São João", "Retirada semanal", payoutID)
			noPayerDocument(t, ppdf, ptext)
			testkit.PDFPageToPNG(t, ppdf, "receipts", "api-payout-"+d.name)
			e.want(e.call("GET", "/payouts/"+payoutID+"/receipt?lang=en", key, nil), 200, "")
			e.want(e.call("GET", "/payouts/"+payoutID+"/receipt", e.acct.TestKey, nil), 404, "")
		})
	}
}

func receiptPDF(t *testing.T, e *payEnv, path, key, filename string) []byte {
	t.Helper()
	r := e.call("GET", path, key, nil)
	e.want(r, 200, "")
	if r.str("contentType") != "application/pdf" || r.str("filename") != filename {
		t.Errorf("receipt answer: contentType %q filename %q, want application/pdf %q", r.str("contentType"), r.str("filename"), filename)
	}
	pdf, err := base64.StdEncoding.DecodeString(r.str("base64"))
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("receipt is not a base64 PDF: %v", err)
	}
	return pdf
}

func wantReceiptText(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("receipt lacks %q; text:\n%s", w, text)
		}
	}
}

func noPayerDocument(t *testing.T, pdf []byte, text string) {
	t.Helper()
	for _, doc := range []string{"52998224725", "529.982.247-25"} {
		if strings.Contains(text, doc) || bytes.Contains(pdf, []byte(doc)) {
			t.Errorf("receipt holds the payer's document %s in clear", doc)
		}
	}
}

// TestCashoutRefundReceiptNamesTheKey: the receipt of a cashout sent to a
// key the merchant chose names that key, masked, as who received the
// refund — not the payer, whose name and document appear nowhere on it —
// and says it travelled by a new Pix; a devolution's names the payer.
func TestCashoutRefundReceiptNamesTheKey(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			key := e.acct.TestKey
			id := e.create(100000, "BRL", "PIX")
			e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", key,
				map[string]any{"payer_document": "529.982.247-25", "payer_name": "Maria Conceição"}), 200, "")
			refund := func(body map[string]any) string {
				t.Helper()
				body["idempotencyKey"] = e.key()
				r := e.call("POST", "/payments/"+id+"/refund", key, body)
				e.want(r, 201, "")
				return r.str("id")
			}
			path := func(refundID string) string { return "/payments/" + id + "/refunds/" + refundID + "/receipt" }
			cashout := refund(map[string]any{"amount": 30000, "strategy": "cashout", "destinationKey": "conta.laranja@example.com",
				"passFeeToTenant": true, "reason": "Devolução solicitada"})
			devolution := refund(map[string]any{"amount": 20000, "strategy": "devolution"})
			e.advanceRefunds()

			pdf := receiptPDF(t, e, path(cashout), key, "comprovante-devolucao-"+cashout+".pdf")
			text := testkit.PDFText(t, pdf)
			wantReceiptText(t, text, "Comprovante de devolução Pix", "R$ 300,00", "Forma da devolução", "Novo Pix (cashout)",
				"Quem recebeu a devolução", "Não informado", "Chave Pix", "c***@example.com", "Quem devolveu")
			for _, payer := range []string{"Maria", "982.247", "52998224725", "529.982.247-25", "conta.laranja"} {
				if strings.Contains(text, payer) || bytes.Contains(pdf, []byte(payer)) {
					t.Errorf("the cashout's receipt holds %q", payer)
				}
			}
			en := testkit.PDFText(t, receiptPDF(t, e, path(cashout)+"?lang=en", key, "refund-receipt-"+cashout+".pdf"))
			wantReceiptText(t, en, "Refunded to", "Not disclosed", "c***@example.com", "New Pix (cashout)")
			if strings.Contains(en, "Maria") {
				t.Error("the English cashout receipt names the payer")
			}

			dtext := testkit.PDFText(t, receiptPDF(t, e, path(devolution), key, "comprovante-devolucao-"+devolution+".pdf"))
			wantReceiptText(t, dtext, "Devolução do Pix original", "Quem recebeu a devolução", "Maria Conceição", "***.982.247-**")
		})
	}
}
