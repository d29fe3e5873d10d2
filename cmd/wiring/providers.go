// Package wiring assembles Quita from its adapters with google/wire. The
// injectors here serve quitad (InitializeApp) and tests and the merchant
// test kit (InitializeWith, which takes the clock and the acquirer as
// arguments so fakes can stand in).
package wiring

//lint:file-ignore U1000 the provider sets are used by wire.go, built only under the wireinject tag

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/wire"
	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/modes"
	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/checkout"
	"github.com/quitapix/quita/adapters/dashboard"
	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/password"
	"github.com/quitapix/quita/adapters/qr"
	"github.com/quitapix/quita/adapters/receipt"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// App is a wired quitad: the HTTP handler and the services its workers run.
type App struct {
	Handler  http.Handler
	Charges  *app.ChargeService
	Accounts *app.AccountService
	DB       *store.DB
	// Dashboard holds sessions, key management, logs and guards.
	Dashboard *Dashboard
	// Webhooks manages endpoints and runs the delivery workers.
	Webhooks *app.WebhookService
	// Payments runs refunds, releases and the ledger.
	Payments *app.PaymentService
	// Events serves the events API and prunes old events.
	Events *app.EventService
	// Payouts creates and sends payouts, and runs sub-accounts' automatic
	// payouts.
	Payouts *app.PayoutService
	// Transfers moves money between platforms and their sub-accounts.
	Transfers *app.TransferService
	// Subscriptions runs Pix Automático: mandates, cycles and their
	// charges.
	Subscriptions *app.SubscriptionService
	// BCBPix is the API Pix adapter (per-account PSP configuration).
	BCBPix *bcbpix.Acquirer
	// PixReceipts applies PSP notifications and runs reconciliation.
	PixReceipts *app.PixReceiptService
	// Receipts draws payment and refund receipts (comprovantes), for the
	// API and the dashboard.
	Receipts *app.ReceiptService
	// Workers runs the periodic workers (expiry, returns, refunds,
	// releases, method data, reconciliation, housekeeping).
	Workers *app.WorkerRunner
}

// Acquirer names accepted in Config.Acquirer.
const (
	AcquirerSandbox = "sandbox"
	AcquirerBCBPix  = "bcbpix"
)

// storeSet binds every store port to the one bun store.
var storeSet = wire.NewSet(
	ProvideDB,
	wire.Bind(new(ports.ChargeStore), new(*store.DB)),
	wire.Bind(new(ports.AccountStore), new(*store.DB)),
	wire.Bind(new(ports.KeyStore), new(*store.DB)),
	wire.Bind(new(ports.EventOutbox), new(*store.DB)),
	wire.Bind(new(ports.PaymentStore), new(*store.DB)),
	wire.Bind(new(ports.WebhookStore), new(*store.DB)),
	wire.Bind(new(ports.WebhookOutbox), new(*store.DB)),
	wire.Bind(new(ports.UserStore), new(*store.DB)),
	wire.Bind(new(ports.KeyAdmin), new(*store.DB)),
	wire.Bind(new(ports.AuditLog), new(*store.DB)),
	wire.Bind(new(ports.RequestLogStore), new(*store.DB)),
	wire.Bind(new(ports.TokenDenylist), new(*store.DB)),
	wire.Bind(new(ports.SessionStore), new(*store.DB)),
	wire.Bind(new(ports.UserSecurityStore), new(*store.DB)),
	wire.Bind(new(ports.GuardStore), new(*store.DB)),
	wire.Bind(new(ports.AcquirerAccountStore), new(*store.DB)),
	wire.Bind(new(ports.PixReconcileMarks), new(*store.DB)),
	wire.Bind(new(ports.PayoutStore), new(*store.DB)),
	wire.Bind(new(ports.SubscriptionStore), new(*store.DB)),
	wire.Bind(new(ports.SubaccountStore), new(*store.DB)),
	wire.Bind(new(ports.InvitationStore), new(*store.DB)),
	wire.Bind(new(ports.TransferStore), new(*store.DB)),
)

// acquirerSet provides the acquirer (the sandbox, or API Pix in live mode)
// and the test bank.
var acquirerSet = wire.NewSet(
	provideSandbox,
	provideAcquirer,
	wire.Bind(new(ports.PaymentSimulator), new(*sandbox.Acquirer)),
)

// bcbpixSet is the API Pix adapter and the notification/reconciliation
// service, in both injectors.
var bcbpixSet = wire.NewSet(
	provideBCBPix,
	provideRecurringCallbacks,
	wire.Bind(new(ports.PixReceiver), new(*bcbpix.Acquirer)),
	providePixReceiptsConfig,
	app.NewPixReceiptService,
)

