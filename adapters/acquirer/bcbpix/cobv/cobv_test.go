package cobv_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/cobv"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

var (
	created = bizdays.MustDate(2026, 3, 2)
	due     = bizdays.MustDate(2026, 3, 20)
)

func terms(t *testing.T, p domain.DueTermsParams) domain.DueTerms {
	t.Helper()
	p.Original, p.Created, p.Due = 10000, created, due
	dt, err := domain.NewDueTerms(p)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// Every rule goes to the wire and back as itself, through the modality
// the table in domain/charge_due.go gives it.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	days := 10
	cases := []struct {
		name string
		p    domain.DueTermsParams
		want string // the valor's JSON
	}{
		{"fine fixed, interest per day", domain.DueTermsParams{DaysAfterDue: &days,
			Fine:     &domain.Fine{Type: domain.FineFixed, Amount: 250},
			Interest: &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 7}},
			`{"original":"100.00","multa":{"modalidade":1,"valorPerc":"2.50"},"juros":{"modalidade":1,"valorPerc":"0.07"}}`},
		{"fine percent, interest per month in business days, abatement", domain.DueTermsParams{
			Fine:      &domain.Fine{Type: domain.FinePercent, Rate: "2.00"},
			Interest:  &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00", BusinessDays: true},
			Abatement: &domain.Abatement{Type: domain.AbatementPercent, Rate: "5.00"}},
			`{"original":"100.00","multa":{"modalidade":2,"valorPerc":"2.00"},"juros":{"modalidade":7,"valorPerc":"1.00"},"abatimento":{"modalidade":2,"valorPerc":"5.00"}}`},
		{"dated discounts", domain.DueTermsParams{Discount: &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{
			{Date: bizdays.MustDate(2026, 3, 10), Amount: 500}, {Date: bizdays.MustDate(2026, 3, 15), Amount: 200}}}},
			`{"original":"100.00","desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-03-10","valorPerc":"5.00"},{"data":"2026-03-15","valorPerc":"2.00"}]}}`},
		{"percent per business day early, interest per year", domain.DueTermsParams{
			Discount: &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "0.10", BusinessDays: true},
			Interest: &domain.Interest{Type: domain.InterestPercentPerYear, Rate: "12.00"}},
			`{"original":"100.00","juros":{"modalidade":4,"valorPerc":"12.00"},"desconto":{"modalidade":6,"valorPerc":"0.10"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dt := terms(t, tc.p)
			cal, v := cobv.Encode(dt)
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Errorf("valor %s\nwant  %s", got, tc.want)
			}
			if cal.DataDeVencimento != "2026-03-20" {
				t.Errorf("dataDeVencimento %q", cal.DataDeVencimento)
			}
			back, err := cobv.Decode(created, cal, v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Params(), dt.Params()) {
				t.Errorf("decoded %+v, want %+v", back.Params(), dt.Params())
			}
		})
	}
}

// A modality the API Pix does not define, or a value the rule refuses, is
// a validation error naming the merchant-facing field.
func TestDecodeRefuses(t *testing.T) {
	cal := cobv.Calendario{DataDeVencimento: "2026-03-20"}
	cases := []struct {
		v    cobv.Valor
		want domain.Field
	}{
		{cobv.Valor{Original: "100.00", Juros: &cobv.Rule{Modalidade: 9, ValorPerc: "1.00"}}, domain.FieldInterest},
		{cobv.Valor{Original: "100.00", Multa: &cobv.Rule{Modalidade: 1, ValorPerc: "x"}}, domain.FieldFine},
		{cobv.Valor{Original: "100.00", Desconto: &cobv.Desconto{Modalidade: 7}}, domain.FieldDiscount},
		{cobv.Valor{Original: "100.00", Abatimento: &cobv.Rule{Modalidade: 3, ValorPerc: "1.00"}}, domain.FieldAbatement},
		{cobv.Valor{Original: "abc"}, domain.FieldAmount},
	}
	for _, tc := range cases {
		_, err := cobv.Decode(created, cal, tc.v)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.want {
			t.Errorf("%+v: %v, want a validation error on %s", tc.v, err, tc.want)
		}
	}
	if _, err := cobv.Decode(created, cobv.Calendario{DataDeVencimento: "20/03/2026"}, cobv.Valor{Original: "1.00"}); err == nil {
		t.Error("a malformed due date was accepted")
	}
}
