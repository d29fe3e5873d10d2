package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/domain"
)

// acquirerConfigure stores an account's API Pix PSP configuration, sealed
// under QUITA_MASTER_KEY, and registers the PSP webhook. It prints what it
// stored without any secret.
func acquirerConfigure(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad acquirer configure")
	account := fs.String("account", "", "account id (acct_...)")
	baseURL := fs.String("base-url", "", "the PSP's API Pix base URL")
	tokenURL := fs.String("token-url", "", "OAuth2 token URL (default <base-url>/oauth/token)")
	clientID := fs.String("client-id", "", "OAuth2 client id")
	clientSecret := fs.String("client-secret", "", "OAuth2 client secret; visible in ps: prefer env QUITA_PSP_CLIENT_SECRET or --client-secret-stdin")
	secretStdin := fs.Bool("client-secret-stdin", false, "read the OAuth2 client secret from the first line of stdin")
	cert := fs.String("cert", "", "client certificate file (PEM) for mTLS")
	key := fs.String("key", "", "client private key file (PEM) for mTLS")
	ca := fs.String("ca", "", "CA file (PEM) trusted for the PSP's server certificate (default: system roots)")
	pixKey := fs.String("pix-key", "", "the account's Pix key (chave) at the PSP")
	pixSend := fs.String("pix-send", "", `the PSP's Pix-send API for payouts and cashout refunds: "efi" (Efí's /gn/pix), or none`)
	recvBranch := fs.String("receiver-branch", "", "Pix Automático: the branch (agencia) of the account the PSP credits debits to")
	recvNumber := fs.String("receiver-account", "", "Pix Automático: the account (conta) the PSP credits debits to; none: no Pix Automático charges")
	recvType := fs.String("receiver-account-type", "CORRENTE", "Pix Automático: CORRENTE, POUPANCA or PAGAMENTO")
	webhookURL := fs.String("webhook-url", "", "callback URL to register at the PSP, to which the account's secret callback token is appended (default <QUITA_BASE_URL>/providers/bcbpix/<account>)")
	noWebhook := fs.Bool("no-webhook", false, "do not register the webhook at the PSP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	acct := *account
	if !strings.HasPrefix(acct, domain.PrefixAccount) || acct == domain.PrefixAccount {
		return errors.New("--account acct_... is required")
	}
	secret, err := secretInput("client-secret", *clientSecret, "QUITA_PSP_CLIENT_SECRET", *secretStdin, getenv, stderr)
	if err != nil {
		return err
	}
	pc := bcbpix.AccountConfig{BaseURL: *baseURL, TokenURL: *tokenURL, ClientID: *clientID, ClientSecret: secret, PixKey: *pixKey,
		PixSend: *pixSend}
	if *recvNumber != "" {
		pc.Receiver = &bcbpix.ReceiverAccount{Branch: *recvBranch, Number: *recvNumber, Type: *recvType}
	}
	for _, f := range []struct {
		path string
		dst  *string
	}{{*cert, &pc.CertPEM}, {*key, &pc.KeyPEM}, {*ca, &pc.CAPEM}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		*f.dst = string(b)
	}
	if err := pc.Validate(); err != nil {
		return err
	}
	cfg, err := fs.config(getenv)
	if err != nil {
		return err
	}
	if cfg.MasterKey == "" {
		return bcbpix.ErrNoMasterKey
	}
	a, cleanup, err := openAdmin(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if _, err := a.DB.GetAccount(ctx, acct); err != nil {
		return fmt.Errorf("account %s: %w", *account, err)
	}
	if err := a.BCBPix.Configure(ctx, acct, pc); err != nil {
		return err
	}
	out := map[string]any{"account": acct, "provider": bcbpix.Name, "base_url": pc.BaseURL,
		"client_id": pc.ClientID, "pix_key": pc.PixKey, "mtls": pc.CertPEM != "", "pix_send": pc.PixSend,
		"pix_automatico": pc.Receiver != nil}
	if !*noWebhook {
		hook := *webhookURL
		if hook == "" {
			hook = cfg.BaseURL + "/providers/bcbpix/" + acct
		}
		if err := a.BCBPix.RegisterWebhook(ctx, acct, hook); err != nil {
			return fmt.Errorf("configuration stored, but registering the webhook failed (retry, or pass --no-webhook): %w", err)
		}
		out["webhook_url"] = hook
	}
	return printJSON(stdout, out)
}
