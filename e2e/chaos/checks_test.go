//go:build chaos

package chaos

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// checker reads the run's database after the load and holds the findings.
type checker struct {
	db         *sql.DB
	account    string
	endpoint   string
	violations []string
	figures    map[string]int
}

func (c *checker) violate(format string, args ...any) {
	if len(c.violations) < 200 {
		c.violations = append(c.violations, fmt.Sprintf(format, args...))
	}
}

// raw drops an id's public prefix (ch_, re_, wd_): the tables keep either
// form, so comparisons use the raw part.
func raw(id string) string {
	for _, p := range []string{"ch_", "tx_", "re_", "wd_"} {
		if s, ok := strings.CutPrefix(id, p); ok {
			return s
		}
	}
	return id
}

func (c *checker) count(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// backlog is what is still on its way: undispatched events, deliveries to
// the endpoint not yet delivered, refunds not yet final.
func (c *checker) backlog(ctx context.Context) (events, deliveries, refunds int, err error) {
	// A row holds one event or two (its twin, migration 20261128000002).
	if events, err = c.count(ctx, `SELECT count(*) + count(e.twin_id) FROM event_outbox o CROSS JOIN unnest(o.seqs) AS s(seq) JOIN charge_events e ON e.seq = s.seq WHERE e.account_id = $1`, c.account); err != nil {
		return
	}
	if deliveries, err = c.count(ctx, `SELECT count(*) FROM webhook_deliveries WHERE account_id = $1 AND endpoint_id = $2 AND status <> 'DELIVERED'`,
		c.account, c.endpoint); err != nil {
		return
	}
	refunds, err = c.count(ctx, `SELECT count(*) FROM refunds WHERE account_id = $1 AND status IN ('PENDING', 'IN_PROGRESS')`, c.account)
	return
}

// pendingDeliveries describes the deliveries still on their way, by status
// and attempt count, with the latest due retry, for the drain's progress
// lines.
func (c *checker) pendingDeliveries(ctx context.Context) string {
	rows, err := c.db.QueryContext(ctx, `SELECT status, attempts, count(*), max(coalesce(next_retry_at, lease_until)) FROM webhook_deliveries
		WHERE account_id = $1 AND endpoint_id = $2 AND status <> 'DELIVERED' GROUP BY status, attempts ORDER BY status, attempts`,
		c.account, c.endpoint)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var status string
		var attempts, n int
		var due sql.NullTime
		if err := rows.Scan(&status, &attempts, &n, &due); err != nil {
			return err.Error()
		}
		parts = append(parts, fmt.Sprintf("%d %s after %d attempts (latest due in %.0fs)", n, status, attempts, time.Until(due.Time).Seconds()))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// charges checks one charge per key, every acknowledged create present,
// one settlement per paid charge (ledger and events) and the refunds.
func (c *checker) charges(ctx context.Context, rec *recorder) error {
	type row struct {
		amount, refunded int64
		status, key      string
		settled          bool
	}
	rows, err := c.db.QueryContext(ctx, `SELECT id, amount, status, description, settlement_amount IS NOT NULL, refunded_amount
		FROM charges WHERE account_id = $1`, c.account)
	if err != nil {
		return err
	}
	byID := map[string]row{}
	byKey := map[string]string{}
	for rows.Next() {
		var id string
		var r row
		if err := rows.Scan(&id, &r.amount, &r.status, &r.key, &r.settled, &r.refunded); err != nil {
			rows.Close()
			return err
		}
		byID[raw(id)] = r
		if other, dup := byKey[r.key]; dup {
			c.violate("key %q made two charges: %s and %s", strings.TrimPrefix(r.key, "chaos "), other, id)
		}
		byKey[r.key] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	c.figures["charges in database"] = len(byID)

	payments, err := c.perCharge(ctx, `SELECT charge_id, count(*) FROM ledger_entries WHERE account_id = $1 AND kind = 'payment' GROUP BY charge_id`)
	if err != nil {
		return err
	}
	paidEvents, err := c.perCharge(ctx, `SELECT charge_id, count(*) FROM charge_events WHERE account_id = $1 AND 'charge.paid' IN (type, twin_type) GROUP BY charge_id`)
	if err != nil {
		return err
	}
	settled := 0
	for id, r := range byID {
		want := 0
		if r.settled {
			want = 1
			settled++
		}
		if payments[id] != want {
			c.violate("charge %s (%s, settled %v) has %d payment ledger entries, want %d", id, r.status, r.settled, payments[id], want)
		}
		if paidEvents[id] > 1 {
			c.violate("charge %s has %d charge.paid events", id, paidEvents[id])
		}
	}
	c.figures["settled charges"] = settled

	rec.mu.Lock()
	defer rec.mu.Unlock()
	acked := 0
	for _, k := range rec.keys {
		for id := range k.ids {
			acked++
			r, ok := byID[raw(id)]
			switch {
			case !ok:
				c.violate("acknowledged charge %s of key %s is not in the database", id, k.key)
			case r.key != "chaos "+k.key:
				c.violate("key %s answered charge %s, which belongs to %q", k.key, id, r.key)
			}
		}
	}
	c.figures["acknowledged creates"] = acked
	for id, ch := range rec.charges {
		if r, ok := byID[raw(id)]; ok && ch.paidSeen && !r.settled {
			c.violate("charge %s answered paid but is %s without a settlement", id, r.status)
		}
	}
	amounts := make(map[string][2]int64, len(byID))
	for id, r := range byID {
		amounts[id] = [2]int64{r.amount, r.refunded}
	}
	return c.refunds(ctx, rec, amounts)
}

func (c *checker) perCharge(ctx context.Context, query string) (map[string]int, error) {
	rows, err := c.db.QueryContext(ctx, query, c.account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[raw(id)] = n
	}
	return out, rows.Err()
}

// refunds checks that the live refunds of a charge never exceed its
// amount and match its reservation, that a refund key made one refund, and
// that every refund has its ledger entry. The caller holds rec.mu.
func (c *checker) refunds(ctx context.Context, rec *recorder, charges map[string][2]int64) error {
	rows, err := c.db.QueryContext(ctx, `SELECT r.id, r.charge_id, r.amount, r.status, r.reason,
		(SELECT count(*) FROM ledger_entries e WHERE e.refund_id = r.id AND e.kind = 'refund')
		FROM refunds r WHERE r.account_id = $1`, c.account)
	if err != nil {
		return err
	}
	defer rows.Close()
	live := map[string]int64{}
	byKey := map[string]string{}
	ids := map[string]bool{}
	open := 0
	for rows.Next() {
		var id, charge, status, reason string
		var amount int64
		var entries int
		if err := rows.Scan(&id, &charge, &amount, &status, &reason, &entries); err != nil {
			return err
		}
		ids[raw(id)] = true
		if status != "FAILED" {
			live[raw(charge)] += amount
		}
		if status == "PENDING" || status == "IN_PROGRESS" {
			open++
		}
		if other, dup := byKey[reason]; dup {
			c.violate("refund key %q made two refunds: %s and %s", reason, other, id)
		}
		byKey[reason] = id
		if entries != 1 {
			c.violate("refund %s has %d refund ledger entries, want 1", id, entries)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c.figures["refunds in database"] = len(ids)
	// How long refunds took from create to REFUNDED.
	var p50, p99, slowest sql.NullFloat64
	if err := c.db.QueryRowContext(ctx, `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d), percentile_cont(0.99) WITHIN GROUP (ORDER BY d), max(d)
		FROM (SELECT extract(epoch FROM updated_at - created_at)*1000 AS d FROM refunds WHERE account_id = $1 AND status = 'REFUNDED') r`,
		c.account).Scan(&p50, &p99, &slowest); err != nil {
		return err
	}
	c.figures["refund ms p50"], c.figures["refund ms p99"], c.figures["refund ms max"] = int(p50.Float64), int(p99.Float64), int(slowest.Float64)
	c.figures["refunds still open"] = open
	for id, sum := range live {
		ch := charges[id]
		if sum > ch[0] {
			c.violate("charge %s: refunds %d exceed its amount %d", id, sum, ch[0])
		}
		if sum != ch[1] {
			c.violate("charge %s: refunds not failed sum to %d, refunded_amount says %d", id, sum, ch[1])
		}
	}
	for _, f := range rec.refunds {
		for id := range f.ids {
			if !ids[raw(id)] {
				c.violate("acknowledged refund %s (key %s) is not in the database", id, f.key)
			}
		}
	}
	return nil
}

// events checks that every event of the account reached the endpoint with
// a valid signature over exactly the stored payload. Events younger than
// settle may still be on their way and are only counted.
func (c *checker) events(ctx context.Context, valid map[string][32]byte, settle time.Duration) error {
	// Every event: a row's own and its twin (migration 20261128000002).
	rows, err := c.db.QueryContext(ctx, `WITH e AS (
			SELECT id, type, payload, created_at, account_id FROM charge_events
			UNION ALL SELECT twin_id, twin_type, twin_payload, created_at, account_id FROM charge_events WHERE twin_id IS NOT NULL)
		SELECT e.id, e.type, e.payload, e.created_at, coalesce(d.id, ''), coalesce(d.status, '')
		FROM e LEFT JOIN webhook_deliveries d ON d.event_id = e.id AND d.endpoint_id = $2
		WHERE e.account_id = $1`, c.account, c.endpoint)
	if err != nil {
		return err
	}
	defer rows.Close()
	var total, young, legacy int
	now := time.Now()
	for rows.Next() {
		var id, typ, delivery, status string
		var payload []byte
		var created time.Time
		if err := rows.Scan(&id, &typ, &payload, &created, &delivery, &status); err != nil {
			return err
		}
		total++
		if strings.HasPrefix(typ, "payment.") {
			legacy++
		}
		got, ok := valid[raw(delivery)]
		switch {
		case ok && got == sha256.Sum256(payload):
		case now.Sub(created) < settle:
			young++
		case delivery == "":
			c.violate("event %s (%s) was never fanned out to the endpoint", id, typ)
		case !ok:
			c.violate("event %s (%s): delivery %s is %s and never arrived with a valid signature", id, typ, delivery, status)
		default:
			c.violate("event %s (%s): delivery %s arrived with a body other than the event's payload", id, typ, delivery)
		}
	}
	c.figures["events"] = total
	c.figures["events legacy-signed"] = legacy
	c.figures["events still in flight"] = young
	return rows.Err()
}
