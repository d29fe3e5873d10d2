package dashboard

import (
	"html/template"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// subscriptionFuncs are the template functions of the subscription pages
// (render.go adds them to funcs before the templates are parsed).
var subscriptionFuncs = template.FuncMap{
	"subRef":      func(raw string) string { return domain.PrefixSubscription + raw },
	"subStatus":   subscriptionStatus,
	"subClass":    subscriptionClass,
	"subAmount":   subscriptionAmount,
	"cycleClass":  cycleClass,
	"calendarDay": calendarDay,
	"deref64":     func(p *int64) int64 { return *p },
	// isoDay is a YYYY-MM-DD of a public object as calendarDay shows it.
	"isoDay": func(s string, lang string) string {
		d, err := bizdays.ParseDate(s)
		if err != nil {
			return s
		}
		return calendarDay(d, lang)
	},
	"isoDayp": func(s *string, lang string) string {
		if s == nil {
			return "—"
		}
		d, err := bizdays.ParseDate(*s)
		if err != nil {
			return *s
		}
		return calendarDay(d, lang)
	},
	"ts": func(t domain.Timestamp, lang string) string { return when(time.Time(t), lang) },
	"tsp": func(t *domain.Timestamp, lang string) string {
		if t == nil {
			return "—"
		}
		return when(time.Time(*t), lang)
	},
	// chargeSub is a charge's link to the subscription it collects for,
	// nil for any other charge.
	"chargeSub": func(c *domain.Charge) *domain.ChargeSubscription {
		if l, ok := c.Subscription(); ok {
			return &l
		}
		return nil
	},
}

// subscriptionStatus names a subscription's status in the page's
// language; a cancelled one says who cancelled it.
func subscriptionStatus(p domain.PublicSubscription, lang string) string {
	key := "sub_st_" + string(p.Status)
	if p.Status == domain.SubscriptionCancelled && p.CancelledBy != nil {
		key += "_" + string(*p.CancelledBy)
	}
	return messages[lang][key]
}

// subscriptionClass is the badge colour of a subscription's status.
func subscriptionClass(st domain.SubscriptionStatus) string {
	switch st {
	case domain.SubscriptionActive, domain.SubscriptionCompleted:
		return "ok"
	case domain.SubscriptionRejected:
		return "bad"
	case domain.SubscriptionExpired, domain.SubscriptionCancelled:
		return "off"
	case domain.SubscriptionPendingAuthorization:
	}
	return "wait"
}

// cycleClass is the badge colour of a cycle's status.
func cycleClass(st domain.CycleStatus) string {
	switch st {
	case domain.CyclePaid:
		return "ok"
	case domain.CycleFailed:
		return "bad"
	case domain.CycleCancelled:
		return "off"
	case domain.CycleScheduled, domain.CycleRetrying:
	}
	return "wait"
}

// subscriptionAmount is what each cycle charges: the fixed amount, or
// "Variável, até R$ 100,00" ("Variável" without a cap).
func subscriptionAmount(p domain.PublicSubscription, lang string) string {
	if p.Amount != nil {
		return domain.FormatMoney(*p.Amount, p.Currency, lang == langEN)
	}
	m := messages[lang]
	if p.Variable != nil && p.Variable.MaxAmount != nil {
		return m["sub_variable_upto"] + " " + domain.FormatMoney(*p.Variable.MaxAmount, p.Currency, lang == langEN)
	}
	return m["sub_variable"]
}
