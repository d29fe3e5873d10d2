package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrUnknownReceiver: a provider notification names an account that has no
// provider configured.
var ErrUnknownReceiver = errors.New("no provider is configured for this account")

// ErrCashoutNotSupported: the payment's provider (API Pix) refunds only by
// devolução.
var ErrCashoutNotSupported = errors.New("the provider refunds pix only by devolution")

// PixReceiptsConfig tunes notifications and reconciliation.
type PixReceiptsConfig struct {
	// Window is how much a reconciliation pass reads again before the end
	// of the account's last complete pass, or before now on its first one
	// (default 2 h), so a Pix the provider lists late is still read.
	Window time.Duration
	// MaxCatchUp bounds how far back a pass reads after an outage of the
	// provider or of the account's credentials (default 7 days): Pix
	// received before now - MaxCatchUp are not read (an error is logged).
	MaxCatchUp time.Duration
	// QueryRange is the longest inicio..fim span one listing asks (default
	// 24 h; API Pix sets no maximum, a PSP may): a catch-up is read in
	// consecutive spans, oldest first.
	QueryRange time.Duration
	// LockWindow is the slack around a Pix's time when asking the provider
	// whether it came from the expected payer (default 2 min).
	LockWindow time.Duration
	// MaxPerCallback bounds the Pix confirmed per notification (default 100).
	MaxPerCallback int
}

// PixReceiptService settles live charges from what the provider received:
// notifications (never trusted: each Pix is read back from the provider)
// and a reconciliation pass that catches notifications that never came.
// Every path ends in ChargeService.ApplyPixPayment, idempotent by
// end-to-end id, so nothing settles twice.
type PixReceiptService struct {
	charges *ChargeService
	store   ports.AcquirerAccountStore
	marks   ports.PixReconcileMarks
	recv    ports.PixReceiver
	clock   ports.Clock
	log     *slog.Logger
	cfg     PixReceiptsConfig
}

