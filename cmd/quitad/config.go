package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
)

// Config is every setting of quitad. Each has an environment variable and
// a flag; flags win. Defaults derive from Addr, so `quitad` with nothing set
// serves a working embedded setup on 127.0.0.1:8080.
type Config struct {
	wiring.Config
	Addr string
	// MaxConnections bounds the connections serve holds open at once
	// (QUITA_MAX_CONNECTIONS); the next waits in the kernel's backlog.
	MaxConnections  int
	LogLevel        string
	ShutdownTimeout time.Duration
	// SeedDemo decides whether serve creates the demo account on an empty
	// database (seedDemo in seed.go).
	SeedDemo seedMode
	// trustedProxies is QUITA_TRUSTED_PROXIES before parsing.
	trustedProxies string
	// TLSCert and TLSKey (QUITA_TLS_CERT, QUITA_TLS_KEY) make serve speak
	// HTTPS; callbackCA is QUITA_BCBPIX_CALLBACK_CA before loading.
	TLSCert, TLSKey string
	callbackCA      string
}

// seedMode is QUITA_SEED_DEMO / -seed-demo: unset (auto: only the embedded
// SQLite database), true (any database, loudly) or false. It is a bool
// flag, so `-seed-demo` alone means true.
type seedMode string

const (
	seedAuto seedMode = ""
	seedOn   seedMode = "true"
	seedOff  seedMode = "false"
)

func (m *seedMode) String() string { return string(*m) }

// Set implements flag.Value.
func (m *seedMode) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	*m = map[bool]seedMode{true: seedOn, false: seedOff}[b]
	return nil
}

// IsBoolFlag implements the flag package's boolFlag.
func (m *seedMode) IsBoolFlag() bool { return true }

type setting struct {
	env, flag, def, help string
	dst                  *string
}

// settings lists every string setting; parseConfig derives the rest.
func (c *Config) settings() []setting {
	return []setting{
		{"QUITA_ADDR", "addr", "127.0.0.1:8080", "listen address", &c.Addr},
		{"QUITA_DATABASE_URL", "database-url", "sqlite:quita.db", "postgres://... or sqlite:<path> or sqlite::memory:", &c.DatabaseURL},
		{"QUITA_DATABASE_READ_URL", "database-read-url", "", "postgres://... of a streaming replica (or a balancer over replicas) for lists, stats, metrics, events and dashboard reads; empty = the primary", &c.DatabaseReadURL},
		{"QUITA_REDIS_URL", "redis-url", "", "redis://host:port/db, a Sentinel (?master_name=M&addr=…) or a Cluster (?addr=…&addr=…) URL; empty = in-process idempotency cache", &c.RedisURL},
		{"QUITA_BASE_URL", "base-url", "", "public API base including /v1 (default http://<addr>/v1)", &c.BaseURL},
		{"QUITA_CHECKOUT_URL_BASE", "checkout-url-base", "", "hosted checkout base (default http://<addr>/checkout)", &c.CheckoutURLBase},
		{"QUITA_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", &c.LogLevel},
		{"QUITA_JWT_SECRET", "jwt-secret", "", "HS256 secret of dashboard tokens (at least 32 bytes); empty = random per process, or with the embedded SQLite database a development secret kept beside it", &c.JWTSecret},
		{"QUITA_ACQUIRER", "acquirer", "sandbox", "live-mode acquirer: sandbox or bcbpix (API Pix); test mode always uses the sandbox", &c.Acquirer},
		{"QUITA_MASTER_KEY", "master-key", "", "32-byte key (hex or base64) sealing provider credentials and webhook secrets at rest; required for bcbpix", &c.MasterKey},
		{"QUITA_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the client; empty trusts none (docs/security.md)", &c.trustedProxies},
		{"QUITA_TLS_CERT", "tls-cert", "", "server certificate file (PEM); with QUITA_TLS_KEY, serve HTTPS", &c.TLSCert},
		{"QUITA_TLS_KEY", "tls-key", "", "server private key file (PEM)", &c.TLSKey},
		{"QUITA_RECEIPT_INSTITUTION", "receipt-institution", "Quita", "the payee's institution printed on live receipts (the payment institution holding merchants' money)", &c.Receipts.Institution},
		{"QUITA_BCBPIX_CALLBACK_CA", "bcbpix-callback-ca", "", "CA file (PEM) of the PSPs' client certificates: API Pix callbacks must present one (mutual TLS; needs QUITA_TLS_CERT; docs/bcbpix.md)", &c.callbackCA},
	}
}

// secretSettings are read from the environment after the flags, so their
// values never show as flag defaults in --help.
var secretSettings = map[string]bool{"QUITA_JWT_SECRET": true, "QUITA_MASTER_KEY": true}

