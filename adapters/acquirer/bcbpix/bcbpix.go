// Package bcbpix is the acquirer for PSP banks that implement the Banco
// Central "API Pix" (v2): immediate charges (cob), due-date charges (cobv),
// received Pix (pix), devoluções, Pix Automático (rec, solicrec, cobr) and
// the webhooks, over OAuth2 client credentials and mutual
// TLS. Each merchant account brings its own PSP credentials, stored sealed
// with AES-GCM under the master key (see Sealer). docs/bcbpix.md.
package bcbpix

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// Name is the provider name kept on charges created through API Pix.
const Name = "bcbpix"

// refPrefix starts every provider reference this adapter hands out, so a
// reference says which account's PSP to ask.
const refPrefix = Name + ":"

// Devolução statuses of API Pix.
const (
	ReturnProcessing = "EM_PROCESSAMENTO"
	ReturnDone       = "DEVOLVIDO"
	ReturnFailed     = "NAO_REALIZADO"
)

// Options tune the adapter; the zero value is production's.
type Options struct {
	// Timeout bounds one HTTP call (default 10 s).
	Timeout time.Duration
	// Retry is the back-off before each retry of an idempotent call
	// (default 100 ms, 400 ms, 1.2 s).
	Retry []time.Duration
	// Reload is how long a loaded account configuration is used before the
	// store is read again (default 1 min; Configure reloads at once).
	Reload time.Duration
	// Now defaults to time.Now.
	Now func() time.Time
	// Log defaults to slog.Default(). No secret is ever logged.
	Log *slog.Logger
}

// Acquirer implements ports.Acquirer, ports.RefundAcquirer,
// ports.PixReceiver and ports.RecurringAcquirer over API Pix.
type Acquirer struct {
	store  ports.AcquirerAccountStore
	sealer *Sealer
	opts   Options

	mu      sync.Mutex
	clients map[string]*client
	// recurring takes Pix Automático callbacks (SetRecurringNotifications).
	recurring ports.RecurringNotifications
}

var (
	_ ports.Acquirer       = (*Acquirer)(nil)
	_ ports.RefundAcquirer = (*Acquirer)(nil)
	_ ports.PixReceiver    = (*Acquirer)(nil)
)

// New returns the adapter.
func New(store ports.AcquirerAccountStore, sealer *Sealer, opts Options) *Acquirer {
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Retry == nil {
		opts.Retry = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1200 * time.Millisecond}
	}
	if opts.Reload == 0 {
		opts.Reload = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Acquirer{store: store, sealer: sealer, opts: opts, clients: map[string]*client{}}
}

// Name implements ports.Acquirer.
func (a *Acquirer) Name() string { return Name }

// Configure validates and stores (sealed) an account's PSP configuration.
// The account keeps its callback token across reconfigurations; a new
// account gets a random one (see RegisterWebhook).
func (a *Acquirer) Configure(ctx context.Context, accountID string, cfg AccountConfig) error {
	if cfg.CallbackToken == "" {
		cfg.CallbackToken = a.storedCallbackToken(ctx, accountID)
	}
	if cfg.CallbackToken == "" {
		cfg.CallbackToken = NewCallbackToken()
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("bcbpix: %w", err)
	}
	sealed, err := a.sealer.Seal(accountID, cfg)
	if err != nil {
		return err
	}
	if err := a.store.PutAcquirerAccount(ctx, ports.AcquirerAccount{AccountID: accountID, Provider: Name, Sealed: sealed,
		UpdatedAt: a.opts.Now().UTC()}); err != nil {
		return err
	}
	a.mu.Lock()
	if c, ok := a.clients[accountID]; ok {
		c.close()
		delete(a.clients, accountID)
	}
	a.mu.Unlock()
	a.opts.Log.InfoContext(ctx, "bcbpix account configured", "account", accountID)
	return nil
}

// RegisterWebhook points the PSP's callbacks for the account's Pix key at
// webhookURL + "/" + the account's callback token (PUT /webhook/{chave});
// the PSP appends "/pix". The Pix Automático callbacks go to the same URL
// (PUT /webhookrec and /webhookcobr; the PSP appends "/rec" and "/cobr").
// Only the PSP and Quita know the token, so a callback that does not
// carry it is refused before any PSP call (VerifyCallback).
func (a *Acquirer) RegisterWebhook(ctx context.Context, accountID, webhookURL string) error {
	c, err := a.client(ctx, accountID)
	if err != nil {
		return err
	}
	if c.cfg.CallbackToken == "" {
		return fmt.Errorf("%w: the account's PSP configuration has no callback token; run acquirer configure again", ports.ErrAcquirerNotConfigured)
	}
	hook := strings.TrimRight(webhookURL, "/") + "/" + c.cfg.CallbackToken
	if err := c.do(ctx, "PUT", "/webhook/"+url.PathEscape(c.cfg.PixKey), map[string]string{"webhookUrl": hook}, nil, true); err != nil {
		return err
	}
	return a.registerRecurringWebhooks(ctx, c, accountID, hook)
}

// VerifyCallback checks the token a PSP callback carries in its path
// against the account's (constant time): false for an account without a
// PSP or a wrong token; an error when the configuration cannot be read
// (then the PSP should retry).
func (a *Acquirer) VerifyCallback(ctx context.Context, accountID, token string) (bool, error) {
	c, err := a.client(ctx, accountID)
	if errors.Is(err, ports.ErrAcquirerNotConfigured) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	want := c.cfg.CallbackToken
	return want != "" && subtle.ConstantTimeCompare([]byte(token), []byte(want)) == 1, nil
}

// storedCallbackToken is the token of the account's stored configuration,
// or "" when there is none (or it does not open).
func (a *Acquirer) storedCallbackToken(ctx context.Context, accountID string) string {
	rec, err := a.store.GetAcquirerAccount(ctx, accountID, Name)
	if err != nil {
		return ""
	}
	cfg, err := a.sealer.Open(accountID, rec.Sealed)
	if err != nil {
		return ""
	}
	return cfg.CallbackToken
}

// client returns the account's client, loading its configuration when
// missing or older than Options.Reload.
func (a *Acquirer) client(ctx context.Context, accountID string) (*client, error) {
	now := a.opts.Now()
	a.mu.Lock()
	c, ok := a.clients[accountID]
	fresh := ok && now.Sub(c.loadedAt) < a.opts.Reload
	a.mu.Unlock()
	if fresh {
		return c, nil
	}
	rec, err := a.store.GetAcquirerAccount(ctx, accountID, Name)
	if errors.Is(err, ports.ErrNotFound) {
		return nil, fmt.Errorf("%w: the account has no PSP configured for API Pix", ports.ErrAcquirerNotConfigured)
	}
	if err != nil {
		return nil, err
	}
	if ok && rec.UpdatedAt.Equal(c.updated) {
		a.mu.Lock()
		c.loadedAt = now
		a.mu.Unlock()
		return c, nil
	}
	cfg, err := a.sealer.Open(accountID, rec.Sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerUnavailable, err)
	}
	nc, err := newClient(cfg, a.opts.Timeout, a.opts.Retry)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerNotConfigured, err)
	}
	nc.loadedAt, nc.updated = now, rec.UpdatedAt
	a.mu.Lock()
	if old, ok := a.clients[accountID]; ok && old != nc {
		old.close()
	}
	a.clients[accountID] = nc
	a.mu.Unlock()
	return nc, nil
}
