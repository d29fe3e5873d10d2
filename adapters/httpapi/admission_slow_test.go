package httpapi_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// admissionServer serves the services of srv through a handler of its own
// with an admission limit of places (as many may wait, 10 ms each). With a
// resolver, webhook URLs (endpoints, a payment's webhookUrl) are checked
// under the production rules with it.
// wrap, when set, wraps the whole handler.
func admissionServer(t *testing.T, srv *quitatest.Server, places int, resolver *net.Resolver, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	a := srv.App
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	charges, payments, webhooks := a.Charges, a.Payments, a.Webhooks
	if resolver != nil {
		guard := &webhook.Guard{Policy: webhook.Policy{}, Resolver: resolver}
		webhooks = app.NewWebhookService(a.DB, a.DB, webhook.NewSender(webhook.Policy{}), guard, srv.Clock, app.RandomIDs{}, log,
			app.WebhooksConfig{})
		charges = app.NewChargeService(a.DB, exactlyonce.NewDatabaseChecked(a.DB, idempotency.NewMemory(time.Now), srv.Clock, app.RandomIDs{}, log, exactlyonce.Config{}), srv.Sandbox, nil, srv.Clock, app.RandomIDs{}, log,
			app.ChargesConfig{Links: domain.Links{CheckoutBase: srv.URL + "/checkout"}, WebhookURLs: guard})
		payments = app.NewPaymentService(charges, a.DB, a.DB, srv.Sandbox, srv.Clock, app.RandomIDs{}, log, app.PaymentsConfig{})
	}
	adm := httpapi.NewAdmission(httpapi.AdmissionConfig{MaxInFlight: places, MaxQueue: places, QueueWait: 10 * time.Millisecond})
	var h http.Handler = httpapi.NewHandler(httpapi.Config{CheckoutPath: "/checkout"}, httpapi.Deps{
		Charges: charges, Accounts: a.Accounts, Log: log,
		Sessions: a.Dashboard.Sessions, Keys: a.Dashboard.Keys, RateLimits: a.Dashboard.GuardSettings, Limiter: a.Dashboard.Limiter,
		AuthFailures: a.Dashboard.Attempts, Webhooks: webhooks, Payments: payments, Events: a.Events, Admission: adm,
	})
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs
}

// readSignal tells once when the server first reads the body it wraps.
type readSignal struct {
	io.ReadCloser
	once    sync.Once
	reading chan<- struct{}
}

func (b *readSignal) Read(p []byte) (int, error) {
	b.once.Do(func() { b.reading <- struct{}{} })
	return b.ReadCloser.Read(p)
}

type rawAnswer struct {
	i      int
	status int
	body   string
	err    error
}

// TestSlowLoginBodiesHoldNoPlace: clients that send a login body a byte
// at a time (no credential needed, up to the server's 30 s ReadTimeout)
// do not take the admission places: with four times as many of them as
// there are places, all being read at once, a merchant's API request is
// still served: the slow bodies hold no place, so it gets none of the 503s.
// The body, once complete, reaches the login handler as sent.
func TestSlowLoginBodiesHoldNoPlace(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Lenta")
	const (
		places = 2
		slow   = 4 * places
	)
	reading := make(chan struct{}, slow)
	hs := admissionServer(t, srv, places, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/auth/login" {
				r.Body = &readSignal{ReadCloser: r.Body, reading: reading}
			}
			next.ServeHTTP(w, r)
		})
	})

	body := `{"email":"nobody@example.com","password":"not the password"}`
	answered := make(chan rawAnswer, slow)
	conns := make([]net.Conn, slow)
	for i := range slow {
		c, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
		if _, err := fmt.Fprintf(c, "POST /v1/auth/login HTTP/1.1\r\nHost: quita.test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			len(body), body[:1]); err != nil {
			t.Fatal(err)
		}
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answered <- rawAnswer{i: i, err: err}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answered <- rawAnswer{i: i, status: resp.StatusCode, body: string(b)}
		}()
	}
	// Every slow body is being read (its first byte arrived, the rest has
	// not), and none was answered: none was refused.
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for n := 0; n < slow; {
		select {
		case <-reading:
			n++
		case a := <-answered:
			t.Fatalf("slow login %d answered before its body was sent: %d %s %v", a.i, a.status, a.body, a.err)
		case <-deadline.C:
			t.Fatalf("only %d of %d slow login bodies are being read", n, slow)
		}
	}
	// Another byte each, as a trickling client sends.
	for _, c := range conns {
		if _, err := io.WriteString(c, body[1:2]); err != nil {
			t.Fatal(err)
		}
	}

	// A merchant's requests, more than there are places, one after another.
	for i := range places + 1 {
		r := apiCall(t, http.MethodPost, hs.URL+"/v1/payments", acct.TestKey, map[string]any{
			"amount": 1990, "paymentMethods": []string{"PIX"}, "idempotencyKey": fmt.Sprintf("slow-bodies-%d", i)})
		wantStatus(t, r, http.StatusCreated, "")
	}
	wantStatus(t, apiCall(t, http.MethodGet, hs.URL+"/v1/payments", acct.TestKey, nil), http.StatusOK, "")

	// A slow body that ends is handled as it always was.
	if _, err := io.WriteString(conns[0], body[2:]); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answered:
		if a.i != 0 || a.status != http.StatusUnauthorized || !strings.Contains(a.body, `"invalid_credentials"`) {
			t.Fatalf("completed slow login %d: %d %s %v, want 401 invalid_credentials", a.i, a.status, a.body, a.err)
		}
	case <-deadline.C:
		t.Fatal("the completed slow login was never answered")
	}
	// So do the others, ending in a body that is not JSON.
	for _, c := range conns[1:] {
		if _, err := io.WriteString(c, strings.Repeat(" ", len(body)-2)); err != nil {
			t.Fatal(err)
		}
	}
	for range slow - 1 {
		select {
		case a := <-answered:
			if a.status != http.StatusBadRequest || !strings.Contains(a.body, `"body_invalid"`) {
				t.Errorf("completed slow login %d: %d %s %v, want 400 body_invalid", a.i, a.status, a.body, a.err)
			}
		case <-deadline.C:
			t.Fatal("completed slow logins never answered")
		}
	}
}

