package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/quitapix/quita/ports"
)

// accountPassword is `quitad account password`: an operator sets a new
// dashboard password for a login, or turns its two-step verification off
// (--disable-totp: the recovery path of an owner who lost the
// authenticator app and the recovery codes), and every session of the
// login ends. The password is read as `account create` reads it (stdin,
// QUITA_ACCOUNT_PASSWORD, or the flag with a warning) and never printed.
func accountPassword(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newAdminFlags("quitad account password")
	email := fs.String("email", "", "the dashboard login's e-mail")
	pw := fs.String("password", "", "new dashboard password (at least 10 characters); visible in ps: prefer env QUITA_ACCOUNT_PASSWORD or --password-stdin")
	pwStdin := fs.Bool("password-stdin", false, "read the new password from the first line of stdin")
	disableTOTP := fs.Bool("disable-totp", false, "turn the login's two-step verification (TOTP) off; alone, the password stays")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("usage: quitad account password --email E [--password-stdin] [--disable-totp] (password: env QUITA_ACCOUNT_PASSWORD or --password-stdin)")
	}
	password, err := secretInput("password", *pw, "QUITA_ACCOUNT_PASSWORD", *pwStdin, getenv, stderr)
	if err != nil {
		return err
	}
	if password == "" && !*disableTOTP {
		return errors.New("a new password is required: QUITA_ACCOUNT_PASSWORD or --password-stdin (or --disable-totp alone)")
	}
	a, cleanup, err := fs.open(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	out, err := a.Dashboard.Logins.Reset(ctx, *email, password, *disableTOTP)
	if errors.Is(err, ports.ErrNotFound) {
		return fmt.Errorf("no dashboard login has the e-mail %s", *email)
	}
	if err != nil {
		return err
	}
	return printJSON(stdout, out)
}
