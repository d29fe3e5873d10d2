package domain

import (
	"fmt"
	"sort"
	"time"
)

// LedgerAccount names one side of Quita's double-entry ledger. The two
// merchant accounts are the wallet (available and pending, per merchant,
// mode and currency); the others are Quita's own books.
type LedgerAccount string

// Ledger accounts.
const (
	LedgerAvailable      LedgerAccount = "merchant_available"
	LedgerPending        LedgerAccount = "merchant_pending"
	LedgerAcquirer       LedgerAccount = "acquirer_clearing"
	LedgerProviderFees   LedgerAccount = "fees_provider"
	LedgerPlatformFees   LedgerAccount = "fees_platform"
	LedgerPixOutFees     LedgerAccount = "fees_pix_out"
	LedgerRefundsPayable LedgerAccount = "refunds_payable"
	// LedgerPayoutsHeld holds what open payouts took from available
	// (amount and fee) until the Pix is paid or fails.
	LedgerPayoutsHeld LedgerAccount = "payouts_held"
	// LedgerPayerFunds holds payers' money Quita received but the merchant
	// does not own: a Pix held for review, or owed back to its payer
	// (a payer-lock mismatch, a wrong amount, a closed charge, a cancelled
	// hold) until the return is confirmed.
	LedgerPayerFunds LedgerAccount = "payer_funds"
	// LedgerMerchantOwed is the merchant's debt: the part of a dispute the
	// wallet could not cover. Its balance is never positive; the
	// merchant's next credits pay it first.
	LedgerMerchantOwed LedgerAccount = "merchant_owed"
	// LedgerSplitsPayable holds, inside the one transaction that credits
	// a split charge, the sub-accounts' shares between the platform's
	// payment entries and each sub-account's split entry; it nets to zero
	// per charge.
	LedgerSplitsPayable LedgerAccount = "splits_payable"
	// LedgerSplitAdvances is platforms' claim on their sub-accounts: what
	// a platform's wallet covered when a refund or a return took more
	// from a sub-account than its wallet held (the sub-account's debt,
	// merchant_owed), less what the sub-account's later credits repaid.
	// Per platform and wallet it equals its sub-accounts' debt.
	LedgerSplitAdvances LedgerAccount = "split_advances"
)

// EntryKind says what movement a journal entry records.
type EntryKind string

// Entry kinds.
const (
	EntryPayment       EntryKind = "payment"
	EntryRelease       EntryKind = "release"
	EntryRefund        EntryKind = "refund"
	EntryRefundSettled EntryKind = "refund_settled"
	EntryRefundFailed  EntryKind = "refund_failed"
	EntryPayout        EntryKind = "payout"
	EntryPayoutPaid    EntryKind = "payout_paid"
	EntryPayoutRelease EntryKind = "payout_released"
	// EntryPayerFundsReceived: a payer's money arrived that the merchant
	// does not own (held for review or owed back).
	EntryPayerFundsReceived EntryKind = "payer_funds_received"
	// EntryPayerFundsReturned: the payer's bank confirmed a return.
	EntryPayerFundsReturned EntryKind = "payer_funds_returned"
	// EntryDispute: the payer's PSP took money back (a MED return).
	EntryDispute EntryKind = "dispute"
	// EntryDueFine and EntryDueInterest: the fine and the interest a
	// due-date charge's late payment brought, credited beside its payment
	// entry.
	EntryDueFine     EntryKind = "due_fine"
	EntryDueInterest EntryKind = "due_interest"
	// EntrySplit credits a sub-account its share of a platform's charge
	// (the entry's AccountID is the sub-account's, its ChargeID the
	// platform's charge).
	EntrySplit EntryKind = "split"
	// EntrySplitReversal takes back part of a sub-account's share for a
	// refund or a dispute of the platform's charge (AccountID the
	// sub-account).
	EntrySplitReversal EntryKind = "split_reversal"
	// EntrySplitAdvance: the platform covers what a sub-account's wallet
	// could not (AccountID the platform).
	EntrySplitAdvance EntryKind = "split_advance"
	// EntrySplitRepayment: a sub-account's credit repaid its debt, and the
	// platform gets the money (AccountID the platform).
	EntrySplitRepayment EntryKind = "split_repayment"
	// EntrySplitRestored gives a sub-account back a failed refund's split
	// reversal.
	EntrySplitRestored EntryKind = "split_restored"
	// EntrySplitAdvanceBack gives the platform back its advance for a
	// failed refund.
	EntrySplitAdvanceBack EntryKind = "split_advance_back"
)

