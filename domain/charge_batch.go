package domain

import "strings"

// PrefixChargeBatch starts the id of a batch of charge creates.
const PrefixChargeBatch = "chbatch_"

// MaxBatchCharges is the most charges one batch may ask for.
const MaxBatchCharges = 1000

// BatchStatus is where a batch of charge creates stands: processing while
// any of its items is pending, completed once every item is created or
// refused (a completed batch never changes again).
type BatchStatus string

// The batch statuses.
const (
	BatchProcessing BatchStatus = "processing"
	BatchCompleted  BatchStatus = "completed"
)

// BatchItemStatus is where one item of a batch stands: pending until its
// charge is created or the item is refused; both are final.
type BatchItemStatus string

// The batch item statuses.
const (
	BatchItemPending BatchItemStatus = "pending"
	BatchItemCreated BatchItemStatus = "created"
	BatchItemRefused BatchItemStatus = "refused"
)

// Final reports whether an item in s will never change again.
func (s BatchItemStatus) Final() bool { return s == BatchItemCreated || s == BatchItemRefused }

// ParseChargeBatchID accepts "chbatch_<raw>" or the bare raw id and
// returns the raw id.
func ParseChargeBatchID(s string) (string, bool) {
	raw := strings.TrimPrefix(s, PrefixChargeBatch)
	return raw, ValidRawID(raw)
}
