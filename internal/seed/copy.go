package seed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// Options says what to seed.
type Options struct {
	DSN      string
	Charges  int           // default 10,000,000
	Accounts int           // default 1,000; the first holds half the charges
	Span     time.Duration // how far back the history goes; default 730 days
	// PayoutEvery is how many paid charges of an account make one payout
	// (default 40).
	PayoutEvery int
	Log         io.Writer
}

// Result is what a seed wrote.
type Result struct {
	Rows      map[string]int64
	AccountID string // the account holding half the charges
	TestKey   string // its test-mode API key (the seeded charges are test mode)
	Elapsed   time.Duration
}

const batchRows = 512

// copier streams one table's rows into a COPY.
type copier struct {
	table string
	cols  []string
	ch    chan [][]any
	buf   [][]any
	n     int64
}

func (c *copier) add(row []any) {
	c.buf = append(c.buf, row)
	if len(c.buf) == batchRows {
		c.ch <- c.buf
		c.buf = make([][]any, 0, batchRows)
	}
}

// source adapts the channel to pgx.CopyFromSource.
type source struct {
	ch    chan [][]any
	batch [][]any
	i     int
	n     *int64
}

func (s *source) Next() bool {
	for s.i+1 >= len(s.batch) {
		b, ok := <-s.ch
		if !ok {
			return false
		}
		s.batch, s.i = b, -1
	}
	s.i++
	*s.n++
	return true
}
func (s *source) Values() ([]any, error) { return s.batch[s.i], nil }
func (s *source) Err() error             { return nil }

// Seed fills the fresh database at opts.DSN (migrated by the template
// run) and rebuilds the derived state.
func Seed(ctx context.Context, opts Options) (*Result, error) {
	if opts.Charges <= 0 {
		opts.Charges = 10_000_000
	}
	if opts.Accounts <= 0 {
		opts.Accounts = 1000
	}
	if opts.Span <= 0 {
		opts.Span = 730 * 24 * time.Hour
	}
	if opts.PayoutEvery <= 0 {
		opts.PayoutEvery = 40
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	began := time.Now()
	tp, err := makeTemplates(ctx, opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("template run: %w", err)
	}
	account, units, err := loadTemplates(ctx, opts.DSN, tp)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Log, "seed: %d template units from the real server in %s\n", len(units), time.Since(began).Round(time.Millisecond))

	copiers := map[string]*copier{}
	for _, t := range append([]*tmpl{account}, units...) {
		for _, tr := range t.tables {
			if copiers[tr.table] == nil {
				copiers[tr.table] = &copier{table: tr.table, cols: tr.cols, ch: make(chan [][]any, 8)}
			}
		}
	}
	tables := make([]string, 0, len(copiers))
	for t := range copiers {
		tables = append(tables, t)
	}
	if err := makeMonths(ctx, opts.DSN, time.Now().Add(-opts.Span)); err != nil {
		return nil, err
	}
	indexes, err := dropIndexes(ctx, opts.DSN, tables)
	if err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range copiers {
		g.Go(func() error {
			conn, err := pgx.Connect(gctx, opts.DSN)
			if err != nil {
				for range c.ch { //nolint:revive // drain so the generator never blocks
				}
				return err
			}
			defer conn.Close(context.Background())
			// The tables are copied at once, so their foreign keys are not
			// checked as they fill (the rows are consistent by
			// construction), and the seeded events go to no outbox: they
			// were dispatched in the template run.
			if _, err = conn.Exec(gctx, "SET session_replication_role = replica"); err == nil {
				_, err = conn.CopyFrom(gctx, pgx.Identifier{c.table}, c.cols, &source{ch: c.ch, n: &c.n})
			}
			if err != nil {
				for range c.ch { //nolint:revive // drain so the generator never blocks
				}
				return fmt.Errorf("copy %s: %w", c.table, err)
			}
			return nil
		})
	}
	g.Go(func() error {
		defer func() {
			for _, c := range copiers {
				if len(c.buf) > 0 {
					c.ch <- c.buf
				}
				close(c.ch)
			}
		}()
		return generate(gctx, opts, account, units, copiers)
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Log, "seed: copied in %s; building %d indexes\n", time.Since(began).Round(time.Second), len(indexes))
	if err := buildIndexes(ctx, opts.DSN, indexes); err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Log, "seed: indexes built at %s; rebuilding counters and wallets\n", time.Since(began).Round(time.Second))
	if err := rebuild(ctx, opts.DSN); err != nil {
		return nil, err
	}
	res := &Result{Rows: map[string]int64{}, AccountID: tp.accountID, TestKey: tp.testKey, Elapsed: time.Since(began)}
	for _, c := range copiers {
		res.Rows[c.table] = c.n
	}
	return res, nil
}