// silentDNS is a name server that never answers: it records the name of
// each query it gets and keeps it waiting until stop.
type silentDNS struct {
	mu    sync.Mutex
	names map[string]bool
	asked chan string // each name, the first time it is asked
	stop  chan struct{}
	once  sync.Once
}

func newSilentDNS(t *testing.T) *silentDNS {
	d := &silentDNS{names: map[string]bool{}, asked: make(chan string, 64), stop: make(chan struct{})}
	t.Cleanup(d.giveUp)
	return d
}

// giveUp ends every query: the resolver's lookups fail.
func (d *silentDNS) giveUp() { d.once.Do(func() { close(d.stop) }) }

func (d *silentDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		select {
		case <-d.stop:
			return nil, errors.New("name server unreachable")
		default:
		}
		client, server := net.Pipe()
		go d.serve(server)
		return client, nil
	}}
}

func (d *silentDNS) serve(c net.Conn) {
	defer c.Close()
	// A net.Pipe is no PacketConn, so the resolver frames its query as
	// over TCP: a 2-byte length, then the message.
	var n [2]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return
	}
	msg := make([]byte, binary.BigEndian.Uint16(n[:]))
	if _, err := io.ReadFull(c, msg); err != nil {
		return
	}
	name := questionName(msg)
	d.mu.Lock()
	first := !d.names[name]
	d.names[name] = true
	d.mu.Unlock()
	if first {
		d.asked <- name
	}
	<-d.stop
}

// questionName is the name of a DNS query's first question.
func questionName(msg []byte) string {
	var labels []string
	for i := 12; i < len(msg) && msg[i] != 0; {
		l := int(msg[i])
		i++
		if i+l > len(msg) {
			break
		}
		labels = append(labels, string(msg[i:i+l]))
		i += l
	}
	return strings.Join(labels, ".")
}

// TestSlowWebhookDNSHoldsNoPlace: webhook URLs whose host's name server
// never answers — endpoint creates and payment creates with webhookUrl,
// on a test key, twice as many as there are admission places — keep their
// requests in the SSRF guard's DNS lookup (up to 5 s each), but not in the
// admission places: another request of the API is still served (were the
// lookups to hold places, the third request would get 503). When the name
// server gives up, each is answered 400.
func TestSlowWebhookDNSHoldsNoPlace(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja DNS")
	dns := newSilentDNS(t)
	const places = 2
	hs := admissionServer(t, srv, places, dns.resolver(), nil)

	// One after another, so that only one at a time does the work before
	// its lookup (authentication, the body), for which it needs a place.
	const stuck = 2 * places
	answered := make(chan rawAnswer, stuck)
	var ended []rawAnswer
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for i := range stuck {
		host := fmt.Sprintf("h%d.never-answers.example", i)
		path, body := "/v1/webhooks/endpoints", map[string]any{"url": "https://" + host + "/hook", "events": []string{"charge.paid"}}
		if i%2 == 1 {
			path, body = "/v1/payments", map[string]any{"amount": 1990, "paymentMethods": []string{"PIX"},
				"idempotencyKey": fmt.Sprintf("slow-dns-%d", i), "webhookUrl": "https://" + host + "/tx"}
		}
		go func() {
			r, err := testkit.Send(nil, http.MethodPost, hs.URL+path, body, testkit.Header{"apikey": acct.TestKey})
			if err != nil {
				answered <- rawAnswer{i: i, err: err}
				return
			}
			answered <- rawAnswer{i: i, status: r.Status, body: string(r.Body)}
		}()
	wait:
		for {
			select {
			case name := <-dns.asked:
				if name != host {
					t.Fatalf("name server asked for %q, want %q", name, host)
				}
				break wait
			case a := <-answered:
				if a.i == i {
					t.Fatalf("request %d answered before its lookup started: %d %s %v", a.i, a.status, a.body, a.err)
				}
				ended = append(ended, a) // an earlier lookup's 5 s ran out on a slow machine
			case <-deadline.C:
				t.Fatalf("only %d of %d webhook hosts were looked up", i, stuck)
			}
		}
	}

	// Every lookup is waiting on the name server: the API still serves.
	r := apiCall(t, http.MethodPost, hs.URL+"/v1/payments", acct.TestKey, map[string]any{
		"amount": 1990, "paymentMethods": []string{"PIX"}, "idempotencyKey": "slow-dns-other"})
	wantStatus(t, r, http.StatusCreated, "")

	dns.giveUp()
	for len(ended) < stuck {
		select {
		case a := <-answered:
			ended = append(ended, a)
		case <-deadline.C:
			t.Fatal("requests still waiting after the name server gave up")
		}
	}
	for _, a := range ended {
		if a.err != nil || a.status != http.StatusBadRequest || !strings.Contains(a.body, "does not resolve") {
			t.Errorf("request %d after the name server gave up: %d %s %v, want 400 (host does not resolve)", a.i, a.status, a.body, a.err)
		}
	}
}
