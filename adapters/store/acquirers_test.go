package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestAcquirerAccountsSQLite(t *testing.T) {
	t.Parallel()
	testAcquirerAccounts(t, openStore(t, testenv.SQLiteDSN(t)))
}

func TestAcquirerAccountsPostgres(t *testing.T) {
	t.Parallel()
	testAcquirerAccounts(t, openStore(t, testenv.PostgresDSN(t)))
}

func testAcquirerAccounts(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a, b := webhookAccount(t, db), webhookAccount(t, db)
	if _, err := db.GetAcquirerAccount(ctx, a.AccountID, "bcbpix"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("unconfigured: %v", err)
	}
	steps := []ports.AcquirerAccount{
		{AccountID: a.AccountID, Provider: "bcbpix", Sealed: []byte{1, 2, 3}, UpdatedAt: baseTime},
		{AccountID: a.AccountID, Provider: "bcbpix", Sealed: []byte{4, 5}, UpdatedAt: baseTime.Add(time.Minute)}, // replaces
		{AccountID: b.AccountID, Provider: "bcbpix", Sealed: []byte{6}, UpdatedAt: baseTime},
		{AccountID: b.AccountID, Provider: "other", Sealed: []byte{7}, UpdatedAt: baseTime},
	}
	for _, s := range steps {
		if err := db.PutAcquirerAccount(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.GetAcquirerAccount(ctx, a.AccountID, "bcbpix")
	if err != nil || !bytes.Equal(got.Sealed, []byte{4, 5}) || !got.UpdatedAt.Equal(micro(baseTime.Add(time.Minute))) {
		t.Fatalf("get: %+v, %v", got, err)
	}
	list, err := db.ListAcquirerAccounts(ctx, "bcbpix")
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if err := db.PutAcquirerAccount(ctx, ports.AcquirerAccount{AccountID: "acct_missing", Provider: "bcbpix", Sealed: []byte{1},
		UpdatedAt: baseTime}); err == nil {
		t.Error("a configuration for an account that does not exist was stored")
	}

	// Charges are found by txid in their scope only.
	c := newCharge(t, a, baseTime, nil)
	attachPix(t, c, baseTime)
	mustCreate(t, db, c, nil, nil)
	txid := c.Pix().TxID
	tests := []struct {
		name  string
		scope ports.Scope
		txid  string
		want  string
		err   error
	}{
		{"own scope", a, txid, c.ID(), nil},
		{"other account", b, txid, "", ports.ErrNotFound},
		{"other mode", ports.Scope{AccountID: a.AccountID, Mode: domain.ModeTest}, txid, "", ports.ErrNotFound},
		{"unknown txid", a, "nope", "", ports.ErrNotFound},
	}
	for _, tc := range tests {
		id, err := db.FindChargeByTxID(ctx, tc.scope, tc.txid)
		if id != tc.want || !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, id, err, tc.want, tc.err)
		}
	}
}