// generate emits every copy's rows, in time order: the accounts first
// (made before the history starts), then each charge at its instant.
func generate(ctx context.Context, opts Options, account *tmpl, units []*tmpl, copiers map[string]*copier) error {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	start := now.Add(-opts.Span)
	acctVals := make([]map[string]string, opts.Accounts)
	for k := 1; k < opts.Accounts; k++ {
		delta := start.Add(-time.Hour).Sub(account.start)
		m := map[string]string{}
		for _, t := range account.tokens.list {
			m[t.text] = t.valueAt(delta, rng)
		}
		acctVals[k] = m
		emit(account, delta, m, rng, copiers)
	}
	var paid, refunded, cancelled []*tmpl
	var payout *tmpl
	for _, u := range units {
		switch u.kind {
		case unitPaid:
			paid = append(paid, u)
		case unitRefunded:
			refunded = append(refunded, u)
		case unitCancelled:
			cancelled = append(cancelled, u)
		case unitPayout:
			payout = u
		}
	}
	if len(paid) == 0 || len(refunded) == 0 || len(cancelled) == 0 || payout == nil {
		return errors.New("seed: the template run left a kind of unit out")
	}
	paidCount := make([]int, opts.Accounts)
	step := opts.Span / time.Duration(opts.Charges)
	for i := range opts.Charges {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := start.Add(time.Duration(i)*step + time.Duration(rng.Int64N(int64(step)+1)))
		k := 0
		if i%2 == 1 && opts.Accounts > 1 {
			k = 1 + rng.IntN(opts.Accounts-1)
		}
		var u *tmpl
		switch r := rng.IntN(10); {
		case r == 0:
			u = refunded[rng.IntN(len(refunded))]
		case r <= 2:
			u = cancelled[rng.IntN(len(cancelled))]
		default:
			u = paid[rng.IntN(len(paid))]
		}
		emit(u, at.Sub(u.start), acctVals[k], rng, copiers)
		if u.kind != unitCancelled {
			if paidCount[k]++; paidCount[k]%opts.PayoutEvery == 0 {
				emit(payout, at.Add(time.Minute).Sub(payout.start), acctVals[k], rng, copiers)
			}
		}
	}
	return nil
}

// emit writes one copy of t shifted by delta.
func emit(t *tmpl, delta time.Duration, acct map[string]string, rng *rand.Rand, copiers map[string]*copier) {
	vals := t.tokens.values(delta, acct, rng)
	for _, tr := range t.tables {
		c := copiers[tr.table]
		for _, row := range tr.rows {
			out := make([]any, len(row))
			for i := range row {
				out[i] = row[i].build(vals, delta)
			}
			c.add(out)
		}
	}
}

// rebuild derives the counters (charge_counts, charge_day_totals,
// delivery_counts) and the wallets from the rows, as the migrations that
// introduced them do, drops the ledger verify's checkpoint, then vacuums
// and analyzes.
func rebuild(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	stmts := []string{
		`DELETE FROM charge_stat_deltas`,
		`DELETE FROM charge_counts`,
		`INSERT INTO charge_counts (account_id, mode, status, shard, n)
		 SELECT account_id, mode, status, 0, count(*) FROM charges GROUP BY 1, 2, 3`,
		`DELETE FROM charge_day_totals`,
		`INSERT INTO charge_day_totals (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
		 SELECT account_id, mode, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), currency, status,
		        coalesce(settlement_paid_with, ''), 0, count(*), sum(amount), sum(refund_completed)
		 FROM charges GROUP BY 1, 2, 3, 4, 5, 6`,
		`DELETE FROM delivery_counts`,
		`INSERT INTO delivery_counts (account_id, mode, endpoint_id, event_type, n)
		 SELECT account_id, mode, endpoint_id, event_type, count(*) FROM webhook_deliveries GROUP BY 1, 2, 3, 4`,
		// The ledger was written under the verify's feet: its next run
		// reads it all and saves a checkpoint from there.
		`DELETE FROM ledger_verify_checkpoint`,
		`DELETE FROM ledger_verify_sums`,
		`DELETE FROM wallet_balances`,
		`INSERT INTO wallet_balances (account_id, mode, currency, available, pending, owed, updated_at)
		 SELECT a.id, m.mode, 'BRL', 0, 0, 0, now() FROM accounts a CROSS JOIN (VALUES ('test')) AS m(mode)`,
		`UPDATE wallet_balances w SET available = s.available, pending = s.pending, owed = s.owed
		 FROM (SELECT account_id, mode, currency,
		         coalesce(sum(amount) FILTER (WHERE ledger_account = 'merchant_available'), 0) AS available,
		         coalesce(sum(amount) FILTER (WHERE ledger_account = 'merchant_pending'), 0) AS pending,
		         coalesce(sum(amount) FILTER (WHERE ledger_account = 'merchant_owed'), 0) AS owed
		       FROM ledger_postings GROUP BY 1, 2, 3) AS s
		 WHERE w.account_id = s.account_id AND w.mode = s.mode AND w.currency = s.currency`,
		// What autovacuum would do to freshly copied tables: the
		// statistics, and the visibility map that lets a count read an
		// index alone.
		`VACUUM (ANALYZE)`,
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	return nil
}

// Sizes reports the database's size and each table's row count, largest
// first.
func Sizes(ctx context.Context, dsn string) (total int64, tables []TableSize, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&total); err != nil {
		return 0, nil, err
	}
	rows, err := conn.Query(ctx, `SELECT c.relname, coalesce((SELECT sum(pg_total_relation_size(relid))::bigint FROM pg_partition_tree(c.oid)), pg_total_relation_size(c.oid)) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition`)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t TableSize
		if err := rows.Scan(&t.Name, &t.Bytes); err != nil {
			return 0, nil, err
		}
		tables = append(tables, t)
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i].Bytes > tables[j].Bytes })
	return total, tables, rows.Err()
}

// TableSize is one table's size on disk, indexes included (a partitioned
// table's partitions summed).
type TableSize struct {
	Name  string
	Bytes int64
}
