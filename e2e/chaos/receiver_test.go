//go:build chaos

package chaos

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/domain"
)

// receiver is the merchant's webhook endpoint: it checks every signature
// as a merchant would (domain.VerifyWebhook) and remembers, per delivery
// (wd_ id), the hash of a body whose signature was valid.
type receiver struct {
	srv    *httptest.Server
	secret atomic.Value // string, set once the endpoint is registered

	mu        sync.Mutex
	valid     map[string][32]byte // wd_ id → sha256 of the body
	invalid   int
	attempts  int
	invalidEx string
}

func newReceiver() *receiver {
	r := &receiver{valid: map[string][32]byte{}}
	r.secret.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// X-Quita-Delivery-Id is <wd_id>-<attempt>.
	id := req.Header.Get("X-Quita-Delivery-Id")
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		id = id[:i]
	}
	secret, _ := r.secret.Load().(string)
	verr := domain.VerifyWebhook(req.Header.Get("X-Quita-Signature"), body, time.Now(), secret)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	if verr != nil || id == "" {
		r.invalid++
		if r.invalidEx == "" {
			r.invalidEx = id + ": " + errString(verr)
		}
		// A merchant refuses what it cannot authenticate; Quita retries.
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.valid[raw(id)] = sha256.Sum256(body)
	w.WriteHeader(http.StatusOK)
}

func errString(err error) string {
	if err == nil {
		return "no delivery id"
	}
	return err.Error()
}

// snapshot copies what the receiver saw.
func (r *receiver) snapshot() (valid map[string][32]byte, invalid, attempts int, example string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	valid = make(map[string][32]byte, len(r.valid))
	for k, v := range r.valid {
		valid[k] = v
	}
	return valid, r.invalid, r.attempts, r.invalidEx
}
