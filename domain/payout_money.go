package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// PayoutEntry moves a new payout's amount and fee from the merchant's
// available balance into the payout hold. The store refuses it (with
// ErrInsufficientBalance) when available cannot cover it.
func PayoutEntry(id string, p *Payout, now time.Time) JournalEntry {
	s := p.s
	return JournalEntry{ID: id, AccountID: s.AccountID, Mode: s.Mode, PayoutID: s.ID, Kind: EntryPayout, CreatedAt: now.UTC(),
		Postings: []Posting{
			{Account: LedgerAvailable, Currency: s.Currency, Amount: -p.Debit()},
			{Account: LedgerPayoutsHeld, Currency: s.Currency, Amount: p.Debit()},
		}}
}

// PayoutPaidEntry settles a paid payout's hold out of the wallet: the
// amount left through the acquirer, the fee is Quita's.
func PayoutPaidEntry(id string, p *Payout, now time.Time) JournalEntry {
	s := p.s
	return JournalEntry{ID: id, AccountID: s.AccountID, Mode: s.Mode, PayoutID: s.ID, Kind: EntryPayoutPaid, CreatedAt: now.UTC(),
		Postings: nonZero(
			Posting{Account: LedgerPayoutsHeld, Currency: s.Currency, Amount: -p.Debit()},
			Posting{Account: LedgerAcquirer, Currency: s.Currency, Amount: s.Amount},
			Posting{Account: LedgerPixOutFees, Currency: s.Currency, Amount: s.Fee},
		)}
}

// PayoutReleaseEntry gives a failed or cancelled payout's hold (amount and
// fee) back to available.
func PayoutReleaseEntry(id string, p *Payout, now time.Time) JournalEntry {
	s := p.s
	return JournalEntry{ID: id, AccountID: s.AccountID, Mode: s.Mode, PayoutID: s.ID, Kind: EntryPayoutRelease, CreatedAt: now.UTC(),
		Postings: []Posting{
			{Account: LedgerPayoutsHeld, Currency: s.Currency, Amount: -p.Debit()},
			{Account: LedgerAvailable, Currency: s.Currency, Amount: p.Debit()},
		}}
}

// PayoutEntryFor is the entry that goes with a payout's move from prev to
// its current status: the hold when it is created (prev ""), its
// settlement when paid, its release when failed or cancelled, none for
// processing.
func PayoutEntryFor(id string, p *Payout, prev PayoutStatus, now time.Time) (JournalEntry, bool) {
	switch {
	case prev == "":
		return PayoutEntry(id, p, now), true
	case p.s.Status == PayoutPaid:
		return PayoutPaidEntry(id, p, now), true
	case p.s.Status == PayoutFailed, p.s.Status == PayoutCancelled:
		return PayoutReleaseEntry(id, p, now), true
	}
	return JournalEntry{}, false
}

// PayoutEvents lists the events of a payout's move from prev ("" at
// creation) to to: the canonical payout.* event and its legacy
// withdrawal.* name, and withdrawal.status_changed on every change after
// creation. A cancelled payout is announced as failed (the spec's
// payout.failed is "failed or rejected"; its status says cancelled).
func PayoutEvents(prev, to PayoutStatus) []EventType {
	if prev == to {
		return nil
	}
	if prev == "" {
		return []EventType{EventPayoutCreated, EventWithdrawalCreated}
	}
	var out []EventType
	switch to {
	case PayoutPaid:
		out = append(out, EventPayoutPaid, EventWithdrawalCompleted)
	case PayoutFailed, PayoutCancelled:
		out = append(out, EventPayoutFailed, EventWithdrawalFailed)
	case PayoutPending, PayoutProcessing:
	}
	return append(out, EventWithdrawalStatusChanged)
}

// NewPayoutEvents builds the outbox events of a payout's move from prev
// ("" at creation) to its current status. The canonical envelope carries
// the public payout; the legacy one the withdrawal in the legacy shape.
// Event.ChargeID holds the prefixed payout id (the outbox is keyed by the
// object the event is about).
func NewPayoutEvents(p *Payout, prev PayoutStatus, newID func() (string, error), now time.Time) ([]Event, error) {
	types := PayoutEvents(prev, p.s.Status)
	out := make([]Event, 0, len(types))
	for _, t := range types {
		raw, err := newID()
		if err != nil {
			return nil, err
		}
		ev := Event{ID: PrefixEvent + raw, Type: t, AccountID: p.s.AccountID, Mode: p.s.Mode,
			ChargeID: PrefixPayout + p.s.ID, CreatedAt: now.UTC()}
		var body any
		if t.Legacy() {
			d := LegacyData{TransactionID: PrefixPayout + p.s.ID, Amount: p.s.Amount, Status: p.s.Status.Legacy(),
				OccurredAt: Timestamp(now)}
			if prev != "" {
				ps := prev.Legacy()
				d.PreviousStatus = &ps
			}
			body = LegacyEnvelope{Event: t, Data: d}
		} else {
			env := CanonicalEnvelope{ID: ev.ID, Object: "event", APIVersion: APIVersion, Type: t, CreatedAt: Timestamp(now)}
			env.Data.Object = p.Public()
			body = env
		}
		if ev.Payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encode %s envelope: %w", t, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// FeeKeyPixOut is the key of the Pix-out fee among an account's fee
// overrides (`quitad fees set --method PIX_OUT`); it is not a payment
// method.
const FeeKeyPixOut Method = "PIX_OUT"

// PixOutFee is the fee of a payout of amount under schedule s: both parts
// of the schedule, as for a charge.
func PixOutFee(s FeeSchedule, amount int64) int64 {
	return s.Provider.Of(amount) + s.Platform.Of(amount)
}

// MaxPayoutWithin is the largest payout amount that, with its fee under
// s, fits in budget: 0 when none does (a budget of at most the fee), at
// most MaxAmount. Amount plus fee grows with the amount, so it is found
// by bisection.
func MaxPayoutWithin(budget int64, s FeeSchedule) int64 {
	fits := func(a int64) bool {
		debit, err := AddMoney(a, PixOutFee(s, a))
		return err == nil && debit <= budget
	}
	lo, hi := int64(0), min(budget, MaxAmount)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
