package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// A charge is looked up by its primary key whatever the table's statistics
// say. With account and mode in the WHERE clause too, Postgres planned the
// lookups of a freshly filled, not yet analysed table on charges_stats_idx
// (account_id, mode, …) and scanned every charge of the account for each
// GET and each update (the GET p99 at 1,000/s is the figure it guards).
func TestChargeLookupsUseThePrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	scope := ports.Scope{AccountID: "acct_plans", Mode: domain.ModeLive}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var last string
	for range 500 {
		var err error
		if last, err = domain.NewRawID(rand.Reader); err != nil {
			t.Fatal(err)
		}
		c, err := domain.NewCharge(domain.NewChargeParams{ID: last, AccountID: scope.AccountID, Mode: scope.Mode,
			Amount: 1990, Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := fastPool(db).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	index := func(sql string, args ...any) string {
		t.Helper()
		var plan []byte
		if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
			t.Fatalf("explain %s: %v", sql, err)
		}
		_, indexes := planNodes(t, plan)
		return strings.Join(indexes, ",")
	}
	row := new(chargeRow)
	prepared := db.charges.(*pgCharges).tables.Select(row, "id = $1").SQL()
	if got := index(prepared, last); got != "charges_pkey" {
		t.Errorf("GetCharge's prepared lookup uses %q, want charges_pkey", got)
	}
	for _, forUpdate := range []bool{false, true} {
		if got := index(chargeByID(db.bun, row, last, forUpdate).String()); got != "charges_pkey" {
			t.Errorf("selectCharge (for update %v) uses %q, want charges_pkey", forUpdate, got)
		}
	}
	// What the scoped form did (for the record; the planner's choice there
	// depends on the statistics, which is the point).
	t.Logf("with account and mode in the WHERE clause: %q",
		index(strings.Replace(prepared, "id = $1", "id = $1 AND account_id = $2 AND mode = $3", 1), last, scope.AccountID, "live"))
	// And the lookup still answers only in scope.
	if _, err := db.GetCharge(ctx, ports.Scope{AccountID: "acct_other", Mode: domain.ModeLive}, last); err != ports.ErrNotFound {
		t.Errorf("another account's lookup: %v, want ErrNotFound", err)
	}
	if _, err := db.GetCharge(ctx, ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}, last); err != ports.ErrNotFound {
		t.Errorf("the other mode's lookup: %v, want ErrNotFound", err)
	}
	if c, err := db.GetCharge(ctx, scope, last); err != nil || c.ID() != last {
		t.Errorf("the lookup in scope: %v %v", c, err)
	}
}

// The outbox is claimed in order off its primary key and its events read
// by theirs, their charges' URLs and their scopes' endpoints probed by
// those tables' indexes, whatever the statistics say:
// unpinned, a young outbox got bitmap scans, a sort and a hash join over
// every charge (62 ms a pass in the create benchmark).
func TestOutboxReadUsesItsIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range 300 {
		c, evs, err := newPixCharge(ports.Scope{AccountID: "acct_outbox", Mode: domain.ModeLive}, 1990, "", now)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
			t.Fatal(err)
		}
		if i == 250 { // most of the outbox is dispatched already
			if _, err := db.bun.ExecContext(ctx, "DELETE FROM event_outbox"); err != nil {
				t.Fatal(err)
			}
		}
	}
	tx := pinnedTx(t, db)
	var claims []outboxClaim
	check := func(what string, q *bun.SelectQuery, want string) {
		t.Helper()
		nodes, indexes := explain(t, tx, q)
		for _, n := range nodes {
			if strings.Contains(n, "Seq Scan") || strings.Contains(n, "Bitmap") || strings.Contains(n, "Hash") || n == "Sort" {
				t.Errorf("the %s plans a %s: %v", what, n, nodes)
			}
		}
		slices.Sort(indexes)
		if got := strings.Join(slices.Compact(indexes), ","); got != want {
			t.Errorf("the %s uses indexes %q, want %s", what, got, want)
		}
	}
	check("outbox claim", outboxClaimQuery(tx, &claims, 30), "event_outbox_pkey")
	if err := outboxClaimQuery(tx, &claims, 30).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	// Each create wrote its two events as one row in one statement: one
	// outbox row of one seq each, and the claim stops at the row that
	// reaches 30 seqs.
	var seqs []int64
	for _, c := range claims {
		seqs = append(seqs, c.Seqs...)
	}
	if len(claims) != 30 || len(seqs) != 30 {
		t.Errorf("claimed %d rows holding %d seqs, want 30 rows of the 49 undispatched creates, 30 seqs", len(claims), len(seqs))
	}
	var rows []outboxRow
	check("outbox events read", outboxEventsQuery(tx, &rows, seqs), "charge_events_pkey,charges_pkey,webhook_endpoints_scope_idx")
	if err := outboxEventsQuery(tx, &rows, seqs).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	events := 0
	for i := range rows {
		events += len(rows[i].events(nil))
	}
	if len(rows) != 30 || events != 60 {
		t.Errorf("read %d undispatched rows holding %d events, want 30 holding 60", len(rows), events)
	}
}

