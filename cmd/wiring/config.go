package wiring

import (
	"crypto/x509"
	"net/netip"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Config is what wiring needs to know; quitad fills it from the
// environment and flags.
type Config struct {
	DatabaseURL string
	// DatabaseReadURL, when set, is a streaming replica of DatabaseURL that
	// serves the reads that may lag (store.DB.UseReadReplica).
	DatabaseReadURL string
	RedisURL        string
	BaseURL         string
	CheckoutURLBase string
	PixFees         domain.FeeSchedule
	// Fees of the other methods (PixFees wins for PIX); a method without
	// an entry uses DefaultMethodFees.
	Fees map[domain.Method]domain.FeeSchedule
	// PixOutFee is charged on cashout refunds with passFeeToTenant and is
	// the default fee of payouts.
	PixOutFee domain.Fee
	// PayoutRecheck is how often a payout the PSP is working on is
	// reconciled (zero: app's default).
	PayoutRecheck time.Duration
	// SubscriptionRecheck is how often an open subscription cycle (and a
	// live mandate) is looked at again without news (zero: app's default).
	SubscriptionRecheck time.Duration
	// ReturnAttempts and ReturnRetryWait bound the retries of an automatic
	// Pix return the payer's bank refuses (zero: app's defaults).
	ReturnAttempts  int
	ReturnRetryWait time.Duration
	// RedisPrefix namespaces Redis keys (default "quita:").
	RedisPrefix string
	// AuthCacheTTL bounds how long a process trusts an API-key lookup;
	// revoke and rotate take this long. Zero means app.DefaultAuthCacheTTL,
	// negative disables the cache.
	AuthCacheTTL time.Duration
	// JWTSecret signs dashboard tokens (HS256); empty = random per process.
	JWTSecret string
	// AdminOnly: the process runs an admin command and serves no request,
	// so a secret made per process loses nothing and is not warned about.
	AdminOnly bool
	// WebhookAllowPrivate lets webhook endpoints use http and loopback or
	// private addresses in every mode (development only).
	WebhookAllowPrivate bool
	// Webhooks tunes delivery (zero value: production schedule).
	Webhooks app.WebhooksConfig
	// Acquirer is the live-mode provider: "sandbox" (default) or "bcbpix"
	// (API Pix). Test mode always uses the sandbox.
	Acquirer string
	// MasterKey (QUITA_MASTER_KEY: 32 bytes, hex or base64) seals
	// per-account provider credentials at rest. Required for bcbpix.
	MasterKey string
	// BCBPix tunes the API Pix adapter (zero value: production's).
	BCBPix bcbpix.Options
	// PixReceipts tunes notifications and reconciliation.
	PixReceipts app.PixReceiptsConfig
	// Receipts says what receipts print (QUITA_RECEIPT_INSTITUTION).
	Receipts app.ReceiptsConfig
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// for the throttles (QUITA_TRUSTED_PROXIES); none by default.
	TrustedProxies []netip.Prefix
	// PSPCallbackCAs, when set (QUITA_BCBPIX_CALLBACK_CA), make the API Pix
	// callback require a PSP client certificate chaining to them.
	PSPCallbackCAs *x509.CertPool
	// PSPCallbackLimit is each account's budget of authenticated API Pix
	// callbacks (zero: httpapi.DefaultPSPCallbackLimit).
	PSPCallbackLimit ports.RateLimit
	// MaxInFlight (QUITA_MAX_IN_FLIGHT) bounds the API requests served at
	// once; the excess waits briefly, then is refused with 503 and
	// Retry-After. Zero: four times the database pool on Postgres, no
	// limit on SQLite (one connection: requests queue on it); negative: no
	// limit.
	MaxInFlight int
	// ExpiryGrace (QUITA_EXPIRY_GRACE) is how long after expires_at an
	// unpaid charge stays pending, waiting for news of a Pix paid in time
	// (zero: app.DefaultExpiryGrace; negative: none).
	ExpiryGrace time.Duration
	// SandboxLatency (QUITA_SANDBOX_LATENCY) is the simulated network
	// round trip of each sandbox call a PSP would answer (zero: none), so
	// load tests see a PSP's waits.
	SandboxLatency time.Duration
}