// provideBCBPix builds the API Pix adapter over the sealed per-account
// configuration. Without a master key it can read nothing, which is fine
// while no account is configured.
func provideBCBPix(cfg Config, db *store.DB, log *slog.Logger) (*bcbpix.Acquirer, error) {
	var key []byte
	if cfg.MasterKey != "" {
		k, err := bcbpix.ParseMasterKey(cfg.MasterKey)
		if err != nil {
			return nil, err
		}
		key = k
	} else if cfg.Acquirer == AcquirerBCBPix {
		return nil, bcbpix.ErrNoMasterKey
	}
	sealer, err := bcbpix.NewSealer(key)
	if err != nil {
		return nil, err
	}
	opts := cfg.BCBPix
	if opts.Log == nil {
		opts.Log = log
	}
	return bcbpix.New(db, sealer, opts), nil
}

// provideAcquirer picks the live-mode provider; test mode is the sandbox.
func provideAcquirer(cfg Config, sb *sandbox.Acquirer, live *bcbpix.Acquirer) (ports.Acquirer, error) {
	switch cfg.Acquirer {
	case "", AcquirerSandbox:
		return sb, nil
	case AcquirerBCBPix:
		return &modes.Router{Test: sb, Live: live}, nil
	}
	return nil, fmt.Errorf("QUITA_ACQUIRER: unknown acquirer %q (want sandbox or bcbpix)", cfg.Acquirer)
}

func providePixReceiptsConfig(cfg Config) app.PixReceiptsConfig { return cfg.PixReceipts }

func provideReceiptsConfig(cfg Config) app.ReceiptsConfig { return cfg.Receipts }

// clockSet is the wall clock.
var clockSet = wire.NewSet(
	wire.Struct(new(app.SystemClock)),
	wire.Bind(new(ports.Clock), new(app.SystemClock)),
)

// appSet is the application layer with its ids and hasher.
var appSet = wire.NewSet(
	wire.Struct(new(app.RandomIDs)),
	wire.Bind(new(ports.IDGenerator), new(app.RandomIDs)),
	wire.Value(password.DefaultParams),
	password.New,
	wire.Bind(new(ports.PasswordHasher), new(password.Argon2id)),
	provideChargesConfig,
	app.NewChargeService,
	provideAuthCacheTTL,
	app.NewAccountService,
	providePaymentsConfig,
	app.NewPaymentService,
	provideEventsConfig,
	app.NewEventService,
	provideReceiptsConfig,
	receipt.New,
	wire.Bind(new(ports.ReceiptRenderer), new(*receipt.Renderer)),
	app.NewReceiptService,
	providePayoutsConfig,
	app.NewPayoutService,
	provideSubscriptionsConfig,
	app.NewSubscriptionService,
	app.NewSubaccountService,
	app.NewTransferService,
	provideWorkers,
)

// ProvideDB opens the database and applies migrations.
func ProvideDB(ctx context.Context, cfg Config) (*store.DB, func(), error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("migrate database: %w", err)
	}
	if cfg.DatabaseReadURL != "" {
		if err := db.UseReadReplica(ctx, cfg.DatabaseReadURL); err != nil {
			db.Close()
			return nil, nil, err
		}
	}
	if cfg.MasterKey != "" {
		// The key that seals PSP credentials also seals webhook secrets.
		key, err := bcbpix.ParseMasterKey(cfg.MasterKey)
		if err == nil {
			err = db.SealSecretsWith(key)
		}
		if err != nil {
			db.Close()
			return nil, nil, err
		}
	}
	return db, func() { db.Close() }, nil
}

func provideSandbox(cfg Config, clock ports.Clock) *sandbox.Acquirer {
	return sandbox.New(sandbox.Config{LocationHost: sandbox.LocationHostFromURL(cfg.CheckoutURLBase), CheckoutBase: cfg.CheckoutURLBase,
		Latency: cfg.SandboxLatency}, clock)
}

func provideLinks(cfg Config) domain.Links {
	return domain.Links{CheckoutBase: cfg.CheckoutURLBase}
}

func provideChargesConfig(cfg Config, links domain.Links, db *store.DB, webhookURLs ports.URLGuard) app.ChargesConfig {
	return app.ChargesConfig{
		Links:       links,
		Fees:        methodFees(cfg),
		AccountFees: db,
		WebhookURLs: webhookURLs,
		ExpiryGrace: cfg.ExpiryGrace,
		// Automatic returns the payer's bank refuses (app/returns.go).
		ReturnAttempts:  cfg.ReturnAttempts,
		ReturnRetryWait: cfg.ReturnRetryWait,
		// Batches of charge creates; a refused item shows its create's error.
		Batches:     db,
		BatchErrors: httpapi.DescribeChargeError,
		// Which accounts a charge's splits may name.
		Subaccounts: db,
	}
}

