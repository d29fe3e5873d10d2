package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// CurrencyVolume is the paid volume (minor units) and count in one
// currency.
type CurrencyVolume struct {
	Currency string `json:"currency"`
	Volume   int64  `json:"volume"`
	Count    int64  `json:"count"`
}

// MethodVolume is the paid volume (minor units) and count of one payment
// method.
type MethodVolume struct {
	Method string `json:"method"`
	Volume int64  `json:"volume"`
	Count  int64  `json:"count"`
}

// DailyVolume is one day's paid volume per currency.
type DailyVolume struct {
	// Date is YYYY-MM-DD (UTC).
	Date       string           `json:"date"`
	Currencies map[string]int64 `json:"currencies"`
}

// Stats summarise the account's payments over a window of days.
type Stats struct {
	TotalTransactions int64 `json:"totalTransactions"`
	PaidTransactions  int64 `json:"paidTransactions"`
	TodayTransactions int64 `json:"todayTransactions"`
	// SuccessRate is a percentage, 0–100.
	SuccessRate           int64            `json:"successRate"`
	VolumeByCurrency      []CurrencyVolume `json:"volumeByCurrency"`
	TodayVolumeByCurrency map[string]int64 `json:"todayVolumeByCurrency"`
	DailyVolume           []DailyVolume    `json:"dailyVolume"`
	MethodBreakdown       []MethodVolume   `json:"methodBreakdown"`
}

// Stats reads the stats of the last days (0: the server's default, 30).
func (s *PaymentsService) Stats(ctx context.Context, days int) (*Stats, error) {
	var out Stats
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments/stats", query: daysQuery(days, "")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DailyMetrics is one day of the funnel.
type DailyMetrics struct {
	Date    string `json:"date"`
	Created int64  `json:"created"`
	Paid    int64  `json:"paid"`
	Volume  int64  `json:"volume"`
}

// Metrics is the conversion funnel of a window of days.
type Metrics struct {
	Days      int     `json:"days"`
	Currency  *string `json:"currency"`
	Created   int64   `json:"created"`
	Paid      int64   `json:"paid"`
	Failed    int64   `json:"failed"`
	Expired   int64   `json:"expired"`
	Cancelled int64   `json:"cancelled"`
	Refunded  int64   `json:"refunded"`
	// ConversionRate is paid / created as a percentage, 0–100 (a ratio,
	// not money).
	ConversionRate     float64        `json:"conversionRate"`
	Volume             int64          `json:"volume"`
	AverageTicket      int64          `json:"averageTicket"`
	RefundedVolume     int64          `json:"refundedVolume"`
	MedianSecondsToPay *int64         `json:"medianSecondsToPay"`
	Daily              []DailyMetrics `json:"daily"`
}

// Metrics reads the funnel of the last days (0: the default, 7), in one
// currency or (empty) all.
func (s *PaymentsService) Metrics(ctx context.Context, days int, currency string) (*Metrics, error) {
	var out Metrics
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments/metrics", query: daysQuery(days, currency)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func daysQuery(days int, currency string) url.Values {
	q := url.Values{}
	if days > 0 {
		q.Set("days", strconv.Itoa(days))
	}
	if currency != "" {
		q.Set("currency", currency)
	}
	return q
}
