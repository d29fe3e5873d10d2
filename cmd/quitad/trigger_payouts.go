package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/quitapix/quita/client"
)

// The payout recipes fund the test wallet with a paid charge, then pay
// out 10.00 to a sandbox Pix key and settle or fail the payout with its
// test helpers.
var (
	recipePayout = triggerRecipe{"funds the wallet with a paid charge and creates a payout", func(ctx context.Context, t *triggerRun) error {
		_, err := triggerPayout(ctx, t)
		return err
	}}
	recipePayoutPaid = triggerRecipe{"funds the wallet, creates a payout and settles it (test helper pay)", func(ctx context.Context, t *triggerRun) error {
		id, err := triggerPayout(ctx, t)
		if err != nil {
			return err
		}
		if err := triggerAPIPost(ctx, t, "/test_helpers/payouts/"+id+"/pay", nil, ""); err != nil {
			return err
		}
		t.step("paid payout %s", id)
		return nil
	}}
	recipePayoutFailed = triggerRecipe{"funds the wallet, creates a payout and fails it (test helper fail)", func(ctx context.Context, t *triggerRun) error {
		id, err := triggerPayout(ctx, t)
		if err != nil {
			return err
		}
		if err := triggerAPIPost(ctx, t, "/test_helpers/payouts/"+id+"/fail", map[string]string{"failure_code": "rejected_by_psp"}, ""); err != nil {
			return err
		}
		t.step("failed payout %s", id)
		return nil
	}}
	recipeTransfer = triggerRecipe{"funds the wallet with a paid charge, creates a sub-account and transfers to it", func(ctx context.Context, t *triggerRun) error {
		if _, err := triggerPaidCharge(ctx, t); err != nil {
			return err
		}
		sub, err := t.c.Subaccounts.Create(ctx, client.SubaccountParams{Name: "quitad trigger", Document: "52998224725",
			Email: "trigger@example.com"})
		if err != nil {
			return err
		}
		t.step("created sub-account %s", sub.ID)
		tr, err := t.c.Transfers.Create(ctx, client.TransferParams{Amount: 100, Destination: sub.ID, Description: "quitad trigger"})
		if err != nil {
			return err
		}
		t.step("transferred %s to %s", tr.ID, sub.ID)
		return nil
	}}
)

func triggerPayout(ctx context.Context, t *triggerRun) (string, error) {
	if _, err := triggerPaidCharge(ctx, t); err != nil {
		return "", err
	}
	var po struct{ ID string }
	body := map[string]any{"amount": 1000, "description": "quitad trigger",
		"destination": map[string]string{"type": "email", "pix_key": "payee@example.com"}}
	if err := triggerAPIPost(ctx, t, "/payouts", body, client.NewIdempotencyKey(), &po); err != nil {
		return "", err
	}
	t.step("created payout %s", po.ID)
	return po.ID, nil
}

// triggerAPIPost posts to a route the SDK does not cover yet (payouts);
// out, when not nil, receives the answer. An error answer is a
// *client.Error, as from the SDK.
func triggerAPIPost(ctx context.Context, t *triggerRun, path string, body any, idemKey string, out ...any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.c.BaseURL()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("apikey", t.key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var env struct {
			Error     struct{ Type, Code, Message, Param string } `json:"error"`
			RequestID string                                      `json:"request_id"`
		}
		_ = json.Unmarshal(raw, &env)
		return &client.Error{HTTPStatus: resp.StatusCode, Type: env.Error.Type, Code: env.Error.Code,
			Message: env.Error.Message, Param: env.Error.Param, RequestID: env.RequestID}
	}
	for _, o := range out {
		if err := json.Unmarshal(raw, o); err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
	}
	return nil
}
