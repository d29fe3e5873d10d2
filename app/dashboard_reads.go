package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// txIDFinder finds a charge by its Pix txid (the store implements it).
type txIDFinder interface {
	FindChargeByTxID(ctx context.Context, scope ports.Scope, txid string) (string, error)
}

// DashboardReads answers what the merchant's web dashboard shows beyond
// the API's own reads: the caller a session acts as in one mode, a
// charge's event timeline, a search by id or txid, and the account's
// refunds across its charges. Every read is scoped to the session's
// account and the chosen mode.
type DashboardReads struct {
	accounts ports.AccountStore
	events   ports.EventOutbox
	txids    txIDFinder
	payments ports.PaymentStore
	charges  *ChargeService
}

// Now is the service's clock: the instant pages judge by (what is
// overdue).
func (r *DashboardReads) Now() time.Time { return r.charges.clock.Now() }

// NewDashboardReads wires the dashboard's reads.
func NewDashboardReads(accounts ports.AccountStore, events ports.EventOutbox, txids ports.AcquirerAccountStore,
	payments ports.PaymentStore, charges *ChargeService,
) *DashboardReads {
	return &DashboardReads{accounts: accounts, events: events, txids: txids, payments: payments, charges: charges}
}

// Caller is the session's account acting in mode, as an API key of that
// mode would. ErrInvalidSession when the account no longer exists or is a
// disabled sub-account (whose logins stop with it, as its keys do).
func (s *DashboardReads) Caller(ctx context.Context, u DashboardUser, mode domain.Mode) (Caller, error) {
	a, err := s.accounts.GetAccount(ctx, u.AccountID)
	if errors.Is(err, ports.ErrNotFound) {
		return Caller{}, ErrInvalidSession
	}
	if err != nil {
		return Caller{}, err
	}
	if a.DisabledAt != nil {
		return Caller{}, ErrInvalidSession
	}
	return Caller{Account: *a, Mode: mode}, nil
}

// ChargeEvents returns the events of one of the caller's charges in the
// order written. ErrNotFound for a charge outside the caller's scope.
func (s *DashboardReads) ChargeEvents(ctx context.Context, caller Caller, id string) ([]domain.Event, error) {
	if _, err := s.charges.stored(ctx, caller.Scope(), id); err != nil {
		return nil, err
	}
	return s.events.ListChargeEvents(ctx, caller.Scope(), id)
}

// FindCharge resolves what a merchant typed in the search box: a charge
// id (ch_…, tx_… or raw) or a Pix txid. It returns the raw id of the
// caller's charge; ErrNotFound when neither matches in the caller's scope.
func (s *DashboardReads) FindCharge(ctx context.Context, caller Caller, q string) (string, error) {
	q = strings.TrimSpace(q)
	if raw, ok := domain.ParseChargeID(q); ok {
		if _, err := s.charges.stored(ctx, caller.Scope(), raw); err == nil {
			return raw, nil
		} else if !errors.Is(err, ports.ErrNotFound) {
			return "", err
		}
	}
	if !validTxID(q) {
		return "", ports.ErrNotFound
	}
	return s.txids.FindChargeByTxID(ctx, caller.Scope(), q)
}

// validTxID is the shape of a Pix txid: [a-zA-Z0-9]{26,35}.
func validTxID(s string) bool {
	if len(s) < 26 || len(s) > 35 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Refunds returns a page of the caller's refunds, newest first, and
// whether more follow.
func (s *DashboardReads) Refunds(ctx context.Context, caller Caller, limit, offset int) ([]domain.Refund, bool, error) {
	return s.payments.ListScopeRefunds(ctx, ports.RefundQuery{Scope: caller.Scope(), Limit: limit, Offset: offset})
}

// Transfers returns the caller's latest transfers (at most limit), newest
// first: the split shares it was credited, as its transfer.created events
// carry them (so within the events' retention).
func (s *DashboardReads) Transfers(ctx context.Context, caller Caller, limit int) ([]domain.PublicTransfer, error) {
	page, err := s.events.ListEvents(ctx, ports.EventQuery{Scope: caller.Scope(), Limit: limit,
		Types: []domain.EventType{domain.EventTransferCreated}})
	if err != nil {
		return nil, err
	}
	out := make([]domain.PublicTransfer, 0, len(page.Events))
	for _, ev := range page.Events {
		var env struct {
			Data struct {
				Object domain.PublicTransfer `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			return nil, fmt.Errorf("event %s: %w", ev.ID, err)
		}
		out = append(out, env.Data.Object)
	}
	return out, nil
}
