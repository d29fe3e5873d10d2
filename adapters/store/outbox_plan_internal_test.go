package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/uptrace/bun"
)

// A dispatch pass reads a legacy event's charge once (its URL, and
// whether its payload is needed) and the other events' charges not at
// all: with the LATERAL pulled up into a join, Postgres probed charges for
// every event; with two subqueries, twice per legacy event.
func TestOutboxReadProbesChargesOncePerLegacyEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := migratedFastConn(t)
	var seqs []int64
	legacy := 0
	for i := range 10 {
		typ := "charge.created"
		if i%2 == 1 {
			typ = "payment.created"
			legacy++
		}
		var seq int64
		err := conn.QueryRow(ctx, `INSERT INTO charge_events (id, account_id, mode, charge_id, type, payload, created_at)
			VALUES ($1, 'acct_plan', 'live', $2, $3, '\x7b7d', now()) RETURNING seq`,
			fmt.Sprintf("ev_plan%d", i), fmt.Sprintf("ch_plan%d", i/2), typ).Scan(&seq)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	var plan []string
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, pinIndexPlan); err != nil {
			return err
		}
		var rows []outboxRow
		r, err := tx.QueryContext(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+outboxEventsQuery(tx, &rows, seqs).String())
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var line string
			if err := r.Scan(&line); err != nil {
				return err
			}
			plan = append(plan, line)
		}
		return r.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	loops := regexp.MustCompile(`loops=(\d+)`)
	probes := 0
	for _, line := range plan {
		if strings.Contains(line, " on charges ") {
			m := loops.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("no loops in %q", line)
			}
			var n int
			fmt.Sscan(m[1], &n)
			probes += n
		}
	}
	if probes != legacy {
		t.Errorf("the pass probed charges %d times for %d events, %d of them legacy; want %d:\n%s",
			probes, len(seqs), legacy, legacy, strings.Join(plan, "\n"))
	}
}
