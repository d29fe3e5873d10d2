package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// A marketplace through the SDK: sellers created, listed and updated; a
// charge split between them paid; a split payment; each seller's share read in its own
// wallet through WithAccount; a disabled seller can no longer be named.
func TestSubaccountsAndSplitsAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		ana := must(qc.Subaccounts.Create(ctx, client.SubaccountParams{Name: "Loja da Ana", Document: "529.982.247-25",
			Email: "ana@example.com", PayoutPixKey: "ana@example.com"}))(t)
		bia := must(qc.Subaccounts.Create(ctx, client.SubaccountParams{Name: "Bia Doces", Document: "11.222.333/0001-81",
			Email: "bia@example.com"}))(t)
		if !strings.HasPrefix(ana.ID, "acct_") || ana.Object != "subaccount" || ana.Status != "active" ||
			strings.Contains(ana.Document, "52998224725") || ana.PayoutPixKey == nil || *ana.PayoutPixKey == "ana@example.com" {
			t.Fatalf("created %+v", ana)
		}
		var listed []string
		for s, err := range qc.Subaccounts.List(ctx, client.SubaccountListParams{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, s.ID)
		}
		if len(listed) != 2 || listed[0] != bia.ID || listed[1] != ana.ID {
			t.Fatalf("listed %v, want Bia then Ana", listed)
		}
		name := "Ana Bolos"
		if u := must(qc.Subaccounts.Update(ctx, ana.ID, client.SubaccountUpdate{Name: &name}))(t); u.Name != name {
			t.Fatalf("updated %+v", u)
		}

		amount := int64(3000)
		ch := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 10000, Splits: []client.Split{
			{Account: ana.ID, Amount: &amount}, {Account: bia.ID, Percent: "10.00"}}}))(t)
		if len(ch.Splits) != 2 || ch.Splits[0].Status != "pending" || ch.FeePayer != client.FeePayerPlatform {
			t.Fatalf("split charge %+v", ch)
		}
		paid := must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{}))(t)
		if len(paid.Splits) != 2 || paid.Splits[0].Status != "paid" || paid.Splits[0].Amount == nil || *paid.Splits[0].Amount != 3000 ||
			paid.Splits[1].Amount == nil || *paid.Splits[1].Amount <= 0 {
			t.Fatalf("paid split charge %+v", paid.Splits)
		}
		for _, sp := range paid.Splits {
			b := must(qc.With(client.WithAccount(sp.Account)).Wallets.Balance(ctx))(t)
			if b.Total != *sp.Amount {
				t.Errorf("%s's wallet holds %d, want its share %d", sp.Account, b.Total, *sp.Amount)
			}
		}
		// A refund of 1000 where Ana gives back 400 of it, Bia nothing.
		txID := "tx_" + strings.TrimPrefix(ch.ID, "ch_")
		must(qc.Payments.Refund(ctx, txID, client.RefundParams{Amount: 1000,
			ReverseSplits: &[]client.SplitReversal{{Account: ana.ID, Amount: 400}}}))(t)
		if got := must(qc.Charges.Get(ctx, ch.ID))(t); got.Splits[0].AmountReversed != 400 || got.Splits[1].AmountReversed != 0 {
			t.Errorf("after the refund: %+v", got.Splits)
		}
		if b := must(qc.With(client.WithAccount(ana.ID)).Wallets.Balance(ctx))(t); b.Total != 3000-400 {
			t.Errorf("Ana holds %d after giving back 400", b.Total)
		}

		// The payments format takes and shows the same splits.
		tx := must(qc.Payments.Create(ctx, client.PaymentParams{Amount: 10000, PaymentMethods: []string{client.MethodPix},
			FeePayer: client.FeePayerProportional, Splits: []client.Split{{Account: ana.ID, Amount: &amount}}}))(t)
		got := must(qc.Payments.Get(ctx, tx.ID))(t)
		if len(got.Splits) != 1 || got.Splits[0].Account != ana.ID || got.Splits[0].Status != "PENDING" || got.FeePayer != client.FeePayerProportional {
			t.Fatalf("split payment %+v", got)
		}

		must(qc.Subaccounts.Disable(ctx, bia.ID))(t)
		_, err := qc.With(client.WithAccount(bia.ID)).Wallets.Balance(ctx)
		apiErr(t, err, 403, "subaccount_disabled")
		_, err = qc.With(client.WithAccount("acct_" + strings.Repeat("a", 26))).Wallets.Balance(ctx)
		apiErr(t, err, 404, "account_not_found")
	})
}
