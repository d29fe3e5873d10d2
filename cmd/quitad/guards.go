package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// accountGuards is `quitad account guards`: the operator's handle on an
// account's rate limit, fraud limits, payer block list and cashout
// restriction. Flags left out keep their stored values; 0 (or "default")
// means the service default.
func accountGuards(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad account guards")
	account := fs.String("account", "", "account id (acct_...)")
	rate := fs.Int("rate", 0, "API requests per second per key (0 = default 100)")
	burst := fs.Int("burst", 0, "API request burst per key (0 = default 200)")
	velocity := fs.Int("velocity", 0, "charges per payer document per hour (0 = default 20)")
	amount := fs.Int64("amount-limit", 0, "largest charge in minor units (0 = default 10000000)")
	block := fs.String("block", "", "add a payer CPF/CNPJ to the block list")
	unblock := fs.String("unblock", "", "remove a payer CPF/CNPJ from the block list")
	var payerOnly toggleFlag
	fs.Var(&payerOnly, "cashout-payer-only", "cashout refunds only to the payer's own CPF/CNPJ: true, false or default (on in live mode, off in test mode)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *account == "" {
		return errors.New("usage: quitad account guards --account ID [flags]")
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	if _, err := a.DB.GetAccount(ctx, *account); err != nil {
		return fmt.Errorf("account %s: %w", *account, err)
	}
	stored, err := a.DB.GetAccountSettings(ctx, *account)
	if err != nil {
		return err
	}
	changed := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "rate":
			stored.RateLimitPerSecond, changed = *rate, true
		case "burst":
			stored.RateLimitBurst, changed = *burst, true
		case "velocity":
			stored.VelocityPerHour, changed = *velocity, true
		case "amount-limit":
			stored.AmountLimit, changed = *amount, true
		case "cashout-payer-only":
			stored.CashoutPayerOnly, changed = payerOnly.t, true
		}
	})
	if changed {
		if err := a.Dashboard.GuardSettings.Set(ctx, *account, stored); err != nil {
			return err
		}
	}
	if *block != "" {
		if err := a.Dashboard.FraudGuard.BlockPayer(ctx, *account, *block); err != nil {
			return err
		}
	}
	if *unblock != "" {
		if err := a.Dashboard.FraudGuard.UnblockPayer(ctx, *account, *unblock); err != nil {
			return err
		}
	}
	eff, err := a.Dashboard.GuardSettings.Effective(ctx, *account)
	if err != nil {
		return err
	}
	return printJSON(stdout, settingsJSON(eff))
}

type guardSettingsJSON struct {
	RateLimitPerSecond int   `json:"rateLimitPerSecond"`
	RateLimitBurst     int   `json:"rateLimitBurst"`
	VelocityPerHour    int   `json:"velocityPerHour"`
	AmountLimit        int64 `json:"amountLimit"`
	// CashoutPayerOnly is the setting (true, false or default) and
	// CashoutPayerOnlyLive/Test what it means in each mode.
	CashoutPayerOnly     string `json:"cashoutPayerOnly"`
	CashoutPayerOnlyLive bool   `json:"cashoutPayerOnlyLive"`
	CashoutPayerOnlyTest bool   `json:"cashoutPayerOnlyTest"`
}

func settingsJSON(s ports.AccountSettings) guardSettingsJSON {
	return guardSettingsJSON{RateLimitPerSecond: s.RateLimitPerSecond, RateLimitBurst: s.RateLimitBurst,
		VelocityPerHour: s.VelocityPerHour, AmountLimit: s.AmountLimit,
		CashoutPayerOnly:     (&toggleFlag{s.CashoutPayerOnly}).String(),
		CashoutPayerOnlyLive: s.CashoutPayerOnly.Or(app.DefaultCashoutPayerOnly(domain.ModeLive)),
		CashoutPayerOnlyTest: s.CashoutPayerOnly.Or(app.DefaultCashoutPayerOnly(domain.ModeTest))}
}

// toggleFlag is a flag for an on/off setting that may also be given back
// to the service default: --name (on), --name=false, --name=default.
type toggleFlag struct{ t ports.Toggle }

func (f *toggleFlag) String() string {
	switch f.t {
	case ports.ToggleOn:
		return "true"
	case ports.ToggleOff:
		return "false"
	}
	return "default"
}

func (f *toggleFlag) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "on", "1":
		f.t = ports.ToggleOn
	case "false", "off", "0":
		f.t = ports.ToggleOff
	case "default":
		f.t = ports.ToggleDefault
	default:
		return errors.New("want true, false or default")
	}
	return nil
}

func (f *toggleFlag) IsBoolFlag() bool { return true }
