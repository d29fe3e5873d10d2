package main

// The reference of the create throughput: the minimal durable
// create — one charge row and one outbox row, committed in one round trip
// — run against the same database in the same run, by pgbench when it is
// installed, else by this process over pgx. The HTTP create's target is a
// fraction of it, so the ratio does not depend on the machine.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const referenceSchema = `
CREATE TABLE IF NOT EXISTS ref_charges (
	id text PRIMARY KEY, account_id text NOT NULL, mode text NOT NULL, status text NOT NULL,
	amount bigint NOT NULL, currency text NOT NULL, description text NOT NULL, created_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS ref_outbox (
	id bigserial PRIMARY KEY, charge_id text NOT NULL, type text NOT NULL, payload jsonb NOT NULL,
	created_at timestamptz NOT NULL)`

// referenceCreate is one minimal create: one statement, one round trip,
// one commit.
const referenceCreate = `WITH c AS (
	INSERT INTO ref_charges (id, account_id, mode, status, amount, currency, description, created_at)
	VALUES (gen_random_uuid()::text, 'acct_bench', 'live', 'WAITING_PAYMENT', 1990, 'BRL', 'Pedido bench', now())
	RETURNING id)
INSERT INTO ref_outbox (charge_id, type, payload, created_at)
SELECT id, 'charge.created', jsonb_build_object('id', id, 'amount', 1990, 'status', 'WAITING_PAYMENT'), now() FROM c`

// reference measures the minimal create's rate with clients connections
// for d; how names what ran it. Its tables are dropped once it is
// measured: the kernel writes a file's dirty pages back 30 s after the
// file was first dirtied, all of them at once, so the pages the
// reference's sessions left dirty would be written back in the middle
// of a later phase (the open loop right after the burst), and every
// commit's WAL flush there would wait behind them. Dropping the tables
// discards those pages instead.
func reference(ctx context.Context, dsn string, clients int, d time.Duration) (tps float64, how string, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, referenceSchema); err != nil {
		return 0, "", err
	}
	defer func() {
		if _, dropErr := conn.Exec(context.WithoutCancel(ctx), "DROP TABLE ref_charges, ref_outbox"); dropErr != nil && err == nil {
			err = fmt.Errorf("dropping the reference's tables: %w", dropErr)
		}
	}()
	if path, err := exec.LookPath("pgbench"); err == nil {
		tps, err := runPgbench(ctx, path, dsn, clients, d)
		if err == nil {
			return tps, "pgbench", nil
		}
		fmt.Fprintln(os.Stderr, "quitabench: pgbench failed, measuring over pgx instead:", err)
	}
	tps, err = referenceOverPgx(ctx, dsn, clients, d)
	return tps, "pgx", err
}

var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+)`)

func runPgbench(ctx context.Context, path, dsn string, clients int, d time.Duration) (float64, error) {
	f, err := os.CreateTemp("", "quitabench-*.sql")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	// pgbench reads one command per line.
	if _, err := f.WriteString(regexp.MustCompile(`\s*\n\s*`).ReplaceAllString(referenceCreate, " ") + ";\n"); err != nil {
		return 0, err
	}
	f.Close()
	out, err := exec.CommandContext(ctx, path, "-n", "-c", strconv.Itoa(clients), "-j", "2",
		"-T", strconv.Itoa(max(int(d.Seconds()), 1)), "-f", f.Name(), dsn).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no tps in pgbench output: %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

func referenceOverPgx(ctx context.Context, dsn string, clients int, d time.Duration) (float64, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return 0, err
	}
	cfg.MaxConns = int32(clients)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	var (
		n       atomic.Int64
		wg      sync.WaitGroup
		firstMu sync.Mutex
		first   error
	)
	stop := time.Now().Add(d)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, err := pool.Exec(ctx, referenceCreate); err != nil {
					firstMu.Lock()
					if first == nil {
						first = err
					}
					firstMu.Unlock()
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / d.Seconds(), first
}
