package receipt_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/receipt"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// 22:32:05 UTC is 19:32:05 in Brasília (UTC-03:00, no daylight saving
// since 2019).
var paidAt = time.Date(2026, 11, 24, 22, 32, 5, 0, time.UTC)

func paymentReceipt(loc domain.Locale, mode domain.Mode) ports.Receipt {
	payer, payerKind := domain.MaskTaxID("529.982.247-25")
	payee, payeeKind := domain.MaskTaxID("11.222.333/0001-81")
	return ports.Receipt{
		Kind: ports.ReceiptPayment, Locale: loc, Mode: mode,
		Amount: 123456, Currency: domain.CurrencyBRL, At: paidAt, IssuedAt: paidAt.Add(3 * time.Minute),
		Method:        domain.MethodPix,
		To:            ports.ReceiptParty{Name: "Padaria São João", MaskedDocument: payee, DocumentKind: payeeKind, Institution: "Quita Sandbox"},
		From:          ports.ReceiptParty{Name: "Maria Conceição Araújo", MaskedDocument: payer, DocumentKind: payerKind, Institution: "ISPB 99999999"},
		Description:   "Pão de queijo e café coado",
		TransactionID: "tx_01jd5k7q9w3e8r2t6y4u0i1o2p",
		EndToEndID:    "E9999999920261124223201234abcdef",
		TxID:          "quita01jd5k7q9w3e8r2t6y4u0i1o",
	}
}

func render(t *testing.T, r ports.Receipt) []byte {
	t.Helper()
	pdf, err := receipt.New().RenderPDF(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", pdf[:min(len(pdf), 16)])
	}
	return pdf
}

func wantText(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("receipt text lacks %q; text:\n%s", w, text)
		}
	}
}

// The payment receipt prints Portuguese as written, the amount in
// Brazilian format, Brasília time and BCB-masked documents; the payer's
// document never appears whole.
func TestPaymentReceiptPortuguese(t *testing.T) {
	t.Parallel()
	pdf := render(t, paymentReceipt(domain.LocalePtBR, domain.ModeLive))
	text := testkit.PDFText(t, pdf)
	wantText(t, text,
		"Comprovante de pagamento Pix",
		"R$ 1.234,56",
		"24/11/2026 às 19:32:05 (horário de Brasília, UTC-03:00)",
		"Forma de pagamento", "Pix",
		"Recebedor", "Padaria São João", "CNPJ", "**.222.333/0001-**", "Quita Sandbox",
		"Pagador", "Maria Conceição Araújo", "CPF", "***.982.247-**", "ISPB 99999999",
		"Descrição", "Pão de queijo e café coado",
		"ID da transação", "tx_01jd5k7q9w3e8r2t6y4u0i1o2p",
		"ID fim a fim (E2E)", "E9999999920261124223201234abcdef",
		"Identificador (txid)", "quita01jd5k7q9w3e8r2t6y4u0i1o",
		"Emitido por Quita em 24/11/2026 às 19:35:05",
	)
	for _, leak := range []string{"529.982.247-25", "52998224725", "11222333000181", "S?o", "AMBIENTE DE TESTES"} {
		if strings.Contains(text, leak) {
			t.Errorf("receipt text contains %q", leak)
		}
	}
	// Nor in the file itself (metadata, uncompressed streams).
	for _, leak := range []string{"52998224725", "529.982.247-25"} {
		if bytes.Contains(pdf, []byte(leak)) {
			t.Errorf("PDF bytes contain %q", leak)
		}
	}
	png := testkit.PDFPageToPNG(t, pdf, "receipts", "payment-pt-BR")
	t.Logf("rendered %s", png)
}

func TestPaymentReceiptEnglish(t *testing.T) {
	t.Parallel()
	pdf := render(t, paymentReceipt(domain.LocaleEN, domain.ModeLive))
	text := testkit.PDFText(t, pdf)
	wantText(t, text,
		"Pix payment receipt", "R$ 1,234.56", "Nov 24, 2026, 19:32:05 (Brasília time, UTC-03:00)",
		"Payee", "Padaria São João", "Payer", "***.982.247-**", "Transaction ID", "End-to-end ID (E2E)",
	)
	if strings.Contains(text, "Comprovante") {
		t.Errorf("English receipt has Portuguese title:\n%s", text)
	}
	testkit.PDFPageToPNG(t, pdf, "receipts", "payment-en")
}

// A sandbox receipt says on its face that no money moved.
func TestTestModeReceiptIsMarked(t *testing.T) {
	t.Parallel()
	text := testkit.PDFText(t, render(t, paymentReceipt(domain.LocalePtBR, domain.ModeTest)))
	wantText(t, text, "AMBIENTE DE TESTES: SEM VALOR FINANCEIRO", "Padaria São João")
	text = testkit.PDFText(t, render(t, paymentReceipt(domain.LocaleEN, domain.ModeTest)))
	wantText(t, text, "TEST MODE: NO MONEY MOVED")
}

