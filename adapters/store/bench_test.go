package store_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// BenchmarkCreateCharge measures the hot path of POST /v1/charges at the
// store: an open Pix charge, its two creation events and its idempotency
// record in one transaction. "serial" is the latency of one create;
// "parallel" runs GOMAXPROCS×8 concurrent creators, as an HTTP server
// would, so its ns/op is the inverse of throughput. Building the charge and
// its event envelopes is included, as in a real request.
func BenchmarkCreateCharge(b *testing.B) {
	b.Run("postgres", func(b *testing.B) {
		benchmarkCreateCharge(b, openStore(b, testenv.PostgresDSN(b)))
	})
	b.Run("sqlite", func(b *testing.B) {
		benchmarkCreateCharge(b, openStore(b, testenv.SQLiteDSN(b)))
	})
}

func benchmarkCreateCharge(b *testing.B, db *store.DB) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := createOne(db); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := createOne(db); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func createOne(db *store.DB) error {
	now := time.Now()
	id, err := domain.NewRawID(rand.Reader)
	if err != nil {
		return err
	}
	c, err := domain.NewCharge(domain.NewChargeParams{
		ID: id, AccountID: "acct_bench", Mode: domain.ModeLive, Amount: 1990, Currency: "BRL",
		Methods: []domain.Method{domain.MethodPix}, Description: "Pedido 42",
		Customer: domain.Customer{Name: "Ana", Document: "529.982.247-25"},
		Metadata: map[string]any{"order": "42"}, Now: now,
	})
	if err != nil {
		return err
	}
	pix := domain.PixDetails{BRCode: "00020101021226...6304ABCD", TxID: domain.DeriveTxID(id), Location: "pix.example.com/qr/v2/" + id}
	if err := c.AttachPix(pix, "sandbox", "ref-"+id, now); err != nil {
		return err
	}
	evs, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), links, func() (string, error) {
		return domain.NewRawID(rand.Reader)
	}, now)
	if err != nil {
		return err
	}
	rec := &ports.IdempotencyRecord{
		IdempotencyKey: ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_bench", Mode: domain.ModeLive}, Key: "key-" + id},
		Fingerprint:    "fp", ResourceID: id, StatusCode: 201, Body: evs[0].Payload, CreatedAt: now,
	}
	return db.CreateCharge(context.Background(), c, evs, rec)
}
