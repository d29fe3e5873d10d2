package domain

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// SplitReversal asks a refund to take back Amount from the share of the
// split of Account, instead of the proportional rule.
type SplitReversal struct {
	Account string
	Amount  int64
}

// ErrSplitReversalInvalid: a refund's reverse_splits names an account that
// is not one of the charge's splits, or asks more of a split than its
// share has left, or more in all than the refund.
var ErrSplitReversalInvalid = errors.New("reverse_splits does not fit the charge's splits")

// mulDiv is a × b / c rounded down, for 0 ≤ a, b and 0 < c with a × b / c
// fitting int64 (a ≤ c here, so the result is at most b).
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// ReverseSplits records that taken was just taken back from c, a
// credited split charge, by a refund reserved or a dispute recorded (call
// it after ReserveRefund or RecordDispute), and returns what each split
// gives back of its share, in the splits' order; nil for a charge without
// splits.
//
// The rule, with explicit nil: each split gives back what its share has
// left × taken ÷ what the charge had left to take back before (its
// refundable amount plus taken), rounded down. Taking back everything
// left takes back every share's rest exactly, and a split never gives back
// more than its proportion of all that was taken. When earlier refunds
// had the platform bear more than its part (reverse_splits), the shares
// left may exceed what is left to take back; the divisor is then the
// shares left, so the splits together never give back more than taken.
// With explicit (a refund's reverse_splits), each named split gives back
// the amount named (at most what its share has left), the others nothing,
// and the amounts may add up to at most taken. The platform bears what
// the splits do not give back.
func (c *Charge) ReverseSplits(taken int64, explicit []SplitReversal) ([]int64, error) {
	shares, _ := c.SplitShares()
	if shares == nil {
		if len(explicit) > 0 {
			return nil, ErrSplitReversalInvalid
		}
		return nil, nil
	}
	items := c.s.Splits.Items
	out := make([]int64, len(items))
	if explicit != nil {
		var sum int64
		for _, r := range explicit {
			i := c.splitIndex(r.Account)
			if i < 0 || r.Amount < 0 || out[i] != 0 || r.Amount > shares[i]-items[i].Reversed {
				return nil, ErrSplitReversalInvalid
			}
			out[i] = r.Amount
			sum += r.Amount
			if sum > taken {
				return nil, ErrSplitReversalInvalid
			}
		}
	} else if taken > 0 {
		var left int64
		for i, it := range items {
			left += max(shares[i]-it.Reversed, 0)
		}
		before := max(c.RefundableAmount()+taken, left, taken)
		for i, it := range items {
			out[i] = mulDiv(max(shares[i]-it.Reversed, 0), taken, before)
		}
	}
	for i := range items {
		c.s.Splits.Items[i].Reversed += out[i]
	}
	return out, nil
}

// RestoreSplits gives back to c's splits what a failed refund had taken
// from them (amounts by account).
func (c *Charge) RestoreSplits(byAccount map[string]int64) error {
	for acct, amount := range byAccount {
		i := c.splitIndex(acct)
		if i < 0 || amount < 0 || amount > c.s.Splits.Items[i].Reversed {
			return fmt.Errorf("ledger: charge %s: cannot restore %d to split %s", c.s.ID, amount, acct)
		}
		c.s.Splits.Items[i].Reversed -= amount
	}
	return nil
}

func (c *Charge) splitIndex(account string) int {
	if c.s.Splits == nil {
		return -1
	}
	for i, it := range c.s.Splits.Items {
		if it.Account == account {
			return i
		}
	}
	return -1
}

