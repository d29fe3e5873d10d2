package domain_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestNewEndToEndID(t *testing.T) {
	t.Parallel()
	// 21:07 in São Paulo is 00:07 the next day in UTC; the id must carry UTC.
	at := time.Date(2026, 3, 31, 21, 7, 59, 0, time.FixedZone("BRT", -3*3600))
	rnd := bytes.NewReader(bytes.Repeat([]byte{0, 1, 25, 26, 61, 62, 247, 248, 255}, 8))
	id, err := domain.NewEndToEndID("00038166", at, rnd)
	if err != nil {
		t.Fatal(err)
	}
	// Bytes 248 and 255 are skipped so that every character is equally likely.
	const want = "E00038166202604010007" + "ABZa9A9" + "ABZa"
	if id != want {
		t.Errorf("NewEndToEndID = %q, want %q", id, want)
	}
	if !domain.ValidEndToEndID(id) {
		t.Errorf("ValidEndToEndID(%q) = false for a fresh id", id)
	}
}

func TestNewEndToEndIDRejects(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	ok := func() io.Reader { return bytes.NewReader(make([]byte, 64)) }
	for _, tc := range []struct {
		name string
		ispb string
		at   time.Time
		rnd  io.Reader
	}{
		{"short ISPB", "0003816", at, ok()},
		{"ISPB with letter", "0003816A", at, ok()},
		{"no random source", "00038166", at, nil},
		{"random source fails", "00038166", at, iotest.ErrReader(errors.New("boom"))},
		{"random source runs dry", "00038166", at, bytes.NewReader(make([]byte, 5))},
		{"year 10000", "00038166", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ok()},
		{"negative year", "00038166", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), ok()},
	} {
		if id, err := domain.NewEndToEndID(tc.ispb, tc.at, tc.rnd); err == nil {
			t.Errorf("%s: got %q, want an error", tc.name, id)
		}
	}
}

func TestValidEndToEndID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"E00038166202604010007ABZa9A9ABZa":  true,
		"E9999999920261231235900000000000":  true,
		"E00038166202602290007ABZa9A9ABZa":  false, // 2026 is not a leap year
		"E00038166202613010007ABZa9A9ABZa":  false, // month 13
		"E00038166202604012407ABZa9A9ABZa":  false, // hour 24
		"E00038166202604010060ABZa9A9ABZa":  false, // minute 60
		"D00038166202604010007ABZa9A9ABZa":  false, // a return id, not end-to-end
		"e00038166202604010007ABZa9A9ABZa":  false,
		"E0003816A202604010007ABZa9A9ABZa":  false,
		"E00038166202604010007ABZa9A9ABZ-":  false,
		"E00038166202604010007ABZa9A9ABZ":   false,
		"E00038166202604010007ABZa9A9ABZaa": false,
		"":                                  false,
	} {
		if got := domain.ValidEndToEndID(id); got != want {
			t.Errorf("ValidEndToEndID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestValidTxID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		strings.Repeat("a", 26):                true,
		strings.Repeat("Z", 35):                true,
		"fc9a4366ff3d4964b5dbc6c91a8722d3":     true,
		strings.Repeat("a", 25):                false,
		strings.Repeat("a", 36):                false,
		"fc9a4366-ff3d-4964-b5db-c6c91a8722d3": false,
		strings.Repeat("á", 26):                false,
		"":                                     false,
	} {
		if got := domain.ValidTxID(id); got != want {
			t.Errorf("ValidTxID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestEndToEndISPB(t *testing.T) {
	t.Parallel()
	if ispb, ok := domain.EndToEndISPB("E00038166202604010007ABZa9A9ABZa"); !ok || ispb != "00038166" {
		t.Errorf("EndToEndISPB = %q, %v; want 00038166, true", ispb, ok)
	}
	for _, bad := range []string{"", "E0003816", "D00038166202604010007ABZa9A9ABZa", "E00038166202613010007ABZa9A9ABZa"} {
		if ispb, ok := domain.EndToEndISPB(bad); ok || ispb != "" {
			t.Errorf("EndToEndISPB(%q) = %q, %v; want no ISPB", bad, ispb, ok)
		}
	}
}
