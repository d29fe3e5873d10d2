package store

import (
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// encodeChargeSubscription is a subscription charge's link as the charges
// columns subscription_id, subscription_cycle and subscription_due_date:
// all NULL for any other charge, the due date NULL for a first payment.
// The unique index charges_subscription_cycle_idx keeps one charge per
// (subscription, cycle).
func encodeChargeSubscription(l *domain.ChargeSubscription) (id *string, cycle *int64, due *string) {
	if l == nil {
		return nil, nil, nil
	}
	k := int64(l.Cycle)
	return optString(l.ID), &k, optString(dateText(l.DueDate))
}

func decodeChargeSubscription(id *string, cycle *int64, due *string) (*domain.ChargeSubscription, error) {
	if id == nil {
		return nil, nil
	}
	l := &domain.ChargeSubscription{ID: *id, Cycle: int(deref(cycle))}
	var err error
	l.DueDate, err = parseDateText(deref(due))
	return l, err
}

// dateText is a civil date as stored: YYYY-MM-DD, "" for none.
func dateText(d bizdays.Date) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// parseDateText reads what dateText wrote.
func parseDateText(s string) (bizdays.Date, error) {
	if s == "" {
		return bizdays.Date{}, nil
	}
	return bizdays.ParseDate(s)
}
