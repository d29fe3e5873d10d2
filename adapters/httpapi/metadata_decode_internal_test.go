package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// bodyWithKeys is a create body whose metadata object has n keys, each
// with a short value: 60,000 of them fit well under the 1 MiB body limit.
func bodyWithKeys(prefix string, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"amount":100,"payment_method":"pix","metadata":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s%d":1`, prefix, i)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// A metadata object with more keys than domain.MaxMetadataKeys is refused
// while it is decoded, once one key past the limit is read: what refusing
// it costs does not grow with the keys sent. The bound is on allocations,
// which grow with every key decoded into a map (the key, the value, the
// map's growth), not on time.
func TestMetadataKeyLimitStopsTheDecoder(t *testing.T) {
	for _, c := range []struct {
		name string
		v    func() any
	}{
		{"charges", func() any { return new(createChargeRequest) }},
		{"payments", func() any { return new(createPaymentRequest) }},
		{"payouts", func() any { return new(createPayoutRequest) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := bodyWithKeys("k", 60_000)
			if c.name != "charges" { // the same metadata in each format's body
				body = []byte(strings.Replace(string(body), `"amount":100,"payment_method":"pix",`, ``, 1))
			}
			err := decodeStrict(body, c.v())
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Field != domain.FieldMetadata {
				t.Fatalf("60,000 keys: %v, want a metadata ValidationError", err)
			}
			limit := bodyWithKeys("k", domain.MaxMetadataKeys+1)
			if c.name != "charges" {
				limit = []byte(strings.Replace(string(limit), `"amount":100,"payment_method":"pix",`, ``, 1))
			}
			many := testing.AllocsPerRun(3, func() { _ = decodeStrict(body, c.v()) })
			few := testing.AllocsPerRun(3, func() { _ = decodeStrict(limit, c.v()) })
			// Refusing 60,000 keys allocates about what refusing 51 does:
			// the decoder reads the body's bytes once more (a few buffer
			// growths), never a key beyond the 51st.
			if many > few+64 {
				t.Errorf("refusing 60,000 keys took %.0f allocations, %d keys %.0f", many, domain.MaxMetadataKeys+1, few)
			}
			t.Logf("60,000 keys: %.0f allocations; %d keys: %.0f", many, domain.MaxMetadataKeys+1, few)
		})
	}
	// The limit counts keys as sent: exactly MaxMetadataKeys decode.
	var req createChargeRequest
	if err := decodeStrict(bodyWithKeys("k", domain.MaxMetadataKeys), &req); err != nil || len(req.Metadata) != domain.MaxMetadataKeys {
		t.Errorf("%d keys: %d decoded, %v", domain.MaxMetadataKeys, len(req.Metadata), err)
	}
}

// An unknown field is named by reading the body only up to it: naming the
// first of 60,000 unknown keys costs what naming a lone one does, and a
// nested one is still named by its path. (encoding/json's own pass over
// such a body, which refuses it, still visits every key.)
func TestUnknownFieldIsNamedWithoutReadingTheRest(t *testing.T) {
	unknown := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"amount":100,"customer":{"name":"Maria","cpf":"1"},`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"x%d":{"a":1,"b":[1,2]}`, i)
		}
		b.WriteString(`}`)
		return []byte(b.String())
	}
	body, small := unknown(60_000), unknown(1)
	err := decodeStrict(body, new(createChargeRequest))
	var ae *apiError
	if !errors.As(err, &ae) || ae.Code != "parameter_unknown" || ae.Param != "customer.cpf" {
		t.Fatalf("60,000 unknown keys: %v, want parameter_unknown customer.cpf", err)
	}
	typ := reflect.TypeFor[createChargeRequest]()
	for _, c := range []struct{ field, want string }{{"cpf", "customer.cpf"}, {"x0", "x0"}} {
		if got := unknownFieldPath(body, typ, c.field); got != c.want {
			t.Errorf("unknownFieldPath(%q) = %q, want %q", c.field, got, c.want)
		}
	}
	many := testing.AllocsPerRun(3, func() { _ = unknownFieldPath(body, typ, "x0") })
	one := testing.AllocsPerRun(3, func() { _ = unknownFieldPath(small, typ, "x0") })
	if many > one+16 {
		t.Errorf("naming the first of 60,000 unknown keys took %.0f allocations, a lone one %.0f", many, one)
	}
}
