package seed

import (
	"bytes"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/quitapix/quita/domain"
)

// A token is a value inside the template's rows that each copy replaces:
// a raw id (made again at the copy's time), a timestamp written as text
// (shifted), or a value that must be unique (a txid, an end-to-end id, a
// key: each character redrawn from its class).
type tokenKind int

const (
	tokenRawID tokenKind = iota
	tokenTime
	tokenFresh
)

type token struct {
	kind tokenKind
	text string
	at   time.Time // a raw id's or a timestamp's instant
	// account marks a token of the account's own rows (its id, its
	// endpoint's, its users' and keys'): every unit of one account uses
	// that account's value.
	account bool
}

// piece is a literal, or a token's value when tok ≥ 0.
type piece struct {
	lit []byte
	tok int
}

// cell is one column of a template row: a value copied as is, an
// instant shifted by the copy's offset, or text assembled from pieces.
type cell struct {
	plain   any
	instant *time.Time
	pieces  []piece
	text    bool // assembled from pieces
	isBytes bool
}

// tokens collects a template's tokens in order of discovery.
type tokens struct {
	list  []token
	index map[string]int
}

func newTokens() *tokens { return &tokens{index: map[string]int{}} }

func (ts *tokens) add(t token) int {
	if i, ok := ts.index[t.text]; ok {
		return i
	}
	ts.list = append(ts.list, t)
	ts.index[t.text] = len(ts.list) - 1
	return len(ts.list) - 1
}

const rawAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

func isRawChar(c byte) bool { return (c >= '2' && c <= '7') || (c >= 'a' && c <= 'z') }

// rawIDTime decodes a raw id's first 9 characters, its Unix milliseconds.
func rawIDTime(s string) time.Time {
	var ms int64
	for i := range 9 {
		ms = ms<<5 | int64(bytes.IndexByte([]byte(rawAlphabet), s[i]))
	}
	return time.UnixMilli(ms)
}

// timeLayout is how the API writes instants (docs/decisions.md,
// "Timestamps").
const timeLayout = "2006-01-02T15:04:05.000Z"

// split cuts text into literals and tokens: every run of exactly
// domain.RawIDLen raw-id characters whose instant lies within a day of
// the template run is a raw id, every timeLayout instant a time, and the
// values in fresh (found earlier in unique columns) are fresh tokens.
func (ts *tokens) split(text []byte, around time.Time, fresh []string) []piece {
	var out []piece
	lit := 0
	flush := func(i int) {
		if i > lit {
			out = append(out, piece{lit: text[lit:i], tok: -1})
		}
	}
	for i := 0; i < len(text); {
		if f := freshAt(text[i:], fresh); f != "" {
			flush(i)
			out = append(out, piece{tok: ts.index[f]})
			i += len(f)
			lit = i
			continue
		}
		if isRawChar(text[i]) && (i == 0 || !isRawChar(text[i-1])) {
			j := i
			for j < len(text) && isRawChar(text[j]) {
				j++
			}
			if j-i == domain.RawIDLen {
				s := string(text[i:j])
				if at := rawIDTime(s); at.Sub(around).Abs() < 24*time.Hour {
					flush(i)
					out = append(out, piece{tok: ts.add(token{kind: tokenRawID, text: s, at: at})})
					lit = j
				}
			}
			i = j
			continue
		}
		if i+len(timeLayout) <= len(text) && text[i+4] == '-' && text[i+10] == 'T' && text[i+len(timeLayout)-1] == 'Z' {
			if at, err := time.Parse(timeLayout, string(text[i:i+len(timeLayout)])); err == nil {
				flush(i)
				s := string(text[i : i+len(timeLayout)])
				out = append(out, piece{tok: ts.add(token{kind: tokenTime, text: s, at: at})})
				i += len(timeLayout)
				lit = i
				continue
			}
		}
		i++
	}
	flush(len(text))
	return out
}

func freshAt(text []byte, fresh []string) string {
	for _, f := range fresh {
		if bytes.HasPrefix(text, []byte(f)) {
			return f
		}
	}
	return ""
}

// redraw keeps a fresh value's shape: each digit, lower- and upper-case
// letter is drawn again from its class.
func redraw(s string, rng *rand.Rand) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			b[i] = '0' + byte(rng.IntN(10))
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + byte(rng.IntN(26))
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + byte(rng.IntN(26))
		}
	}
	return string(b)
}

// rngReader feeds domain.NewRawIDAt from a fast seeded generator: the
// seeded ids need to be unique, not unpredictable.
type rngReader struct{ rng *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.rng.Uint32())
	}
	return len(p), nil
}

// values gives each token its value for one copy shifted by delta;
// account-level tokens take acct's values (the template account's own
// when acct has none).
func (ts *tokens) values(delta time.Duration, acct map[string]string, rng *rand.Rand) []string {
	out := make([]string, len(ts.list))
	for i, t := range ts.list {
		if t.account {
			out[i] = t.text
			if v, ok := acct[t.text]; ok {
				out[i] = v
			}
			continue
		}
		out[i] = t.valueAt(delta, rng)
	}
	return out
}

// valueAt is a copy's value of t, shifted by delta.
func (t token) valueAt(delta time.Duration, rng *rand.Rand) string {
	switch t.kind {
	case tokenRawID:
		id, _ := domain.NewRawIDAt(t.at.Add(delta), rngReader{rng})
		return id
	case tokenTime:
		return t.at.Add(delta).UTC().Format(timeLayout)
	default:
		return redraw(t.text, rng)
	}
}

// build assembles a cell's value for a copy, in one allocation.
func (c *cell) build(vals []string, delta time.Duration) any {
	switch {
	case c.instant != nil:
		return c.instant.Add(delta)
	case !c.text:
		return c.plain
	}
	size := 0
	for _, p := range c.pieces {
		if p.tok < 0 {
			size += len(p.lit)
		} else {
			size += len(vals[p.tok])
		}
	}
	b := make([]byte, 0, size)
	for _, p := range c.pieces {
		if p.tok < 0 {
			b = append(b, p.lit...)
		} else {
			b = append(b, vals[p.tok]...)
		}
	}
	if c.isBytes {
		return b
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// settle makes a cell without tokens a plain value, built once.
func (c *cell) settle() {
	if !c.text {
		return
	}
	for _, p := range c.pieces {
		if p.tok >= 0 {
			return
		}
	}
	var b []byte
	for _, p := range c.pieces {
		b = append(b, p.lit...)
	}
	if c.isBytes {
		if b == nil {
			b = []byte{}
		}
		c.plain = b
	} else {
		c.plain = string(b)
	}
	c.text, c.pieces = false, nil
}
