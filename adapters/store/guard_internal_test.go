package store

import "testing"

// bun's mark of a value it could not write counts only outside quoted
// text: inside a literal or an identifier it is data, and a doubled quote
// does not end the literal.
func TestUnencodable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		want  bool
	}{
		{"SELECT 1", false},
		{"SELECT * FROM charges WHERE created_at <= ?!(store: time 10000-01-01 is outside years 0001-9999)", true},
		{"UPDATE t SET a = 'x', b = ?!(bun: string contains a NUL byte (0x00))", true},
		{"SELECT 'it said ?!(x)'", false},
		{`SELECT "?!(" FROM t`, false},
		{"SELECT 'a''?!(b''' FROM t", false},
		{"SELECT 'a''b', ?!(err)", true},
		{`SELECT "a""?!(", 'x'`, false},
		{"SELECT 'unterminated ?!(", false},
		{"SELECT ?!", false},
	} {
		if got := unencodable(c.query); got != c.want {
			t.Errorf("unencodable(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}
