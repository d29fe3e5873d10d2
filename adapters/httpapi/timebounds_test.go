package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every query parameter that becomes an instant in a query is checked
// after it is converted to UTC: outside years 0001–9999 UTC (what both
// databases keep, ports.MinTime–MaxTime) it is 400 parameter_invalid
// naming the parameter, in the error envelope, never a 500. The edges of
// the range are answered 200.
func TestTimestampParamsOutOfRange(t *testing.T) {
	t.Parallel()
	const (
		// Year 9999 in São Paulo, year 10000 in UTC.
		pastMax = "9999-12-31T23:59:59.999-03:00"
		// Year 1 at +01:00, year 0 in UTC.
		beforeMin = "0001-01-01T00:30:00+01:00"
		year0     = "0000-06-01T00:00:00Z"
		maxUTC    = "9999-12-31T23:59:59.999Z"
		minUTC    = "0001-01-01T00:00:00Z"
	)
	cases := []struct {
		path, param, value string
		status             int
	}{
		{"/events", "created_before", pastMax, 400},
		{"/events", "created_after", pastMax, 400},
		{"/events", "created_after", beforeMin, 400},
		{"/events", "created_before", year0, 400},
		{"/events", "created_before", maxUTC, 200},
		{"/events", "created_after", minUTC, 200},
		{"/charges", "created_before", pastMax, 400},
		{"/charges", "created_after", pastMax, 400},
		{"/charges", "created_after", beforeMin, 400},
		{"/charges", "created_before", maxUTC, 200},
		{"/charges", "created_after", minUTC, 200},
		{"/payments", "endDate", pastMax, 400},
		{"/payments", "startDate", pastMax, 400},
		{"/payments", "startDate", beforeMin, 400},
		{"/payments", "startDate", "0000-12-31", 400},
		{"/payments", "endDate", "9999-12-31", 200},
		{"/payments", "startDate", "0001-01-01", 200},
		{"/payments", "endDate", maxUTC, 200},
	}
	for _, db := range payDialects {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, db.dsn(t))
			e.payPix(e.create(1000, "BRL", "PIX")) // something for the lists to hold
			for _, c := range cases {
				r := e.call(http.MethodGet, c.path+"?"+url.Values{c.param: {c.value}}.Encode(), e.acct.TestKey, nil)
				if c.status == http.StatusOK {
					// The edges of the range are bounds like any other,
					// and the payment created today lies within them.
					if data, _ := r.Body["data"].([]any); r.Status != http.StatusOK || len(data) == 0 {
						t.Errorf("%s?%s=%s: %d %.300s", c.path, c.param, c.value, r.Status, r.Raw)
					}
					continue
				}
				wantParam(t, r, http.StatusBadRequest, "parameter_invalid", c.param)
				if strings.Contains(string(r.Raw), "?!(") || strings.Contains(string(r.Raw), "outside years") {
					t.Errorf("%s?%s=%s answered the store's text: %s", c.path, c.param, c.value, r.Raw)
				}
			}
		})
	}
}