// Posting is one line of a journal entry. Amounts are signed: a positive
// amount on a merchant account raises the balance. ReleaseAt is set on
// credits to LedgerPending: when the hold becomes available. HoldChargeID,
// on such a credit, is the charge the hold is for when it is not the
// entry's own (a failed refund reopening another charge's hold).
type Posting struct {
	Account      LedgerAccount
	Currency     Currency
	Amount       int64
	ReleaseAt    time.Time
	HoldChargeID string
}

// JournalEntry is one money movement; its postings sum to zero per currency.
type JournalEntry struct {
	ID        string
	AccountID string
	Mode      Mode
	ChargeID  string
	RefundID  string
	PayoutID  string
	// TransferID is the raw id of the transfer an EntryTransfer is a side
	// of.
	TransferID string
	Kind       EntryKind
	Postings   []Posting
	CreatedAt  time.Time
}

// Validate checks the double-entry rule: at least two non-zero postings,
// summing to zero in every currency.
func (e JournalEntry) Validate() error {
	if len(e.Postings) < 2 {
		return fmt.Errorf("ledger: entry %s has %d postings", e.ID, len(e.Postings))
	}
	sums := map[Currency]int64{}
	for _, p := range e.Postings {
		if p.Amount == 0 || p.Currency == "" || p.Account == "" {
			return fmt.Errorf("ledger: entry %s has an empty posting", e.ID)
		}
		sum, err := AddMoney(sums[p.Currency], p.Amount)
		if err != nil {
			return fmt.Errorf("ledger: entry %s: %w", e.ID, err)
		}
		sums[p.Currency] = sum
	}
	for cur, s := range sums {
		if s != 0 {
			return fmt.Errorf("ledger: entry %s does not balance in %s (%d)", e.ID, cur, s)
		}
	}
	return nil
}

// HoldingPeriods is how long each method's money stays pending.
type HoldingPeriods map[Method]time.Duration

// DefaultHoldingPeriods: Pix and instant methods at once, boleto and
// Multibanco one day, card 30 days.
var DefaultHoldingPeriods = HoldingPeriods{
	MethodPix: 0, MethodMBWay: 0, MethodCrypto: 0,
	MethodBoleto: 24 * time.Hour, MethodMultibanco: 24 * time.Hour,
	MethodCreditCard: 30 * 24 * time.Hour,
}

// nonZero drops zero postings, so an entry never carries one.
func nonZero(ps ...Posting) []Posting {
	out := ps[:0]
	for _, p := range ps {
		if p.Amount != 0 {
			out = append(out, p)
		}
	}
	return out
}

// PayerFundsReceivedEntry records a payer's money that arrived for charge c
// and is not the merchant's: held for review, or owed back.
func PayerFundsReceivedEntry(id string, c *Charge, amount int64, now time.Time) JournalEntry {
	return JournalEntry{ID: id, AccountID: c.s.AccountID, Mode: c.s.Mode, ChargeID: c.s.ID, Kind: EntryPayerFundsReceived,
		CreatedAt: now.UTC(), Postings: []Posting{
			{Account: LedgerAcquirer, Currency: c.s.Currency, Amount: -amount},
			{Account: LedgerPayerFunds, Currency: c.s.Currency, Amount: amount},
		}}
}

// PayerFundsReturnedEntry records that a payer got their money back: the
// return of amount for charge c was confirmed by the payer's bank.
func PayerFundsReturnedEntry(id string, c *Charge, amount int64, now time.Time) JournalEntry {
	return JournalEntry{ID: id, AccountID: c.s.AccountID, Mode: c.s.Mode, ChargeID: c.s.ID, Kind: EntryPayerFundsReturned,
		CreatedAt: now.UTC(), Postings: []Posting{
			{Account: LedgerPayerFunds, Currency: c.s.Currency, Amount: -amount},
			{Account: LedgerAcquirer, Currency: c.s.Currency, Amount: amount},
		}}
}

// DisputeEntry debits the merchant for money the payer's PSP took back
// from charge c: available first, then pending, and what the wallet cannot
// cover becomes the merchant's debt (merchant_owed), which later credits
// pay first. It never fails for want of balance: the money is gone either
// way.
//
// reversed is what the charge's splits gave back of the amount
// (SplitReversalEntry), in splits_payable: the platform's wallet bears
// the rest.
func DisputeEntry(id string, c *Charge, d Dispute, reversed int64, bal Balance, now time.Time) (JournalEntry, error) {
	if d.Amount <= 0 || reversed < 0 || reversed > d.Amount {
		return JournalEntry{}, fmt.Errorf("ledger: dispute %s of %d (splits give back %d)", d.ReturnID, d.Amount, reversed)
	}
	debit := d.Amount - reversed
	fromAvail := min(debit, max(bal.Available, 0))
	fromPending := min(debit-fromAvail, max(bal.Pending, 0))
	owed := debit - fromAvail - fromPending
	cur := c.s.Currency
	e := JournalEntry{ID: id, AccountID: c.s.AccountID, Mode: c.s.Mode, ChargeID: c.s.ID, Kind: EntryDispute,
		CreatedAt: now.UTC(), Postings: nonZero(
			Posting{Account: LedgerAvailable, Currency: cur, Amount: -fromAvail},
			Posting{Account: LedgerPending, Currency: cur, Amount: -fromPending},
			Posting{Account: LedgerMerchantOwed, Currency: cur, Amount: -owed},
			Posting{Account: LedgerSplitsPayable, Currency: cur, Amount: -reversed},
			Posting{Account: LedgerAcquirer, Currency: cur, Amount: d.Amount},
		)}
	return e, e.Validate()
}

