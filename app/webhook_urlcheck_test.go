package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// blockingGuard is a URL guard whose checks wait until the test releases
// them: a webhook host whose name server never answers.
type blockingGuard struct {
	entered chan string // the URL of each check that started
	release chan struct{}
}

func newBlockingGuard() *blockingGuard {
	return &blockingGuard{entered: make(chan string, 64), release: make(chan struct{})}
}

func (g *blockingGuard) CheckURL(ctx context.Context, _ domain.Mode, u string) error {
	g.entered <- u
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endpointService is a webhook service whose store takes every endpoint,
// with guard and limit for its URL checks. onCreate, if set, runs as the
// store writes an endpoint.
func endpointService(guard ports.URLGuard, limit app.URLCheckLimit, onCreate func()) *app.WebhookService {
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return webhookNow }}
	store := &mocks.WebhookStoreMock{
		ListEndpointsFunc: func(context.Context, ports.Scope) ([]domain.WebhookEndpoint, error) { return nil, nil },
		CreateEndpointFunc: func(context.Context, domain.WebhookEndpoint) error {
			if onCreate != nil {
				onCreate()
			}
			return nil
		},
	}
	return app.NewWebhookService(store, &mocks.WebhookOutboxMock{}, &mocks.WebhookSenderMock{}, guard, clock,
		&seqIDs{}, nil, app.WebhooksConfig{URLChecks: limit})
}

func register(ctx context.Context, svc *app.WebhookService, account, url string) error {
	_, err := svc.CreateEndpoint(ctx, app.Caller{Account: domain.Account{ID: account}, Mode: domain.ModeTest},
		app.EndpointInput{URL: url, Events: []string{"charge.paid"}})
	return err
}

// TestURLChecksAreBoundedPerAccount: an account has at most
// URLCheckLimit.PerAccount webhook URL checks (DNS lookups) in progress;
// one more waits for a turn and is refused with a ThrottledError (429)
// when none comes within the wait, while other accounts' checks go on.
func TestURLChecksAreBoundedPerAccount(t *testing.T) {
	t.Parallel()
	g := newBlockingGuard()
	svc := endpointService(g, app.URLCheckLimit{PerAccount: 2, Wait: 10 * time.Millisecond}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, u := range []string{"https://a1.example/", "https://a2.example/"} {
		wg.Go(func() {
			if err := register(ctx, svc, "acct_a", u); err != nil {
				t.Errorf("register %s: %v", u, err)
			}
		})
	}
	<-g.entered
	<-g.entered

	var throttled *app.ThrottledError
	if err := register(ctx, svc, "acct_a", "https://a3.example/"); !errors.As(err, &throttled) || throttled.RetryAfter <= 0 {
		t.Fatalf("third check of a saturated account: %v, want a ThrottledError with RetryAfter", err)
	}
	select {
	case u := <-g.entered:
		t.Fatalf("the refused check reached the guard (%s)", u)
	default:
	}

	// Another account is not held back by acct_a's lookups.
	wg.Go(func() {
		if err := register(ctx, svc, "acct_b", "https://b1.example/"); err != nil {
			t.Errorf("acct_b: %v", err)
		}
	})
	if u := <-g.entered; u != "https://b1.example/" {
		t.Fatalf("entered %s, want acct_b's check", u)
	}
	close(g.release)
	wg.Wait()
}

// TestURLCheckWaitsForAFreedTurn: a check past the bound gets the turn of
// one that ends within the wait.
func TestURLCheckWaitsForAFreedTurn(t *testing.T) {
	t.Parallel()
	g := newBlockingGuard()
	first := make(chan struct{})
	guard := &mocks.URLGuardMock{CheckURLFunc: func(ctx context.Context, m domain.Mode, u string) error {
		if u == "https://first.example/" {
			g.entered <- u
			<-first
			return nil
		}
		return g.CheckURL(ctx, m, u)
	}}
	svc := endpointService(guard, app.URLCheckLimit{PerAccount: 1, Wait: time.Minute}, nil)
	ctx := context.Background()
	done := make(chan error, 2)
	go func() { done <- register(ctx, svc, "acct_a", "https://first.example/") }()
	<-g.entered
	go func() { done <- register(ctx, svc, "acct_a", "https://second.example/") }()
	close(first)
	if err := <-done; err != nil {
		t.Fatalf("first check: %v", err)
	}
	if u := <-g.entered; u != "https://second.example/" {
		t.Fatalf("entered %s, want the waiting check", u)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("second check: %v", err)
	}
}

// fakePlace records what a request does with its admission place.
type fakePlace struct {
	mu      sync.Mutex
	held    bool
	calls   []string
	reenter error
}

func (p *fakePlace) Leave() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "leave")
	was := p.held
	p.held = false
	return was
}

func (p *fakePlace) Reenter(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "reenter")
	if p.reenter != nil {
		return p.reenter
	}
	p.held = true
	return nil
}

