package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// canonicalJSON is the canonical form of the JSON document at the start
// of body, as fingerprint hashes it: the document decoded (numbers as
// their text) and encoded again by encoding/json — object keys sorted,
// the last of a repeated key kept, no insignificant white space, strings
// escaped as encoding/json escapes them. It returns false when body does
// not start with a JSON document (fingerprint then hashes the bytes).
func canonicalJSON(body []byte) ([]byte, bool) {
	if out, ok := canonicalFast(body); ok {
		return out, true
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay exact text: no float touches an amount
	if dec.Decode(&v) != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// canonicalFast is canonicalJSON without decoding, for the documents a
// merchant sends: one value and white space only, no repeated key, and
// strings that encoding/json writes back byte for byte (no escape
// sequence; no control character, <, > or &; valid UTF-8 without U+2028
// or U+2029). For anything else it returns false and canonicalJSON
// decodes — so the two agree by construction (FuzzCanonicalJSON checks
// it). A create's fingerprint was decoding and re-encoding its body, a
// few per cent of the create path's CPU.
func canonicalFast(body []byte) ([]byte, bool) {
	c := canonicalizer{in: body}
	out, ok := c.value(make([]byte, 0, len(body)), 0)
	if !ok {
		return nil, false
	}
	c.space()
	return out, c.pos == len(c.in)
}

// maxFastDepth bounds canonicalFast's nesting (it recurses); deeper
// documents take the decoding path.
const maxFastDepth = 32

type canonicalizer struct {
	in  []byte
	pos int
}

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at c.pos to out.
func (c *canonicalizer) value(out []byte, depth int) ([]byte, bool) {
	c.space()
	if c.pos == len(c.in) || depth > maxFastDepth {
		return nil, false
	}
	switch b := c.in[c.pos]; {
	case b == '{':
		return c.object(out, depth)
	case b == '[':
		return c.array(out, depth)
	case b == '"':
		s, ok := c.str()
		return append(out, s...), ok
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number(out)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
			c.pos += len(lit)
			return append(out, lit...), true
		}
	}
	return nil, false
}

// member is one of an object's members: its key, quotes included, and
// where its canonical value sits in the object's scratch buffer.
type member struct {
	key        []byte
	start, end int
}

func (c *canonicalizer) object(out []byte, depth int) ([]byte, bool) {
	c.pos++ // {
	var (
		members []member
		scratch []byte
	)
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		return append(out, "{}"...), true
	}
	for {
		c.space()
		if c.pos == len(c.in) || c.in[c.pos] != '"' {
			return nil, false
		}
		key, ok := c.str()
		if !ok {
			return nil, false
		}
		c.space()
		if c.pos == len(c.in) || c.in[c.pos] != ':' {
			return nil, false
		}
		c.pos++
		start := len(scratch)
		if scratch, ok = c.value(scratch, depth+1); !ok {
			return nil, false
		}
		members = append(members, member{key: key, start: start, end: len(scratch)})
		c.space()
		if c.pos == len(c.in) {
			return nil, false
		}
		c.pos++
		if c.in[c.pos-1] == '}' {
			break
		}
		if c.in[c.pos-1] != ',' {
			return nil, false
		}
	}
	// Keys sort as encoding/json sorts a map's: by their bytes, which here
	// are the text between the quotes.
	slices.SortFunc(members, func(a, b member) int { return bytes.Compare(unquote(a.key), unquote(b.key)) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			if bytes.Equal(m.key, members[i-1].key) {
				return nil, false // the decoder keeps the last; leave it to it
			}
			out = append(out, ',')
		}
		out = append(out, m.key...)
		out = append(out, ':')
		out = append(out, scratch[m.start:m.end]...)
	}
	return append(out, '}'), true
}

func unquote(s []byte) []byte { return s[1 : len(s)-1] }

func (c *canonicalizer) array(out []byte, depth int) ([]byte, bool) {
	c.pos++ // [
	out = append(out, '[')
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		return append(out, ']'), true
	}
	for {
		var ok bool
		if out, ok = c.value(out, depth+1); !ok {
			return nil, false
		}
		c.space()
		if c.pos == len(c.in) {
			return nil, false
		}
		c.pos++
		switch c.in[c.pos-1] {
		case ']':
			return append(out, ']'), true
		case ',':
			out = append(out, ',')
		default:
			return nil, false
		}
	}
}

// str returns the string at c.pos, quotes included, when encoding/json
// would write it back as it is.
func (c *canonicalizer) str() ([]byte, bool) {
	start := c.pos
	ascii := true
	for i := start + 1; i < len(c.in); i++ {
		switch b := c.in[i]; {
		case b == '"':
			c.pos = i + 1
			s := c.in[start:c.pos]
			if !ascii && (!utf8.Valid(s) || bytes.Contains(s, []byte("\u2028")) || bytes.Contains(s, []byte("\u2029"))) {
				return nil, false
			}
			return s, true
		case b == '\\', b < 0x20, b == '<', b == '>', b == '&':
			return nil, false
		case b >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// number appends the number at c.pos as written, once it is checked
// against JSON's grammar (encoding/json writes a decoded number's text
// back unchanged).
func (c *canonicalizer) number(out []byte) ([]byte, bool) {
	start := c.pos
	digits := func() int {
		n := 0
		for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
			c.pos++
			n++
		}
		return n
	}
	if c.in[c.pos] == '-' {
		c.pos++
	}
	if c.pos < len(c.in) && c.in[c.pos] == '0' {
		c.pos++
	} else if digits() == 0 {
		return nil, false
	}
	if c.pos < len(c.in) && c.in[c.pos] == '.' {
		c.pos++
		if digits() == 0 {
			return nil, false
		}
	}
	if c.pos < len(c.in) && (c.in[c.pos] == 'e' || c.in[c.pos] == 'E') {
		c.pos++
		if c.pos < len(c.in) && (c.in[c.pos] == '+' || c.in[c.pos] == '-') {
			c.pos++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return append(out, c.in[start:c.pos]...), true
}
