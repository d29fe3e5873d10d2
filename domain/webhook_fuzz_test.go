package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// FuzzParseSignatureHeader: the parser never panics, and whatever it
// accepts verifies only with the right MAC.
func FuzzParseSignatureHeader(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(domain.SignCanonical("s", now, []byte("{}")))
	f.Add(domain.SignLegacy("s", []byte("{}")))
	f.Add("t=1800000000,v1=zz,v0=abc")
	f.Add("t=,v1=")
	f.Add(",,,=")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := domain.ParseSignatureHeader(header)
		if err != nil {
			if !errors.Is(err, domain.ErrSignatureMalformed) && !errors.Is(err, domain.ErrSignatureMissing) {
				t.Fatalf("unnamed error %v", err)
			}
			return
		}
		if len(p.Signatures) == 0 {
			t.Fatal("accepted a header without a MAC")
		}
		for _, s := range p.Signatures {
			if len(s) != 32 {
				t.Fatalf("MAC of %d bytes", len(s))
			}
		}
		// A parsed header verifies only if one of its MACs is right.
		if domain.VerifyWebhook(header, []byte("{}"), p.Timestamp, "another secret") == nil {
			t.Fatal("verified under a secret that signed nothing")
		}
	})
}
