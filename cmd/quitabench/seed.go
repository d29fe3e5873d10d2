package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/quitapix/quita/internal/seed"
)

// runSeed fills a fresh database with n charges (internal/seed) and prints
// what it wrote: rows per table, the time taken and the size per charge.
// Without a DSN it creates quita_seed_<hex> on the admin server and keeps
// it. The big account's test key goes to keysFile (mode 0600), never to
// the output.
func runSeed(adminURL, dsn string, n, accounts int, keysFile string) error {
	ctx := context.Background()
	if dsn == "" {
		db, err := sql.Open("pgx", adminURL)
		if err != nil {
			return err
		}
		name := "quita_seed_" + randHex(6)
		_, err = db.ExecContext(ctx, "CREATE DATABASE "+name)
		db.Close()
		if err != nil {
			return fmt.Errorf("create the seed database: %w", err)
		}
		dsn = replaceDB(adminURL, name)
		fmt.Printf("seed: database %s\n", name)
	}
	res, err := seed.Seed(ctx, seed.Options{DSN: dsn, Charges: n, Accounts: accounts, Log: os.Stdout})
	if err != nil {
		return err
	}
	total, tables, err := seed.Sizes(ctx, dsn)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(res.Rows))
	for t := range res.Rows {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		fmt.Printf("    %-22s %12d rows\n", t, res.Rows[t])
	}
	fmt.Printf("seed: %d charges over %d accounts in %s (%.0f charges/s); database %.2f GB, %.0f bytes per charge\n",
		n, accounts, res.Elapsed.Round(1e9), float64(n)/res.Elapsed.Seconds(), float64(total)/1e9, float64(total)/float64(n))
	for _, t := range tables[:min(len(tables), 10)] {
		fmt.Printf("    %-22s %8.0f MB  %6.0f B/charge\n", t.Name, float64(t.Bytes)/1e6, float64(t.Bytes)/float64(n))
	}
	keys, _ := json.MarshalIndent(map[string]string{"database": dsn, "account_id": res.AccountID, "test_key": res.TestKey}, "", "  ")
	if err := os.WriteFile(keysFile, keys, 0o600); err != nil {
		return err
	}
	fmt.Printf("seed: account %s holds half the charges (test mode); its key is in %s\n", res.AccountID, keysFile)
	return nil
}
