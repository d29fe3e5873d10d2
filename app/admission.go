package app

import "context"

// AdmissionPlace is the place a request holds in the HTTP layer's
// admission limiter (httpapi.Admission), which bounds the requests worked
// on at once. A request gives its place back while it waits on something
// outside this process that needs no work here — a webhook URL's DNS
// lookup, up to 5 s — so that a caller able to make such waits slow cannot
// take every place from the other tenants' requests (docs/decisions.md,
// "Overload is refused, not queued"). Its methods are called from the
// request's own goroutine.
type AdmissionPlace interface {
	// Leave gives the place back; false when the request held none (no
	// limiter, an unlimited route, or already left).
	Leave() bool
	// Reenter takes a place again, queueing as a new request would. An
	// error is the limiter's refusal (503 with Retry-After), which ends
	// the request: it has done nothing yet that it must undo.
	Reenter(ctx context.Context) error
}

type admissionKey struct{}

// WithAdmissionPlace returns ctx carrying the request's admission place.
func WithAdmissionPlace(ctx context.Context, p AdmissionPlace) context.Context {
	return context.WithValue(ctx, admissionKey{}, p)
}

// outsideAdmission runs wait without the request's admission place, when
// it holds one, and takes a place again after a successful wait. A failed
// wait returns at once, without a place: answering an error is no work.
func outsideAdmission(ctx context.Context, wait func() error) error {
	p, _ := ctx.Value(admissionKey{}).(AdmissionPlace)
	if p == nil || !p.Leave() {
		return wait()
	}
	if err := wait(); err != nil {
		return err
	}
	return p.Reenter(ctx)
}