// parseConfig reads the environment, then args (flags override).
// defaultMaxConnections bounds the open connections of one quitad: each
// costs a goroutine, its buffers and what its request has sent (tens of
// KB at most), so 10,000 of them stay within a few hundred MB, and it is
// far above what admission control lets work at once (long-polls wait
// without a place: 10 per account and mode).
const defaultMaxConnections = 10_000

func parseConfig(name string, args []string, getenv func(string) string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, s := range c.settings() {
		def := s.def
		if v := getenv(s.env); v != "" && !secretSettings[s.env] {
			def = v
		}
		fs.StringVar(s.dst, s.flag, def, fmt.Sprintf("%s (env %s)", s.help, s.env))
	}
	if v := getenv("QUITA_SEED_DEMO"); v != "" {
		if err := c.SeedDemo.Set(v); err != nil {
			return c, fmt.Errorf("QUITA_SEED_DEMO: %w", err)
		}
	}
	fs.Var(&c.SeedDemo, "seed-demo", "create a demo account with a random password on an empty database; unset = only for the embedded SQLite database, never with the bcbpix acquirer (env QUITA_SEED_DEMO)")
	// Webhooks to private addresses: allowed by default only in the
	// embedded dev default, decided after the flags (webhookAllowPrivate).
	allowPrivate := getenv("QUITA_WEBHOOK_ALLOW_PRIVATE")
	fs.StringVar(&allowPrivate, "webhook-allow-private", allowPrivate,
		"true lets webhook endpoints use http and loopback/private addresses in every mode; default true only with SQLite and the sandbox acquirer; refused with bcbpix (env QUITA_WEBHOOK_ALLOW_PRIVATE)")
	authTTL, err := durationFromEnv(getenv, "QUITA_AUTH_CACHE_TTL", time.Duration(app.DefaultAuthCacheTTL), "1s (0s disables the cache)")
	if err != nil {
		return c, err
	}
	fs.DurationVar(&c.AuthCacheTTL, "auth-cache-ttl", authTTL,
		"how long a process trusts an API-key lookup; revoke and rotate wait this long; 0 disables (env QUITA_AUTH_CACHE_TTL)")
	maxInFlight := 0
	if v := getenv("QUITA_MAX_IN_FLIGHT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c, fmt.Errorf("QUITA_MAX_IN_FLIGHT: want an integer (0: four per database connection, -1: no limit), got %q", v)
		}
		maxInFlight = n
	}
	maxConns := defaultMaxConnections
	if v := getenv("QUITA_MAX_CONNECTIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return c, fmt.Errorf("QUITA_MAX_CONNECTIONS: want a positive integer, got %q", v)
		}
		maxConns = n
	}
	fs.IntVar(&c.MaxConnections, "max-connections", maxConns,
		"client connections held open at once; more wait to be accepted (env QUITA_MAX_CONNECTIONS)")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", maxInFlight,
		"API requests served at once; the excess is refused with 503 and Retry-After after at most 10 ms; 0 = four per database connection (Postgres), -1 = no limit (env QUITA_MAX_IN_FLIGHT)")
	expiryGrace, err := durationFromEnv(getenv, "QUITA_EXPIRY_GRACE", app.DefaultExpiryGrace, "3m (0s: none)")
	if err != nil {
		return c, err
	}
	fs.DurationVar(&c.ExpiryGrace, "expiry-grace", expiryGrace,
		"how long after expires_at an unpaid charge stays pending so that a Pix paid in time but reported late still settles it; 0 = expire at expires_at (env QUITA_EXPIRY_GRACE)")
	sandboxLatency, err := durationFromEnv(getenv, "QUITA_SANDBOX_LATENCY", 0, "100ms (0s: none)")
	if err != nil {
		return c, err
	}
	fs.DurationVar(&c.SandboxLatency, "sandbox-latency", sandboxLatency,
		"simulated network round trip of each sandbox acquirer call a PSP would answer (cobs, refunds, Pix sends, status reads), for load tests; 0 = none (env QUITA_SANDBOX_LATENCY)")
	shutdown := 20 * time.Second
	if v := getenv("QUITA_SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("QUITA_SHUTDOWN_TIMEOUT: %w", err)
		}
		shutdown = d
	}
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", shutdown, "grace period for in-flight work on SIGTERM (env QUITA_SHUTDOWN_TIMEOUT)")
	pixProvider, err := feeFromEnv(getenv, "QUITA_FEE_PIX_PROVIDER", domain.Fee{BPS: 50})
	if err != nil {
		return c, err
	}
	pixPlatform, err := feeFromEnv(getenv, "QUITA_FEE_PIX_PLATFORM", domain.Fee{BPS: 49})
	if err != nil {
		return c, err
	}
	c.PixFees = domain.FeeSchedule{Provider: pixProvider, Platform: pixPlatform}
	if c.Fees, err = methodFeesFromEnv(getenv); err != nil {
		return c, err
	}
	if c.PixOutFee, err = feeFromEnv(getenv, "QUITA_FEE_PIX_OUT", domain.Fee{Fixed: 50}); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.SandboxLatency < 0 {
		return c, fmt.Errorf("-sandbox-latency: want a duration of 0 or more, got %s", c.SandboxLatency)
	}
	if c.AuthCacheTTL == 0 {
		c.AuthCacheTTL = -1 // wiring reads zero as the default
	}
	if c.ExpiryGrace < 0 {
		return c, fmt.Errorf("-expiry-grace: want a duration of 0 or more, got %s", c.ExpiryGrace)
	}
	if c.ExpiryGrace == 0 {
		c.ExpiryGrace = -1 // wiring reads zero as the default
	}
	for _, s := range c.settings() {
		if secretSettings[s.env] && *s.dst == "" {
			*s.dst = getenv(s.env)
		}
	}
	if c.TrustedProxies, err = httpapi.ParseTrustedProxies(c.trustedProxies); err != nil {
		return c, fmt.Errorf("QUITA_TRUSTED_PROXIES: %w", err)
	}
	if err := c.loadTLS(); err != nil {
		return c, err
	}
	if c.WebhookAllowPrivate, err = webhookAllowPrivate(allowPrivate, c.DatabaseURL, c.Acquirer); err != nil {
		return c, err
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return c, fmt.Errorf("addr %q: %w", c.Addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	scheme := "http://"
	if c.TLSCert != "" {
		scheme = "https://"
	}
	origin := scheme + net.JoinHostPort(host, port)
	if c.BaseURL == "" {
		c.BaseURL = origin + "/v1"
	}
	if c.CheckoutURLBase == "" {
		c.CheckoutURLBase = origin + "/checkout"
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.CheckoutURLBase = strings.TrimRight(c.CheckoutURLBase, "/")
	return c, nil
}

// webhookAllowPrivate decides QUITA_WEBHOOK_ALLOW_PRIVATE (raw as set,
// "" when unset). The allowance also lifts the https rule for live keys,
// and a delivery's status code and error are shown to the merchant, so
// where it holds any API key can probe quitad's own network. Unset, it is
// therefore on only in the embedded dev default: SQLite with the sandbox
// acquirer, where no real money moves. With bcbpix (a real PSP) it is off
// whatever the database, and asking for it is a start-up error rather than
// a warning: like the demo account (shouldSeed), nothing that lets a
// merchant key reach internal addresses may run beside real money.
func webhookAllowPrivate(raw, databaseURL, acquirer string) (bool, error) {
	live := acquirer == wiring.AcquirerBCBPix
	if raw == "" {
		dev := acquirer == "" || acquirer == wiring.AcquirerSandbox
		return dev && strings.HasPrefix(databaseURL, "sqlite:"), nil
	}
	allow, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fmt.Errorf("QUITA_WEBHOOK_ALLOW_PRIVATE: want true or false, got %q", raw)
	}
	if allow && live {
		return false, errors.New("QUITA_WEBHOOK_ALLOW_PRIVATE=true is refused with QUITA_ACQUIRER=bcbpix: " +
			"it would let any API key register http and internal-address webhooks where live keys move real money")
	}
	return allow, nil
}

// durationFromEnv reads a Go duration of 0 or more from env (def when
// unset); example shows the form in the error.
func durationFromEnv(getenv func(string) string, env string, def time.Duration, example string) (time.Duration, error) {
	v := getenv(env)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return def, fmt.Errorf("%s: want a duration such as %s, got %q", env, example, v)
	}
	return d, nil
}

