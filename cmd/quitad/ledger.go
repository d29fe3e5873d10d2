package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/quitapix/quita/domain"
)

// ledgerVerify recomputes every wallet from the postings and compares it
// with the stored balances and open holds. Any problem is printed and makes
// the command fail (exit status 1).
func ledgerVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig("quitad ledger verify", args, getenv)
	if err != nil {
		return err
	}
	a, cleanup, err := openAdmin(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	problems, err := a.Payments.VerifyLedger(ctx)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, "DRIFT:", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("ledger verify: %d problem(s)", len(problems))
	}
	fmt.Fprintln(stdout, "ledger verify: ok")
	return nil
}

// feesCommand shows or sets an account's fee schedule:
//
//	quitad fees show --account acct_...
//	quitad fees set --account acct_... --method PIX --provider 50 --platform 49+0
func feesCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "show" && args[0] != "set") {
		return errors.New("usage: quitad fees show|set --account A [--method M --provider <bps>[+<fixed>] --platform <bps>[+<fixed>]]")
	}
	sub := args[0]
	fs := newAdminFlags("quitad fees " + sub)
	account := fs.String("account", "", "account id (acct_...)")
	method := fs.String("method", "", "payment method: PIX, CREDIT_CARD, BOLETO, MULTIBANCO, MBWAY or CRYPTO; PIX_OUT is the payout fee (provider + platform)")
	provider := fs.String("provider", "", "provider fee, <bps>[+<fixed minor units>]")
	platform := fs.String("platform", "", "platform fee, <bps>[+<fixed minor units>]")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *account == "" {
		return errors.New("--account is required")
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if sub == "set" {
		if *method == "" || *provider == "" || *platform == "" {
			return errors.New("fees set needs --method, --provider and --platform")
		}
		env := map[string]string{"P": *provider, "L": *platform}
		get := func(k string) string { return env[k] }
		p, err := feeFromEnv(get, "P", domain.Fee{})
		if err != nil {
			return fmt.Errorf("--provider: %w", err)
		}
		l, err := feeFromEnv(get, "L", domain.Fee{})
		if err != nil {
			return fmt.Errorf("--platform: %w", err)
		}
		if err := a.Payments.SetAccountFee(ctx, *account, domain.Method(*method), domain.FeeSchedule{Provider: p, Platform: l}); err != nil {
			return err
		}
	}
	fees, err := a.Payments.AccountFees(ctx, *account)
	if err != nil {
		return err
	}
	return printJSON(stdout, fees)
}
