package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"github.com/quitapix/quita/cmd/wiring"
)

// adminFlags is the flag set of an admin subcommand: its own flags plus
// --database-url, which overrides QUITA_DATABASE_URL. Every other setting
// comes from the environment.
type adminFlags struct {
	*flag.FlagSet
	dbURL *string
}

func newAdminFlags(name string) adminFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return adminFlags{FlagSet: fs, dbURL: fs.String("database-url", "", "overrides QUITA_DATABASE_URL")}
}

// config reads the settings: the environment, then --database-url. Call it
// after Parse.
func (f adminFlags) config(getenv func(string) string) (Config, error) {
	var args []string
	if *f.dbURL != "" {
		args = []string{"-database-url", *f.dbURL}
	}
	return parseConfig("quitad", args, getenv)
}

// open reads the settings and wires the application; the caller defers
// the cleanup.
func (f adminFlags) open(ctx context.Context, getenv func(string) string, stderr io.Writer) (*wiring.App, func(), error) {
	cfg, err := f.config(getenv)
	if err != nil {
		return nil, nil, err
	}
	return openAdmin(ctx, cfg, stderr)
}

// openAdmin wires the application for an admin subcommand, which serves
// nothing: no dashboard session is signed, so no secret is asked for.
func openAdmin(ctx context.Context, cfg Config, stderr io.Writer) (*wiring.App, func(), error) {
	cfg.AdminOnly = true
	return wiring.InitializeApp(ctx, cfg.Config, newLogger(stderr, cfg.LogLevel))
}

// printJSON writes v indented, as every admin subcommand answers.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
