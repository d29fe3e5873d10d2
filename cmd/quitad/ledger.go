package main

import (
	"context"
	"fmt"
	"io"

	"github.com/quitapix/quita/cmd/wiring"
)

// ledgerVerify recomputes every wallet from the postings and compares it
// with the stored balances and open holds. Any problem is printed and makes
// the command fail (exit status 1).
func ledgerVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig("quitad ledger verify", args, getenv)
	if err != nil {
		return err
	}
	a, cleanup, err := wiring.InitializeApp(ctx, cfg.Config, newLogger(stderr, cfg.LogLevel))
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
