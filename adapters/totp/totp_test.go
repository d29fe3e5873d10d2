package totp_test

import (
	"net/url"
	"testing"

	"github.com/quitapix/quita/adapters/totp"
)

// The codes of RFC 6238's SHA-1 test vectors (Appendix B, the 20-byte
// seed "12345678901234567890", last six digits).
func TestRFC6238Vectors(t *testing.T) {
	t.Parallel()
	const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" // base32 of 12345678901234567890
	for unix, want := range map[int64]string{
		59:          "287082",
		1111111109:  "081804",
		1111111111:  "050471",
		1234567890:  "005924",
		2000000000:  "279037",
		20000000000: "353130",
	} {
		got, err := totp.Codes{}.TOTPCode(secret, unix/30)
		if err != nil || got != want {
			t.Errorf("T=%d: %q %v, want %s", unix, got, err, want)
		}
	}
	if _, err := (totp.Codes{}).TOTPCode("not base32!", 1); err == nil {
		t.Error("a secret that is not base32 made a code")
	}
}

// A new secret is 160 random bits in base32, and its URI is the
// otpauth:// form authenticator apps read, with the same secret.
func TestNewSecretAndURI(t *testing.T) {
	t.Parallel()
	c := totp.Codes{}
	s1, uri, err := c.NewTOTPSecret("Quita", "dona@loja.com.br")
	if err != nil {
		t.Fatal(err)
	}
	s2, _, _ := c.NewTOTPSecret("Quita", "dona@loja.com.br")
	if len(s1) != 32 || s1 == s2 {
		t.Fatalf("secrets %q %q", s1, s2)
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Quita:dona@loja.com.br" {
		t.Fatalf("uri %q", uri)
	}
	q := u.Query()
	if q.Get("secret") != s1 || q.Get("issuer") != "Quita" || q.Get("digits") != "6" || q.Get("period") != "30" || q.Get("algorithm") != "SHA1" {
		t.Errorf("uri query %v", q)
	}
	again, err := c.TOTPURI("Quita", "dona@loja.com.br", s1)
	if err != nil || again != uri {
		t.Errorf("TOTPURI %q %v, want %q", again, err, uri)
	}
}
