package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// The history patterns catch narration and leave comments that state what
// holds alone.
func TestNarration(t *testing.T) {
	t.Parallel()
	narrating := []string{
		"// the claim renews by a timer (issue 17).",
		"// Issue 11, item 4: parallel wrong passwords",
		"// see issue #3",
		"// measured 2026-11-24 23:29 UTC, load 44",
		"// Ids made before 2026-11-28 are 26 characters.",
		// Split so that no scan of this file reads them as narration.
		"// Measured this " + "session: 1,281 creates/s.",
		"// tried in round 3 and dropped",
		"// the thirteenth " + "session moved it",
		"// A request no longer waits for Redis to take its mark.",
		"// where each used to hold its account's wallet row",
		"// Both used to be written twice.",
		"// We now send one ZREM.",
		"// before the fix they held every place",
		"// main at 48fc397, before this change",
	}
	for _, line := range narrating {
		if narration(line) == "" {
			t.Errorf("not caught: %q", line)
		}
	}
	stating := []string{
		"// Timestamps look like 2026-11-22T12:00:00.000Z.",
		"// Postgres's epoch for instants (2000-01-01 UTC).",
		"// the due factor wrapped to 1000 on 2025-02-22 (FEBRABAN).",
		"// one round trip instead of two; the next round trip carries the rest",
		"// from is where the next round starts reading",
		"// a later session of the same user is not logged out",
		"// The PSP refuses a PUT on a cob that is no longer ATIVA.",
		"// CancelPixCharge removes a cob so it can no longer be paid.",
		"// the key used to sign the delivery",
		"// the returns are sent after the commit",
		"// an issue of the API key is audited",
	}
	for _, line := range stating {
		if what := narration(line); what != "" {
			t.Errorf("flagged (%s): %q", what, line)
		}
	}
}

func TestLongFileMark(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"// long-file: the migration table is one list\npackage x\n":             true,
		"// Package x does y.\n//\n// long-file: one state machine\npackage x\n": true,
		"// long-file:\npackage x\n":                                             false,
		"package x\n\n\n\n\n// long-file: too late\n":                            false,
		"package x\n": false,
	} {
		if got := hasLongFileMark([]byte(src)); got != want {
			t.Errorf("hasLongFileMark(%q) = %v, want %v", src, got, want)
		}
	}
}

// A citation wrapped across two lines of a comment is found, at the line
// where it starts, and a comment line is reported once.
func TestWrappedCitation(t *testing.T) {
	t.Parallel()
	src := `package x

// The claim renews by a timer, not a goroutine (issue
// 17). It stops with the request.
//
// Nothing else here, one round
// trip. The PSP no longer accepts the token.
func f() {}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range file.Comments {
		got = append(got, checkComments(fset, g)...)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "x.go:3: history: comment cites an issue number") {
		t.Errorf("findings = %q, want one issue number at x.go:3", got)
	}
}
