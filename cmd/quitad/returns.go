package main

import (
	"context"
	"io"
	"time"

	"github.com/quitapix/quita/domain"
)

// returnJSON is one automatic Pix return as `quitad returns` prints it. It
// carries no payer data (Quita keeps none with a return).
type returnJSON struct {
	EndToEndID string    `json:"endToEndId"`
	ChargeID   string    `json:"chargeId"`
	AccountID  string    `json:"accountId"`
	Mode       string    `json:"mode"`
	Amount     int64     `json:"amount"`
	Reason     string    `json:"reason"`
	Status     string    `json:"status"`
	Attempts   int       `json:"attempts"`
	Failure    string    `json:"failure,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// returnsCommand is `quitad returns [--status FAILED] [--limit N]`: the
// automatic Pix returns of a status, in every account, oldest first. The
// FAILED ones were refused by the payer's bank on every attempt; the money
// is still in the merchant's PSP account and an operator must return it.
func returnsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad returns")
	status := fs.String("status", string(domain.PixReturnFailed), "REQUESTED, IN_PROGRESS, RETURNED or FAILED")
	limit := fs.Int("limit", 100, "how many to list (at most 100)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	rs, err := a.Charges.PixReturns(ctx, domain.PixReturnStatus(*status), *limit)
	if err != nil {
		return err
	}
	out := make([]returnJSON, len(rs))
	for i, r := range rs {
		out[i] = returnJSON{EndToEndID: r.EndToEndID, ChargeID: domain.PrefixCharge + r.ChargeID, AccountID: r.AccountID,
			Mode: string(r.Mode), Amount: r.Amount, Reason: string(r.Reason), Status: string(r.Status), Attempts: r.Attempt,
			Failure: r.Failure, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return printJSON(stdout, map[string]any{"data": out})
}
