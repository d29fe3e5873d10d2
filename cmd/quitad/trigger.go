package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/domain"
)

// triggerRecipe drives test-mode objects, through the public API, to the
// point where the server emits an event.
type triggerRecipe struct {
	// does says what the recipe does, for --list and the output.
	does string
	run  func(ctx context.Context, t *triggerRun) error
}

// triggerRun is what a recipe works with: the SDK client, the key (for
// routes the SDK does not cover) and where to report each step.
type triggerRun struct {
	c    *client.Client
	key  string
	step func(format string, args ...any)
	// charge is what the recipes' charges are created with: 1990 and
	// "quitad trigger" unless --amount, --description and --metadata
	// say otherwise.
	charge client.ChargeParams
}

var (
	recipeCreate = triggerRecipe{"creates a Pix charge", func(ctx context.Context, t *triggerRun) error {
		_, err := triggerCharge(ctx, t)
		return err
	}}
	recipePay = triggerRecipe{"creates a charge and pays it with the sandbox bank", func(ctx context.Context, t *triggerRun) error {
		_, err := triggerPaidCharge(ctx, t)
		return err
	}}
	recipeExpire = triggerRecipe{"creates a charge and expires it (test helper)", func(ctx context.Context, t *triggerRun) error {
		ch, err := triggerCharge(ctx, t)
		if err != nil {
			return err
		}
		if _, err := t.c.TestHelpers.ExpireCharge(ctx, ch.ID); err != nil {
			return err
		}
		t.step("expired %s", ch.ID)
		return nil
	}}
	recipeCancel = triggerRecipe{"creates a charge and cancels it (POST /v1/payments/{id}/cancel)", func(ctx context.Context, t *triggerRun) error {
		ch, err := triggerCharge(ctx, t)
		if err != nil {
			return err
		}
		if _, err := t.c.Payments.Cancel(ctx, ch.ID); err != nil {
			return err
		}
		t.step("cancelled %s", ch.ID)
		return nil
	}}
	recipeRefund = triggerRecipe{"creates a charge, pays it and refunds it in full (the server's refund worker completes the refund)", func(ctx context.Context, t *triggerRun) error {
		ch, err := triggerPaidCharge(ctx, t)
		if err != nil {
			return err
		}
		rf, err := t.c.Payments.Refund(ctx, ch.ID, client.RefundParams{Reason: "quitad trigger"})
		if err != nil {
			return err
		}
		t.step("refund %s requested for %s", rf.ID, ch.ID)
		return nil
	}}
	recipeDispute = triggerRecipe{"creates a charge, pays it and disputes it (test helper transition to DISPUTE)", func(ctx context.Context, t *triggerRun) error {
		ch, err := triggerPaidCharge(ctx, t)
		if err != nil {
			return err
		}
		if _, err := t.c.TestHelpers.TransitionPayment(ctx, ch.ID, client.TxDispute, ""); err != nil {
			return err
		}
		t.step("disputed %s", ch.ID)
		return nil
	}}
)

// triggerRecipes covers every event of the catalog that something in
// Quita can emit today; triggerUnsupported says why the others cannot be
// triggered. TestTriggerCoversTheCatalog keeps the two complete.
var triggerRecipes = map[domain.EventType]triggerRecipe{
	domain.EventChargeCreated:           recipeCreate,
	domain.EventPaymentCreated:          recipeCreate,
	domain.EventChargePaid:              recipePay,
	domain.EventPaymentCompleted:        recipePay,
	domain.EventPaymentStatusChanged:    recipePay,
	domain.EventChargeExpired:           recipeExpire,
	domain.EventPaymentExpired:          recipeExpire,
	domain.EventChargeFailed:            recipeCancel,
	domain.EventPaymentFailed:           recipeCancel,
	domain.EventChargeRefunded:          recipeRefund,
	domain.EventPaymentRefunded:         recipeRefund,
	domain.EventChargeDisputed:          recipeDispute,
	domain.EventPayoutCreated:           recipePayout,
	domain.EventWithdrawalCreated:       recipePayout,
	domain.EventPayoutPaid:              recipePayoutPaid,
	domain.EventWithdrawalCompleted:     recipePayoutPaid,
	domain.EventWithdrawalStatusChanged: recipePayoutPaid,
	domain.EventPayoutFailed:            recipePayoutFailed,
	domain.EventWithdrawalFailed:        recipePayoutFailed,
	domain.EventTransferCreated:         recipeTransfer,

	domain.EventSubscriptionCreated:         recipeSubscriptionCreated,
	domain.EventSubscriptionAuthorized:      recipeSubscriptionAuthorized,
	domain.EventSubscriptionRejected:        recipeSubscriptionRejected,
	domain.EventSubscriptionCancelled:       recipeSubscriptionCancelled,
	domain.EventSubscriptionChargeScheduled: recipeSubscriptionPaid,
	domain.EventSubscriptionChargePaid:      recipeSubscriptionPaid,
	domain.EventSubscriptionCompleted:       recipeSubscriptionPaid,
	domain.EventSubscriptionChargeFailed:    recipeSubscriptionFailed,
	domain.EventSubscriptionChargeRetrying:  recipeSubscriptionRetrying,
}