// methodFeesFromEnv reads QUITA_FEE_<METHOD>_PROVIDER and _PLATFORM for
// the methods other than Pix, defaulting to wiring.DefaultMethodFees.
func methodFeesFromEnv(getenv func(string) string) (map[domain.Method]domain.FeeSchedule, error) {
	out := map[domain.Method]domain.FeeSchedule{}
	for m, def := range wiring.DefaultMethodFees {
		p, err := feeFromEnv(getenv, "QUITA_FEE_"+string(m)+"_PROVIDER", def.Provider)
		if err != nil {
			return nil, err
		}
		pl, err := feeFromEnv(getenv, "QUITA_FEE_"+string(m)+"_PLATFORM", def.Platform)
		if err != nil {
			return nil, err
		}
		out[m] = domain.FeeSchedule{Provider: p, Platform: pl}
	}
	return out, nil
}

// feeFromEnv reads "bps+fixed" (e.g. "50+0") or "bps".
func feeFromEnv(getenv func(string) string, env string, def domain.Fee) (domain.Fee, error) {
	v := getenv(env)
	if v == "" {
		return def, nil
	}
	bps, fixed, _ := strings.Cut(v, "+")
	b, err := strconv.ParseInt(bps, 10, 64)
	if err != nil || b < 0 || b > 10_000 {
		return def, fmt.Errorf("%s: want <bps>[+<fixed minor units>], got %q", env, v)
	}
	var f int64
	if fixed != "" {
		if f, err = strconv.ParseInt(fixed, 10, 64); err != nil || f < 0 {
			return def, fmt.Errorf("%s: want <bps>[+<fixed minor units>], got %q", env, v)
		}
	}
	fee := domain.Fee{BPS: b, Fixed: f}
	if err := fee.Validate(); err != nil {
		return def, fmt.Errorf("%s: %d bps + %d: at most %d bps plus %d minor units", env, b, f, domain.MaxFeeBPS, domain.MaxFeeFixed)
	}
	return fee, nil
}

