package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // America/Sao_Paulo even where the system has no zoneinfo

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// saoPaulo is the time zone every time on the dashboard is shown in.
var saoPaulo = mustZone("America/Sao_Paulo")

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

var funcs = template.FuncMap{
	"asset": assetURL,
	"money": func(minor int64, cur domain.Currency, lang string) string {
		return domain.FormatMoney(minor, cur, lang == langEN)
	},
	"when":        when,
	"day":         func(t time.Time) string { return t.In(saoPaulo).Format("2006-01-02") },
	"whenp":       func(t *time.Time, lang string) string { return whenPtr(t, lang) },
	"amountInput": amountInput,
	"status":      func(st domain.TxStatus, lang string) string { return messages[lang]["st_"+string(st)] },
	"statusClass": statusClass,
	"chargeRef":   func(raw string) string { return domain.PrefixCharge + raw },
	"refundRef":   func(raw string) string { return domain.PrefixRefund + raw },
	"payoutRef":   func(raw string) string { return domain.PrefixPayout + raw },
	"payoutClass": func(st string) string { return statusClass(strings.ToUpper(st)) },
	"eventLabel":  eventLabel,
	"refundTo":    refundTo,
	"int":         func(n int64) string { return formatInt(n) },
	"ms":          func(d time.Duration) string { return formatInt(d.Milliseconds()) + " ms" },
	"deref":       func(p *int) int { return *p },
	"t": func(lang, key string) string {
		return messages[lang][key]
	},
	"subscribed": func(e domain.WebhookEndpoint, t domain.EventType) bool { return e.Subscribes(t) },
	"txid": func(c *domain.Charge) string {
		if p := c.Pix(); p != nil {
			return p.TxID
		}
		return ""
	},
	"dueDay": dueDay,
	"duePaid": func(c *domain.Charge) *domain.DueBreakdown {
		if b, ok := c.PaidBreakdown(); ok {
			return &b
		}
		return nil
	},
	"statusCount": func(st map[domain.DeliveryStatus]int, s string) int { return st[domain.DeliveryStatus(s)] },
	"rows":        func(v *view, cs []*domain.Charge) chargeRows { return chargeRows{V: v, Rows: cs} },
	"delivery":    func(v *view, d domain.WebhookDelivery) deliveryItem { return deliveryItem{V: v, D: d} },
	"short": func(fp string) string {
		if len(fp) > 12 {
			return fp[:12] + "…"
		}
		return fp
	},
}

// chargeRows and deliveryItem carry the page's view into a partial.
type (
	chargeRows struct {
		V    *view
		Rows []*domain.Charge
	}
	deliveryItem struct {
		V *view
		D domain.WebhookDelivery
	}
)

// refundTo says where a refund's money went and what it cost, for the
// refund lists: back through the original Pix, by Pix to the payer's
// document, or by Pix to a key — shown masked, never in clear — with the
// Pix-out fee the merchant paid. A card refund says nothing.
func refundTo(r domain.Refund, lang string) string {
	m := messages[lang]
	var out string
	switch d, ok := r.Destination(); {
	case r.Strategy == domain.StrategyDevolution:
		out = m["rf_devolution"]
	case ok && d.Type != "":
		out = m["rf_cashout_key"] + " " + d.Key + " (" + m["rf_key_"+string(d.Type)] + ")"
	case ok:
		out = m["rf_cashout_key"] + " " + d.Key
	case r.Strategy == domain.StrategyCashout:
		out = m["rf_cashout_payer"]
	}
	if r.Fee > 0 {
		out += " · " + m["rf_fee"] + " " + domain.FormatMoney(r.Fee, r.Currency, lang == langEN)
	}
	return out
}

// when is a time as Brazilians (or, in English, others) read it, in São
// Paulo: 24/11/2026 19:32:05, or 24 Nov 2026 19:32:05.
func when(t time.Time, lang string) string {
	if t.IsZero() {
		return "—"
	}
	t = t.In(saoPaulo)
	if lang == langEN {
		return t.Format("02 Jan 2006 15:04:05")
	}
	return t.Format("02/01/2006 15:04:05")
}

