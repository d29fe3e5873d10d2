package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// The history tables are partitioned by month on Postgres: the months
// ahead are made by EnsurePartitions, a month wholly past the retention is
// dropped whole — its events' answers given back to their idempotency
// records first, and not while it holds an undispatched event — and the
// rows of the month the cut falls in are deleted as rows.
func TestHistoryPartitionsDropWholeMonths(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := openStore(t, testenv.PostgresDSN(t))
	parts := func(table string) map[string]bool {
		t.Helper()
		var names []string
		if err := db.Bun().NewRaw(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = ?::regclass`, table).Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, n := range names {
			out[n] = true
		}
		return out
	}
	now := time.Now().UTC()
	for _, table := range []string{"charge_events", "request_logs"} {
		got := parts(table)
		for m := range store.PartitionMonthsAhead + 1 {
			month := time.Date(now.Year(), now.Month()+time.Month(m), 1, 0, 0, 0, 0, time.UTC)
			if name := table + "_p" + month.Format("200601"); !got[name] {
				t.Errorf("migrated %s has no partition %s: %v", table, name, got)
			}
		}
		if !got[table+"_default"] {
			t.Errorf("%s has no default partition", table)
		}
	}
	if n, err := db.EnsurePartitions(ctx); err != nil || n != 0 {
		t.Errorf("EnsurePartitions right after the migration made %d (err %v), want none", n, err)
	}

	// Two old months: rows written before their partitions exist land in
	// the default partition and move into the month when it is made.
	may := time.Date(2025, 5, 10, 12, 0, 0, 0, time.UTC)
	june := time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)
	var answered []*ports.IdempotencyRecord
	for i, at := range []time.Time{may, may.Add(time.Hour), june} {
		c := newCharge(t, liveA, at, nil)
		attachPix(t, c, at)
		evs := chargeEvents(t, c, "", domain.CreationEvents(), at)
		body, err := json.Marshal(c.Public(links))
		if err != nil {
			t.Fatal(err)
		}
		rec := idemRecord(liveA, fmt.Sprintf("partition-answer-%d", i), c.ID())
		rec.Body, rec.AnswerEvent = body, evs[0].ID
		mustCreate(t, db, c, evs, rec)
		answered = append(answered, rec)
	}
	for _, m := range []string{"2025-05-01", "2025-06-01"} {
		if _, err := db.Bun().ExecContext(ctx, "SELECT quita_month_partition('charge_events', ?::date)", m); err != nil {
			t.Fatal(err)
		}
	}
	countIn := func(part string) (n int) {
		t.Helper()
		if err := db.Bun().NewRaw("SELECT count(*) FROM "+part).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if a, b, d := countIn("charge_events_p202505"), countIn("charge_events_p202506"), countIn("charge_events_default"); a != 2 || b != 1 || d != 0 {
		t.Fatalf("rows by partition: May %d, June %d, default %d; want 2, 1, 0 (moved out of the default)", a, b, d)
	}

	// Undispatched, May stays whole.
	cut := time.Date(2025, 6, 20, 0, 0, 0, 0, time.UTC)
	if n, err := db.DeleteEventsBefore(ctx, cut, 100); err != nil || n != 0 || !parts("charge_events")["charge_events_p202505"] {
		t.Fatalf("the sweep of undispatched events removed %d (err %v), want none", n, err)
	}
	if _, err := db.DispatchEvents(ctx, 100, func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	// May goes whole; June's row before the cut goes as a row.
	if n, err := db.DeleteEventsBefore(ctx, cut, 100); err != nil || n < 3 {
		t.Fatalf("the sweep removed %d events (err %v), want May's partition and June's row", n, err)
	}
	if got := parts("charge_events"); got["charge_events_p202505"] || !got["charge_events_p202506"] {
		t.Errorf("after the sweep the partitions are %v: want May dropped, June kept", got)
	}
	if n := countIn("charge_events_p202506"); n != 0 {
		t.Errorf("June keeps %d rows before the cut", n)
	}
	for _, rec := range answered {
		got, err := db.GetIdempotencyRecord(ctx, rec.IdempotencyKey)
		if err != nil || !bytes.Equal(got.Body, rec.Body) {
			t.Errorf("key %s replays %v (err %v) after its event went, want its answer", rec.Key, got, err)
		}
	}

	// Request logs: an old month goes whole, the cut's month row by row.
	logs := []ports.RequestLogEntry{
		{RequestID: "req_old", AccountID: liveA.AccountID, Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: may},
		{RequestID: "req_cut", AccountID: liveA.AccountID, Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: june},
		{RequestID: "req_new", AccountID: liveA.AccountID, Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: cut.Add(time.Hour)},
	}
	if err := db.InsertRequestLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"2025-05-01", "2025-06-01"} {
		if _, err := db.Bun().ExecContext(ctx, "SELECT quita_month_partition('request_logs', ?::date)", m); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.DeleteRequestLogsBefore(ctx, cut, 100); err != nil || n < 2 {
		t.Fatalf("the request log sweep removed %d (err %v), want May's partition and June's old row", n, err)
	}
	if got := parts("request_logs"); got["request_logs_p202505"] {
		t.Error("May's request logs were not dropped")
	}
	if n := countIn("request_logs"); n != 1 {
		t.Errorf("%d request logs left, want the one after the cut", n)
	}
}