// NewPixReceiptService wires the service.
func NewPixReceiptService(charges *ChargeService, store ports.AcquirerAccountStore, marks ports.PixReconcileMarks, recv ports.PixReceiver,
	clock ports.Clock, log *slog.Logger, cfg PixReceiptsConfig,
) *PixReceiptService {
	if cfg.Window <= 0 {
		cfg.Window = 2 * time.Hour
	}
	if cfg.MaxCatchUp <= 0 {
		cfg.MaxCatchUp = 7 * 24 * time.Hour
	}
	cfg.MaxCatchUp = max(cfg.MaxCatchUp, cfg.Window)
	if cfg.QueryRange <= 0 {
		cfg.QueryRange = 24 * time.Hour
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.LockWindow <= 0 {
		cfg.LockWindow = 2 * time.Minute
	}
	if cfg.MaxPerCallback <= 0 {
		cfg.MaxPerCallback = 100
	}
	return &PixReceiptService{charges: charges, store: store, marks: marks, recv: recv, clock: clock, log: log, cfg: cfg}
}

// NotifyResult counts what a notification did.
type NotifyResult struct {
	Applied, Ignored int
}

// Notify handles a provider callback for accountID that names the Pix
// endToEndIDs. The body is not trusted: each Pix is read back from the
// provider (GET /pix/{e2eid}) before any charge changes. Unknown or
// unconfirmed ids are ignored. An error (the provider or the database is
// unavailable) asks the provider to retry the callback, which is safe.
func (s *PixReceiptService) Notify(ctx context.Context, accountID string, endToEndIDs []string) (NotifyResult, error) {
	var res NotifyResult
	seen := map[string]bool{}
	var firstErr error
	for _, e2e := range endToEndIDs {
		if seen[e2e] {
			continue
		}
		seen[e2e] = true
		if len(seen) > s.cfg.MaxPerCallback {
			break
		}
		if !domain.ValidEndToEndID(e2e) {
			res.Ignored++
			continue
		}
		p, err := s.recv.GetPix(ctx, accountID, e2e)
		switch {
		case errors.Is(err, ports.ErrNotFound):
			s.log.WarnContext(ctx, "provider notification names a pix the provider does not confirm",
				"account", accountID, "end_to_end_id", e2e)
			res.Ignored++
			continue
		case errors.Is(err, ports.ErrAcquirerRejected), errors.Is(err, ports.ErrAcquirerNotConfigured),
			errors.Is(err, ports.ErrAcquirerUnauthorized):
			return res, fmt.Errorf("%w: %v", ErrUnknownReceiver, err)
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		applied, err := s.apply(ctx, accountID, *p)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if applied {
			res.Applied++
		} else {
			res.Ignored++
		}
	}
	return res, firstErr
}

// Reconcile pages through every configured account's received Pix since
// its last complete pass and applies those a notification did not. It
// returns how many Pix changed or re-checked a charge.
func (s *PixReceiptService) Reconcile(ctx context.Context) (int, error) {
	accts, err := s.recv.ReceiverAccounts(ctx)
	if err != nil {
		return 0, err
	}
	now := s.clock.Now()
	n := 0
	var firstErr error
	for _, acct := range accts {
		k, err := s.reconcileAccount(ctx, acct, now)
		n += k
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("reconcile %s: %w", acct, err)
		}
	}
	return n, firstErr
}

// reconcileAccount reads the account's received Pix up to now from Window
// before its mark — the end of its last complete pass — or before now
// when it has none, and never from before now - MaxCatchUp. A fixed
// look-back would lose, for good, every Pix received before it while the
// provider could not be listed (credentials refused for longer than the
// look-back: callbacks are refused meanwhile). The span is read in pieces
// of at most QueryRange, oldest first; the mark moves to the end of each
// piece whose every Pix was listed and applied, while the pieces before it
// were too. A piece that cannot be listed ends the pass, and the next one
// starts from the mark again; a Pix that fails to apply holds the mark but
// not the later pieces. Pix read twice are applied once (by end-to-end id).
func (s *PixReceiptService) reconcileAccount(ctx context.Context, acct string, now time.Time) (int, error) {
	mark, err := s.marks.PixReconciledThrough(ctx, acct)
	if err != nil {
		return 0, err
	}
	from := now.Add(-s.cfg.Window)
	if !mark.IsZero() && mark.Before(now) {
		from = mark.Add(-s.cfg.Window)
	}
	if floor := now.Add(-s.cfg.MaxCatchUp); from.Before(floor) {
		s.log.ErrorContext(ctx, "pix reconciliation: the last complete pass is older than the catch-up bound; Pix received before the bound are not read",
			"account", acct, "reconciled_through", mark, "bound", floor)
		from = floor
	}
	n, complete := 0, true
	var firstErr error
	for start := from; start.Before(now); {
		end := start.Add(s.cfg.QueryRange)
		if end.After(now) {
			end = now
		}
		k, listed, err := s.reconcileSpan(ctx, acct, start, end)
		n += k
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if !listed {
			break
		}
		if complete = complete && err == nil; complete {
			if err := s.marks.SetPixReconciledThrough(ctx, acct, end); err != nil {
				complete = false
				if firstErr == nil {
					firstErr = err
				}
			}
		}
		start = end
	}
	return n, firstErr
}

// reconcileSpan applies the account's Pix the provider lists between start
// and end, page by page. listed is false when a page could not be read (or
// ctx ended): the span was not read in full. err is the first failure, of
// a listing or of a Pix's apply (the other Pix are applied all the same).
func (s *PixReceiptService) reconcileSpan(ctx context.Context, acct string, start, end time.Time) (n int, listed bool, err error) {
	for page := 0; ; page++ {
		if cerr := ctx.Err(); cerr != nil {
			return n, false, cmp.Or(err, cerr)
		}
		pg, lerr := s.recv.ListPix(ctx, ports.PixQuery{AccountID: acct, Start: start, End: end, Page: page})
		if lerr != nil {
			return n, false, cmp.Or(err, lerr)
		}
		for _, p := range pg.Pix {
			applied, aerr := s.apply(ctx, acct, p)
			if aerr != nil && err == nil {
				err = aerr
			}
			if applied {
				n++
			}
		}
		if !pg.More {
			return n, true, err
		}
	}
}

// apply settles the charge a confirmed Pix paid. It reports false when the
// Pix needs nothing (no cob of ours, or already applied).
func (s *PixReceiptService) apply(ctx context.Context, accountID string, p ports.ReceivedPix) (bool, error) {
	if p.TxID == "" || p.Amount <= 0 {
		return false, nil
	}
	scope := ports.Scope{AccountID: accountID, Mode: domain.ModeLive}
	id, err := s.store.FindChargeByTxID(ctx, scope, p.TxID)
	if errors.Is(err, ports.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c, err := s.charges.stored(ctx, scope, id)
	if err != nil {
		return false, err
	}
	if st := c.Settlement(); st != nil && st.EndToEndID == p.EndToEndID {
		// Applied before: nothing settles twice; only returns the payer's
		// PSP made since may be new.
		return s.applyDisputes(ctx, scope, c, p)
	}
	if p.Returned >= p.Amount {
		// Already given back, or being given back (a devolução the payer's
		// bank has not answered counts; the returns worker follows it).
		return false, nil
	}
	pay := domain.PixPayment{EndToEndID: p.EndToEndID, Amount: p.Amount, PayerTaxID: p.PayerTaxID, PayerName: p.PayerName,
		PaidAt: p.PaidAt, Returned: p.Returned}
	if pay.PaidAt.IsZero() {
		pay.PaidAt = s.clock.Now()
	}
	if expected := c.ExpectedPayer(); expected != "" && pay.PayerTaxID == "" && p.Amount == c.Amount() {
		// API Pix does not disclose the payer: ask whether this Pix came
		// from the expected document. Undetermined stays "" (processing).
		found, err := s.fromPayer(ctx, accountID, p, expected)
		if err != nil {
			return false, err
		}
		if found {
			pay.PayerTaxID = expected
		}
	}
	_, err = s.charges.ApplyPixPayment(ctx, scope, id, pay)
	if errors.Is(err, domain.ErrChargeNotPayable) || errors.Is(err, domain.ErrChargeExpired) {
		// A Pix paid at or after expires_at, or one whose news came only
		// after the expiry grace (or after a cancel): give it back, once
		// (the return is recorded, sent, and followed by the returns
		// worker until the payer's bank confirms it). A Pix paid in time
		// and reported in the grace settled above.
		owed, rerr := s.charges.oweReturn(ctx, scope, id, p.EndToEndID, p.Amount-p.Returned, domain.ReturnForClosedCharge)
		if rerr != nil {
			return false, fmt.Errorf("return a pix for a closed charge: %w", rerr)
		}
		if owed {
			s.log.InfoContext(ctx, "pix for a closed charge: return owed", "charge", domain.PrefixCharge+id, "end_to_end_id", p.EndToEndID)
		}
		return owed, nil
	}
	if err != nil {
		return false, err
	}
	if len(p.Devolutions) == 0 {
		return true, nil
	}
	settled, err := s.charges.stored(ctx, scope, id)
	if err != nil {
		return true, err
	}
	if _, err := s.applyDisputes(ctx, scope, settled, p); err != nil {
		return true, err
	}
	return true, nil
}

// applyDisputes debits the merchant for the returns the payer's PSP made
// from Pix p, which settled charge c (ChargeService.ApplyDisputes). It
// reports whether one was new. A return the charge cannot take — its Pix
// was never credited to the merchant, or the return exceeds what the Pix
// left — is logged as an alert for an operator and not retried: money the
// ledger cannot place is not guessed.
func (s *PixReceiptService) applyDisputes(ctx context.Context, scope ports.Scope, c *domain.Charge, p ports.ReceivedPix) (bool, error) {
	ds := disputesOf(c, p, s.clock.Now())
	if len(ds) == 0 {
		return false, nil
	}
	_, n, err := s.charges.ApplyDisputes(ctx, scope, c.ID(), ds)
	if errors.Is(err, domain.ErrChargeNotDisputable) || errors.Is(err, domain.ErrDisputeExceedsAmount) {
		s.log.ErrorContext(ctx, "the payer's PSP took money back from a Pix the ledger cannot debit now; it is looked at again "+
			"with the Pix's next callback, and an operator must reconcile it if none comes",
			"alert", "dispute_unplaced", "charge", domain.PrefixCharge+c.ID(), "account", scope.AccountID,
			"end_to_end_id", p.EndToEndID, "err", err)
		return n > 0, nil
	}
	return n > 0, err
}

// fromPayer asks the provider (GET /pix?txid&cpf|cnpj) whether p came from
// the document expected.
func (s *PixReceiptService) fromPayer(ctx context.Context, accountID string, p ports.ReceivedPix, expected string) (bool, error) {
	at := p.PaidAt
	if at.IsZero() {
		at = s.clock.Now()
	}
	for page := 0; ; page++ {
		pg, err := s.recv.ListPix(ctx, ports.PixQuery{AccountID: accountID, Start: at.Add(-s.cfg.LockWindow), End: at.Add(s.cfg.LockWindow),
			TxID: p.TxID, PayerTaxID: expected, Page: page})
		if err != nil {
			return false, err
		}
		for _, q := range pg.Pix {
			if q.EndToEndID == p.EndToEndID {
				return true, nil
			}
		}
		if !pg.More {
			return false, nil
		}
	}
}
