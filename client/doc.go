// Package client is the Go SDK of Quita, a Pix payment service: typed
// calls for every route of the /v1 API, safe retries, iterators over the
// lists and webhook verification. It uses the standard library only.
//
// # Getting started
//
// Create one Client per API key and share it (it is safe for concurrent
// use). The base URL includes /v1; the key is a test key (qt_test_...) or
// a live key (qt_live_...):
//
//	qc := client.New("http://127.0.0.1:8080/v1", os.Getenv("QUITA_API_KEY"))
//	ch, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990})
//	// ch.Pix.BRCode is the copy-and-paste code, ch.CheckoutURL the hosted page
//
// Every method takes a context.Context first; its deadline bounds the call
// including its retries.
//
// The client never follows a redirect to another scheme, host or port
// than the request's: the request carries the API key (or the dashboard
// token), and net/http would send the apikey header on to any host. Such
// an answer is an error wrapping ErrCrossOriginRedirect. This holds for a
// client given with WithHTTPClient too (the SDK uses a copy of it whose
// CheckRedirect checks the origin first, then calls the original's).
//
// # What is where
//
//   - Charges: Pix charges in the public vocabulary (ch_ ids, lower-case
//     statuses): Create, Get, List, ListPage.
//   - Payments: the same charges in the transaction wire format (tx_ ids,
//     upper-case statuses, more methods): Create, Get, List, ListPage,
//     Cancel, Refund, Refunds, Receipt, RefundReceipt, ProviderStatus,
//     ResendWebhook, Stats, Metrics.
//   - Wallets: List, Balance, BalanceIn.
//   - Payouts: withdraw the available balance to a Pix key (po_ ids):
//     Create, Get, List, ListPage, Cancel, Receipt.
//   - Webhooks: CreateEndpoint, ListEndpoints, UpdateEndpoint,
//     DeleteEndpoint, RotateSecret, RotateTransactionSecret,
//     ListDeliveries, ListDeliveriesPage, DeliveryStats, EventCatalog.
//   - Auth and APIKeys: the dashboard. Log in with Auth.Login, then use
//     c.With(WithToken(session.Token)).APIKeys to Issue, List, Rotate and
//     Revoke keys and read the AuditLogs and RequestLogs. API keys cannot
//     call these routes.
//   - Events: the account's events for 30 days, each the envelope exactly
//     as delivered, decoded into the same *Event a webhook handler gets:
//     List, ListPage, Get, and Follow, which long-polls for new events
//     (or catches up from a time) and yields each once, oldest first —
//     a webhook-free integration, or the catch-up after an outage.
//   - TestHelpers: move test-mode charges as the sandbox bank would:
//     PayCharge (with a payer document), ExpireCharge, FailRefund,
//     TransitionPayment, PayPayout, FailPayout. With a live key they are
//     ErrNotFound.
//
// Amounts are int64 minor units (centavos) everywhere. Timestamps are
// time.Time in UTC. Metadata comes back as sent, numbers as json.Number.
//
// # Errors
//
// An answer outside 2xx is an *Error carrying the envelope: HTTPStatus,
// Type, Code, Param (the request field at fault), Message, RequestID and
// RetryAfter. Get it with errors.As and branch on Code, or test a family
// with errors.Is against ErrNotFound, ErrUnauthorized, ErrInvalidRequest,
// ErrIdempotencyKeyReused, ErrRateLimited or ErrFraud:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == "charge_expired" { ... }
//
// A network failure that outlasts the retries is returned wrapped, with
// the cause (errors.Is(err, context.DeadlineExceeded) and the like).
//
// # Idempotency and retries
//
// Every write that moves money (Charges.Create, Payments.Create,
// Payments.Refund, Payouts.Create) carries an idempotency key. Set IdempotencyKey in the
// params to a key of your business operation (the order id and attempt)
// to make the write safe to repeat across restarts; leave it empty and
// the client generates one per call (NewIdempotencyKey). Either way the
// client's own retries resend the same key and the same body, so the
// server runs the operation once and answers a retry with the original
// result (Response.Replayed, from CreateWithResponse).
//
// The client retries, up to RetryPolicy.MaxRetries times (default 3) with
// exponential backoff and full jitter (250 ms doubling to 8 s):
//
//   - network errors, 5xx answers and 409 idempotency_key_in_use, for
//     reads and for writes that carry an idempotency key;
//   - 429 rate_limited, 503 service_unavailable (nothing was changed) and
//     a refused connection, for every request.
//
// A Retry-After from the server replaces the backoff (up to
// RetryPolicy.MaxRetryAfter, 30 s; a longer one returns the error).
// Registering an endpoint, issuing an API key and revising a due-date
// charge take an optional IdempotencyKey (EndpointParams, KeyParams,
// ChargeUpdateParams): given one, they are retried
// like a money write, and a retry answers with the first endpoint's or
// key's secret instead of making another. The server keeps those answers
// 24 h in its idempotency cache only, not in its database, so the client
// generates no key for them. Writes without a key (those two without one,
// cancel, rotate...) are not resent after an answer was lost, since the
// server may have acted; read the resource to find out. Tune with
// WithRetryPolicy or WithMaxRetries(0).
//
// # Lists
//
// List methods return an iter.Seq2 that fetches pages as the loop needs
// them: Charges.List, Events.List and Payouts.List follow the next_cursor
// (exact, even while items are created); Payments.List and
// Webhooks.ListDeliveries walk pages and offsets and skip what they
// already yielded when new items shift the pages. An error is yielded
// once and ends the loop:
//
//	for ch, err := range qc.Charges.List(ctx, client.ChargeListParams{Status: client.ChargePaid}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(ch.ID, ch.Amount)
//	}
//
// ListPage methods return one page with its cursor or totals.
//
// # Webhooks
//
// Deliveries carry X-Quita-Signature: "t=<unix>,v1=<hex>" for the
// canonical events (charge.*, payout.*), an HMAC-SHA256 of "<t>.<body>";
// "sha256=<hex>" for the legacy payment.* and withdrawal.* events, an
// HMAC-SHA256 of the body. The key is the endpoint's secret as shown
// (64 hex characters, used as text). ParseWebhook checks either scheme in
// constant time, refuses canonical signatures more than DefaultTolerance
// (5 minutes) from the receiver's clock, accepts any of several secrets
// (pass the new and the old one after RotateSecret: the server swaps at
// once) and decodes the body into an Event:
//
//	func hooks(w http.ResponseWriter, r *http.Request) {
//		ev, err := client.ParseWebhook(r, secret, previousSecret)
//		if err != nil {
//			http.Error(w, "invalid signature", http.StatusBadRequest)
//			return
//		}
//		if ev.Type == client.EventChargePaid {
//			ch, _ := ev.Charge()
//			fulfil(ch.ID) // idempotently: an event may arrive twice (dedupe by ev.ID)
//		}
//		w.WriteHeader(http.StatusNoContent)
//	}
//
// The legacy scheme carries no time, so a captured legacy delivery
// verifies forever: whoever records one can replay it. An endpoint that
// subscribes only to canonical events should refuse it, and this is the
// recommended way to verify:
//
//	verifier := client.WebhookVerifier{Secrets: []string{secret, previousSecret}, RequireTimestamp: true}
//	ev, err := verifier.Parse(r) // a "sha256=" header is ErrSignatureUntimestamped
//
// Legacy events (payment.*, withdrawal.*, and every delivery to a
// per-transaction webhookUrl) are signed only with the legacy scheme:
// verify them with ParseWebhook and treat each as a notice to read the
// payment back (Payments.Get) rather than as proof of its state, since
// neither the signature nor the unsigned DeliveryIDHeader tells a replay
// from a delivery.
//
// WebhookVerifier also sets the tolerance and clock; ParseEvent decodes a
// payload without a signature (Delivery.Payload).
//
// # Testing your integration
//
// Package github.com/quitapix/quita/quitatest runs the real server inside
// a Go test and hands out a ready client: srv.Client() on a test key,
// srv.NewReceiver for your webhook handler, srv.Advance to move the clock.
// Its package documentation shows a whole test.
package client