// dueDay is a due-date charge's due date in the page's language, "" for
// an immediate charge.
func dueDay(c *domain.Charge, lang string) string {
	t, ok := c.DueTerms()
	if !ok {
		return ""
	}
	return calendarDay(t.Params().Due, lang)
}

// calendarDay is a calendar day (a due date, a start date) in the page's
// language: 24/11/2026, or 24 Nov 2026; "—" for none.
func calendarDay(d bizdays.Date, lang string) string {
	if d.IsZero() {
		return "—"
	}
	if lang == langEN {
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Format("02 Jan 2006")
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Format("02/01/2006")
}

func whenPtr(t *time.Time, lang string) string {
	if t == nil {
		return "—"
	}
	return when(*t, lang)
}

// statusClass is the badge colour of a status (charge, refund or delivery).
func statusClass(st string) string {
	switch st {
	case "PAID", "APPROVED", "REFUNDED", "DELIVERED", "ACTIVE":
		return "ok"
	case "REFUSED", "FAILED", "CHARGEBACK", "DISPUTE":
		return "bad"
	case "CANCELLED", "EXPIRED", "INACTIVE":
		return "off"
	}
	return "wait"
}

// eventLabel names an event type in the page's language, falling back to
// the type itself.
func eventLabel(t domain.EventType, lang string) string {
	if s, ok := messages[lang]["ev_"+string(t)]; ok {
		return s
	}
	return string(t)
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// amountInput is minor units as the amount field shows them, without the
// currency sign the field already has: 1.234,56 (en: 1,234.56).
func amountInput(minor int64, lang string) string {
	return strings.TrimPrefix(domain.FormatMoney(minor, domain.CurrencyBRL, lang == langEN), "R$ ")
}

// parseAmount reads an amount typed by a person, with integer arithmetic
// only: "1234,56", "1.234,56", "1234.56", "1,234.56", "R$ 12" or "12".
// The last separator followed by one or two digits is the decimal mark;
// every other "." or "," groups thousands.
func parseAmount(s string) (int64, bool) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "R$"))
	if s == "" || len(s) > 24 {
		return 0, false
	}
	whole, frac := s, ""
	if i := strings.LastIndexAny(s, ".,"); i >= 0 && len(s)-i-1 <= 2 && len(s)-i-1 >= 1 {
		whole, frac = s[:i], s[i+1:]
	}
	digits := strings.NewReplacer(".", "", ",", "").Replace(whole)
	if digits == "" {
		digits = "0"
	}
	for _, part := range []string{digits, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, false
			}
		}
	}
	if len(frac) == 1 {
		frac += "0"
	}
	if frac == "" {
		frac = "00"
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > (1<<62)/100 {
		return 0, false
	}
	c, _ := strconv.ParseInt(frac, 10, 64)
	return n*100 + c, true
}

// fingerprint of a dashboard write, for its idempotency record.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p + ";"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// chart is the 30-day volume as SVG bars (attributes, not inline styles,
// so the strict CSP holds).
type chart struct {
	Bars  []bar
	Max   int64
	Empty bool
}

type bar struct {
	X, Y, H int
	Label   string
}

const chartHeight = 120

func dailyChart(daily []app.DailyMetrics, now time.Time, days int, lang string) chart {
	vol := map[string]int64{}
	var top int64
	for _, d := range daily {
		vol[d.Date] = d.Volume
		top = max(top, d.Volume)
	}
	out := chart{Max: top, Empty: top == 0}
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
	for i := range days {
		day := start.AddDate(0, 0, i)
		v := vol[day.Format("2006-01-02")]
		h := 0
		if top > 0 {
			h = int(v * (chartHeight - 4) / top)
		}
		if v > 0 && h < 2 {
			h = 2
		}
		label := day.Format("02/01") + ": " + domain.FormatMoney(v, domain.CurrencyBRL, lang == langEN)
		out.Bars = append(out.Bars, bar{X: i * 20, Y: chartHeight - h, H: h, Label: label})
	}
	return out
}