func TestRefundReceipt(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.Kind, r.Amount = ports.ReceiptRefund, 50000
	r.From, r.To = r.To, r.From
	r.Description = "Produto esgotado; devolução integral"
	r.ReferenceID = "re_01jd5m0000000000000000000a"
	r.OriginalEndToEndID, r.EndToEndID = r.EndToEndID, "D9999999920261124224001234abcdef"
	r.At = paidAt.Add(8 * time.Minute)
	pdf := render(t, r)
	text := testkit.PDFText(t, pdf)
	wantText(t, text,
		"Comprovante de devolução Pix", "Valor devolvido", "R$ 500,00",
		"24/11/2026 às 19:40:05 (horário de Brasília, UTC-03:00)",
		"Quem recebeu a devolução", "Maria Conceição Araújo", "***.982.247-**",
		"Quem devolveu", "Padaria São João",
		"Motivo", "Produto esgotado; devolução integral",
		"ID da devolução", "re_01jd5m0000000000000000000a",
		"E2E do pagamento original", "E9999999920261124223201234abcdef",
		"D9999999920261124224001234abcdef",
	)
	testkit.PDFPageToPNG(t, pdf, "receipts", "refund-pt-BR")
	en := testkit.PDFText(t, render(t, func() ports.Receipt { r.Locale = domain.LocaleEN; return r }()))
	wantText(t, en, "Pix refund receipt", "Amount refunded", "R$ 500.00", "Refunded to", "Refunded by", "Reason", "Refund ID")
}

// A party the bank did not disclose reads "Não informado", never blank,
// and a missing document leaves no empty CPF line.
func TestReceiptUnknownPayer(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.From = ports.ReceiptParty{}
	r.Description = ""
	text := testkit.PDFText(t, render(t, r))
	wantText(t, text, "Pagador", "Não informado")
	if strings.Contains(text, "CPF") || strings.Contains(text, "Descrição") {
		t.Errorf("empty rows printed:\n%s", text)
	}
}

// A long description wraps inside the page instead of running off it.
func TestReceiptLongDescriptionWraps(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.Description = strings.Repeat("Açaí com granola e banana, ", 18) + "fim."
	pdf := render(t, r)
	text := testkit.PDFText(t, pdf)
	wantText(t, text, "fim.", "Identificador (txid)")
	if strings.Count(testkit.PDFText(t, pdf), "\f") != 1 {
		t.Errorf("receipt is not one page")
	}
}

// The same receipt is the same bytes: nothing in it depends on the
// clock of the renderer.
func TestReceiptIsDeterministic(t *testing.T) {
	t.Parallel()
	a := render(t, paymentReceipt(domain.LocalePtBR, domain.ModeLive))
	b := render(t, paymentReceipt(domain.LocalePtBR, domain.ModeLive))
	if !bytes.Equal(a, b) {
		t.Error("two renderings of one receipt differ")
	}
}

// BenchmarkRenderPDF draws one payment receipt (font subsetting included).
func BenchmarkRenderPDF(b *testing.B) {
	r := paymentReceipt(domain.LocalePtBR, domain.ModeTest)
	rd := receipt.New()
	var size int
	for b.Loop() {
		pdf, err := rd.RenderPDF(r)
		if err != nil {
			b.Fatal(err)
		}
		size = len(pdf)
	}
	b.ReportMetric(float64(size), "bytes/receipt")
}

// Text from outside is drawn whatever it holds: a decomposed "São" prints
// composed, an emoji or CJK the font lacks becomes "�" (not a failed
// receipt), control characters become spaces, bidirectional formatting
// characters are dropped.
func TestReceiptForeignText(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.To.Name = "Padaria Sa\u0303o Joa\u0303o"
	r.From.Name = "Ñandú Ğüneş\třeka\u202e\u2066"
	r.Description = "Café ☕ 😀 日本\x00 fim"
	text := testkit.PDFText(t, render(t, r))
	wantText(t, text, "Padaria São João", "Ñandú Ğüneş řeka\n", "Café � � �� fim")
}

// A payout receipt: the merchant's balance went to a Pix key; its fee is
// printed apart from the amount.
func TestPayoutReceipt(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.Kind, r.Amount, r.Fee = ports.ReceiptPayout, 250000, 50
	r.From, r.To = r.To, ports.ReceiptParty{PixKey: "j***@padaria.com.br"}
	r.TransactionID, r.TxID, r.ReferenceID = "", "", "po_01jd5m0000000000000000000b"
	r.Description = "Retirada semanal"
	pdf := render(t, r)
	text := testkit.PDFText(t, pdf)
	wantText(t, text, "Comprovante de transferência Pix", "Valor transferido", "R$ 2.500,00", "Tarifa", "R$ 0,50",
		"Destino", "Não informado", "Chave Pix", "j***@padaria.com.br", "Origem", "Padaria São João",
		"ID da transferência", "po_01jd5m0000000000000000000b", "Retirada semanal")
	if strings.Contains(text, "ID da transação") || strings.Contains(text, "txid") {
		t.Errorf("payout receipt names a charge:\n%s", text)
	}
	testkit.PDFPageToPNG(t, pdf, "receipts", "payout-pt-BR")
	en := testkit.PDFText(t, render(t, func() ports.Receipt { r.Locale = domain.LocaleEN; return r }()))
	wantText(t, en, "Pix transfer receipt", "Amount transferred", "R$ 2,500.00", "Fee", "R$ 0.50", "Pix key", "Transfer ID")
}

