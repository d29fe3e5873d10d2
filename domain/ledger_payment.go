package domain

import (
	"fmt"
	"time"
)

// paymentPart is one part of what a settling payment brought, booked as an
// entry of its own kind.
type paymentPart struct {
	kind   EntryKind
	amount int64
}

// paymentParts splits the amount c's settling payment brought: for a
// due-date charge the principal (the original less the abatement and the
// discount, at least one centavo), the fine and the interest; for any other
// charge the whole amount.
func paymentParts(c *Charge) []paymentPart {
	b, ok := c.PaidBreakdown()
	if !ok {
		return []paymentPart{{EntryPayment, c.PaidAmount()}}
	}
	return []paymentPart{
		{EntryPayment, b.AmountDue - b.Fine - b.Interest},
		{EntryDueFine, b.Fine},
		{EntryDueInterest, b.Interest},
	}
}

// PaymentEntries credit a settled charge: the money comes from the acquirer
// (or from payer funds, for a charge that was held for review); the fees go
// to their accounts; the net pays the merchant's debt first (owed, from
// disputes), and the rest goes to the merchant, pending until the method's
// holding period ends (or available at once when it is zero).
//
// One EntryPayment carries the principal; a due-date charge paid late adds
// an EntryDueFine and an EntryDueInterest for the fine and the interest, so
// the books tell the merchant's revenue from the late charges. Its discount
// and abatement are not movements: no money arrived for them, and the
// principal is the original less both. The fees and the debt repayment are
// taken from the parts in order (principal, fine, interest), so each entry
// balances and credits the merchant a non-negative amount, and together
// they post exactly what one entry of the whole amount would.
//
// Debts says whom a debt repaid goes to: the account's debt is its
// platform's when it is a sub-account (a SplitRepaymentEntry pays the
// platform), else Quita's; each split's sub-account repays its debt to the
// charge's account from its share first.
func PaymentEntries(newID func() (string, error), c *Charge, holding HoldingPeriods, fromHeld bool, debts Debts, now time.Time) ([]JournalEntry, error) {
	st := c.s.Settlement
	if st == nil || !c.Credited() {
		return nil, fmt.Errorf("ledger: charge %s is not credited", c.s.ID)
	}
	cur := c.s.Currency
	provider, platform, owedLeft := c.s.Fees.Provider, c.s.Fees.Platform, max(debts.Owed, 0)
	source := LedgerAcquirer
	if fromHeld {
		source = LedgerPayerFunds
	}
	shares, _ := c.SplitShares()
	var splitLeft int64
	for _, sh := range shares {
		splitLeft += sh
	}
	var out []JournalEntry
	for _, part := range paymentParts(c) {
		if part.amount == 0 {
			continue
		}
		left := part.amount
		pv := min(provider, left)
		provider, left = provider-pv, left-pv
		pl := min(platform, left)
		platform, left = platform-pl, left-pl
		sp := min(splitLeft, left)
		splitLeft, left = splitLeft-sp, left-sp
		repay := min(left, owedLeft)
		owedLeft, left = owedLeft-repay, left-repay
		merchant := Posting{Account: LedgerAvailable, Currency: cur, Amount: left}
		if h := holding[st.PaidWith]; h > 0 {
			merchant.Account, merchant.ReleaseAt = LedgerPending, st.PaidAt.Add(h).UTC()
		}
		id, err := newID()
		if err != nil {
			return nil, err
		}
		e := JournalEntry{ID: id, AccountID: c.s.AccountID, Mode: c.s.Mode, ChargeID: c.s.ID, Kind: part.kind,
			CreatedAt: now.UTC(), Postings: nonZero(
				Posting{Account: source, Currency: cur, Amount: -part.amount},
				Posting{Account: LedgerProviderFees, Currency: cur, Amount: pv},
				Posting{Account: LedgerPlatformFees, Currency: cur, Amount: pl},
				Posting{Account: LedgerSplitsPayable, Currency: cur, Amount: sp},
				Posting{Account: LedgerMerchantOwed, Currency: cur, Amount: repay},
				merchant,
			)}
		if err := e.Validate(); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if provider+platform != 0 {
		return nil, fmt.Errorf("ledger: charge %s has fees of %d above its amount %d", c.s.ID, c.s.Fees.Provider+c.s.Fees.Platform, c.PaidAmount())
	}
	if splitLeft != 0 {
		return nil, fmt.Errorf("ledger: charge %s has splits of %d above its net", c.s.ID, splitLeft)
	}
	if repaid := max(debts.Owed, 0) - owedLeft; repaid > 0 && debts.Platform != "" {
		id, err := newID()
		if err != nil {
			return nil, err
		}
		out = append(out, SplitRepaymentEntry(id, debts.Platform, c.s.Mode, c.s.ID, cur, repaid, now))
	}
	splits, err := splitEntries(newID, c, shares, holding, debts.SplitOwed, now)
	if err != nil {
		return nil, err
	}
	return append(out, splits...), nil
}

// Debts are what a credit repays first (PaymentEntries): Owed, the debt
// of the charge's account (Balance.Owed), owed to Platform when the
// account is a sub-account ("" when it is not: the debt is Quita's);
// SplitOwed, the debt of each of the charge's split sub-accounts, by
// account id, which is owed to the charge's account.
type Debts struct {
	Owed      int64
	Platform  string
	SplitOwed map[string]int64
}

// splitEntries credit each sub-account of c's splits its share, from
// splits_payable where c's payment entries put it: one EntrySplit per
// split with a share, on the sub-account's wallet, pending as the
// platform's credit would be (same holding period) or available at once.
// A sub-account's share repays its debt to the platform (owed) first, and
// one SplitRepaymentEntry pays the platform what they repaid.
func splitEntries(newID func() (string, error), c *Charge, shares []int64, holding HoldingPeriods, owed map[string]int64, now time.Time) ([]JournalEntry, error) {
	var (
		out    []JournalEntry
		repaid int64
	)
	st, cur := c.s.Settlement, c.s.Currency
	for i, share := range shares {
		if share == 0 {
			continue
		}
		acct := c.s.Splits.Items[i].Account
		repay := min(share, max(owed[acct], 0))
		repaid += repay
		credit := Posting{Account: LedgerAvailable, Currency: cur, Amount: share - repay}
		if h := holding[st.PaidWith]; h > 0 {
			credit.Account, credit.ReleaseAt = LedgerPending, st.PaidAt.Add(h).UTC()
		}
		id, err := newID()
		if err != nil {
			return nil, err
		}
		e := JournalEntry{ID: id, AccountID: acct, Mode: c.s.Mode, ChargeID: c.s.ID, Kind: EntrySplit,
			CreatedAt: now.UTC(), Postings: nonZero(Posting{Account: LedgerSplitsPayable, Currency: cur, Amount: -share},
				Posting{Account: LedgerMerchantOwed, Currency: cur, Amount: repay}, credit)}
		if err := e.Validate(); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if repaid > 0 {
		id, err := newID()
		if err != nil {
			return nil, err
		}
		out = append(out, SplitRepaymentEntry(id, c.s.AccountID, c.s.Mode, c.s.ID, cur, repaid, now))
	}
	return out, nil
}
