package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ledgerVerify checks the ledger: with --full, every wallet against all
// its postings and every charge, refund and payout; otherwise what was
// written since the last run's checkpoint, with every wallet's total
// (docs/operations.md, "Verifying the ledger"). Any problem is printed
// and makes the command fail (exit status 1).
func ledgerVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	full := false
	rest := args[:0:0]
	for _, a := range args {
		switch a {
		case "-full", "--full", "-full=true", "--full=true":
			full = true
		case "-full=false", "--full=false":
		default:
			rest = append(rest, a)
		}
	}
	cfg, err := parseConfig("quitad ledger verify", rest, getenv)
	if err != nil {
		return err
	}
	a, cleanup, err := openAdmin(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	began := time.Now()
	r, err := a.Payments.CheckLedger(ctx, full)
	if err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, "DRIFT:", p)
	}
	fmt.Fprintln(stdout, ledgerSummary(r, time.Since(began)))
	if len(r.Problems) > 0 {
		return fmt.Errorf("ledger verify: %d problem(s)", len(r.Problems))
	}
	fmt.Fprintln(stdout, "ledger verify: ok")
	return nil
}

// ledgerSummary is one line on what a verify read and where its
// checkpoint stands.
func ledgerSummary(r ports.LedgerCheck, took time.Duration) string {
	var s string
	switch {
	case r.Full && r.Reason != "":
		s = fmt.Sprintf("ledger verify: full (%s): %d postings", r.Reason, r.Postings)
	case r.Full:
		s = fmt.Sprintf("ledger verify: full: %d postings", r.Postings)
	default:
		s = fmt.Sprintf("ledger verify: since %s: %d postings, %d entries, %d events; %d charges and %d payouts checked again",
			r.Since.UTC().Format(time.RFC3339), r.Postings, r.Entries, r.Events, r.Charges, r.Payouts)
	}
	s += fmt.Sprintf(" in %s", took.Round(time.Millisecond))
	if r.Saved {
		return s + "; checkpoint saved"
	}
	return s + "; checkpoint not moved"
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
