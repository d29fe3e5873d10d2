// Command pixsim runs a PSP simulator that speaks the Banco Central "API
// Pix" subset Quita uses (see docs/bcbpix.md), for running Quita against a
// PSP locally.
//
//	pixsim -addr :8443 -client-id quita -client-secret s3cret \
//	       -cert psp-server.pem -key psp-server-key.pem -client-ca ca.pem \
//	       -callback-cert psp-callback.pem -callback-key psp-callback-key.pem -callback-ca ca.pem
//
// Without -cert/-key it serves plain HTTP; with -client-ca it requires a
// client certificate signed by that CA (mutual TLS), as PSPs do. Callbacks
// present -callback-cert, as API Pix requires of a PSP calling a webhook.
//
//	pixsim certs -dir DIR [-hosts 127.0.0.1,localhost] [-days 30]
//
// writes a throwaway CA and the certificates of a local setup (make
// pixsim-certs; docs/bcbpix.md).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pixsim:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "certs" {
		return certs(args[1:])
	}
	fs := flag.NewFlagSet("pixsim", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8443", "listen address")
	clientID := fs.String("client-id", "quita", "OAuth2 client id")
	clientSecret := fs.String("client-secret", os.Getenv("PIXSIM_CLIENT_SECRET"), "OAuth2 client secret (or PIXSIM_CLIENT_SECRET)")
	certFile := fs.String("cert", "", "server certificate (PEM); empty serves plain HTTP")
	keyFile := fs.String("key", "", "server private key (PEM)")
	clientCA := fs.String("client-ca", "", "CA (PEM) that client certificates must chain to (enables mTLS)")
	callbackCA := fs.String("callback-ca", "", "CA (PEM) to trust for https callback URLs (default: system roots)")
	callbackCert := fs.String("callback-cert", "", "client certificate (PEM) presented on callbacks (mTLS)")
	callbackKey := fs.String("callback-key", "", "private key (PEM) of -callback-cert")
	returnDelay := fs.Duration("return-delay", 0, "how long a devolução stays EM_PROCESSAMENTO before it settles and the webhook is called")
	loteDelay := fs.Duration("lote-delay", 0, "how long the cobvs of a lotecobv stay EM_PROCESSAMENTO before the PSP decides them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *clientSecret == "" {
		return errors.New("-client-secret (or PIXSIM_CLIENT_SECRET) is required")
	}
	cfg := pixsim.Config{ClientID: *clientID, ClientSecret: *clientSecret, ReturnDelay: *returnDelay, LoteDelay: *loteDelay}
	if *callbackCA != "" {
		pool, err := loadPool(*callbackCA)
		if err != nil {
			return err
		}
		cfg.CallbackCAs = pool
	}
	if (*callbackCert == "") != (*callbackKey == "") {
		return errors.New("-callback-cert and -callback-key go together")
	}
	if *callbackCert != "" {
		pair, err := tls.LoadX509KeyPair(*callbackCert, *callbackKey)
		if err != nil {
			return fmt.Errorf("callback certificate: %w", err)
		}
		cfg.CallbackCert = &pair
	}
	if *certFile != "" {
		// The PSP's server certificate also signs the cobv payloads.
		pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fmt.Errorf("server certificate: %w", err)
		}
		cfg.PayloadCert = &pair
	}
	sim := pixsim.New(cfg)
	defer sim.Close()
	srv := &http.Server{Addr: *addr, Handler: sim, ReadHeaderTimeout: 5 * time.Second}
	if *clientCA != "" {
		pool, err := loadPool(*clientCA)
		if err != nil {
			return err
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		if *certFile != "" {
			log.Info("pixsim listening (TLS)", "addr", *addr, "mtls", *clientCA != "", "callback_cert", *callbackCert != "")
			errc <- srv.ListenAndServeTLS(*certFile, *keyFile)
			return
		}
		log.Info("pixsim listening (plain HTTP)", "addr", *addr)
		errc <- srv.ListenAndServe()
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// certs writes a throwaway CA and the certificates of a local
// pixsim ↔ quitad setup.
func certs(args []string) error {
	fs := flag.NewFlagSet("pixsim certs", flag.ContinueOnError)
	dir := fs.String("dir", "pixsim-certs", "directory to write into")
	hosts := fs.String("hosts", "127.0.0.1,localhost", "comma-separated names and addresses of the server certificates")
	days := fs.Int("days", 30, "validity in days")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *days < 1 {
		return errors.New("-days must be at least 1")
	}
	pki, err := pixsim.NewTestPKI(strings.Split(*hosts, ","), time.Duration(*days)*24*time.Hour)
	if err != nil {
		return err
	}
	if err := pki.WriteDir(*dir); err != nil {
		return err
	}
	fmt.Printf("pixsim: test CA and certificates in %s: %s\n", *dir, strings.Join(pixsim.Files, " "))
	return nil
}

func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}
