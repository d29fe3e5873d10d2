package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// A user with two-step verification logs in with LoginWithCode (Login
// alone is second_factor_required) and issues or rotates a live key with
// a fresh code (KeyParams.Code, RotateWithCode).
func TestSDKWithTOTP(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	ctx := context.Background()
	acct := srv.NewAccount(t, "Loja Duas Etapas")
	user, _, err := srv.App.DB.GetUserSecurity(ctx, acct.UserID)
	if err != nil {
		t.Fatal(err)
	}
	u := app.DashboardUser{UserID: acct.UserID, AccountID: acct.AccountID}
	setup := must(srv.App.Dashboard.SecondFactor.BeginTOTP(ctx, u))(t)
	clock := srv.Clock.(*quitatest.Clock)
	code := func() string {
		t.Helper()
		clock.Advance(30 * time.Second)
		return must(totp.Codes{}.TOTPCode(setup.Secret, clock.Now().Unix()/30))(t)
	}
	must(srv.App.Dashboard.SecondFactor.ConfirmTOTP(ctx, u, code()))(t)

	c := client.New(srv.BaseURL, "")
	_, err = c.Auth.Login(ctx, user.Email, quitatest.Password)
	apiErr(t, err, 401, "second_factor_required")
	_, err = c.Auth.LoginWithCode(ctx, user.Email, quitatest.Password, "000000")
	apiErr(t, err, 401, "invalid_second_factor")
	sess := must(c.Auth.LoginWithCode(ctx, user.Email, quitatest.Password, code()))(t)
	dash := c.With(client.WithToken(sess.Token))

	_, err = dash.APIKeys.Issue(ctx, client.KeyParams{Label: "real"})
	apiErr(t, err, 403, "second_factor_required")
	k := must(dash.APIKeys.Issue(ctx, client.KeyParams{Label: "real", Code: code()}))(t)
	_, err = dash.APIKeys.Rotate(ctx, k.ID, nil)
	apiErr(t, err, 403, "second_factor_required")
	must(dash.APIKeys.RotateWithCode(ctx, k.ID, nil, code()))(t)
}
