package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/quitapix/quita/adapters/sessiontoken"
	"github.com/quitapix/quita/cmd/wiring"
)

// devSecretName is the file beside the embedded database that keeps
// `make run`'s dashboard-session secret.
const devSecretName = "quita-dev-session-secret"

// devSecretFile is where serve keeps a development secret for dashboard
// sessions, or "" when it keeps none: only when no secret is configured
// (QUITA_JWT_SECRET or -jwt-secret), the database is the embedded SQLite
// file (as demoFile) and the live acquirer is the sandbox — the local
// default, where a restart should not log the developer out. A real
// secret always wins, and the file is then neither read nor written.
func devSecretFile(cfg Config) string {
	if cfg.JWTSecret != "" || cfg.Acquirer == wiring.AcquirerBCBPix {
		return ""
	}
	demo := demoFile(cfg.DatabaseURL)
	if demo == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(demo), devSecretName)
}

// useDevSecret sets cfg.JWTSecret to the development secret when
// devSecretFile names one: read from the file, or made (32 random bytes)
// and written with mode 0600 on the first start. A file readable by others
// is narrowed to 0600; an unreadable or too short one is an error (delete
// it to start over, which ends the sessions it signed).
func useDevSecret(cfg *Config, log *slog.Logger) error {
	path := devSecretFile(*cfg)
	if path == "" {
		return nil
	}
	secret, err := readDevSecret(path, log)
	if errors.Is(err, fs.ErrNotExist) {
		secret, err = writeDevSecret(path)
		if errors.Is(err, fs.ErrExist) { // another process made it first
			secret, err = readDevSecret(path, log)
		}
	}
	if err != nil {
		return err
	}
	cfg.JWTSecret = secret
	log.Info("dashboard sessions are signed with the development secret in "+path+
		" (QUITA_JWT_SECRET is unset and the database is the embedded SQLite file); set QUITA_JWT_SECRET anywhere else",
		"file", path)
	return nil
}

func readDevSecret(path string, log *slog.Logger) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		log.Warn("the development session secret was readable by others: narrowed to mode 0600", "file", path)
		if err := f.Chmod(0o600); err != nil {
			return "", err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	secret := strings.TrimSpace(string(b))
	if len(secret) < sessiontoken.MinSecretLen {
		return "", fmt.Errorf("%s holds no usable secret (at least %d bytes): delete it to make a new one", path, sessiontoken.MinSecretLen)
	}
	return secret, nil
}

func writeDevSecret(path string) (string, error) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	secret := base64.RawURLEncoding.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return secret, f.Close()
}
