package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrTransferDestinationUnknown: the destination is not an account
	// the caller may send to (for a platform, one of its sub-accounts; for
	// a sub-account, its platform), whether it exists or not.
	ErrTransferDestinationUnknown = errors.New("the destination is not a sub-account or the platform of this account")
	// ErrTransferDestinationDisabled: the platform named one of its
	// sub-accounts that it disabled.
	ErrTransferDestinationDisabled = errors.New("the destination sub-account is disabled")
	// ErrTransferExceedsAvailable: the source's available balance (less
	// its debt) cannot cover the amount (it is
	// domain.ErrInsufficientBalance too).
	ErrTransferExceedsAvailable = fmt.Errorf("transfer: %w", domain.ErrInsufficientBalance)
)

// TransferService moves money between a platform and its sub-accounts
// (docs/marketplaces.md, "Transfers").
type TransferService struct {
	store ports.TransferStore
	subs  ports.SubaccountStore
	clock ports.Clock
	ids   ports.IDGenerator
	log   *slog.Logger
	// once is the charge service's runner: transfers share the key space
	// of charges, refunds and payouts.
	once *exactlyonce.Runner
}

// NewTransferService wires the transfer service on the charge service's
// exactly-once runner.
func NewTransferService(charges *ChargeService, store ports.TransferStore, subs ports.SubaccountStore, clock ports.Clock,
	ids ports.IDGenerator, log *slog.Logger,
) *TransferService {
	return &TransferService{store: store, subs: subs, clock: clock, ids: ids, log: log, once: charges.once}
}

// CreateTransferInput is a transfer request after decoding.
type CreateTransferInput struct {
	Amount        int64
	Currency      domain.Currency
	DestinationID string
	Description   string
	Metadata      map[string]any
}

// Create moves in.Amount from the caller's available balance, in the
// caller's mode, to in.DestinationID, exactly once per idempotency key
// (the charges' rules: replay, 409 reused, 409 in use). A platform sends
// to a live sub-account of its own; a sub-account (its own key, or its
// platform's acting for it) to its platform. In one transaction it writes
// the idempotency record, the transfer, a transfer.created for each side
// and the two entries; a source that cannot cover the amount refuses the
// whole (ErrTransferExceedsAvailable).
func (s *TransferService) Create(ctx context.Context, caller Caller, in CreateTransferInput, idem Idempotency, respond Respond[*domain.Transfer]) (Response, error) {
	return s.once.Do(ctx, caller.Scope(), idem, exactlyonce.Options{}, func(a *exactlyonce.Attempt) (Response, error) {
		return s.create(ctx, caller, in, a, respond)
	})
}

func (s *TransferService) create(ctx context.Context, caller Caller, in CreateTransferInput, a *exactlyonce.Attempt, respond Respond[*domain.Transfer]) (Response, error) {
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	t, err := domain.NewTransfer(domain.NewTransferParams{ID: id, SourceID: caller.Account.ID, DestinationID: in.DestinationID,
		Mode: caller.Mode, Amount: in.Amount, Currency: in.Currency, Description: in.Description, Metadata: in.Metadata, Now: now})
	if err != nil {
		return Response{}, err
	}
	if err := s.mayReceive(ctx, caller.Account, in.DestinationID); err != nil {
		return Response{}, err
	}
	if err := s.coveredDespiteDebt(ctx, caller.Scope(), in.Currency, in.Amount); err != nil {
		return Response{}, err
	}
	srcEntry, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	dstEntry, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	evs, err := t.Events(s.ids.NewID)
	if err != nil {
		return Response{}, err
	}
	answer, err := respond(t)
	if err != nil {
		return Response{}, err
	}
	rec := a.Record(id, answer, now)
	err = s.store.CreateTransfer(ctx, t, evs, t.Entries(srcEntry, dstEntry), rec)
	if errors.Is(err, domain.ErrInsufficientBalance) {
		return Response{}, ErrTransferExceedsAvailable
	}
	if err != nil {
		return Response{}, err
	}
	s.log.InfoContext(ctx, "transfer created", "transfer", domain.PrefixTransfer+id, "source", caller.Account.ID,
		"destination", in.DestinationID, "amount", in.Amount, "mode", string(caller.Mode))
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// mayReceive decides whether src may send to dest: a sub-account only to
// its platform; a platform only to a live sub-account of its own.
// ErrTransferDestinationUnknown for every other account, existing or not,
// so a platform learns nothing of accounts not its own.
func (s *TransferService) mayReceive(ctx context.Context, src domain.Account, dest string) error {
	if src.IsSubaccount() {
		if dest != src.ParentAccountID {
			return ErrTransferDestinationUnknown
		}
		return nil
	}
	sub, err := s.subs.GetSubaccount(ctx, src.ID, dest)
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return ErrTransferDestinationUnknown
	case err != nil:
		return err
	case sub.DisabledAt != nil:
		return ErrTransferDestinationDisabled
	}
	return nil
}

// coveredDespiteDebt refuses a transfer a wallet in debt (owed, from
// disputes) cannot cover from what is left of available once the debt is
// counted: money owed to Quita never leaves by transfer, as by payout. A
// wallet without debt is left to the store's non-negative check, which
// concurrent transfers cannot overdraw.
func (s *TransferService) coveredDespiteDebt(ctx context.Context, scope ports.Scope, cur domain.Currency, amount int64) error {
	ws, err := s.store.Wallets(ctx, scope)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if w.Currency == cur && w.Owed > 0 && w.Available-w.Owed < amount {
			return ErrTransferExceedsAvailable
		}
	}
	return nil
}

// Get reads a transfer the caller sent or received.
func (s *TransferService) Get(ctx context.Context, caller Caller, id string) (*domain.Transfer, error) {
	return s.store.GetTransfer(ctx, caller.Scope(), id)
}

// List lists the transfers the caller sent or received, newest first.
func (s *TransferService) List(ctx context.Context, q ports.TransferQuery) ([]*domain.Transfer, bool, error) {
	return s.store.ListTransfers(ctx, q)
}
