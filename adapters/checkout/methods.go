package checkout

import (
	"fmt"
	"strings"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// methodKinds maps a payment method to its panel kind, in no particular
// order: the panels follow the order of the charge's methods.
var methodKinds = map[domain.Method]string{
	domain.MethodPix:        "pix",
	domain.MethodBoleto:     "boleto",
	domain.MethodMultibanco: "multibanco",
	domain.MethodMBWay:      "mbway",
	domain.MethodCreditCard: "card",
	domain.MethodCrypto:     "crypto",
}

// panels builds one panel per method the charge offers, in its order,
// and the QR's origin for img-src.
func panels(v app.CheckoutView, t *messages, lang, amount string) ([]panel, string) {
	var (
		out       []panel
		imgOrigin string
	)
	for _, m := range v.Methods {
		kind, ok := methodKinds[m]
		if !ok {
			continue
		}
		p := panel{Kind: kind, Label: t.MethodNames[kind]}
		switch m {
		case domain.MethodPix:
			if v.Pix == nil {
				p.Unavailable = true
				break
			}
			p.BRCode, p.QRURL = v.Pix.BRCode, v.Pix.QRCodeURL
			p.QRAlt = fmt.Sprintf(t.QRAlt, amount, v.MerchantName)
			imgOrigin = origin(v.Pix.QRCodeURL)
		case domain.MethodBoleto:
			if b := v.Boleto; b != nil {
				p.Line, p.Barcode, p.PDFURL = b.Line, b.Barcode, httpURL(b.PDFURL)
				p.Expiry = formatDate(b.ExpiresAt.In(brasilia), lang)
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodMultibanco:
			if mb := v.Multibanco; mb != nil {
				p.Entity, p.Reference = mb.Entity, groupDigits(mb.Reference, 3)
				p.Amount = FormatAmount(v.Amount, string(v.Currency), lang)
				p.Expiry = formatDate(mb.ExpiresAt.UTC(), lang)
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodMBWay:
			if v.MBWayPhoneEnding == "" {
				p.Unavailable = true
				break
			}
			p.PhoneNote = fmt.Sprintf(t.MBWayNote, v.MBWayPhoneEnding)
		case domain.MethodCreditCard:
			switch {
			case v.TestMode:
				// The sandbox card screen, served here (test mode only).
				// It does not need the acquirer's data.
				p.CardURL = v.RawID + "/card"
			case v.Card != nil && httpURL(v.Card.RedirectURL) != "":
				p.CardURL = v.Card.RedirectURL
			default:
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodCrypto:
			if c := v.Crypto; c != nil {
				p.Address, p.Network, p.CryptoAmount, p.CryptoCurrency = c.Address, c.Network, c.Amount, c.Currency
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		}
		out = append(out, p)
	}
	return out, imgOrigin
}

// httpURL returns s when it is an absolute http(s) URL, "" otherwise (no
// javascript: or data: link reaches the page).
func httpURL(s string) string {
	if origin(s) == "" {
		return ""
	}
	return s
}

// groupDigits writes s in groups of n from the left ("123456789" →
// "123 456 789"), as Multibanco references are printed.
func groupDigits(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && i%n == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// formatDate is a due date as the payer reads it: 25/11/2026 in
// Portuguese, Nov 25, 2026 in English.
func formatDate(t time.Time, lang string) string {
	if t.IsZero() {
		return ""
	}
	if lang == LangEnglish {
		return t.Format("Jan 2, 2006")
	}
	return t.Format("02/01/2006")
}
