package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/quitapix/quita/domain"
)

// metadataObject is a request's metadata: each value as the exact JSON the
// merchant sent (numbers included), so it is returned as sent. It decodes
// key by key and refuses an object of more than domain.MaxMetadataKeys
// keys as soon as it reads one more, so refusing 60,000 keys costs what
// refusing 51 does: no key past the limit is decoded or kept. Keys count
// as sent, reserved and repeated ones included (the domain strips
// reserved keys afterwards and counts again with the description).
type metadataObject map[string]json.RawMessage

func (m *metadataObject) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*m = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		// encoding/json names the field when it wraps this error.
		return &json.UnmarshalTypeError{Value: "non-object", Type: reflect.TypeOf(*m)}
	}
	out := make(metadataObject)
	for n := 1; dec.More(); n++ {
		if n > domain.MaxMetadataKeys {
			return domain.Invalid(domain.FieldMetadata, "%s may hold at most %d keys", domain.FieldMetadata, domain.MaxMetadataKeys)
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out[tok.(string)] = v
	}
	*m = out
	return nil
}

// values is m as the domain takes metadata: each value still the raw JSON.
func (m metadataObject) values() map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
