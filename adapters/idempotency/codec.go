package idempotency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/quitapix/quita/ports"
)

// The Redis value is binary, so a response body of a few KB costs its own
// length plus a few bytes:
//
//	in flight: version(1) stateInFlight fingerprint...
//	done:      version(1) stateDone status(uint16 BE) uvarint(len(fingerprint)) fingerprint body...
//	in record: version(1) stateInRecord status(uint16 BE) fingerprint...
//
// An in-flight value is a pure function of the fingerprint, which is what
// lets the release script compare it byte for byte. The states are this
// format's own numbers, not ports.ClaimState, so the Go enum may change
// without changing what is stored.
const (
	formatVersion byte = 1
	stateInFlight byte = 1
	stateDone     byte = 2
	// stateInRecord: answered, the answer in the durable record
	// (CompleteInRecord). A process that predates it reads the value as
	// corrupt, a cache error: it takes the database path, which answers
	// the same.
	stateInRecord byte = 3
)

var errCorrupt = errors.New("not an idempotency value of format 1")

func encodeInFlight(fingerprint string) []byte {
	b := make([]byte, 0, 2+len(fingerprint))
	b = append(b, formatVersion, stateInFlight)
	return append(b, fingerprint...)
}

func encodeDone(fingerprint string, statusCode int, body []byte) ([]byte, error) {
	if statusCode < 0 || statusCode > math.MaxUint16 {
		return nil, fmt.Errorf("idempotency: status code %d out of range", statusCode)
	}
	b := make([]byte, 0, 4+binary.MaxVarintLen64+len(fingerprint)+len(body))
	b = append(b, formatVersion, stateDone)
	b = binary.BigEndian.AppendUint16(b, uint16(statusCode))
	b = binary.AppendUvarint(b, uint64(len(fingerprint)))
	b = append(b, fingerprint...)
	return append(b, body...), nil
}

func encodeInRecord(fingerprint string, statusCode int) ([]byte, error) {
	if statusCode < 0 || statusCode > math.MaxUint16 {
		return nil, fmt.Errorf("idempotency: status code %d out of range", statusCode)
	}
	b := make([]byte, 0, 4+len(fingerprint))
	b = append(b, formatVersion, stateInRecord)
	b = binary.BigEndian.AppendUint16(b, uint16(statusCode))
	return append(b, fingerprint...), nil
}

// decode reads a value written by encodeInFlight, encodeDone or
// encodeInRecord. The body
// of the returned claim aliases raw.
func decode(raw []byte) (ports.Claim, error) {
	if len(raw) < 2 || raw[0] != formatVersion {
		return ports.Claim{}, errCorrupt
	}
	switch raw[1] {
	case stateInFlight:
		return ports.Claim{State: ports.ClaimInFlight, Fingerprint: string(raw[2:])}, nil
	case stateDone:
		rest := raw[2:]
		if len(rest) < 2 {
			return ports.Claim{}, errCorrupt
		}
		status := int(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return ports.Claim{}, errCorrupt
		}
		rest = rest[w:]
		return ports.Claim{
			State:       ports.ClaimCompleted,
			Fingerprint: string(rest[:n]),
			StatusCode:  status,
			Body:        rest[n:],
		}, nil
	case stateInRecord:
		if len(raw) < 4 {
			return ports.Claim{}, errCorrupt
		}
		return ports.Claim{
			State:       ports.ClaimCompleted,
			Fingerprint: string(raw[4:]),
			StatusCode:  int(binary.BigEndian.Uint16(raw[2:])),
			InRecord:    true,
		}, nil
	default:
		return ports.Claim{}, errCorrupt
	}
}
