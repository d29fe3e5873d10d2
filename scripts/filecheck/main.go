// Command filecheck keeps Quita's sources and docs describing the code as it
// is, for someone who will change it; the history of how it got there is in
// git. `make lint` runs it from the repository root. It fails on:
//
//   - long-file: a Go file of more than 400 lines, not a test and not
//     generated, unless one of its first 5 lines is a comment
//     `// long-file: <reason>` saying why it stays whole;
//   - history: a Go comment (tests included) that narrates history instead
//     of stating what holds: an issue number, a date, a work session or
//     round, what the code stopped doing or did before;
//   - doc-issue: an issue number in docs/*.md or README.md.
//
// testdata/, mocks/, wire_gen.go and files marked "Code generated" are not
// checked. A path listed in scripts/filecheck.allow (one a line, # starts a
// comment) is skipped: files others are still editing wait there until they
// are cleaned. Each finding is printed as file:line: rule: text.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// maxLines is the most lines a Go file has without saying why it is longer.
const maxLines = 400

const allowFile = "scripts/filecheck.allow"

var longFileMark = regexp.MustCompile(`^\s*//\s*long-file:\s*\S`)

// A pattern is one kind of narration found in comments.
type pattern struct {
	re   *regexp.Regexp
	what string
}

// issueNumber matches a citation of a tracker issue: the word issue (or
// issues) followed by a number, with or without "#".
var issueNumber = regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)

var historyPatterns = []pattern{
	{issueNumber, "cites an issue number"},
	// See dateOK for the dates that are facts, not history.
	{regexp.MustCompile(`\b(20[0-9]{2})-[01][0-9]-[0-3][0-9]\b`), "holds a date"},
	{regexp.MustCompile(`(?i)\b(this|last|previous|earlier) (session|round|wave)s?\b`), "names a work session"},
	{regexp.MustCompile(`(?i)\b(next|first|second|third|[0-9]+(st|nd|rd|th)|[a-z]+teenth|[a-z]+tieth) (session|wave)s?\b`), "names a work session"},
	{regexp.MustCompile(`(?i)\b(in|of|since|until|before|after) (session|round|wave) [0-9]+`), "names a work session"},
	// "No longer" that tells what the code stopped doing; "can no longer be
	// paid" and "the account no longer exists" state what holds.
	{regexp.MustCompile(`(?i)\bno longer (waits?|asks?|polls?|writes?|sends?|reads?|takes?|holds?|keeps?|runs?|needs?|uses?|fills?|skips?|updates?|goes|does|has|have|is (needed|used|sent|written|read|taken|kept|done))\b`), `says what "no longer" happens (state what holds)`},
	{regexp.MustCompile(`(?i)\b(we|it|they|which|that|this|who|what|both|each|one) used to\b`), `says what "used to" be (state what holds)`},
	{regexp.MustCompile(`(?i)\bused to be\b`), `says what "used to" be (state what holds)`},
	{regexp.MustCompile(`(?i)\bwe now\b`), `says "we now" (state what holds)`},
	{regexp.MustCompile(`(?i)\b(since|until|before|after) (this|the) (change|fix|session)\b`), "dates a change"},
	{regexp.MustCompile(`(?i)\bmain at [0-9a-f]{7,}\b`), "names a commit of main"},
}

// roundTrip hides network round trips from the session patterns.
var roundTrip = regexp.MustCompile(`(?i)\b(rounds?)([ -])(trips?|robin)\b`)

func main() {
	allowed, err := readAllow(allowFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filecheck:", err)
		os.Exit(2)
	}
	var findings []string
	goFiles, docs := 0, 0
	used := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "mocks", "node_modules", "artifacts", "bin":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		isDoc := path == "README.md" || (strings.HasPrefix(path, "docs/") && strings.HasSuffix(path, ".md"))
		if !isDoc && !strings.HasSuffix(path, ".go") {
			return nil
		}
		if allowed[path] {
			used[path] = true
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if isDoc {
			docs++
			findings = append(findings, checkDoc(path, src)...)
			return nil
		}
		if d.Name() == "wire_gen.go" || generated(src) {
			return nil
		}
		goFiles++
		f, err := checkGo(path, src)
		if err != nil {
			return err
		}
		findings = append(findings, f...)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "filecheck:", err)
		os.Exit(2)
	}
	var stale []string
	for p := range allowed {
		if !used[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	for _, p := range stale {
		fmt.Fprintf(os.Stderr, "filecheck: %s lists %s, which does not exist\n", allowFile, p)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "filecheck: %d finding(s); comments and docs state what holds, history is in git (%d allowlisted file(s) skipped)\n", len(findings), len(used))
		os.Exit(1)
	}
	fmt.Printf("filecheck: ok (%d Go files, %d docs; %d allowlisted file(s) skipped)\n", goFiles, docs, len(used))
}

