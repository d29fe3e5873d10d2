package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// Transfers through the SDK: the platform pays a seller, the seller pays
// the platform back through WithAccount, a retry under the same key is
// the same transfer, both sides read and list it, a balance too small is
// insufficient_balance; a seller's payout without a destination goes to
// its payout key.
func TestTransfersAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		ana := must(qc.Subaccounts.Create(ctx, client.SubaccountParams{Name: "Loja da Ana", Document: "529.982.247-25",
			Email: "ana@example.com", PayoutPixKey: "ana@example.com", AutoPayout: true}))(t)
		if !ana.AutoPayout {
			t.Fatalf("auto_payout not set: %+v", ana)
		}
		ch := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 10000}))(t)
		must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{}))(t)

		p := client.TransferParams{Amount: 4000, Destination: ana.ID, Description: "repasse", IdempotencyKey: "sdk-transfer-0001"}
		tr := must(qc.Transfers.Create(ctx, p))(t)
		if !strings.HasPrefix(tr.ID, "tr_") || tr.Object != "transfer" || tr.Status != "paid" || tr.SourceCharge != nil ||
			tr.Destination != ana.ID || tr.Description == nil || *tr.Description != "repasse" {
			t.Fatalf("created %+v", tr)
		}
		if again := must(qc.Transfers.Create(ctx, p))(t); again.ID != tr.ID {
			t.Errorf("the retry made %s, want %s", again.ID, tr.ID)
		}
		seller := qc.With(client.WithAccount(ana.ID))
		back := must(seller.Transfers.Create(ctx, client.TransferParams{Amount: 1000, Destination: tr.SourceAccount}))(t)
		if back.SourceAccount != ana.ID {
			t.Errorf("seller → platform %+v", back)
		}
		if got := must(seller.Transfers.Get(ctx, tr.ID))(t); got.Amount != 4000 {
			t.Errorf("the seller reads %+v", got)
		}
		var listed []string
		for it, err := range qc.Transfers.List(ctx, client.TransferListParams{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, it.ID)
		}
		if len(listed) != 2 || listed[0] != back.ID || listed[1] != tr.ID {
			t.Errorf("listed %v, want %s then %s", listed, back.ID, tr.ID)
		}
		_, err := seller.Transfers.Create(ctx, client.TransferParams{Amount: 1_000_000, Destination: tr.SourceAccount})
		apiErr(t, err, 422, "insufficient_balance")
		_, err = qc.Transfers.Create(ctx, client.TransferParams{Amount: 100, Destination: "acct_" + strings.Repeat("a", 26)})
		apiErr(t, err, 404, "account_not_found")

		po := must(seller.Payouts.Create(ctx, client.PayoutParams{Amount: 500}))(t)
		if po.Destination.Type != client.PixKeyEmail || po.Destination.Key != "a***@example.com" {
			t.Errorf("default destination %+v", po.Destination)
		}
	})
}