// A receipt is one page whatever its fields hold: each text from outside
// is cut to its bound, with "…", and drawing a 1 MB name costs what
// drawing a 140-character one does. Wide letters (W) at every bound, on
// every kind of receipt, in test mode with a fee line, still fit.
func TestReceiptIsOnePageWhateverItsFieldsHold(t *testing.T) {
	t.Parallel()
	wide := func(n int) string { return strings.Repeat("W", n) }
	huge := strings.Repeat("Maria ", 1<<20/6)
	for _, kind := range []ports.ReceiptKind{ports.ReceiptPayment, ports.ReceiptRefund, ports.ReceiptPayout} {
		for _, name := range []string{wide(500), huge} {
			r := paymentReceipt(domain.LocalePtBR, domain.ModeTest)
			r.Kind, r.Amount, r.Fee = kind, 999_999_999_999, 123_456
			r.To = ports.ReceiptParty{Name: name, MaskedDocument: wide(100), DocumentKind: domain.TaxIDCNPJ, Institution: wide(500), PixKey: wide(500)}
			r.From = ports.ReceiptParty{Name: name, MaskedDocument: wide(100), DocumentKind: domain.TaxIDCPF, Institution: wide(500), PixKey: wide(500)}
			r.Description = name
			r.TransactionID, r.ReferenceID, r.EndToEndID, r.OriginalEndToEndID, r.TxID = wide(200), wide(200), wide(200), wide(200), wide(200)
			pdf := render(t, r)
			text := testkit.PDFText(t, pdf)
			if pages := strings.Count(text, "\f"); pages != 1 {
				t.Errorf("%s receipt with a %d-byte name: %d pages", kind, len(name), pages)
			}
			wantText(t, text, "…", "Emitido por Quita")
			if len(pdf) > 64<<10 {
				t.Errorf("%s receipt with a %d-byte name is %d bytes", kind, len(name), len(pdf))
			}
		}
	}
	// A description of the spec's 500 characters in ordinary words is
	// printed whole on the fullest live receipt, a refund's. (A test-mode
	// receipt gives a line of it to its warning banner.)
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.Kind, r.ReferenceID, r.OriginalEndToEndID = ports.ReceiptRefund, "re_01jd5m0000000000000000000a", "E9999999920261124223201234abcdef"
	r.Description = strings.Repeat("Açaí com granola e banana, ", 18) + "mais um, e fim"
	if n := len([]rune(r.Description)); n != domain.MaxDescriptionLen {
		t.Fatalf("description of %d characters", n)
	}
	text := testkit.PDFText(t, render(t, r))
	wantText(t, text, "banana, mais um, e fim", "ID da devolução")
	if strings.Contains(text, "…") || strings.Count(text, "\f") != 1 {
		t.Errorf("the 500-character description was cut or the receipt is not one page:\n%s", text)
	}
}

// A due-date charge's receipt shows its due date, the original amount and
// each part that changed it, in the receipt's language.
func TestDueDatePaymentReceiptShowsTheComponents(t *testing.T) {
	t.Parallel()
	r := paymentReceipt(domain.LocalePtBR, domain.ModeLive)
	r.Amount = 10_320
	r.Due = &domain.DueBreakdown{AmountDue: 10_320, Original: 10_000, Abatement: 100, Fine: 200, Interest: 220}
	r.DueDate = "2026-11-20"
	text := testkit.PDFText(t, render(t, r))
	wantText(t, text, "R$ 103,20", "Vencimento", "20/11/2026", "Valor original", "R$ 100,00",
		"Abatimento", "− R$ 1,00", "Multa", "+ R$ 2,00", "Juros", "+ R$ 2,20")
	if strings.Contains(text, "Desconto") {
		t.Errorf("a receipt without a discount prints a discount line:\n%s", text)
	}
	r.Locale = domain.LocaleEN
	wantText(t, testkit.PDFText(t, render(t, r)), "Due date", "Nov 20, 2026", "Original amount", "Rebate", "Fine", "Interest")
	plain := testkit.PDFText(t, render(t, paymentReceipt(domain.LocalePtBR, domain.ModeLive)))
	if strings.Contains(plain, "Vencimento") || strings.Contains(plain, "Valor original") {
		t.Errorf("an immediate payment's receipt prints due-date lines:\n%s", plain)
	}
}
