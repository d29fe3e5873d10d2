package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/store"
)

// The merchant document is set at create or later, checked, stored
// normalised, and echoed only masked.
func TestAccountDocument(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "quita.db")
	create := func(email, doc string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), []string{"account", "create", "--name", "Padaria São João", "--email", email,
			"--password", "uma-senha-longa", "--document", doc, "--database-url", db}, noEnv, &out, &bytes.Buffer{})
		var acct struct{ AccountID string }
		if err == nil {
			err = json.Unmarshal(out.Bytes(), &acct)
		}
		return acct.AccountID, err
	}
	if _, err := create("bad@padaria.com.br", "11.222.333/0001-82"); err == nil {
		t.Error("an account was created with a CNPJ whose check digits are wrong")
	}
	id, err := create("dono@padaria.com.br", "11.222.333/0001-81")
	if err != nil {
		t.Fatal(err)
	}
	stored := func() string {
		s, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a, err := s.GetAccount(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return a.Document
	}
	if got := stored(); got != "11222333000181" {
		t.Errorf("stored document %q", got)
	}
	set := func(acct, doc string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), []string{"account", "document", "--account", acct, "--document", doc, "--database-url", db},
			noEnv, &out, &bytes.Buffer{})
		return out.String(), err
	}
	out, err := set(id, "529.982.247-25")
	if err != nil || !strings.Contains(out, `"***.982.247-**"`) || strings.Contains(out, "52998224725") {
		t.Errorf("set: %q %v", out, err)
	}
	if got := stored(); got != "52998224725" {
		t.Errorf("stored document %q", got)
	}
	if _, err := set(id, "123"); err == nil {
		t.Error("an invalid document was accepted")
	}
	if _, err := set("acct_missing", "529.982.247-25"); err == nil || !strings.Contains(err.Error(), "acct_missing") {
		t.Errorf("unknown account: %v", err)
	}
	if _, err := set(id, ""); err != nil || stored() != "" {
		t.Errorf("clearing: %v, stored %q", err, stored())
	}
	if err := run(context.Background(), []string{"account", "document", "--account", id, "--database-url", db}, noEnv,
		&bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("no --document: want the usage error, not a silent clear")
	}
}
