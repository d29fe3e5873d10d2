package brcode_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/internal/golden"
)

func vectors(tb testing.TB) []string {
	tb.Helper()
	v := golden.Lines(tb, "brcode-vectors.txt")
	if len(v) < 5 {
		tb.Fatalf("brcode-vectors.txt has %d vectors, the tests below need 5", len(v))
	}
	return v
}

// tlv writes one data object, for building hand-made payloads.
func tlv(tag, v string) string { return fmt.Sprintf("%s%02d%s", tag, len(v), v) }

// seal appends a correct tag 63, so a test can break exactly one rule
// without also breaking the checksum.
func seal(payload string) string {
	payload += "6304"
	return payload + fmt.Sprintf("%04X", brcode.CRC16CCITT([]byte(payload)))
}

// staticBody is a valid static code without its CRC, for cases that
// change one tag.
func staticBody(replace map[string]string) string {
	tags := []struct{ tag, v string }{
		{"00", "01"},
		{"26", tlv("00", "br.gov.bcb.pix") + tlv("01", "thalesog@me.com")},
		{"52", "0000"},
		{"53", "986"},
		{"54", "10.00"},
		{"58", "BR"},
		{"59", "THALES OGLIARI"},
		{"60", "SAO PAULO"},
		{"62", tlv("05", "***")},
	}
	var b strings.Builder
	for _, t := range tags {
		v, ok := replace[t.tag]
		if !ok {
			v = t.v
		}
		if v == "-" { // drop the tag
			continue
		}
		b.WriteString(tlv(t.tag, v))
	}
	return b.String()
}
