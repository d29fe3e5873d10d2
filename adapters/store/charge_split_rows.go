package store

import (
	"encoding/json"

	"github.com/quitapix/quita/domain"
)

// splitsJSON is a split charge's splits in the charges.splits column:
// the fee payer and each split's sub-account with its fixed amount or its
// percent in hundredths. The shares are not stored: they follow from the
// splits, the amount paid and the fees (domain.Charge.SplitShares).
type splitsJSON struct {
	FeePayer string      `json:"fee_payer"`
	Items    []splitJSON `json:"items"`
}

type splitJSON struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount,omitempty"`
	Percent int64  `json:"percent_bp,omitempty"`
	// Reversed is what refunds and disputes took back of the share.
	Reversed int64 `json:"reversed,omitempty"`
}

// encodeSplits is the column's value: nil (NULL) for a charge without splits.
func encodeSplits(s *domain.Splits) (*string, error) {
	if s == nil {
		return nil, nil
	}
	j := splitsJSON{FeePayer: string(s.FeePayer), Items: make([]splitJSON, len(s.Items))}
	for i, it := range s.Items {
		j.Items[i] = splitJSON(it)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	out := string(b)
	return &out, nil
}

// decodeSplits reads the column back as it was written.
func decodeSplits(col *string) (*domain.Splits, error) {
	if col == nil || *col == "" {
		return nil, nil
	}
	var j splitsJSON
	if err := json.Unmarshal([]byte(*col), &j); err != nil {
		return nil, err
	}
	s := &domain.Splits{FeePayer: domain.FeePayer(j.FeePayer), Items: make([]domain.Split, len(j.Items))}
	for i, it := range j.Items {
		s.Items[i] = domain.Split(it)
	}
	return s, nil
}