// DefaultMethodFees are the fees of the methods other than Pix when the
// configuration names none (docs/payments-and-ledger.md).
var DefaultMethodFees = map[domain.Method]domain.FeeSchedule{
	domain.MethodCreditCard: {Provider: domain.Fee{BPS: 299}, Platform: domain.Fee{BPS: 349, Fixed: 39}},
	domain.MethodBoleto:     {Provider: domain.Fee{Fixed: 199}, Platform: domain.Fee{BPS: 49}},
	domain.MethodMultibanco: {Provider: domain.Fee{BPS: 150, Fixed: 25}, Platform: domain.Fee{BPS: 49}},
	domain.MethodMBWay:      {Provider: domain.Fee{BPS: 100, Fixed: 10}, Platform: domain.Fee{BPS: 49}},
	domain.MethodCrypto:     {Provider: domain.Fee{BPS: 100}, Platform: domain.Fee{BPS: 49}},
}

func methodFees(cfg Config) map[domain.Method]domain.FeeSchedule {
	out := map[domain.Method]domain.FeeSchedule{}
	for m, f := range DefaultMethodFees {
		out[m] = f
	}
	for m, f := range cfg.Fees {
		out[m] = f
	}
	out[domain.MethodPix] = cfg.PixFees
	return out
}

func providePaymentsConfig(cfg Config, links domain.Links) app.PaymentsConfig {
	return app.PaymentsConfig{Links: links, PixOutFee: cfg.PixOutFee}
}

func providePayoutsConfig(cfg Config) app.PayoutsConfig {
	return app.PayoutsConfig{PixOutFee: cfg.PixOutFee, Recheck: cfg.PayoutRecheck}
}

func provideSubscriptionsConfig(cfg Config, links domain.Links) app.SubscriptionsConfig {
	return app.SubscriptionsConfig{Links: links, Recheck: cfg.SubscriptionRecheck}
}

func provideQR() *qr.Renderer { return qr.NewRenderer(512, 4096) }

func provideHandler(cfg Config, links domain.Links, log *slog.Logger, charges *app.ChargeService, accounts *app.AccountService,
	sim ports.PaymentSimulator, qrr *qr.Renderer, db *store.DB, rdb redis.UniversalClient, co *checkout.Controller,
	dash *Dashboard, webhooks *app.WebhookService, payments *app.PaymentService, pixReceipts *app.PixReceiptService,
	live *bcbpix.Acquirer, events *app.EventService, receipts *app.ReceiptService, web *dashboard.Controller, payouts *app.PayoutService,
	keyed *idempotency.Sealed, subs *app.SubscriptionService, recurring httpapi.RecurringCallbacks,
	subaccounts *app.SubaccountService, logins *app.SubaccountLogins, transfers *app.TransferService,
) http.Handler {
	if cfg.Acquirer != AcquirerBCBPix {
		pixReceipts = nil // no PSP callbacks without the API Pix provider
	}
	ready := map[string]httpapi.Pinger{"database": db}
	var optional map[string]httpapi.Pinger
	if rdb != nil {
		optional = map[string]httpapi.Pinger{"redis": redisPinger{rdb}}
	}
	return httpapi.NewHandler(
		httpapi.Config{Links: links, CheckoutPath: httpapi.CheckoutPathFromURL(cfg.CheckoutURLBase), TrustedProxies: cfg.TrustedProxies,
			PSPCallbackCAs: cfg.PSPCallbackCAs, PSPCallbackLimit: cfg.PSPCallbackLimit},
		httpapi.Deps{Charges: charges, Accounts: accounts, Simulator: sim, QR: qrr, Ready: ready, Optional: optional, Log: log, Checkout: co,
			Sessions: dash.Sessions, Keys: dash.Keys, RateLimits: dash.GuardSettings, Limiter: dash.Limiter, RequestLogs: dash.RequestLogs,
			AuthFailures: dash.Attempts, Webhooks: webhooks, Payments: payments, PixReceipts: pixReceipts, PixCallbacks: live,
			Events: events, Receipts: receipts, Dashboard: web, Admission: admission(cfg, db),
			Payouts: payouts, KeyedWrites: keyed, CreateFlight: createFlight(db), Subscriptions: subs,
			RecurringCallbacks: recurring, Subaccounts: subaccounts, SubaccountLogins: logins, Transfers: transfers},
	)
}

// placesPerConnection is the default admission places per pooled
// connection. A request holds a connection for only part of its life
// (Redis, the acquirer, encoding), so four per connection keep the pool
// busy without queueing long in it (with three, a burst of 50 creates got
// 503s under load: docs/performance.md's git history).
const placesPerConnection = 4

// checkoutSet is the hosted checkout page and the service behind it.
var checkoutSet = wire.NewSet(app.NewCheckoutService, provideCheckout)

func provideCheckout(cs *app.CheckoutService, subs *app.SubscriptionService, log *slog.Logger) *checkout.Controller {
	return checkout.New(cs, log, checkout.Config{Subscriptions: subs})
}

func provideAuthCacheTTL(cfg Config) app.AuthCacheTTL {
	switch {
	case cfg.AuthCacheTTL == 0:
		return app.DefaultAuthCacheTTL
	case cfg.AuthCacheTTL < 0:
		return 0
	}
	return app.AuthCacheTTL(cfg.AuthCacheTTL)
}
