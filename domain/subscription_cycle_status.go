package domain

// CobRStatus is the status of a cycle's recurring charge, in the API
// Pix's words (cobr.status).
type CobRStatus string

// Recurring charge statuses.
const (
	// CobRCreated (CRIADA): the receiver's PSP holds the cobr.
	CobRCreated CobRStatus = "CRIADA"
	// CobRActive (ATIVA): the payer's PSP accepted it and scheduled the
	// debit.
	CobRActive CobRStatus = "ATIVA"
	// CobRConcluded (CONCLUIDA): a debit paid it.
	CobRConcluded CobRStatus = "CONCLUIDA"
	// CobRExpired (EXPIRADA): no debit paid it by its last day.
	CobRExpired CobRStatus = "EXPIRADA"
	// CobRRejected (REJEITADA): its debits failed and no retry is left.
	CobRRejected CobRStatus = "REJEITADA"
	// CobRCancelled (CANCELADA): cancelled by the receiver or the payer.
	CobRCancelled CobRStatus = "CANCELADA"
)

// cobrTransitions is the one table of a recurring charge's status changes.
var cobrTransitions = map[CobRStatus][]CobRStatus{
	CobRCreated:   {CobRActive, CobRConcluded, CobRExpired, CobRRejected, CobRCancelled},
	CobRActive:    {CobRConcluded, CobRExpired, CobRRejected, CobRCancelled},
	CobRConcluded: nil,
	CobRExpired:   nil,
	CobRRejected:  nil,
	CobRCancelled: nil,
}

// Valid reports whether s is a recurring charge status.
func (s CobRStatus) Valid() bool { _, ok := cobrTransitions[s]; return ok }

// Open reports whether the cycle still awaits a debit.
func (s CobRStatus) Open() bool { return s == CobRCreated || s == CobRActive }

// AttemptStatus is the status of one debit of a cycle (the API Pix's
// cobr.tentativas[].status).
type AttemptStatus string

// Attempt statuses.
const (
	AttemptRequested AttemptStatus = "SOLICITADA"
	AttemptScheduled AttemptStatus = "AGENDADA"
	AttemptPaid      AttemptStatus = "PAGA"
	AttemptRejected  AttemptStatus = "REJEITADA"
	AttemptCancelled AttemptStatus = "CANCELADA"
	AttemptExpired   AttemptStatus = "EXPIRADA"
)

// attemptTransitions is the one table of a debit's status changes.
var attemptTransitions = map[AttemptStatus][]AttemptStatus{
	AttemptRequested: {AttemptScheduled, AttemptPaid, AttemptRejected, AttemptCancelled, AttemptExpired},
	AttemptScheduled: {AttemptPaid, AttemptRejected, AttemptCancelled, AttemptExpired},
	AttemptPaid:      nil,
	AttemptRejected:  nil,
	AttemptCancelled: nil,
	AttemptExpired:   nil,
}

// Valid reports whether s is an attempt status.
func (s AttemptStatus) Valid() bool { _, ok := attemptTransitions[s]; return ok }

// Open reports whether the debit has no outcome yet.
func (s AttemptStatus) Open() bool { return s == AttemptRequested || s == AttemptScheduled }

// AttemptKind says why a debit was made (the API Pix's tentativas[].tipo).
type AttemptKind string

// Attempt kinds.
const (
	// AttemptOnDueDate (AGND): the debit scheduled for the due date.
	AttemptOnDueDate AttemptKind = "AGND"
	// AttemptRetry (NTAG): a retry the receiver asked for after a failure.
	AttemptRetry AttemptKind = "NTAG"
)