// SplitReversalEntry takes back amount of a sub-account's share of split
// charge c for a refund (refundID) or a dispute (refundID ""): from the
// sub-account's wallet bal, available first, then pending, and what the
// wallet cannot cover becomes its debt (merchant_owed), which its
// platform covers at once (SplitAdvanceEntry with the returned shortfall).
// The amount goes to splits_payable, where the platform's refund or
// dispute entry takes it.
func SplitReversalEntry(id string, c *Charge, account, refundID string, amount int64, bal Balance, now time.Time) (JournalEntry, int64, error) {
	fromAvail := min(amount, max(bal.Available, 0))
	fromPending := min(amount-fromAvail, max(bal.Pending, 0))
	short := amount - fromAvail - fromPending
	cur := c.s.Currency
	e := JournalEntry{ID: id, AccountID: account, Mode: c.s.Mode, ChargeID: c.s.ID, RefundID: refundID, Kind: EntrySplitReversal,
		CreatedAt: now.UTC(), Postings: nonZero(
			Posting{Account: LedgerAvailable, Currency: cur, Amount: -fromAvail},
			Posting{Account: LedgerPending, Currency: cur, Amount: -fromPending},
			Posting{Account: LedgerMerchantOwed, Currency: cur, Amount: -short},
			Posting{Account: LedgerSplitsPayable, Currency: cur, Amount: amount},
		)}
	return e, short, e.Validate()
}

// SplitAdvanceEntry has the platform cover amount its sub-accounts'
// wallets could not (their debt to it): from the platform's wallet bal,
// available first, then pending; with debt, what even that cannot cover
// becomes the platform's own debt (a dispute: the money is gone either
// way), and without it ErrInsufficientBalance (a refund: money that is not
// there is not refunded). The amount goes to split_advances, the
// platform's claim on its sub-accounts, which their later credits repay
// (SplitRepaymentEntry).
func SplitAdvanceEntry(id string, c *Charge, refundID string, amount int64, bal Balance, debt bool, now time.Time) (JournalEntry, error) {
	return AdvanceEntry(id, c.s.AccountID, c.s.Mode, c.s.ID, refundID, c.s.Currency, amount, bal, debt, now)
}

// AdvanceEntry is SplitAdvanceEntry for platform platformID's wallet bal
// in mode and cur, recorded against charge chargeID (a split charge of
// the platform's, or a sub-account's own charge).
func AdvanceEntry(id, platformID string, mode Mode, chargeID, refundID string, cur Currency, amount int64, bal Balance, debt bool, now time.Time) (JournalEntry, error) {
	fromAvail := min(amount, max(bal.Available, 0))
	fromPending := min(amount-fromAvail, max(bal.Pending, 0))
	owed := amount - fromAvail - fromPending
	if owed > 0 && !debt {
		return JournalEntry{}, ErrInsufficientBalance
	}
	e := JournalEntry{ID: id, AccountID: platformID, Mode: mode, ChargeID: chargeID, RefundID: refundID, Kind: EntrySplitAdvance,
		CreatedAt: now.UTC(), Postings: nonZero(
			Posting{Account: LedgerAvailable, Currency: cur, Amount: -fromAvail},
			Posting{Account: LedgerPending, Currency: cur, Amount: -fromPending},
			Posting{Account: LedgerMerchantOwed, Currency: cur, Amount: -owed},
			Posting{Account: LedgerSplitAdvances, Currency: cur, Amount: amount},
		)}
	return e, e.Validate()
}

// SplitRepaymentEntry pays platform platformID amount of what a
// sub-account owed it: a credit of the sub-account repaid its debt
// (merchant_owed) by amount, and the platform's claim (split_advances)
// becomes the platform's available money.
func SplitRepaymentEntry(id, platformID string, mode Mode, chargeID string, cur Currency, amount int64, now time.Time) JournalEntry {
	return JournalEntry{ID: id, AccountID: platformID, Mode: mode, ChargeID: chargeID, Kind: EntrySplitRepayment,
		CreatedAt: now.UTC(), Postings: []Posting{
			{Account: LedgerSplitAdvances, Currency: cur, Amount: -amount},
			{Account: LedgerAvailable, Currency: cur, Amount: amount},
		}}
}

// SplitDebit is what a refund's split reversal took from one
// sub-account's wallet (Account) — available, pending with its hold
// takes, and Owed, the shortfall that became its debt — or, with Advance,
// what the platform's advance for the refund took from the platform's.
type SplitDebit struct {
	Account string
	Advance bool
	RefundDebit
	Owed int64
}

// Total is what the debit took in all.
func (d SplitDebit) Total() int64 { return d.Available + d.Pending + d.Owed }