// ReleaseEntry moves a due hold from pending to available.
func ReleaseEntry(id, accountID string, mode Mode, chargeID string, cur Currency, amount int64, now time.Time) JournalEntry {
	return JournalEntry{ID: id, AccountID: accountID, Mode: mode, ChargeID: chargeID, Kind: EntryRelease, CreatedAt: now.UTC(),
		Postings: []Posting{
			{Account: LedgerPending, Currency: cur, Amount: -amount},
			{Account: LedgerAvailable, Currency: cur, Amount: amount},
		}}
}

// Balance is a merchant wallet in one currency.
type Balance struct {
	Currency  Currency
	Available int64
	Pending   int64
	// Owed is the merchant's debt from disputes (≥ 0): the negated
	// balance of merchant_owed.
	Owed int64
}

// WalletAccount reports whether a posting to a moves a merchant's wallet
// (Balance): available, pending or owed.
func WalletAccount(a LedgerAccount) bool {
	return a == LedgerAvailable || a == LedgerPending || a == LedgerMerchantOwed
}

// Apply adds a posting to one of the wallet's accounts (WalletAccount) to
// b; a posting to another account changes nothing.
func (b *Balance) Apply(p Posting) {
	switch p.Account {
	case LedgerAvailable:
		b.Available += p.Amount
	case LedgerPending:
		b.Pending += p.Amount
	case LedgerMerchantOwed:
		b.Owed -= p.Amount
	}
}

// Total is available plus pending.
func (b Balance) Total() int64 { return b.Available + b.Pending }

// RefundEntry debits the merchant for a new refund — available first, then
// pending — by the amount plus the Pix-out fee the merchant bears; the
// amount becomes payable to the payer. ErrInsufficientBalance when the
// wallet cannot cover it once its debt (owed, from disputes) is counted:
// money owed to Quita never leaves by refund. reversed is what the
// charge's splits gave back of the amount (SplitReversalEntry), in
// splits_payable: the wallet bears the rest.
func RefundEntry(id string, r Refund, reversed int64, bal Balance, now time.Time) (JournalEntry, error) {
	debit, err := AddMoney(r.Amount, r.Fee)
	if err != nil {
		return JournalEntry{}, err
	}
	if reversed < 0 || reversed > r.Amount {
		return JournalEntry{}, fmt.Errorf("ledger: refund %s of %d: splits give back %d", r.ID, r.Amount, reversed)
	}
	debit -= reversed
	total, err := AddMoney(bal.Available, bal.Pending)
	if err != nil {
		return JournalEntry{}, err
	}
	if debit > total-max(bal.Owed, 0) {
		return JournalEntry{}, ErrInsufficientBalance
	}
	fromAvail := min(debit, max(bal.Available, 0))
	fromPending := debit - fromAvail
	e := JournalEntry{ID: id, AccountID: r.AccountID, Mode: r.Mode, ChargeID: r.ChargeID, RefundID: r.ID, Kind: EntryRefund,
		CreatedAt: now.UTC(), Postings: nonZero(
			Posting{Account: LedgerAvailable, Currency: r.Currency, Amount: -fromAvail},
			Posting{Account: LedgerPending, Currency: r.Currency, Amount: -fromPending},
			Posting{Account: LedgerSplitsPayable, Currency: r.Currency, Amount: -reversed},
			Posting{Account: LedgerRefundsPayable, Currency: r.Currency, Amount: r.Amount},
			Posting{Account: LedgerPixOutFees, Currency: r.Currency, Amount: r.Fee},
		)}
	return e, e.Validate()
}

// RefundSettledEntry pays the payer through the acquirer.
func RefundSettledEntry(id string, r Refund, now time.Time) JournalEntry {
	return JournalEntry{ID: id, AccountID: r.AccountID, Mode: r.Mode, ChargeID: r.ChargeID, RefundID: r.ID,
		Kind: EntryRefundSettled, CreatedAt: now.UTC(), Postings: []Posting{
			{Account: LedgerRefundsPayable, Currency: r.Currency, Amount: -r.Amount},
			{Account: LedgerAcquirer, Currency: r.Currency, Amount: r.Amount},
		}}
}

