package app

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/quitapix/quita/domain"
)

// CurrencyVolume is volume and count in one currency (or of one method).
type CurrencyVolume struct {
	Currency domain.Currency `json:"currency"`
	Volume   int64           `json:"volume"`
	Count    int64           `json:"count"`
}

// MethodVolume is volume and count of one payment method.
type MethodVolume struct {
	Method domain.Method `json:"method"`
	Volume int64         `json:"volume"`
	Count  int64         `json:"count"`
}

// DailyVolume is one day's paid volume by currency.
type DailyVolume struct {
	Date       string                    `json:"date"`
	Currencies map[domain.Currency]int64 `json:"currencies"`
}

// Stats is GET /v1/payments/stats.
type Stats struct {
	TotalTransactions     int64                     `json:"totalTransactions"`
	PaidTransactions      int64                     `json:"paidTransactions"`
	TodayTransactions     int64                     `json:"todayTransactions"`
	SuccessRate           int64                     `json:"successRate"`
	VolumeByCurrency      []CurrencyVolume          `json:"volumeByCurrency"`
	TodayVolumeByCurrency map[domain.Currency]int64 `json:"todayVolumeByCurrency"`
	DailyVolume           []DailyVolume             `json:"dailyVolume"`
	MethodBreakdown       []MethodVolume            `json:"methodBreakdown"`
}

// paidStatus reports whether a charge in status st with a settlement was
// paid (and possibly refunded or disputed later).
func paidStatus(st domain.TxStatus, paidWith domain.Method) bool {
	if paidWith == "" {
		return false
	}
	switch st {
	case domain.TxPaid, domain.TxApproved, domain.TxRefunded, domain.TxDispute, domain.TxChargeback:
		return true
	}
	return false
}

func windowStart(now time.Time, days int) time.Time {
	d := now.UTC().Truncate(24 * time.Hour)
	return d.AddDate(0, 0, -(days - 1))
}

// Stats aggregates the caller's payments of the last days (today included).
func (s *PaymentService) Stats(ctx context.Context, caller Caller, days int) (Stats, error) {
	now := s.clock.Now().UTC()
	aggs, err := s.store.AggregatePayments(ctx, caller.Scope(), windowStart(now, days), "")
	if err != nil {
		return Stats{}, err
	}
	today := now.Format("2006-01-02")
	out := Stats{VolumeByCurrency: []CurrencyVolume{}, TodayVolumeByCurrency: map[domain.Currency]int64{},
		DailyVolume: []DailyVolume{}, MethodBreakdown: []MethodVolume{}}
	byCur := map[domain.Currency]*CurrencyVolume{}
	byMethod := map[domain.Method]*MethodVolume{}
	byDay := map[string]map[domain.Currency]int64{}
	for _, a := range aggs {
		out.TotalTransactions += a.Count
		if a.Day == today {
			out.TodayTransactions += a.Count
		}
		if !paidStatus(a.Status, a.PaidWith) {
			continue
		}
		out.PaidTransactions += a.Count
		cv := byCur[a.Currency]
		if cv == nil {
			cv = &CurrencyVolume{Currency: a.Currency}
			byCur[a.Currency] = cv
		}
		cv.Volume += a.Volume
		cv.Count += a.Count
		mv := byMethod[a.PaidWith]
		if mv == nil {
			mv = &MethodVolume{Method: a.PaidWith}
			byMethod[a.PaidWith] = mv
		}
		mv.Volume += a.Volume
		mv.Count += a.Count
		if a.Day == today {
			out.TodayVolumeByCurrency[a.Currency] += a.Volume
		}
		if byDay[a.Day] == nil {
			byDay[a.Day] = map[domain.Currency]int64{}
		}
		byDay[a.Day][a.Currency] += a.Volume
	}
	if out.TotalTransactions > 0 {
		out.SuccessRate = (100*out.PaidTransactions + out.TotalTransactions/2) / out.TotalTransactions
	}
	for _, cv := range byCur {
		out.VolumeByCurrency = append(out.VolumeByCurrency, *cv)
	}
	sort.Slice(out.VolumeByCurrency, func(i, j int) bool { return out.VolumeByCurrency[i].Currency < out.VolumeByCurrency[j].Currency })
	for _, mv := range byMethod {
		out.MethodBreakdown = append(out.MethodBreakdown, *mv)
	}
	sort.Slice(out.MethodBreakdown, func(i, j int) bool { return out.MethodBreakdown[i].Method < out.MethodBreakdown[j].Method })
	for d, cur := range byDay {
		out.DailyVolume = append(out.DailyVolume, DailyVolume{Date: d, Currencies: cur})
	}
	sort.Slice(out.DailyVolume, func(i, j int) bool { return out.DailyVolume[i].Date < out.DailyVolume[j].Date })
	return out, nil
}

