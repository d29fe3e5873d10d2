package seed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/internal/seed"
	"github.com/quitapix/quita/ports"
)

// recorder keeps the text of every SELECT bun sends while on.
type recorder struct {
	mu   sync.Mutex
	on   bool
	sqls []string
}

func (r *recorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (r *recorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on && strings.HasPrefix(strings.TrimSpace(e.Query), "SELECT") {
		r.sqls = append(r.sqls, e.Query)
	}
}

func (r *recorder) take(on bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sqls
	r.sqls, r.on = nil, on
	return out
}

// pageRows is the most rows a list page asks for (limit 100, one more to
// know whether there is a next page).
const pageRows = 101

// TestListPlansOnSeededData seeds a history, analyzes it, and runs every
// list the API serves — charges (first page, a page deep by cursor, by
// status, by dates), events, deliveries, payouts, refunds — capturing the
// statements the store sends; each is explained with ANALYZE, and a
// sequential scan of a large table or a sort of more rows than a page
// fails it.
func TestListPlansOnSeededData(t *testing.T) {
	ctx := context.Background()
	sv := seedAndServe(t, seed.Options{Charges: 40_000, Accounts: 10, PayoutEvery: 4})
	res, get := sv.res, func(path string) map[string]any { return sv.get(t, path) }
	db := sv.app.DB.Bun()
	var large []string
	if err := db.NewRaw(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.reltuples >= 5000`).Scan(ctx, &large); err != nil {
		t.Fatal(err)
	}
	isLarge := map[string]bool{}
	for _, l := range large {
		isLarge[l] = true
	}
	rec := &recorder{}
	//lint:ignore SA1019 the store wiring built must carry the hook itself; WithQueryHook would make a copy it does not use
	db.AddQueryHook(rec)
	// A cursor 10,000 rows deep: walk there by pages of 100, unrecorded.
	cursor := ""
	for range 100 {
		page := get("/charges?limit=100" + cursor)["data"].([]any)
		cursor = "&starting_after=" + page[len(page)-1].(map[string]any)["id"].(string)
	}
	deepEvent := get("/events?limit=100")["data"].([]any)
	eventCursor := "&starting_after=" + deepEvent[len(deepEvent)-1].(map[string]any)["id"].(string)
	payouts := get("/payouts?limit=100")["data"].([]any)
	payoutCursor := "&starting_after=" + payouts[len(payouts)-1].(map[string]any)["id"].(string)
	var refunded string
	if err := db.NewRaw("SELECT charge_id FROM refunds WHERE account_id = ? ORDER BY created_at DESC LIMIT 1", res.AccountID).
		Scan(ctx, &refunded); err != nil {
		t.Fatal(err)
	}
	lists := []string{
		"/charges?limit=100",
		"/charges?limit=100" + cursor,
		"/charges?limit=100&status=paid",
		"/charges?limit=100&status=paid" + cursor,
		"/charges?limit=100&created_after=2025-06-01T00:00:00Z&created_before=2025-07-01T00:00:00Z",
		"/charges?limit=100&status=paid&created_after=2025-06-01T00:00:00Z&created_before=2025-07-01T00:00:00Z",
		"/events?limit=100",
		"/events?limit=100" + eventCursor,
		"/events?limit=100&type=charge.paid",
		"/webhooks/deliveries?limit=100",
		"/webhooks/deliveries?limit=100&eventType=charge.created",
		"/webhooks/deliveries?limit=100&status=DELIVERED",
		"/webhooks/deliveries?limit=100&status=FAILED",
		"/payouts?limit=100",
		"/payouts?limit=100" + payoutCursor,
		"/payouts?limit=100&status=paid",
	}
	lists = append(lists, "/payments/"+refunded+"/refunds", "/payments?limit=100", "/payments?limit=100&status=PAID")
	for _, path := range lists {
		rec.take(true)
		get(path)
		totals := 0
		for _, q := range rec.take(false) {
			plans := checkPlan(t, db, path, q, isLarge)
			if strings.HasPrefix(path, "/webhooks/deliveries?") && !strings.Contains(q, "LIMIT") &&
				(strings.Contains(q, "webhook_deliveries") || strings.Contains(q, "delivery_counts")) {
				totals++
				checkDeliveryTotal(t, path, q, plans)
			}
		}
		if strings.HasPrefix(path, "/webhooks/deliveries?") && totals != 1 {
			t.Errorf("%s: %d statements for the total, want 1", path, totals)
		}
	}
}

// checkDeliveryTotal fails when the deliveries list's total is counted
// from the deliveries: its plan must read at most a page of
// webhook_deliveries' rows or index entries (the seeded deliveries were
// all delivered, so the undelivered index holds none), and, but for a
// status other than DELIVERED, the counter rows of delivery_counts.
func checkDeliveryTotal(t *testing.T, path, q string, plans []map[string]any) {
	t.Helper()
	read, counter := 0.0, false
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		rel, _ := n["Relation Name"].(string)
		idx, _ := n["Index Name"].(string)
		if rel == "delivery_counts" {
			counter = true
		}
		if rel == "webhook_deliveries" || strings.HasPrefix(idx, "webhook_deliveries_") {
			rows, _ := n["Actual Rows"].(float64)
			removed, _ := n["Rows Removed by Filter"].(float64)
			loops, _ := n["Actual Loops"].(float64)
			read += (rows + removed) * max(loops, 1)
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	for _, p := range plans {
		walk(p)
	}
	if read > pageRows {
		t.Errorf("%s: the total reads %.0f deliveries in\n%s", path, read, q)
	}
	needCounter := !strings.Contains(path, "status=") || strings.Contains(path, "status=DELIVERED")
	if needCounter && !counter {
		t.Errorf("%s: the total does not read delivery_counts:\n%s", path, q)
	}
}

// sortBound is the most rows a list's plan may sort: a page's, but for an
// events page filtered by type, whose scan is bounded by
// ports.MaxEventScan instead of an index per filter (docs/decisions.md,
// "Events API: bounded pages instead of a type index").
func sortBound(path string) int {
	if strings.HasPrefix(path, "/events?") && strings.Contains(path, "type=") {
		return ports.MaxEventScan + 1
	}
	return pageRows
}

// checkPlan explains q with ANALYZE and fails on a sequential scan of a
// large table or a sort of more than a page; it returns the plans.
func checkPlan(t *testing.T, db *bun.DB, path, q string, large map[string]bool) []map[string]any {
	t.Helper()
	var plan string
	if err := db.QueryRowContext(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+q).Scan(&plan); err != nil {
		t.Fatalf("%s: explain %s: %v", path, q, err)
	}
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		typ, _ := n["Node Type"].(string)
		rel, _ := n["Relation Name"].(string)
		kids, _ := n["Plans"].([]any)
		if typ == "Seq Scan" && large[rel] {
			t.Errorf("%s: a sequential scan of %s in\n%s\n%s", path, rel, q, plan)
		}
		if typ == "Sort" && len(kids) > 0 {
			in, _ := kids[0].(map[string]any)
			rows, _ := in["Actual Rows"].(float64)
			loops, _ := in["Actual Loops"].(float64)
			if rows*max(loops, 1) > float64(sortBound(path)) {
				t.Errorf("%s: a sort of %.0f rows in\n%s\n%s", path, rows*max(loops, 1), q, plan)
			}
		}
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	var plans []map[string]any
	for _, d := range doc {
		walk(d.Plan)
		t.Logf("%s: %s", path, planLine(d.Plan))
		plans = append(plans, d.Plan)
	}
	return plans
}

// planLine is a plan in one line: each node with its relation or index
// and its actual rows, depth first.
func planLine(n map[string]any) string {
	typ, _ := n["Node Type"].(string)
	s := typ
	if idx, ok := n["Index Name"].(string); ok {
		s += " " + idx
	} else if rel, ok := n["Relation Name"].(string); ok {
		s += " " + rel
	}
	rows, _ := n["Actual Rows"].(float64)
	loops, _ := n["Actual Loops"].(float64)
	s += fmt.Sprintf(" (%.0f)", rows*max(loops, 1))
	kids, _ := n["Plans"].([]any)
	var parts []string
	for _, k := range kids {
		if m, ok := k.(map[string]any); ok {
			parts = append(parts, planLine(m))
		}
	}
	if len(parts) > 0 {
		s += " [" + strings.Join(parts, ", ") + "]"
	}
	return s
}
