// Package domain is Quita's payment core: charges and their two status
// vocabularies, the payer lock, Brazilian tax ids, money and fees, API-key
// format, event envelopes and webhook signatures, and the amount a due-date
// charge asks on a given day (DueTerms). Pix BR Codes live in the subpackage
// brcode and the Brazilian bank calendar in bizdays; each stands alone.
//
// It imports only the standard library and never reads the clock or a random
// source on its own: time and randomness come in as arguments, so another Go
// service can embed the package and get the same answers in its own tests.
//
// The entities guard themselves. A Charge is built by NewCharge, which
// validates every field, and changes state only through methods that check
// the current state and return a named error (ErrChargeNotPayable,
// ErrChargeNotCancellable, ...). UnmarshalChargeFromStorage is the one way to
// skip validation and exists for storage adapters that load what was saved.
//
// Bad input comes back as a *ValidationError naming a neutral Field, never a
// wire parameter: adapters translate each Field to their own names.
package domain