// newPixCharge builds a new Pix charge of scope and its creation events.
// It returns errors rather than failing the test: callers run it in
// goroutines too.
func newPixCharge(scope ports.Scope, amount int64, description string, now time.Time) (*domain.Charge, []domain.Event, error) {
	id, err := domain.NewRawID(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	c, err := domain.NewCharge(domain.NewChargeParams{ID: id, AccountID: scope.AccountID, Mode: scope.Mode, Amount: amount,
		Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, Description: description, Now: now})
	if err != nil {
		return nil, nil, err
	}
	evs, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), domain.Links{}, func() (string, error) {
		return domain.NewRawID(rand.Reader)
	}, now)
	return c, evs, err
}

// planNodes lists the node types and the index names of an EXPLAIN
// (FORMAT JSON) plan, depth first.
func planNodes(t *testing.T, plan []byte) (nodes, indexes []string) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(plan, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if n, ok := x["Node Type"].(string); ok {
				nodes = append(nodes, n)
			}
			if n, ok := x["Index Name"].(string); ok {
				indexes = append(indexes, n)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	return nodes, indexes
}

// A delivery claim walks the due index in order and stops after its
// window, whatever the statistics say: unpinned, a backlog of due
// deliveries was read whole and sorted for every claim.
func TestDueDeliveriesReadUsesTheirIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	for _, q := range []string{
		`INSERT INTO accounts (id, name, created_at) VALUES ('acct_due', 'Loja', now())`,
		`INSERT INTO webhook_endpoints (id, account_id, mode, url, events, status, secret, created_at, updated_at)
			VALUES ('we_due', 'acct_due', 'live', 'https://m.example.com', '[]', 'ACTIVE', 's', now(), now())`,
		`INSERT INTO webhook_deliveries (id, account_id, mode, endpoint_id, url, event_id, event_type, charge_id, payload,
			status, attempts, max_attempts, next_retry_at, created_at, updated_at)
			SELECT 'wd' || g, 'acct_due', 'live', 'we_due', '', 'ev' || g, 'charge.paid', 'ch' || g, '\x00', 'PENDING', 0, 15,
			now() - interval '1 hour' + g * interval '1 ms', now(), now() FROM generate_series(1, 3000) g`,
	} {
		if _, err := db.bun.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx := pinnedTx(t, db)
	var cands []dueCandidate
	caps := ports.ClaimCaps{PerEndpoint: 32, PerAccount: 64}
	q := dueQuery(tx, &cands, "d.status = 'PENDING'", "d.next_retry_at", time.Now(), 256, caps)
	nodes, indexes := explain(t, tx, q)
	for _, n := range nodes {
		if strings.Contains(n, "Seq Scan") || strings.Contains(n, "Bitmap") || n == "Sort" {
			t.Errorf("the due read plans a %s: %v", n, nodes)
		}
	}
	if !slices.Contains(indexes, "webhook_deliveries_due_idx") {
		t.Errorf("the due read uses indexes %v, want webhook_deliveries_due_idx", indexes)
	}
	if err := q.Scan(ctx, &cands); err != nil || len(cands) != 256 || cands[0].ID != "wd1" {
		t.Fatalf("read %d candidates (first %v), %v; want the 256 oldest", len(cands), cands[:min(1, len(cands))], err)
	}
}

// pinnedTx begins a transaction pinned by pinIndexPlan, rolled back when
// the test ends.
func pinnedTx(t *testing.T, db *DB) bun.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := db.bun.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(ctx, pinIndexPlan); err != nil {
		t.Fatal(err)
	}
	return tx
}

// explain plans q in tx and lists its node types and index names.
func explain(t *testing.T, tx bun.Tx, q *bun.SelectQuery) (nodes, indexes []string) {
	t.Helper()
	var plan string
	if err := tx.QueryRowContext(context.Background(), "EXPLAIN (FORMAT JSON) "+q.String()).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	nodes, indexes = planNodes(t, []byte(plan))
	return nodes, rootIndexes(t, tx, indexes)
}

