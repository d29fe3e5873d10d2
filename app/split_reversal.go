package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// wallets is the wallets one charge change reads, in the charge's mode
// and currency, with the entries the change has computed so far applied:
// a change that debits one wallet twice (two disputes, a reversal and an
// advance) computes the second debit from what the first left.
type wallets struct {
	tx  ports.ChargeTx
	cur domain.Currency
	m   map[string]*domain.Balance
}

func newWallets(tx ports.ChargeTx, cur domain.Currency) *wallets {
	return &wallets{tx: tx, cur: cur, m: map[string]*domain.Balance{}}
}

// of is account's wallet.
func (w *wallets) of(ctx context.Context, account string) (domain.Balance, error) {
	if b := w.m[account]; b != nil {
		return *b, nil
	}
	b, err := w.tx.WalletOf(ctx, account, w.cur)
	if err != nil {
		return domain.Balance{}, err
	}
	w.m[account] = &b
	return b, nil
}

// apply adds es's postings to the wallets read.
func (w *wallets) apply(es ...domain.JournalEntry) {
	for _, e := range es {
		if b := w.m[e.AccountID]; b != nil {
			for _, p := range e.Postings {
				if p.Currency == w.cur {
					b.Apply(p)
				}
			}
		}
	}
}

// takeBack is what taking money back from a split charge asks of its
// sub-accounts: their reversal entries, what they give back in all
// (reversed, in splits_payable for the platform's entry) and what their
// wallets could not cover (short, which the platform advances).
type takeBack struct {
	entries  []domain.JournalEntry
	reversed int64
	short    int64
}

// takeBackSplits reverses c's splits for taken, the amount of the refund
// refundID just reserved or of a dispute just recorded (refundID ""):
// proportionally, or as explicit says (domain.Charge.ReverseSplits); each
// sub-account's wallet gives back its part, available first, then
// pending, and what it cannot becomes its debt to the platform.
func (s *ChargeService) takeBackSplits(ctx context.Context, c *domain.Charge, w *wallets, refundID string, taken int64,
	explicit []domain.SplitReversal, now time.Time,
) (takeBack, error) {
	rs, err := c.ReverseSplits(taken, explicit)
	if err != nil || rs == nil {
		return takeBack{}, err
	}
	var tb takeBack
	for i, it := range c.Splits().Items {
		if rs[i] == 0 {
			continue
		}
		bal, err := w.of(ctx, it.Account)
		if err != nil {
			return takeBack{}, err
		}
		eid, err := s.ids.NewID()
		if err != nil {
			return takeBack{}, err
		}
		e, short, err := domain.SplitReversalEntry(eid, c, it.Account, refundID, rs[i], bal, now)
		if err != nil {
			return takeBack{}, err
		}
		w.apply(e)
		tb.entries = append(tb.entries, e)
		tb.reversed += rs[i]
		tb.short += short
	}
	return tb, nil
}

// advance has platform cover short, what its sub-accounts' wallets could
// not, for charge c: with debt (a dispute) beyond its own wallet as its
// debt, without it (a refund) domain.ErrInsufficientBalance. None when
// short is 0.
func (s *ChargeService) advance(ctx context.Context, c *domain.Charge, w *wallets, platform, refundID string, short int64, debt bool, now time.Time) ([]domain.JournalEntry, error) {
	if short == 0 {
		return nil, nil
	}
	bal, err := w.of(ctx, platform)
	if err != nil {
		return nil, err
	}
	eid, err := s.ids.NewID()
	if err != nil {
		return nil, err
	}
	e, err := domain.AdvanceEntry(eid, platform, c.Mode(), c.ID(), refundID, c.Currency(), short, bal, debt, now)
	if err != nil {
		return nil, err
	}
	w.apply(e)
	return []domain.JournalEntry{e}, nil
}

// restoreSplits gives back what failed refund refundID of c took from its
// sub-accounts and the platform's advance for them, and returns the
// entries.
func (s *ChargeService) restoreSplits(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, refundID string, now time.Time) ([]domain.JournalEntry, error) {
	ds, err := tx.SplitDebits(ctx, refundID)
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	w := newWallets(tx, c.Currency())
	var (
		out    []domain.JournalEntry
		repaid int64
		back   = map[string]int64{}
		adv    *domain.SplitDebit
	)
	for i, d := range ds {
		if d.Advance {
			adv = &ds[i]
			continue
		}
		bal, err := w.of(ctx, d.Account)
		if err != nil {
			return nil, err
		}
		eid, err := s.ids.NewID()
		if err != nil {
			return nil, err
		}
		e, r, err := domain.SplitRestoredEntry(eid, c, refundID, d, bal, now)
		if err != nil {
			return nil, err
		}
		w.apply(e)
		out = append(out, e)
		repaid += r
		back[d.Account] += d.Total()
	}
	if adv != nil && adv.Total() > repaid { // else the repayments gave the platform its advance back already
		eid, err := s.ids.NewID()
		if err != nil {
			return nil, err
		}
		e, err := domain.SplitAdvanceBackEntry(eid, c, refundID, *adv, repaid, now)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, c.RestoreSplits(back)
}

// debts are what a credit of c repays first (domain.Debts): the debt of
// c's account, its platform's when c's account is a sub-account, and the
// debt of each split's sub-account. The platform is read only when the
// account owes; each split's sub-account wallet is read on every credit of
// a split charge (one primary-key read per split, at most MaxSplits).
func debts(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, owed int64) (domain.Debts, error) {
	d := domain.Debts{Owed: owed}
	if owed > 0 {
		p, err := tx.Platform(ctx)
		if err != nil {
			return d, err
		}
		d.Platform = p
	}
	sp := c.Splits()
	if sp == nil {
		return d, nil
	}
	for _, it := range sp.Items {
		bal, err := tx.WalletOf(ctx, it.Account, c.Currency())
		if err != nil {
			return d, err
		}
		if bal.Owed > 0 {
			if d.SplitOwed == nil {
				d.SplitOwed = map[string]int64{}
			}
			d.SplitOwed[it.Account] = bal.Owed
		}
	}
	return d, nil
}
