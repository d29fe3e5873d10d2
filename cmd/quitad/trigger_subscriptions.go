package main

import (
	"context"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/domain"
)

// The subscription recipes create a monthly subscription (R$ 19.90, its
// first cycle due in five days) and play the payer and the payer's bank
// with the subscription test helpers. A mandate's expiry comes only from
// the clock, which trigger does not move.
var (
	recipeSubscriptionCreated = triggerRecipe{"creates a subscription (Pix Automático)", func(ctx context.Context, t *triggerRun) error {
		_, err := triggerSubscription(ctx, t, client.RetryNone, false)
		return err
	}}
	recipeSubscriptionAuthorized = triggerRecipe{"creates a subscription and authorizes it as the payer (test helper)", func(ctx context.Context, t *triggerRun) error {
		_, err := triggerSubscription(ctx, t, client.RetryNone, true)
		return err
	}}
	recipeSubscriptionRejected = triggerRecipe{"creates a subscription and rejects it as the payer (test helper)", func(ctx context.Context, t *triggerRun) error {
		id, err := triggerSubscription(ctx, t, client.RetryNone, false)
		if err != nil {
			return err
		}
		if _, err := t.c.TestHelpers.RejectSubscription(ctx, id); err != nil {
			return err
		}
		t.step("rejected %s", id)
		return nil
	}}
	recipeSubscriptionCancelled = triggerRecipe{"creates a subscription and cancels it", func(ctx context.Context, t *triggerRun) error {
		id, err := triggerSubscription(ctx, t, client.RetryNone, false)
		if err != nil {
			return err
		}
		if _, err := t.c.Subscriptions.Cancel(ctx, id); err != nil {
			return err
		}
		t.step("cancelled %s", id)
		return nil
	}}
	recipeSubscriptionPaid = triggerRecipe{"creates and authorizes a one-cycle subscription and runs its cycle (test helper advance)", func(ctx context.Context, t *triggerRun) error {
		return triggerAdvance(ctx, t, client.RetryNone, false)
	}}
	recipeSubscriptionFailed = triggerRecipe{"creates and authorizes a subscription without retries and fails its first debit (advance with fail)", func(ctx context.Context, t *triggerRun) error {
		return triggerAdvance(ctx, t, client.RetryNone, true)
	}}
	recipeSubscriptionRetrying = triggerRecipe{"creates and authorizes a subscription with retries and fails its first debit (advance with fail)", func(ctx context.Context, t *triggerRun) error {
		return triggerAdvance(ctx, t, client.RetryThreeInSevenDays, true)
	}}
)

// triggerSubscription creates a one-cycle monthly subscription with the
// retry policy and, when authorize, authorizes it; it returns its id.
func triggerSubscription(ctx context.Context, t *triggerRun, retry string, authorize bool) (string, error) {
	start := domain.BrasiliaDate(time.Now()).AddDays(5).String()
	s, err := t.c.Subscriptions.Create(ctx, client.SubscriptionParams{
		Customer: client.SubscriptionCustomer{Name: "Quitad Trigger", Document: "529.982.247-25"}, Amount: 1990,
		Interval: client.IntervalMonthly, StartDate: start, EndDate: start, Contract: "quitad-trigger", RetryPolicy: retry,
	})
	if err != nil {
		return "", err
	}
	t.step("created subscription %s", s.ID)
	if authorize {
		if _, err := t.c.TestHelpers.AuthorizeSubscription(ctx, s.ID); err != nil {
			return "", err
		}
		t.step("authorized %s", s.ID)
	}
	return s.ID, nil
}

// triggerAdvance runs the only cycle of a fresh, authorized subscription.
func triggerAdvance(ctx context.Context, t *triggerRun, retry string, fail bool) error {
	id, err := triggerSubscription(ctx, t, retry, true)
	if err != nil {
		return err
	}
	if _, err := t.c.TestHelpers.AdvanceSubscription(ctx, id, fail); err != nil {
		return err
	}
	t.step("advanced %s (debit failed: %v)", id, fail)
	return nil
}
