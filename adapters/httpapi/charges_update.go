package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// updateChargeRequest is POST /v1/charges/{id}: a due-date charge's
// revised terms, each member in the create's shape. A member left out
// keeps the charge's; a rule sent as null is removed.
type updateChargeRequest struct {
	DueDate      *string        `json:"due_date"`
	DaysAfterDue *int           `json:"days_after_due"`
	Fine         *fineJSON      `json:"fine"`
	Interest     *interestJSON  `json:"interest"`
	Discount     *discountJSON  `json:"discount"`
	Abatement    *abatementJSON `json:"abatement"`
}

// update serves POST /v1/charges/{id}: it revises a pending due-date
// charge's terms and answers the charge. An Idempotency-Key is honoured
// by keyedWrites, as for every POST that is not a money write.
func (c *ChargesController) update(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	var req updateChargeRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		return nil, err
	}
	// Which members were sent, null or not: encoding/json gives a null
	// and an absent member the same nil. Keys match fields regardless of
	// case, as the decoding above does.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return nil, badRequest("", "body_invalid", "the body must be a JSON object")
	}
	sent := make(map[string]bool, len(members))
	for k := range members {
		sent[strings.ToLower(k)] = true
	}
	rev, err := req.revision(sent)
	if err != nil {
		return nil, err
	}
	ch, err := c.charges.ReviseDueTerms(r.Context(), caller, raw, rev)
	if err != nil {
		return nil, err
	}
	return ch.Public(c.links), nil
}

// revision is the request as a domain.DueRevision. sent names the members
// present in the body (lower case).
func (u updateChargeRequest) revision(sent map[string]bool) (domain.DueRevision, error) {
	var rev domain.DueRevision
	switch {
	case u.DueDate != nil:
		due, err := bizdays.ParseDate(*u.DueDate)
		if err != nil {
			return rev, badRequest("due_date", "parameter_invalid", "due_date must be a date written YYYY-MM-DD")
		}
		rev.Due = &due
	case sent["due_date"]:
		return rev, badRequest("due_date", "parameter_invalid", "due_date cannot be removed; send a date written YYYY-MM-DD")
	}
	if u.DaysAfterDue == nil && sent["days_after_due"] {
		return rev, badRequest("days_after_due", "parameter_invalid", "days_after_due cannot be removed; send a number of days")
	}
	rev.DaysAfterDue = u.DaysAfterDue
	if sent["fine"] {
		rev.Fine = domain.RuleRevision[domain.Fine]{Set: true, To: u.Fine.rule()}
	}
	if sent["interest"] {
		rev.Interest = domain.RuleRevision[domain.Interest]{Set: true, To: u.Interest.rule()}
	}
	if sent["abatement"] {
		rev.Abatement = domain.RuleRevision[domain.Abatement]{Set: true, To: u.Abatement.rule()}
	}
	if sent["discount"] {
		d, err := u.Discount.rule()
		if err != nil {
			return rev, err
		}
		rev.Discount = domain.RuleRevision[domain.Discount]{Set: true, To: d}
	}
	return rev, nil
}
