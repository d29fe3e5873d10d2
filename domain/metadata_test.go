package domain_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// Metadata a library caller builds in Go is held to the same limits as
// metadata decoded from a request.
func TestMetadataValuesAreBounded(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		value any
		ok    bool
	}{
		"short string":        {"pedido 42", true},
		"500 characters":      {strings.Repeat("é", domain.MaxMetadataValueLen), true},
		"501 characters":      {strings.Repeat("é", domain.MaxMetadataValueLen+1), false},
		"integer":             {int64(math.MaxInt64), true},
		"NaN":                 {math.NaN(), false},
		"infinity":            {math.Inf(1), false},
		"raw huge number":     {json.RawMessage(`1e999999`), false},
		"raw lone surrogate":  {json.RawMessage(`"\ud800x"`), false},
		"raw truncated pair":  {json.RawMessage(`"\ud800\u0041"`), false},
		"raw surrogate pair":  {json.RawMessage(`"\ud83d\ude00"`), true},
		"raw NUL escape":      {json.RawMessage(`"\u0000"`), false},
		"raw escaped escape":  {json.RawMessage(`"\\ud800"`), true},
		"nested long object":  {map[string]any{"s": strings.Repeat("a", 600)}, false},
		"nested small object": {map[string]any{"s": "a", "n": 1}, true},
	} {
		_, err := domain.NewCharge(func() domain.NewChargeParams {
			p := chargeParams()
			p.Metadata = map[string]any{"k": tc.value}
			return p
		}())
		var ve *domain.ValidationError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case !tc.ok && !errors.As(err, &ve):
			t.Errorf("%s: got %v, want a validation error", name, err)
		case !tc.ok && ve.Field != domain.FieldMetadata:
			t.Errorf("%s: error names %s", name, ve.Field)
		}
	}
}