func (p *fakePlace) isHeld() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

func (p *fakePlace) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func sameCalls(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEndpointURLCheckRunsOutsideTheAdmissionPlace: registering an
// endpoint resolves its host without the request's admission place and
// writes the endpoint holding one again; a failed check answers without a
// place, and the limiter's refusal to give one back stops the request
// before anything is written.
func TestEndpointURLCheckRunsOutsideTheAdmissionPlace(t *testing.T) {
	t.Parallel()
	refused := errors.New("503: at capacity")
	badURL := errors.New("host does not resolve")
	tests := []struct {
		name      string
		held      bool
		guardErr  error
		reenter   error
		wantErr   error
		wantCalls []string
		wantWrite bool
	}{
		{"passes: leaves, then takes a place again", true, nil, nil, nil, []string{"leave", "reenter"}, true},
		{"fails: answers without a place", true, badURL, nil, badURL, []string{"leave"}, false},
		{"passes but no place is free again", true, nil, refused, refused, []string{"leave", "reenter"}, false},
		{"no place held (no limiter)", false, nil, nil, nil, []string{"leave"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &fakePlace{held: tt.held, reenter: tt.reenter}
			var guardHeld, writeHeld []bool
			guard := &mocks.URLGuardMock{CheckURLFunc: func(context.Context, domain.Mode, string) error {
				guardHeld = append(guardHeld, p.isHeld())
				return tt.guardErr
			}}
			svc := endpointService(guard, app.URLCheckLimit{}, func() { writeHeld = append(writeHeld, p.isHeld()) })
			err := register(app.WithAdmissionPlace(context.Background(), p), svc, "acct_a", "https://m.example/hook")
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err %v, want %v", err, tt.wantErr)
			}
			if len(guardHeld) != 1 || guardHeld[0] {
				t.Errorf("the guard ran holding the place (held as it ran: %v)", guardHeld)
			}
			if got := p.log(); !sameCalls(got, tt.wantCalls) {
				t.Errorf("place calls %v, want %v", got, tt.wantCalls)
			}
			if tt.wantWrite != (len(writeHeld) == 1) {
				t.Fatalf("endpoint written %d times, want written %v", len(writeHeld), tt.wantWrite)
			}
			if tt.wantWrite && tt.held && !writeHeld[0] {
				t.Error("the endpoint was written without the place")
			}
		})
	}
}

// TestCreateChecksWebhookURLOutsideTheAdmissionPlace: a create's
// webhookUrl is resolved without the request's admission place, and the
// charge is written holding one again. When no place is free again the
// create fails with the limiter's refusal and leaves its key free: the
// retry creates the charge.
func TestCreateChecksWebhookURLOutsideTheAdmissionPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var (
		mu        sync.Mutex
		guardHeld []bool
		p         *fakePlace
	)
	guard := &mocks.URLGuardMock{CheckURLFunc: func(context.Context, domain.Mode, string) error {
		mu.Lock()
		defer mu.Unlock()
		guardHeld = append(guardHeld, p.isHeld())
		return nil
	}}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}
	svc := app.NewChargeService(h.store, checked(h.records, h.cache, clock), h.acquirer, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}, WebhookURLs: guard})
	in := app.CreateChargeInput{Amount: 2500, Methods: []domain.Method{domain.MethodPix}, WebhookURL: "https://hooks.merchant.example/tx"}
	idem := app.Idempotency{Key: "webhook-url-place-1", Fingerprint: "fp-1"}

	refused := errors.New("503: at capacity")
	mu.Lock()
	p = &fakePlace{held: true, reenter: refused}
	mu.Unlock()
	if _, err := svc.Create(app.WithAdmissionPlace(context.Background(), p), caller, in, idem, render); !errors.Is(err, refused) {
		t.Fatalf("create with no place free again: %v, want the limiter's refusal", err)
	}
	if n := len(h.store.CreateChargeCalls()); n != 0 {
		t.Fatalf("%d charges written by a refused create", n)
	}

	mu.Lock()
	p = &fakePlace{held: true}
	mu.Unlock()
	resp, err := svc.Create(app.WithAdmissionPlace(context.Background(), p), caller, in, idem, render)
	if err != nil || resp.Replayed {
		t.Fatalf("retry of the refused key: %+v %v, want a first create", resp, err)
	}
	if got := p.log(); !sameCalls(got, []string{"leave", "reenter"}) || !p.isHeld() {
		t.Errorf("place calls %v (held %v), want leave then reenter", got, p.isHeld())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(guardHeld) != 2 || guardHeld[0] || guardHeld[1] {
		t.Errorf("the guard ran holding the place (held as it ran: %v)", guardHeld)
	}
	if n := len(h.store.CreateChargeCalls()); n != 1 {
		t.Errorf("%d charges written, want 1", n)
	}
}
