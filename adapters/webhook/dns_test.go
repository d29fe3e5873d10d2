package webhook_test

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// fakeDNS is a name server on a loopback UDP port. It answers A queries
// for the names in addrs (AAAA: no records); while down it answers every
// query SERVFAIL, as a failing or restarting resolver does.
type fakeDNS struct {
	conn  net.PacketConn
	addrs map[string]netip.Addr // lower-case name with its final dot
	down  atomic.Bool
}

func newFakeDNS(t *testing.T, addrs map[string]netip.Addr) *fakeDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeDNS{conn: conn, addrs: addrs}
	var wg sync.WaitGroup
	wg.Go(s.serve)
	t.Cleanup(func() { conn.Close(); wg.Wait() })
	return s
}

// resolver sends every lookup to s.
func (s *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
	}}
}

func (s *fakeDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			_, _ = s.conn.WriteTo(resp, from)
		}
	}
}

// answer builds the reply to one query (RFC 1035 section 4.1).
func (s *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	// The question: labels up to the root, then type and class.
	var name strings.Builder
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		name.WriteString(strings.ToLower(string(q[i+1 : i+1+l])))
		name.WriteByte('.')
		i += 1 + l
	}
	end := i + 5 // root label, type, class
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	const (
		rcodeServFail = 2
		rcodeNXDomain = 3
		typeA         = 1
	)
	rcode := uint16(0)
	addr, known := s.addrs[name.String()]
	switch {
	case s.down.Load():
		rcode = rcodeServFail
	case !known:
		rcode = rcodeNXDomain
	}
	withAnswer := rcode == 0 && qtype == typeA
	resp := make([]byte, 12, 64)
	copy(resp[0:2], q[0:2]) // the query's id
	// QR, AA and RA set, RD as asked, then the rcode.
	binary.BigEndian.PutUint16(resp[2:], 0x8000|0x0400|0x0080|uint16(q[2]&0x01)<<8|rcode)
	binary.BigEndian.PutUint16(resp[4:], 1) // one question
	if withAnswer {
		binary.BigEndian.PutUint16(resp[6:], 1)
	}
	resp = append(resp, q[12:end]...)
	if withAnswer {
		a := addr.As4()
		resp = append(resp, 0xc0, 12, 0, typeA, 0, 1, 0, 0, 0, 0, 0, 4) // name → the question, IN, TTL 0
		resp = append(resp, a[:]...)
	}
	return resp
}

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// A per-transaction webhookUrl is checked again at attempt time. A DNS
// failure then (SERVFAIL: a resolver failing or restarting) is an attempt
// that failed and is retried on the schedule; the delivery is made once
// the name resolves again. Only a real refusal — the name resolves to a
// private address — fails the delivery at once, without a request.
func TestTransactionWebhookURLSurvivesADNSFailure(t *testing.T) {
	t.Parallel()
	dns := newFakeDNS(t, map[string]netip.Addr{
		"hooks.merchant.test.":    netip.MustParseAddr("93.184.216.34"),
		"internal.merchant.test.": netip.MustParseAddr("10.0.0.7"),
	})
	guard := &webhook.Guard{Policy: webhook.Policy{}, Resolver: dns.resolver()}
	clock := &testClock{now: time.Now().UTC()}
	db := openDB(t, testenv.SQLiteDSN(t))
	var sentMu sync.Mutex
	var sent []string
	// The sender stands in for the network (the name is not on it): the
	// guard is what is under test.
	sender := &mocks.WebhookSenderMock{SendFunc: func(_ context.Context, r ports.WebhookRequest) (domain.AttemptResult, error) {
		sentMu.Lock()
		defer sentMu.Unlock()
		sent = append(sent, r.URL)
		return domain.AttemptResult{StatusCode: 200}, nil
	}}
	sentURLs := func() []string {
		sentMu.Lock()
		defer sentMu.Unlock()
		return append([]string(nil), sent...)
	}
	svc := app.NewWebhookService(db, db, sender, guard, clock, app.RandomIDs{}, slog.New(slog.DiscardHandler),
		app.WebhooksConfig{Jitter: func() float64 { return 0.5 }})
	e := &engine{db: db, clock: clock, svc: svc}
	e.acct, e.scope = newAccount(t, db, clock.Now())
	ctx := t.Context()
	only := func(c *domain.Charge) domain.WebhookDelivery {
		t.Helper()
		ds := e.deliveries(t, ports.DeliveryQuery{ChargeID: c.ID()})
		if len(ds) != 1 {
			t.Fatalf("%d deliveries for the charge, want 1", len(ds))
		}
		return ds[0]
	}
	once := func() {
		t.Helper()
		if _, err := svc.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.DeliverOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// What the guard says while the name server fails.
	dns.down.Store(true)
	err := guard.CheckURL(ctx, domain.ModeTest, "http://hooks.merchant.test/tx")
	if !errors.Is(err, ports.ErrURLUnresolved) || !errors.Is(err, domain.ErrValidation) || errors.Is(err, ports.ErrURLForbidden) {
		t.Fatalf("check while the name server fails: %v; want a validation error wrapping ErrURLUnresolved", err)
	}

	flaky := e.charge(t, "http://hooks.merchant.test/tx")
	once()
	d := only(flaky)
	if d.Status != domain.DeliveryPending || d.Attempts != 1 || d.NextRetryAt == nil || d.LastError == nil || *d.LastError != "dns lookup failed" {
		t.Fatalf("after a failed lookup: status %s, attempts %d, next %v, error %v; want PENDING after 1 attempt, retried", d.Status, d.Attempts, d.NextRetryAt, d.LastError)
	}
	if got := sentURLs(); len(got) != 0 {
		t.Fatalf("sent %v without a resolved name", got)
	}
	// Still failing at the next attempt: retried again.
	clock.add(time.Minute)
	once()
	if d := only(flaky); d.Status != domain.DeliveryPending || d.Attempts != 2 {
		t.Fatalf("second failed lookup: status %s after %d attempts, want PENDING after 2", d.Status, d.Attempts)
	}
	// The resolver is back: the next attempt is made and delivered.
	dns.down.Store(false)
	clock.add(time.Minute)
	once()
	if d := only(flaky); d.Status != domain.DeliveryDelivered || d.Attempts != 3 {
		t.Fatalf("once the name resolves: status %s after %d attempts, want DELIVERED after 3", d.Status, d.Attempts)
	}
	if got := sentURLs(); len(got) != 1 || got[0] != "http://hooks.merchant.test/tx" {
		t.Fatalf("sent %v, want the one delivery", got)
	}

	// A name that resolves to a private address is refused at once.
	internal := e.charge(t, "http://internal.merchant.test/tx")
	once()
	d = only(internal)
	if d.Status != domain.DeliveryFailed || d.Attempts != 1 || d.LastError == nil || !strings.Contains(*d.LastError, "not allowed") {
		t.Fatalf("private address: status %s, attempts %d, error %v; want FAILED after 1 attempt", d.Status, d.Attempts, d.LastError)
	}
	if got := sentURLs(); len(got) != 1 {
		t.Fatalf("sent %v: the private address was called", got)
	}
}