// rootIndexes names each index of a partition by the partitioned table's
// index it belongs to (charge_events_p202611_pkey → charge_events_pkey).
func rootIndexes(t *testing.T, tx bun.IDB, indexes []string) []string {
	t.Helper()
	out := make([]string, len(indexes))
	for i, name := range indexes {
		if err := tx.NewRaw("SELECT coalesce(pg_partition_root(?::regclass), ?::regclass)::regclass::text", name, name).
			Scan(context.Background(), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sqlRecorder keeps the text of every query bun runs.
type sqlRecorder struct {
	mu   sync.Mutex
	sqls []string
}

func (r *sqlRecorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (r *sqlRecorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sqls = append(r.sqls, e.Query)
}

// The charges' lists and the stats' scan of charges are served by one
// index, charges_scope_created_idx (migration 20261127000001, which
// dropped charges_list_idx and charges_stats_idx): an index a create no
// longer maintains twice. A list by customer document is served by the
// partial index that only charges with a document are in. The statements
// are the ones the store sends, captured as they run, then explained.
func TestChargeListsAndStatsUseTheirIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	scope := ports.Scope{AccountID: "acct_lists", Mode: domain.ModeLive}
	for i := range 400 {
		s := scope
		if i%4 == 0 { // another account's charges share the table
			s.AccountID = "acct_others"
		}
		c, evs, err := newPixCharge(s, int64(100+i), "", now.Add(-time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCharge(ctx, c, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	// One charge with a customer document: the partial document index
	// (migration 20261127000002) holds it alone.
	id, err := domain.NewRawID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	withDoc, err := domain.NewCharge(domain.NewChargeParams{ID: id, AccountID: scope.AccountID, Mode: scope.Mode, Amount: 990,
		Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, Customer: domain.Customer{Document: "529.982.247-25"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCharge(ctx, withDoc, nil, nil); err != nil {
		t.Fatal(err)
	}
	var entries int
	if err := db.bun.QueryRowContext(ctx, "SELECT count(*) FROM charges WHERE customer_document_norm <> ''").Scan(&entries); err != nil || entries != 1 {
		t.Fatalf("%d charges with a document (%v), want 1", entries, err)
	}
	rec := &sqlRecorder{}
	db.bun = db.bun.WithQueryHook(rec) // this test's store only
	page, more, err := db.ListCharges(ctx, ports.ChargeQuery{Scope: scope, Limit: 10})
	if err != nil || len(page) != 10 || !more {
		t.Fatalf("list: %d charges, more %v, %v", len(page), more, err)
	}
	page, _, err = db.ListCharges(ctx, ports.ChargeQuery{Scope: scope, Limit: 10, CustomerDocument: "52998224725"})
	if err != nil || len(page) != 1 || page[0].ID() != withDoc.ID() {
		t.Fatalf("list by document: %d charges, %v", len(page), err)
	}
	// A window that does not start at midnight scans the charges.
	aggs, err := db.AggregatePayments(ctx, scope, now.Add(-90*time.Minute), "")
	if err != nil || len(aggs) == 0 {
		t.Fatalf("aggregate: %v, %v", aggs, err)
	}
	rec.mu.Lock()
	sqls := slices.Clone(rec.sqls)
	rec.mu.Unlock()
	// Which index serves each statement, on a table too small for the
	// planner to prefer any over a scan: the scans are turned off. The
	// table is analysed, as autovacuum keeps a real one: without
	// statistics the planner cannot tell a range on created_at from a
	// filter on it, and may take the skinnier status index for the
	// aggregate.
	if _, err := db.bun.ExecContext(ctx, "ANALYZE charges"); err != nil {
		t.Fatal(err)
	}
	tx := pinnedTx(t, db)
	checked := 0
	for _, q := range sqls {
		if !strings.HasPrefix(q, "SELECT") || !strings.Contains(q, `FROM "charges"`) {
			continue
		}
		checked++
		var plan []byte
		if err := tx.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+q).Scan(&plan); err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		nodes, indexes := planNodes(t, plan)
		want := "charges_scope_created_idx"
		if strings.Contains(q, "customer_document_norm =") {
			want = "charges_document_part_idx"
		}
		sorted := slices.Contains(nodes, "Sort") && !strings.Contains(q, "GROUP BY")
		if !slices.Equal(indexes, []string{want}) || sorted {
			t.Errorf("%s\nplans %v on indexes %v, want %s (and no sort for a list)", q, nodes, indexes, want)
		}
	}
	if checked != 3 {
		t.Errorf("explained %d statements on charges, want the two lists' and the aggregate's: %q", checked, sqls)
	}
}
