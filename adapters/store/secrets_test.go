package store_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

var secretsKey = bytes.Repeat([]byte{7}, 32)

func openSealed(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db := openStore(t, dsn)
	if err := db.SealSecretsWith(secretsKey); err != nil {
		t.Fatal(err)
	}
	return db
}

// The whole webhook contract holds with secrets sealed at rest.
func TestWebhooksSealedSQLite(t *testing.T) {
	t.Parallel()
	runWebhookContract(t, func(t *testing.T) *store.DB { return openSealed(t, testenv.SQLiteDSN(t)) })
}

func TestWebhooksSealedPostgres(t *testing.T) {
	t.Parallel()
	runWebhookContract(t, func(t *testing.T) *store.DB { return openSealed(t, testenv.PostgresDSN(t)) })
}

// security.md, item 15: with a master key no webhook secret is in clear in the
// database; secrets written before the key still work, and a process
// without the key signs nothing with a sealed secret.
func TestWebhookSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := dsn(t)
			plain := openStore(t, url)
			legacy := newEndpoint(t, plain, webhookAccount(t, plain), domain.EventChargeCreated)

			db := openSealed(t, url)
			scope := webhookAccount(t, db)
			e := newEndpoint(t, db, scope, domain.EventChargeCreated)
			if err := db.RotateTransactionSecret(ctx, ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}, "test-tx-secret"); err != nil {
				t.Fatal(err)
			}
			var stored []string
			if err := db.Bun().NewRaw(`SELECT secret FROM webhook_endpoints WHERE id = ?
				UNION ALL SELECT transaction_webhook_secret FROM accounts WHERE id = ?
				UNION ALL SELECT test_transaction_webhook_secret FROM accounts WHERE id = ?`, e.ID, scope.AccountID, scope.AccountID).Scan(ctx, &stored); err != nil {
				t.Fatal(err)
			}
			if len(stored) != 3 {
				t.Fatalf("read %d secrets", len(stored))
			}
			for _, s := range stored {
				if !strings.HasPrefix(s, "sealed:v1:") || strings.Contains(s, e.Secret) || strings.Contains(s, "txsecret") || strings.Contains(s, "test-tx-secret") {
					t.Fatalf("a secret is stored in clear: %q", s)
				}
			}
			// Reads give the secrets back.
			got, err := db.GetEndpoint(ctx, scope, e.ID)
			if err != nil || got.Secret != e.Secret {
				t.Fatalf("sealed endpoint read back: %v", err)
			}
			a, err := db.GetAccount(ctx, scope.AccountID)
			if err != nil || a.TransactionWebhookSecret != "txsecret" || a.TestTransactionWebhookSecret != "test-tx-secret" {
				t.Fatalf("sealed account read back: %v", err)
			}
			if old, err := db.GetEndpoint(ctx, ports.Scope{AccountID: legacy.AccountID, Mode: legacy.Mode}, legacy.ID); err != nil || old.Secret != legacy.Secret {
				t.Fatalf("a secret written before sealing: %v", err)
			}
			// Claims carry the cleartext with the key, and nothing without it.
			seedDeliveries(t, db, scope, "https://merchant.example.com/tx")
			now := baseTime.Add(time.Second)
			claims, err := plain.ClaimDeliveries(ctx, now, now.Add(time.Minute), 100, ports.ClaimCaps{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range claims {
				if c.Delivery.AccountID == scope.AccountID && c.Secret != "" {
					t.Fatalf("a process without the key got a secret for %s", c.Delivery.ID)
				}
			}
			later := now.Add(2 * time.Minute)
			claims, err = db.ClaimDeliveries(ctx, later, later.Add(time.Minute), 100, ports.ClaimCaps{})
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, c := range claims {
				if c.Delivery.AccountID != scope.AccountID {
					continue
				}
				found++
				if want := map[bool]string{true: e.Secret, false: "txsecret"}[c.Delivery.EndpointID != ""]; c.Secret != want {
					t.Fatalf("claim of %s: wrong secret", c.Delivery.ID)
				}
			}
			if found == 0 {
				t.Fatal("no claim of the sealed account")
			}
		})
	}
}