// triggerUnsupported names the events (or families, by prefix) trigger
// cannot make a server emit through its API, each with the reason it gives.
var triggerUnsupported = map[string]string{
	string(domain.EventChargeOverdue): "it is sent the day after a due-date charge's due date, when the server's clock gets there " +
		"(quitatest.Server.Advance moves a test server's clock)",
	string(domain.EventSubscriptionExpired): "a mandate expires at its authorization deadline (the end of the day two days before " +
		"start_date, in Brasília), which only the server's clock reaches; no test helper moves it",
}

func unsupportedReason(t domain.EventType) (string, bool) {
	for prefix, why := range triggerUnsupported {
		if strings.HasPrefix(string(t), prefix) {
			return why, true
		}
	}
	return "", false
}

func triggerCharge(ctx context.Context, t *triggerRun) (*client.Charge, error) {
	ch, err := t.c.Charges.Create(ctx, t.charge)
	if err != nil {
		return nil, err
	}
	t.step("created charge %s", ch.ID)
	return ch, nil
}

func triggerPaidCharge(ctx context.Context, t *triggerRun) (*client.Charge, error) {
	ch, err := triggerCharge(ctx, t)
	if err != nil {
		return nil, err
	}
	if _, err := t.c.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{}); err != nil {
		return nil, err
	}
	t.step("paid %s", ch.ID)
	return ch, nil
}

// triggerCommand makes a test-mode server emit each event named, through
// the public API, and waits until the event is in GET /v1/events.
func triggerCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newDevFlags("quitad trigger", getenv)
	list := fs.Bool("list", false, "list the catalog's events and how each is triggered")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for each event to be emitted")
	amount := fs.Int64("amount", 1990, "the amount of the charges the recipes create, in centavos")
	description := fs.String("description", "quitad trigger", "their description")
	metadata := metadataFlag{}
	fs.Var(metadata, "metadata", "a key=value of their metadata (repeat the flag for more)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: quitad trigger [flags] <event>... (e.g. charge.paid) | --list")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, key, err := fs.api(getenv)
	if err != nil {
		return err
	}
	if *amount <= 0 || *amount > domain.MaxAmount {
		return fmt.Errorf("--amount must be a positive number of centavos (at most %d)", domain.MaxAmount)
	}
	charge := client.ChargeParams{Amount: *amount, Description: *description}
	if len(metadata) > 0 {
		charge.Metadata = metadata
	}
	if !strings.HasPrefix(key, domain.APIKeyServicePrefix+"_"+string(domain.ModeTest)+"_") {
		return errors.New("trigger creates and moves objects: it needs a test key (qt_test_...)")
	}
	c := newAPIClient(base, key, "quitad-trigger/1")
	catalog, err := c.Webhooks.EventCatalog(ctx)
	if err != nil {
		return fmt.Errorf("read the event catalog: %w", err)
	}
	if *list {
		for _, d := range catalog {
			how := "cannot be triggered: this quitad does not know it (a newer server?)"
			if r, ok := triggerRecipes[domain.EventType(d.Event)]; ok {
				how = r.does
			} else if why, ok := unsupportedReason(domain.EventType(d.Event)); ok {
				how = "cannot be triggered yet: " + why
			}
			fmt.Fprintf(stdout, "%-26s %s\n", d.Event, how)
		}
		return nil
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("name at least one event, e.g. quitad trigger charge.paid (quitad trigger --list shows them all)")
	}
	known := map[string]bool{}
	for _, d := range catalog {
		known[d.Event] = true
	}
	for _, name := range fs.Args() {
		if err := triggerOne(ctx, &triggerRun{c: c, key: key, charge: charge}, known, domain.EventType(name), *timeout, stdout); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func triggerOne(ctx context.Context, run *triggerRun, known map[string]bool, t domain.EventType,
	timeout time.Duration, out io.Writer,
) error {
	c := run.c
	if !known[string(t)] {
		return errors.New("not in the server's event catalog (quitad trigger --list)")
	}
	r, ok := triggerRecipes[t]
	if !ok {
		if why, ok := unsupportedReason(t); ok {
			return errors.New("cannot be triggered yet: " + why)
		}
		return errors.New("this quitad does not know how to trigger it")
	}
	cursor, err := newestEventID(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Triggering %s: %s\n", t, r.does)
	run.step = func(format string, args ...any) { fmt.Fprintf(out, "  "+format+"\n", args...) }
	if err := r.run(ctx, run); err != nil {
		return err
	}
	// Wait until the server has written the event: the first of its type
	// after the cursor.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := client.EventListParams{Types: []string{string(t)}, Limit: 1, Wait: 25 * time.Second, EndingBefore: cursor}
	for {
		p, err := listEvents(ctx, c, q, func(error) {})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("no %s event within %s", t, timeout)
			}
			return err
		}
		if len(p.Data) > 0 {
			fmt.Fprintf(out, "  -> %s %s\n", t, p.Data[0].ID)
			return nil
		}
	}
}

// metadataFlag collects --metadata key=value pairs.
type metadataFlag map[string]any

func (m metadataFlag) String() string { return "" }

func (m metadataFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	m[k] = val
	return nil
}
