package domain

import "strings"

// MaxNameLen bounds a person's or business's name that Quita keeps from
// outside — a payer's name a bank reported, an account's name — in
// characters: 140, the API Pix limit for a name. Receipts print such names,
// so the bound keeps what drawing one costs independent of what was sent.
const MaxNameLen = 140

// Free text from outside (a description, a reason, a name, metadata) is
// shown again in the dashboard, on receipts and in the merchant's own
// systems. A control character (Unicode Cc) or a bidirectional formatting
// character in it changes how the text around it reads: "a@exa\u202emple.com"
// displays as "a@exaelpmoc.". Such text is refused where a client sends it
// (CheckText: the spec returns free-form values as sent, so they are not
// altered) and stripped where Quita cannot refuse it (StripControls: a
// PSP's report).

// IsTextControl reports whether r is a control character (Unicode Cc) or a
// bidirectional formatting character: the marks U+061C, U+200E and U+200F,
// the embeddings and overrides U+202A–U+202E and the isolates
// U+2066–U+2069.
func IsTextControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// lineBreakOrTab is what a multi-line text may hold of the Cc characters.
func lineBreakOrTab(r rune) bool { return r == '\t' || r == '\n' || r == '\r' }

// HasTextControl reports whether s holds a character IsTextControl
// reports; a multi-line text may hold tabs and line breaks.
func HasTextControl(s string, multiline bool) bool {
	for _, r := range s {
		if IsTextControl(r) && !(multiline && lineBreakOrTab(r)) {
			return true
		}
	}
	return false
}

// CheckText refuses free text s for field f when it holds a control or
// bidirectional formatting character (IsTextControl); a multi-line text
// (a description, a reason) may hold tabs and line breaks. The error never
// repeats the text.
func CheckText(f Field, s string, multiline bool) error {
	if !HasTextControl(s, multiline) {
		return nil
	}
	if multiline {
		return Invalid(f, "%s must not contain control characters other than tabs and line breaks, nor bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)", f)
	}
	return Invalid(f, "%s must not contain control characters nor bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)", f)
}

// StripControls is s without the characters IsTextControl reports, for
// one-line text Quita keeps but never refuses (a payer's name a PSP
// reported).
func StripControls(s string) string {
	if !HasTextControl(s, false) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if IsTextControl(r) {
			return -1
		}
		return r
	}, s)
}