func usage() {
	fmt.Fprint(os.Stderr, `quitad — Quita's payment-collection server

Usage:
  quitad [serve] [flags]          serve the API (default)
  quitad migrate [flags]          apply database migrations and exit
  quitad account create --name N --email E [--document D] [--password-stdin] [flags]
                                  create an account and print its keys as JSON; the
                                  password comes from stdin or QUITA_ACCOUNT_PASSWORD
  quitad account password --email E [--password-stdin] [--disable-totp]
                                  set a dashboard login's password (stdin or
                                  QUITA_ACCOUNT_PASSWORD) and/or turn its two-step
                                  verification off; ends every session of the login
  quitad account document --account ID --document CPF_OR_CNPJ
                                  set (or, with "", clear) the merchant document that
                                  receipts print masked as the payee's
  quitad account guards --account ID [--rate N] [--burst N] [--velocity N]
                 [--amount-limit N] [--block DOC] [--unblock DOC]
                                  change an account's rate limit, fraud limits and
                                  payer block list (0 = default); print the settings
  quitad ledger verify [--full] [flags]
                                  check every wallet against its postings and what was
                                  written since the last run (--full: everything, and
                                  start the checkpoint again); exit status 1 on any drift
  quitad returns [--status FAILED] [--limit N]
                                  list automatic Pix returns (devoluções) of a status; the
                                  FAILED ones were refused on every attempt and need an operator
  quitad fees show|set --account A [--method M --provider <bps>[+<fixed>] --platform <bps>[+<fixed>]]
                                  show or override an account's fees per method
  quitad acquirer configure --account A --base-url URL --client-id ID [--client-secret-stdin]
                 --pix-key K [--cert F --key F] [--ca F] [--token-url URL] [--webhook-url URL]
                                  (the client secret comes from stdin or QUITA_PSP_CLIENT_SECRET)
                                  store an account's API Pix PSP (sealed with QUITA_MASTER_KEY)
                                  and register the PSP webhook (docs/bcbpix.md)
  quitad listen --api-key K --forward-to URL [--events charge.paid,...] [--from now|all|evt_...]
                                  follow a server's events API and forward each event,
                                  signed as a delivery, to a local URL (docs/events.md)
  quitad trigger [--api-key K] <event>... | --list
                                  make a test-mode server emit an event of the catalog

Run "quitad serve -h" for the flags and their environment variables.
Fees: QUITA_FEE_<METHOD>_PROVIDER and QUITA_FEE_<METHOD>_PLATFORM as
<bps>[+<fixed>] (methods PIX, CREDIT_CARD, BOLETO, MULTIBANCO, MBWAY, CRYPTO);
QUITA_FEE_PIX_OUT is the cashout refund fee passed to the merchant.
`)
}

// loadTLS checks the TLS settings and loads the PSP callback CA. The CA
// needs quitad's own TLS listener: behind a proxy that ends TLS, quitad
// never sees the PSP's certificate and would refuse every callback.
func (c *Config) loadTLS() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("QUITA_TLS_CERT and QUITA_TLS_KEY go together")
	}
	if c.callbackCA == "" {
		return nil
	}
	if c.TLSCert == "" {
		return errors.New("QUITA_BCBPIX_CALLBACK_CA needs QUITA_TLS_CERT and QUITA_TLS_KEY: quitad must see the PSP's TLS handshake")
	}
	pem, err := os.ReadFile(c.callbackCA)
	if err != nil {
		return fmt.Errorf("QUITA_BCBPIX_CALLBACK_CA: %w", err)
	}
	c.PSPCallbackCAs = x509.NewCertPool()
	if !c.PSPCallbackCAs.AppendCertsFromPEM(pem) {
		return fmt.Errorf("QUITA_BCBPIX_CALLBACK_CA: %s holds no PEM certificate", c.callbackCA)
	}
	return nil
}
