package receipt

import (
	"strings"
	"unicode"

	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/text/unicode/norm"

	"github.com/quitapix/quita/domain"
)

// regular is the parsed body font, asked which characters it can draw.
// An sfnt.Font is safe for concurrent use with a Buffer per call.
var regular = mustParseFont(goregular.TTF)

func mustParseFont(ttf []byte) *sfnt.Font {
	f, err := sfnt.Parse(ttf)
	if err != nil {
		panic("receipt: the embedded Go font does not parse: " + err.Error())
	}
	return f
}

// printable makes text from outside (names a bank reported, a merchant's
// description) drawable: composed to NFC, so "São" sent as "Sa" plus a
// combining tilde prints as one letter; control characters and line
// breaks become spaces; bidirectional formatting characters, which
// Quita's inputs refuse but older records may hold, are dropped; a
// character the font cannot draw (an emoji, CJK) becomes U+FFFD "�"
// instead of failing the whole receipt.
func printable(s string) string {
	s = norm.NFC.String(s)
	var buf sfnt.Buffer
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case unicode.IsControl(r) || unicode.IsSpace(r):
			b.WriteByte(' ')
		case domain.IsTextControl(r): // dropped
		case drawable(&buf, r):
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ReplacementChar)
		}
	}
	return b.String()
}

func drawable(buf *sfnt.Buffer, r rune) bool {
	g, err := regular.GlyphIndex(buf, r)
	return err == nil && g != 0
}