// HoldTake is what one debit took from one hold of pending money: the
// hold's charge, the amount and when the hold was to be released.
type HoldTake struct {
	ChargeID  string
	Amount    int64
	ReleaseAt time.Time
}

// RefundDebit is how a refund's debit (amount plus fee) was split: Available
// from available, Pending from pending, and Takes the holds Pending came
// from. The takes sum to Pending, or to less for a debit written before
// hold takes were recorded. Reversed is what the charge's splits gave
// back of the refund (its splits_payable posting), which the wallet did
// not pay.
type RefundDebit struct {
	Available int64
	Pending   int64
	Takes     []HoldTake
	Reversed  int64
}

// RefundFailedEntry gives a failed refund's debit back to the merchant
// exactly as it was taken: the available part to available, and each hold
// taken to pending again with its charge and release time (a release time
// already past makes the new hold due at once). Pending whose holds the
// debit did not record goes back to pending as one hold of the refund's
// charge due at now, so money taken from pending never becomes available
// in the same entry. What the charge's splits gave back (debit.Reversed)
// returns to splits_payable, whence each sub-account's SplitRestoredEntry
// takes it. An error when debit is not a split of the refund's amount
// plus fee.
func RefundFailedEntry(id string, r Refund, debit RefundDebit, now time.Time) (JournalEntry, error) {
	total, err := AddMoney(r.Amount, r.Fee)
	if err != nil {
		return JournalEntry{}, err
	}
	split, err := AddMoney(debit.Available, debit.Pending)
	if err != nil || debit.Available < 0 || debit.Pending < 0 || debit.Reversed < 0 || split+debit.Reversed != total {
		return JournalEntry{}, fmt.Errorf("ledger: refund %s of %d (fee %d) was debited %d available and %d pending (splits %d)",
			r.ID, r.Amount, r.Fee, debit.Available, debit.Pending, debit.Reversed)
	}
	ps := []Posting{
		{Account: LedgerRefundsPayable, Currency: r.Currency, Amount: -r.Amount},
		{Account: LedgerPixOutFees, Currency: r.Currency, Amount: -r.Fee},
		{Account: LedgerSplitsPayable, Currency: r.Currency, Amount: debit.Reversed},
		{Account: LedgerAvailable, Currency: r.Currency, Amount: debit.Available},
	}
	if ps, err = holdsBack(ps, debit, r.Currency, now); err != nil {
		return JournalEntry{}, fmt.Errorf("ledger: refund %s: %w", r.ID, err)
	}
	e := JournalEntry{ID: id, AccountID: r.AccountID, Mode: r.Mode, ChargeID: r.ChargeID, RefundID: r.ID,
		Kind: EntryRefundFailed, CreatedAt: now.UTC(), Postings: nonZero(ps...)}
	return e, e.Validate()
}

// WalletKey names one merchant wallet.
type WalletKey struct {
	AccountID string
	Mode      Mode
	Currency  Currency
}

// VerifyLedger compares the wallet balances recomputed from postings
// (posted) with the stored balances and the open holds, and reports every
// unbalanced entry, difference and negative balance, sorted.
func VerifyLedger(unbalanced []string, posted, stored map[WalletKey]Balance, held map[WalletKey]int64) []string {
	problems := append([]string(nil), unbalanced...)
	keys := map[WalletKey]bool{}
	for k := range posted {
		keys[k] = true
	}
	for k := range stored {
		keys[k] = true
	}
	for k := range held {
		keys[k] = true
	}
	for k := range keys {
		p, s := posted[k], stored[k]
		name := k.AccountID + "/" + string(k.Mode) + "/" + string(k.Currency)
		if s.Available != p.Available || s.Pending != p.Pending || s.Owed != p.Owed {
			problems = append(problems, fmt.Sprintf("wallet %s: stored available %d pending %d owed %d, postings give available %d pending %d owed %d",
				name, s.Available, s.Pending, s.Owed, p.Available, p.Pending, p.Owed))
		}
		if held[k] != p.Pending {
			problems = append(problems, fmt.Sprintf("wallet %s: open holds sum to %d, postings give pending %d", name, held[k], p.Pending))
		}
		if p.Available < 0 || p.Pending < 0 || p.Owed < 0 {
			problems = append(problems, fmt.Sprintf("wallet %s: negative balance (available %d, pending %d, owed %d)", name, p.Available, p.Pending, p.Owed))
		}
	}
	sort.Strings(problems)
	return problems
}