// readAllow reads the allowlist: one path a line, blank lines and # comments
// ignored. A missing file is an empty list.
func readAllow(name string) (map[string]bool, error) {
	allowed := map[string]bool{}
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return allowed, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" {
			allowed[filepath.ToSlash(filepath.Clean(line))] = true
		}
	}
	return allowed, sc.Err()
}

// generated reports whether the file carries Go's generated-code marker
// before its package clause.
func generated(src []byte) bool {
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "package ") {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") {
			return true
		}
	}
	return false
}

func checkGo(path string, src []byte) ([]string, error) {
	var out []string
	lines := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	if lines > maxLines && !strings.HasSuffix(path, "_test.go") && !hasLongFileMark(src) {
		out = append(out, fmt.Sprintf("%s:1: long-file: %d lines (more than %d); split it, or say why it stays whole in a `// long-file: <reason>` comment in its first 5 lines", path, lines, maxLines))
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	for _, group := range file.Comments {
		out = append(out, checkComments(fset, group)...)
	}
	return out, nil
}

func hasLongFileMark(src []byte) bool {
	for i, line := range strings.SplitN(string(src), "\n", 6) {
		if i == 5 {
			break
		}
		if longFileMark.MatchString(line) {
			return true
		}
	}
	return false
}

// commentLine is one line of a comment's text and where it is.
type commentLine struct {
	line  int
	text  string
	start int // offset of text in the group's joined text
}

// checkComments reports each finding in one comment group once, at the
// line where it starts. The group's lines are joined with spaces first,
// so a citation wrapped across two lines ("(issue" / "17)") is found too.
func checkComments(fset *token.FileSet, group *ast.CommentGroup) []string {
	var lines []commentLine
	var joined strings.Builder
	for _, c := range group.List {
		first := fset.Position(c.Slash)
		text := strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*")
		text = strings.TrimSuffix(text, "*/")
		for i, l := range strings.Split(text, "\n") {
			// One space between lines, as between words, so a citation
			// wrapped across two lines reads as one.
			l = strings.TrimPrefix(strings.TrimRight(l, " \t"), " ")
			if joined.Len() > 0 {
				joined.WriteByte(' ')
			}
			lines = append(lines, commentLine{line: first.Line + i, text: strings.TrimSpace(l), start: joined.Len()})
			joined.WriteString(l)
		}
	}
	var out []string
	reported := map[int]bool{}
	for _, f := range findings(joined.String()) {
		i := sort.Search(len(lines), func(i int) bool { return lines[i].start > f.at }) - 1
		if i < 0 || reported[i] {
			continue
		}
		reported[i] = true
		out = append(out, fmt.Sprintf("%s:%d: history: comment %s: %s", fset.Position(group.Pos()).Filename, lines[i].line, f.what, lines[i].text))
	}
	return out
}

// A finding is what is wrong at an offset of a comment's text.
type finding struct {
	at   int
	what string
}

// findings lists every stretch of text that narrates history.
func findings(text string) []finding {
	text = roundTrip.ReplaceAllString(text, "$1_$3") // same length: offsets hold
	var out []finding
	for _, p := range historyPatterns {
		for _, loc := range p.re.FindAllStringIndex(text, -1) {
			if p.what == "holds a date" && dateOK(text, loc) {
				continue
			}
			out = append(out, finding{at: loc[0], what: p.what})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// narration returns what is wrong with one line of comment text, or "".
func narration(line string) string {
	if f := findings(line); len(f) > 0 {
		return f[0].what
	}
	return ""
}

// dateOK: a date followed by a time of day is an example of a timestamp
// format, and a date before Quita's own (2026) is a fact of the world
// outside (Postgres's epoch, the boleto due factor's reset), not history.
func dateOK(text string, loc []int) bool {
	if strings.HasPrefix(text[loc[1]:], "T") {
		return true
	}
	return text[loc[0]:loc[0]+4] < "2026"
}

func checkDoc(path string, src []byte) []string {
	var out []string
	for i, line := range strings.Split(string(src), "\n") {
		if issueNumber.MatchString(line) {
			out = append(out, fmt.Sprintf("%s:%d: doc-issue: cites an issue number: %s", path, i+1, strings.TrimSpace(line)))
		}
	}
	return out
}
