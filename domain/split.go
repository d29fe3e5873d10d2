package domain

import (
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// FeePayer says who bears a split charge's fees. The values are API
// strings: add, never rename.
type FeePayer string

// Fee payers.
const (
	// FeePayerPlatform: the platform bears the fees; a fixed split is paid
	// its amount as given.
	FeePayerPlatform FeePayer = "platform"
	// FeePayerProportional: each party bears the fees in proportion to
	// its part of the amount; a fixed split is paid its amount less its
	// part of the fees.
	FeePayerProportional FeePayer = "proportional"
)

// MaxSplits bounds the splits of one charge.
const MaxSplits = 20

// Split is one seller's part of a charge: a fixed Amount, or Percent in
// hundredths of a percent (1250 is 12.50 %) of the charge's net. Exactly
// one of the two is set. Reversed is what refunds and disputes have taken
// back of the split's share so far (ReverseSplits).
type Split struct {
	Account  string
	Amount   int64
	Percent  int64
	Reversed int64
}

// Splits is how a platform's charge is shared among its sub-accounts.
type Splits struct {
	FeePayer FeePayer
	Items    []Split
}

// ErrSplitAccountInvalid: a split names an account that is not a live
// sub-account of the charge's account.
var ErrSplitAccountInvalid = errors.New("split account is not a live sub-account of this account")

// SplitAccountError is ErrSplitAccountInvalid for the split at Index.
type SplitAccountError struct{ Index int }

func (e *SplitAccountError) Error() string { return ErrSplitAccountInvalid.Error() }

// Unwrap returns ErrSplitAccountInvalid.
func (e *SplitAccountError) Unwrap() error { return ErrSplitAccountInvalid }

// percentScale is 100 % in hundredths of a percent.
const percentScale = 10_000

// ParseSplitPercent reads a percent of at most two decimals, greater than
// 0 and at most 100 ("12.5", "12.50", "100"), as hundredths of a percent.
func ParseSplitPercent(s string) (int64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 3 || !allDigits(whole) || (dot && (frac == "" || len(frac) > 2 || !allDigits(frac))) {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac+strings.Repeat("0", 2-len(frac)), 10, 64)
	p := w*100 + f
	return p, p > 0 && p <= percentScale
}

// FormatSplitPercent writes hundredths of a percent with two decimals.
func FormatSplitPercent(p int64) string {
	return strconv.FormatInt(p/100, 10) + "." + strconv.FormatInt(100+p%100, 10)[1:]
}

// NewSplits validates a charge's splits against its net as estimated at
// creation (the amount less the fees the account's schedule would take):
// at most MaxSplits, each naming an acct_ id at most once with a positive
// amount or a percent, and the shares they would get (SplitShares) not
// exceeding the net. feePayer "" is FeePayerPlatform. Errors name
// FieldSplits, FieldFeePayer or, indexed, FieldSplitAccount,
// FieldSplitAmount, FieldSplitPercent. Which accounts are live
// sub-accounts is the caller's check. Nil splits for none.
func NewSplits(items []Split, feePayer FeePayer, amount, net int64) (*Splits, error) {
	switch feePayer {
	case "":
		feePayer = FeePayerPlatform
	case FeePayerPlatform, FeePayerProportional:
	default:
		return nil, Invalid(FieldFeePayer, "%s must be platform or proportional", FieldFeePayer)
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > MaxSplits {
		return nil, Invalid(FieldSplits, "%s takes at most %d entries", FieldSplits, MaxSplits)
	}
	seen := make(map[string]bool, len(items))
	var fixed, percent int64
	for i, it := range items {
		indexed := func(f Field, format string, args ...any) error {
			e := Invalid(f, format, args...)
			e.Indexed, e.Index = true, i
			return e
		}
		if _, ok := ParseAccountID(it.Account); !ok {
			return nil, indexed(FieldSplitAccount, "%s must be a sub-account id (acct_...)", FieldSplitAccount)
		}
		if seen[it.Account] {
			return nil, indexed(FieldSplitAccount, "%s names an account twice", FieldSplits)
		}
		seen[it.Account] = true
		switch {
		case (it.Amount != 0) == (it.Percent != 0):
			return nil, indexed(FieldSplitAmount, "each of %s needs exactly one of amount or percent", FieldSplits)
		case it.Amount < 0:
			return nil, indexed(FieldSplitAmount, "%s must be greater than 0", FieldSplitAmount)
		case it.Percent < 0 || it.Percent > percentScale:
			return nil, indexed(FieldSplitPercent, "%s must be greater than 0 and at most 100", FieldSplitPercent)
		}
		fixed += min(it.Amount, amount+1) // bounded: a sum over amount is refused below
		percent += it.Percent
	}
	s := &Splits{FeePayer: feePayer, Items: items}
	if fixed > amount || percent > percentScale {
		return nil, Invalid(FieldSplits, "the %s add up to more than the charge's net amount", FieldSplits)
	}
	if s.wants(amount, max(net, 0)) > max(net, 0) {
		return nil, Invalid(FieldSplits, "the %s add up to more than the charge's net amount", FieldSplits)
	}
	return s, nil
}

// wants is what the splits ask of net before any is cut short.
func (s *Splits) wants(gross, net int64) int64 {
	var total int64
	for _, it := range s.Items {
		total += s.want(it, gross, net)
	}
	return total
}

// want is the share split it asks of net: a percent of the net, rounded
// down to the centavo; a fixed amount as given when the platform bears the
// fees, or its proportion of the net (amount × net / gross, rounded down)
// when the fees are shared.
func (s *Splits) want(it Split, gross, net int64) int64 {
	switch {
	case it.Percent > 0:
		return net/percentScale*it.Percent + net%percentScale*it.Percent/percentScale
	case s.FeePayer == FeePayerProportional && gross > 0:
		hi, lo := bits.Mul64(uint64(it.Amount), uint64(net))
		if hi >= uint64(gross) {
			return it.Amount
		}
		q, _ := bits.Div64(hi, lo, uint64(gross))
		return int64(q)
	}
	return it.Amount
}

// Shares divides net, what a payment of gross left once the fees were
// taken, among the splits in order and the platform: each split gets
// what it asks (want) or what is left, whichever is less, and the
// platform the rest. Every share is at least 0 and the shares plus the
// platform's make net exactly. A negative net is read as 0.
func (s *Splits) Shares(gross, net int64) (shares []int64, platform int64) {
	left := max(net, 0)
	shares = make([]int64, len(s.Items))
	for i, it := range s.Items {
		share := min(max(s.want(it, gross, max(net, 0)), 0), left)
		shares[i], left = share, left-share
	}
	return shares, left
}

func (s *Splits) clone() *Splits {
	if s == nil {
		return nil
	}
	return &Splits{FeePayer: s.FeePayer, Items: slices.Clone(s.Items)}
}

// Splits returns the charge's splits, nil for none.
func (c *Charge) Splits() *Splits { return c.s.Splits.clone() }

// Net is what the charge's settling payment left once the fees were
// taken (0 before it was credited).
func (c *Charge) Net() int64 {
	if !c.credited() {
		return 0
	}
	return c.s.Fees.Net(c.PaidAmount())
}

// SplitShares are each split's share of the charge's net and the
// platform's (Splits.Shares); nil when the charge has no splits or was
// not credited.
func (c *Charge) SplitShares() (shares []int64, platform int64) {
	if c.s.Splits == nil || !c.credited() {
		return nil, 0
	}
	return c.s.Splits.Shares(c.PaidAmount(), c.Net())
}

// Split statuses on the wire.
const (
	SplitPending   = "pending"
	SplitPaid      = "paid"
	SplitCancelled = "cancelled"
)

// PublicSplit is one split as the charge shows it: the share credited to
// the sub-account (null until the charge is paid for a percent split,
// whose net is known only then), and where it stands.
type PublicSplit struct {
	Account string  `json:"account"`
	Amount  *int64  `json:"amount"`
	Percent *string `json:"percent,omitempty"`
	Status  string  `json:"status"`
	// AmountReversed is what refunds and returns took back of the share.
	AmountReversed int64 `json:"amount_reversed"`
}

// publicSplits renders the splits onto out.
func (c *Charge) publicSplits(out *PublicCharge) {
	splits, payer := c.PublicSplits()
	if splits != nil {
		out.Splits, out.FeePayer = splits, &payer
	}
}

// PublicSplits are the charge's splits as every wire format shows them,
// each with its share and status, and who bears the fees; nil for a
// charge without splits.
func (c *Charge) PublicSplits() ([]PublicSplit, FeePayer) {
	sp := c.s.Splits
	if sp == nil {
		return nil, ""
	}
	shares, _ := c.SplitShares()
	status := SplitPending
	switch {
	case shares != nil:
		status = SplitPaid
	case c.s.Status.Terminal():
		status = SplitCancelled
	}
	out := make([]PublicSplit, len(sp.Items))
	for i, it := range sp.Items {
		ps := PublicSplit{Account: it.Account, Status: status, AmountReversed: it.Reversed}
		switch {
		case shares != nil:
			v := shares[i]
			ps.Amount = &v
		case it.Percent == 0:
			v := it.Amount
			ps.Amount = &v
		}
		if it.Percent > 0 {
			p := FormatSplitPercent(it.Percent)
			ps.Percent = &p
		}
		out[i] = ps
	}
	return out, sp.FeePayer
}

// ErrSplitsAttached: a charge's splits are set once, at create.
var ErrSplitsAttached = errors.New("charge splits are set once, before the charge is opened")

// AttachSplits sets the splits of a charge being created (PENDING, before
// its acquirer data): its splits were validated by NewSplits and their
// accounts by the caller.
func (c *Charge) AttachSplits(s *Splits) error {
	if c.s.Splits != nil || c.s.Status != TxPending || c.s.Pix != nil {
		return ErrSplitsAttached
	}
	c.s.Splits = s.clone()
	return nil
}
