package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
)

// An account's name is printed on receipts and shown in the dashboard: it
// is at most domain.MaxNameLen characters and holds no control or
// bidirectional formatting character; a refused account is not created.
func TestAccountNameIsBounded(t *testing.T) {
	t.Parallel()
	store := &mocks.AccountStoreMock{}
	svc := app.NewAccountService(store, &mocks.KeyStoreMock{}, &mocks.PasswordHasherMock{},
		&mocks.ClockMock{NowFunc: time.Now}, &mocks.IDGeneratorMock{}, app.AuthCacheTTL(time.Second))
	for _, name := range []string{strings.Repeat("P", domain.MaxNameLen+1), "Padaria\u202e", "Padaria\x1b[2J", "Padaria\nSão João"} {
		_, err := svc.CreateAccount(context.Background(), app.NewAccountInput{Name: name, Email: "dono@example.com", Password: "long-enough-password"})
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != domain.FieldAccountName {
			t.Errorf("account name %.20q: %v, want a validation error on the name", name, err)
		}
	}
	if n := len(store.CreateAccountCalls()); n != 0 {
		t.Errorf("%d accounts created", n)
	}
}
