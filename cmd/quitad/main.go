// Command quitad is Quita's server: the merchant API, the hosted checkout
// assets and the background workers, plus admin subcommands.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/netutil"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "quitad:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		// The commands, then serve's flags (the default command's).
		usage()
		_, err := parseConfig("quitad serve", []string{"-h"}, getenv)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "fees":
		return feesCommand(ctx, args, getenv, stdout, stderr)
	case "ledger":
		if len(args) == 0 || args[0] != "verify" {
			usage()
			return errors.New("usage: quitad ledger verify")
		}
		return ledgerVerify(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stderr)
	case "account":
		if len(args) > 0 && args[0] == "guards" {
			return accountGuards(ctx, args[1:], getenv, stdout, stderr)
		}
		if len(args) > 0 && args[0] == "document" {
			return accountDocument(ctx, args[1:], getenv, stdout, stderr)
		}
		if len(args) > 0 && args[0] == "password" {
			return accountPassword(ctx, args[1:], getenv, stdout, stderr)
		}
		if len(args) == 0 || args[0] != "create" {
			usage()
			return errors.New("usage: quitad account create --name N --email E (password: env QUITA_ACCOUNT_PASSWORD or --password-stdin)")
		}
		return createAccount(ctx, args[1:], getenv, stdout, stderr)
	case "acquirer":
		if len(args) == 0 || args[0] != "configure" {
			usage()
			return errors.New("usage: quitad acquirer configure --account acct_... --base-url URL --client-id ID --pix-key K [--cert F --key F --ca F] (secret: env QUITA_PSP_CLIENT_SECRET or --client-secret-stdin)")
		}
		return acquirerConfigure(ctx, args[1:], getenv, stdout, stderr)
	case "returns":
		return returnsCommand(ctx, args, getenv, stdout, stderr)
	case "listen":
		return listenCommand(ctx, args, getenv, stdout, stderr)
	case "trigger":
		return triggerCommand(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		usage()
		return nil
	}
	usage()
	return fmt.Errorf("unknown command %q", cmd)
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := parseConfig("quitad migrate", args, getenv)
	if err != nil {
		return err
	}
	db, cleanup, err := wiring.ProvideDB(ctx, cfg.Config)
	if err != nil {
		return err
	}
	defer cleanup()
	newLogger(stderr, cfg.LogLevel).Info("migrations applied", "dialect", db.Dialect())
	return nil
}

func createAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad account create")
	name := fs.String("name", "", "merchant name (shown in BR Codes)")
	email := fs.String("email", "", "dashboard login e-mail")
	pw := fs.String("password", "", "dashboard password (at least 10 characters); visible in ps: prefer env QUITA_ACCOUNT_PASSWORD or --password-stdin")
	pwStdin := fs.Bool("password-stdin", false, "read the dashboard password from the first line of stdin")
	city := fs.String("city", "SAO PAULO", "merchant city (shown in BR Codes)")
	document := fs.String("document", "", "merchant CPF or CNPJ (optional; printed masked on receipts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	password, err := secretInput("password", *pw, "QUITA_ACCOUNT_PASSWORD", *pwStdin, getenv, stderr)
	if err != nil {
		return err
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	out, err := a.Accounts.CreateAccount(ctx, app.NewAccountInput{Name: *name, Email: *email, Password: password, City: *city, Document: *document})
	if err != nil {
		return err
	}
	return printJSON(stdout, out)
}

// accountDocument is `quitad account document`: sets the merchant's CPF
// or CNPJ that receipts print (masked) as the payee's, for accounts
// created without one.
func accountDocument(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad account document")
	account := fs.String("account", "", "account id (acct_...)")
	document := fs.String("document", "", `merchant CPF or CNPJ; "" clears it`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "document" })
	if *account == "" || !set {
		return errors.New("usage: quitad account document --account ID --document CPF_OR_CNPJ")
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := a.Accounts.SetDocument(ctx, *account, *document); err != nil {
		return fmt.Errorf("account %s: %w", *account, err)
	}
	masked, _ := domain.MaskTaxID(*document)
	return printJSON(stdout, map[string]string{"accountId": *account, "document": masked})
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig("quitad serve", args, getenv)
	if err != nil {
		return err
	}
	seed, err := shouldSeed(cfg)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	slog.SetDefault(log)
	if err := useDevSecret(&cfg, log); err != nil {
		return err
	}
	wiring.TuneGC(getenv)
	a, cleanup, err := wiring.InitializeApp(ctx, cfg.Config, log)
	if err != nil {
		return err
	}
	defer cleanup()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	ln = netutil.LimitListener(ln, cfg.MaxConnections)
	if cfg.TLSCert != "" {
		tl, err := tlsListener(ln, cfg)
		if err != nil {
			_ = ln.Close()
			return err
		}
		ln = tl
	}
	if cfg.Acquirer == wiring.AcquirerBCBPix {
		log.Info("live mode uses API Pix PSPs; test mode uses the sandbox", "acquirer", cfg.Acquirer)
	} else {
		log.Warn("live mode uses the sandbox acquirer: no real money moves", "acquirer", "sandbox")
	}
	if seed {
		if err := seedDemo(ctx, a, cfg, stdout, log); err != nil {
			return err
		}
	}

	workers, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { a.Workers.Run(workers) })
	wg.Go(func() { a.Webhooks.Run(workers) })

	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		// The request line and headers: 1 MiB by default, enough for a
		// 500 KB method name; no legitimate request needs more than this.
		MaxHeaderBytes: 64 << 10,
	}
	// Long-polls of the events API answer at once when the drain starts.
	srv.RegisterOnShutdown(a.Events.StopWaiting)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("quitad listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "database", dialectOf(cfg.DatabaseURL),
		"redis", cfg.RedisURL != "")

	select {
	case err := <-errc:
		stopWorkers()
		wg.Wait()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests and workers", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	stopWorkers()
	wg.Wait()
	a.Charges.WaitBackground()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// tlsListener serves HTTPS. With PSP callback CAs it requests (never
// requires) a client certificate: API clients present none, and the
// callback route verifies the PSP's against the CAs itself.
func tlsListener(ln net.Listener, cfg Config) (net.Listener, error) {
	pair, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("QUITA_TLS_CERT/QUITA_TLS_KEY: %w", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if cfg.PSPCallbackCAs != nil {
		tc.ClientAuth = tls.RequestClientCert
	}
	return tls.NewListener(ln, tc), nil
}

func dialectOf(dsn string) string {
	if strings.HasPrefix(dsn, "postgres") {
		return "postgres"
	}
	return "sqlite"
}