// SplitRestoredEntry gives a sub-account back what a failed refund's
// reversal took from it (d): available to available, each hold taken to
// pending again, and its debt cancelled — but what of that debt the
// sub-account has repaid since (its wallet bal owes less than d.Owed)
// comes back as available money, since it paid it. It returns the entry
// and that repaid part, which the platform gives back (SplitAdvanceBack).
func SplitRestoredEntry(id string, c *Charge, refundID string, d SplitDebit, bal Balance, now time.Time) (JournalEntry, int64, error) {
	cur := c.s.Currency
	cancel := min(d.Owed, max(bal.Owed, 0))
	repaid := d.Owed - cancel
	ps := []Posting{
		{Account: LedgerSplitsPayable, Currency: cur, Amount: -d.Total()},
		{Account: LedgerAvailable, Currency: cur, Amount: d.Available + repaid},
		{Account: LedgerMerchantOwed, Currency: cur, Amount: cancel},
	}
	ps, err := holdsBack(ps, d.RefundDebit, cur, now)
	if err != nil {
		return JournalEntry{}, 0, fmt.Errorf("ledger: split reversal of refund %s on %s: %w", refundID, d.Account, err)
	}
	e := JournalEntry{ID: id, AccountID: d.Account, Mode: c.s.Mode, ChargeID: c.s.ID, RefundID: refundID, Kind: EntrySplitRestored,
		CreatedAt: now.UTC(), Postings: nonZero(ps...)}
	return e, repaid, e.Validate()
}

// SplitAdvanceBackEntry gives the platform back its advance d for a
// refund that failed, less repaid: what its sub-accounts repaid of that
// advance since, which reached it already (SplitRepaymentEntry) and which
// the failed refund gives back to them (SplitRestoredEntry).
func SplitAdvanceBackEntry(id string, c *Charge, refundID string, d SplitDebit, repaid int64, now time.Time) (JournalEntry, error) {
	cur := c.s.Currency
	back := d.Total() - repaid
	if back < 0 {
		return JournalEntry{}, fmt.Errorf("ledger: refund %s: sub-accounts repaid %d of an advance of %d", refundID, repaid, d.Total())
	}
	// Repaid money came back as available: take it from what the advance
	// had taken from available first, then from pending.
	avail := max(d.Available-repaid, 0)
	fromPending := repaid - (d.Available - avail)
	pend := RefundDebit{Pending: d.Pending - fromPending}
	left := pend.Pending
	for _, t := range d.Takes {
		if left == 0 {
			break
		}
		t.Amount = min(t.Amount, left)
		left -= t.Amount
		pend.Takes = append(pend.Takes, t)
	}
	ps := []Posting{
		{Account: LedgerSplitAdvances, Currency: cur, Amount: -back},
		{Account: LedgerAvailable, Currency: cur, Amount: avail},
		{Account: LedgerMerchantOwed, Currency: cur, Amount: d.Owed},
	}
	ps, err := holdsBack(ps, pend, cur, now)
	if err != nil {
		return JournalEntry{}, err
	}
	e := JournalEntry{ID: id, AccountID: c.s.AccountID, Mode: c.s.Mode, ChargeID: c.s.ID, RefundID: refundID, Kind: EntrySplitAdvanceBack,
		CreatedAt: now.UTC(), Postings: nonZero(ps...)}
	return e, e.Validate()
}

// holdsBack appends to ps the postings that give debit's pending part back
// to pending: each hold taken with its charge and release time, and what
// no hold take records as one hold due at now.
func holdsBack(ps []Posting, debit RefundDebit, cur Currency, now time.Time) ([]Posting, error) {
	untracked := debit.Pending
	for _, t := range debit.Takes {
		if t.Amount <= 0 || t.Amount > untracked || t.ReleaseAt.IsZero() {
			return nil, fmt.Errorf("hold take of %d (release %s) does not fit its pending debit of %d", t.Amount, t.ReleaseAt, debit.Pending)
		}
		untracked -= t.Amount
		ps = append(ps, Posting{Account: LedgerPending, Currency: cur, Amount: t.Amount, ReleaseAt: t.ReleaseAt.UTC(), HoldChargeID: t.ChargeID})
	}
	return append(ps, Posting{Account: LedgerPending, Currency: cur, Amount: untracked, ReleaseAt: now.UTC()}), nil
}
