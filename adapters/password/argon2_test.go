package password_test

import (
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/password"
)

func TestHashVerify(t *testing.T) {
	t.Parallel()
	h := password.New(password.Params{Memory: 1024, Time: 1, Threads: 1, KeyLen: 32})
	enc, err := h.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(enc, "correct horse") || !strings.HasPrefix(enc, "$argon2id$") {
		t.Fatalf("hash %q leaks the password or has the wrong format", enc)
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"correct horse", true}, {"correct horsE", false}, {"", false}} {
		ok, err := h.Verify(enc, tc.pw)
		if err != nil || ok != tc.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", tc.pw, ok, err, tc.want)
		}
	}
	again, _ := h.Hash("correct horse")
	if again == enc {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	if _, err := h.Verify("$argon2id$v=19$m=x$y$z", "pw"); err == nil {
		t.Error("malformed hash accepted")
	}
}
