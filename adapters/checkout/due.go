package checkout

import (
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain/bizdays"
)

// dueLine is one line of what a due-date charge asks today.
type dueLine struct{ Label, Amount string }

// dueView fills the page of a due-date charge: the amount is what it asks
// today, under it the due date and the parts that differ from the
// original (discount, abatement, fine, interest), and the deadline is the
// last day it can be paid rather than a time of day.
func dueView(d *pageData, v app.CheckoutView, lang string) {
	t, cur := catalog[lang], string(v.Currency)
	d.DueDate = dayText(v.Due.Date, lang)
	d.LastDay = dayText(bizdays.DateOf(v.ExpiresAt.In(brasilia).Add(-1)), lang)
	b := v.Due.Today
	if b == nil {
		return // past the last payable day: the original amount stands
	}
	d.Amount = FormatAmount(b.AmountDue, cur, lang)
	if b.AmountDue == b.Original {
		return
	}
	d.DueLines = append(d.DueLines, dueLine{t.DueOriginal, FormatAmount(b.Original, cur, lang)})
	for _, p := range []struct {
		label  string
		amount int64
		sign   string
	}{{t.DueAbatement, b.Abatement, "− "}, {t.DueDiscount, b.Discount, "− "}, {t.DueFine, b.Fine, "+ "}, {t.DueInterest, b.Interest, "+ "}} {
		if p.amount > 0 {
			d.DueLines = append(d.DueLines, dueLine{p.label, p.sign + FormatAmount(p.amount, cur, lang)})
		}
	}
	d.DueLines = append(d.DueLines, dueLine{t.AmountToday, d.Amount})
}

// dayText is day as formatDate writes a date.
func dayText(day bizdays.Date, lang string) string {
	return formatDate(time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, time.UTC), lang)
}
