package wiring

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/wire"
	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/dashboard"
	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/adapters/qr"
	"github.com/quitapix/quita/adapters/ratelimit"
	"github.com/quitapix/quita/adapters/sessiontoken"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// Dashboard is the dashboard and guard side of Quita: sessions, API-key
// management, request logs, rate limits and the fraud guard.
type Dashboard struct {
	Sessions *app.SessionService
	// SecondFactor turns TOTP on and off and checks codes; Logins resets
	// a login's password or TOTP from the command line.
	SecondFactor  *app.SecondFactorService
	Logins        *app.LoginAdmin
	Keys          *app.KeyService
	GuardSettings *app.GuardSettings
	FraudGuard    *app.FraudGuard
	RequestLogs   *app.RequestLogWriter
	Limiter       ports.RateLimiter
	// Attempts are the login and failed-authentication counters.
	Attempts ports.LoginAttempts
	// Janitor deletes expired denylist rows and old request logs; quitad
	// runs its Sweep as a worker.
	Janitor *app.DashboardJanitor
}

// dashboardSet provides Dashboard and the fraud guard the charge service
// is built with.
//
//lint:ignore U1000 used by the injectors in wire.go (build tag wireinject).
var dashboardSet = wire.NewSet(
	wire.Value(app.DefaultGuardDefaults),
	wire.Value(app.SessionConfig{}),
	wire.Value(app.RequestLogConfig{}),
	wire.Value(app.JanitorConfig{}),
	provideJanitor,
	provideSessionTokens,
	provideLoginAttempts,
	provideRateLimiter,
	provideRequestLogWriter,
	wire.Struct(new(totp.Codes)),
	wire.Bind(new(ports.OneTimeCodes), new(totp.Codes)),
	app.NewSecondFactorService,
	app.NewLoginAdmin,
	app.NewSessionService,
	app.NewKeyService,
	app.NewGuardSettings,
	app.NewFraudGuard,
	app.NewDashboardReads,
	provideInvitationsConfig,
	app.NewSubaccountLogins,
	provideDashboard,
	provideWebDashboard,
)

func provideSessionTokens(cfg Config, log *slog.Logger) (ports.SessionTokens, error) {
	secret := []byte(cfg.JWTSecret)
	if len(secret) == 0 {
		if !cfg.AdminOnly {
			log.Warn("QUITA_JWT_SECRET is empty: using a random per-process secret; dashboard tokens will not survive a restart or work on other processes")
		}
		secret = sessiontoken.RandomSecret()
	}
	return sessiontoken.New(secret)
}

func provideLoginAttempts(cfg Config, client redis.UniversalClient, clock ports.Clock) ports.LoginAttempts {
	mem := ratelimit.NewMemoryAttempts(clock.Now)
	if client == nil {
		return mem
	}
	return &ratelimit.FallbackAttempts{Primary: ratelimit.NewRedisAttempts(client, redisPrefix(cfg)), Secondary: mem}
}

func provideRateLimiter(cfg Config, client redis.UniversalClient, clock ports.Clock, log *slog.Logger) ports.RateLimiter {
	mem := ratelimit.NewMemory(clock.Now)
	if client == nil {
		return mem
	}
	return &ratelimit.Fallback{Primary: ratelimit.NewRedis(hotPath(client, log), redisPrefix(cfg)), Secondary: mem, Log: log}
}

// defaultRedisPrefix namespaces Redis keys when Config.RedisPrefix is empty.
const defaultRedisPrefix = "quita:"

// redisPrefix is the one place the Redis key prefix is decided.
func redisPrefix(cfg Config) string {
	if cfg.RedisPrefix == "" {
		return defaultRedisPrefix
	}
	return cfg.RedisPrefix
}

// provideRequestLogWriter starts the batched request-log writer; its
// cleanup writes what is still queued (bounded by 5 s).
func provideRequestLogWriter(db *store.DB, log *slog.Logger, rc app.RequestLogConfig) (*app.RequestLogWriter, func()) {
	w := app.NewRequestLogWriter(db, log, rc)
	return w, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.Close(ctx); err != nil {
			log.Warn("request logs: final flush failed", "err", err, "dropped", w.Dropped())
		}
	}
}

func provideJanitor(db *store.DB, clock ports.Clock, cfg app.JanitorConfig) *app.DashboardJanitor {
	return app.NewDashboardJanitor(db, clock, cfg)
}

func provideDashboard(sessions *app.SessionService, factors *app.SecondFactorService, logins *app.LoginAdmin, keys *app.KeyService,
	settings *app.GuardSettings, guard *app.FraudGuard, logs *app.RequestLogWriter, limiter ports.RateLimiter,
	janitor *app.DashboardJanitor, attempts ports.LoginAttempts,
) *Dashboard {
	return &Dashboard{Sessions: sessions, SecondFactor: factors, Logins: logins, Keys: keys, GuardSettings: settings, FraudGuard: guard,
		RequestLogs: logs, Limiter: limiter, Attempts: attempts, Janitor: janitor}
}

// provideInvitationsConfig makes invitation links point at the
// dashboard's accept page on the public origin (the base URL without its
// /v1).
func provideInvitationsConfig(cfg Config) app.InvitationsConfig {
	return app.InvitationsConfig{LinkBase: strings.TrimSuffix(cfg.BaseURL, "/v1") + dashboard.Base + "/invite/"}
}

// provideWebDashboard is the merchant's web dashboard at /dashboard.
func provideWebDashboard(cfg Config, log *slog.Logger, sessions *app.SessionService, factors *app.SecondFactorService, keys *app.KeyService,
	reads *app.DashboardReads, payments *app.PaymentService, webhooks *app.WebhookService, receipts *app.ReceiptService,
	payouts *app.PayoutService, subscriptions *app.SubscriptionService, subaccounts *app.SubaccountService, logins *app.SubaccountLogins,
) *dashboard.Controller {
	return dashboard.New(dashboard.Deps{Sessions: sessions, SecondFactor: factors, Keys: keys, Reads: reads, Payments: payments,
		Webhooks: webhooks, Receipts: receipts, Payouts: payouts, Subscriptions: subscriptions, Subaccounts: subaccounts, Logins: logins,
		QR: qr.Private{Size: 320}, Log: log},
		dashboard.Config{SecureCookies: strings.HasPrefix(cfg.BaseURL, "https://"), ClientIP: httpapi.ClientIP})
}
