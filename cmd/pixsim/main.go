// Command pixsim runs a PSP simulator that speaks the Banco Central "API
// Pix" subset Quita uses (see docs/bcbpix.md), for running Quita against a
// PSP locally.
//
//	pixsim -addr :8443 -client-id quita -client-secret s3cret \
//	       -cert server.pem -key server-key.pem -client-ca ca.pem
//
// Without -cert/-key it serves plain HTTP; with -client-ca it requires a
// client certificate signed by that CA (mutual TLS), as PSPs do.
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
	fs := flag.NewFlagSet("pixsim", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8443", "listen address")
	clientID := fs.String("client-id", "quita", "OAuth2 client id")
	clientSecret := fs.String("client-secret", os.Getenv("PIXSIM_CLIENT_SECRET"), "OAuth2 client secret (or PIXSIM_CLIENT_SECRET)")
	certFile := fs.String("cert", "", "server certificate (PEM); empty serves plain HTTP")
	keyFile := fs.String("key", "", "server private key (PEM)")
	clientCA := fs.String("client-ca", "", "CA (PEM) that client certificates must chain to (enables mTLS)")
	callbackCA := fs.String("callback-ca", "", "CA (PEM) to trust for https callback URLs (default: system roots)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *clientSecret == "" {
		return errors.New("-client-secret (or PIXSIM_CLIENT_SECRET) is required")
	}
	cb := &http.Client{Timeout: 5 * time.Second}
	if *callbackCA != "" {
		pool, err := loadPool(*callbackCA)
		if err != nil {
			return err
		}
		cb.Transport = &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}
	}
	sim := pixsim.New(pixsim.Config{ClientID: *clientID, ClientSecret: *clientSecret, Callbacks: cb})
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
			log.Info("pixsim listening (TLS)", "addr", *addr, "mtls", *clientCA != "")
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
