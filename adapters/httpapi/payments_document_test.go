package httpapi_test

import "testing"

// TestPaymentsCheckBrazilianDocuments: a payment in reais (Pix, boleto)
// takes a customerDocument only when it is a CPF or CNPJ with valid check
// digits, as the charges surface does; a euro payment (Multibanco) takes
// any tax id, a NIF among them. SQLite.
func TestPaymentsCheckBrazilianDocuments(t *testing.T) {
	t.Parallel()
	e := newPayEnv(t, payDialects[0].dsn(t))
	pay := func(methods []string, currency, doc string) apiResp {
		body := map[string]any{"amount": 2500, "paymentMethods": methods, "customerName": "Ana", "customerDocument": doc,
			"idempotencyKey": e.key()}
		if currency != "" {
			body["currency"] = currency
		}
		return e.as("POST", "/payments", e.acct.TestKey, "", body)
	}
	for _, bad := range []struct {
		methods  []string
		currency string
		doc      string
	}{
		{[]string{"PIX"}, "", "52998224724"},       // a CPF's check digit wrong
		{[]string{"BOLETO"}, "", "123456789"},      // a NIF in reais
		{[]string{"PIX"}, "BRL", "11222333000180"}, // a CNPJ's check digit wrong
	} {
		if r := pay(bad.methods, bad.currency, bad.doc); r.Status != 400 || r.code() != "parameter_invalid" || r.param() != "customerDocument" {
			t.Errorf("%v %q: %s", bad.methods, bad.doc, r.Raw)
		}
	}
	for _, good := range []struct {
		methods  []string
		currency string
		doc      string
	}{
		{[]string{"PIX"}, "", "529.982.247-25"},
		{[]string{"PIX", "BOLETO"}, "BRL", "11.222.333/0001-81"},
		{[]string{"MULTIBANCO"}, "EUR", "123456789"},
	} {
		e.want(pay(good.methods, good.currency, good.doc), 201, "")
	}
}