// DailyMetrics is one day of the metrics.
type DailyMetrics struct {
	Date    string `json:"date"`
	Created int64  `json:"created"`
	Paid    int64  `json:"paid"`
	Volume  int64  `json:"volume"`
}

// Metrics is GET /v1/payments/metrics (docs/payments-and-ledger.md gives the body).
type Metrics struct {
	Days               int              `json:"days"`
	Currency           *domain.Currency `json:"currency"`
	Created            int64            `json:"created"`
	Paid               int64            `json:"paid"`
	Failed             int64            `json:"failed"`
	Expired            int64            `json:"expired"`
	Cancelled          int64            `json:"cancelled"`
	Refunded           int64            `json:"refunded"`
	ConversionRate     float64          `json:"conversionRate"`
	Volume             int64            `json:"volume"`
	AverageTicket      int64            `json:"averageTicket"`
	RefundedVolume     int64            `json:"refundedVolume"`
	MedianSecondsToPay *int64           `json:"medianSecondsToPay"`
	Daily              []DailyMetrics   `json:"daily"`
}

// Metrics computes the conversion funnel of the last days. The conversion
// rate is a ratio for display only; no amount is ever a float.
func (s *PaymentService) Metrics(ctx context.Context, caller Caller, days int, cur domain.Currency) (Metrics, error) {
	now := s.clock.Now().UTC()
	since := windowStart(now, days)
	// The median needs its own scan: run it beside the aggregate.
	var (
		median    *int64
		medianErr error
		done      = make(chan struct{})
	)
	go func() {
		defer close(done)
		median, medianErr = s.store.MedianSecondsToPay(ctx, caller.Scope(), since, cur)
	}()
	aggs, err := s.store.AggregatePayments(ctx, caller.Scope(), since, cur)
	<-done
	if err != nil {
		return Metrics{}, err
	}
	if medianErr != nil {
		return Metrics{}, medianErr
	}
	out := Metrics{Days: days, Daily: []DailyMetrics{}, MedianSecondsToPay: median}
	if cur != "" {
		out.Currency = &cur
	}
	byDay := map[string]*DailyMetrics{}
	for _, a := range aggs {
		d := byDay[a.Day]
		if d == nil {
			d = &DailyMetrics{Date: a.Day}
			byDay[a.Day] = d
		}
		out.Created += a.Count
		d.Created += a.Count
		out.RefundedVolume += a.Refunded
		switch a.Status {
		case domain.TxRefused:
			out.Failed += a.Count
		case domain.TxExpired:
			out.Expired += a.Count
		case domain.TxCancelled:
			out.Cancelled += a.Count
		case domain.TxRefunded:
			out.Refunded += a.Count
		}
		if paidStatus(a.Status, a.PaidWith) {
			out.Paid += a.Count
			out.Volume += a.Volume
			d.Paid += a.Count
			d.Volume += a.Volume
		}
	}
	if out.Created > 0 {
		out.ConversionRate = math.Round(float64(out.Paid)*10000/float64(out.Created)) / 100
	}
	if out.Paid > 0 {
		out.AverageTicket = out.Volume / out.Paid
	}
	for _, d := range byDay {
		out.Daily = append(out.Daily, *d)
	}
	sort.Slice(out.Daily, func(i, j int) bool { return out.Daily[i].Date < out.Daily[j].Date })
	return out, nil
}
