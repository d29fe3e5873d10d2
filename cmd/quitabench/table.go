package main

import (
	"fmt"
	"math"
	"slices"

	_ "github.com/jackc/pgx/v5/stdlib"
)

type target struct {
	name   string
	got    float64
	unit   string
	want   float64
	higher bool // higher is better
}

// row is one line of the table: a figure and its target, the reference
// the target derives from (measured in the same run) and the 1-minute
// load average when the figure was taken.
type row struct {
	target
	ref, load string
}

func rowsOf(ts []target) []row {
	out := make([]row, len(ts))
	for i, t := range ts {
		out[i] = row{target: t, load: loadavg()}
	}
	return out
}

func (t target) ok() bool {
	if t.higher {
		return t.got >= t.want
	}
	return t.got <= t.want
}

// openLoopTargets are an open loop's latency and error targets.
func openLoopTargets(name string, r loadResult, load string) []row {
	return []row{
		{target{name + " p99", pct(r.okLat, 99), "ms", 20, false}, "", load},
		{target{name + " p99.9", pct(r.okLat, 99.9), "ms", 50, false}, "", load},
		{target{name + " errors", float64(r.shed + r.failed), "requests", 0, false}, fmt.Sprintf("of %d", r.offered), load},
	}
}

// printTable prints one table: each figure, its target, the reference it
// was measured against and the load average when it was taken; with
// strict, a miss is an error.
func printTable(targets []row, strict bool) error {
	missed := 0
	fmt.Printf("\n%-4s %-34s %10s %-10s %-12s %-40s %s\n", "", "figure", "measured", "unit", "target", "reference (same run)", "load 1m")
	for _, t := range targets {
		mark := "PASS"
		if !t.ok() {
			mark, missed = "MISS", missed+1
		}
		cmp := "<="
		if t.higher {
			cmp = ">="
		}
		ref := t.ref
		if ref == "" {
			ref = "-"
		}
		want := fmt.Sprintf("%.0f", t.want)
		if t.want < 10 && t.want != math.Round(t.want) {
			want = fmt.Sprintf("%.1f", t.want) // a ratio such as 1.5
		}
		fmt.Printf("%-4s %-34s %10.1f %-10s %-12s %-40s %s\n", mark, t.name, t.got, t.unit, cmp+" "+want, ref, t.load)
	}
	if strict && missed > 0 {
		return fmt.Errorf("%d target(s) missed", missed)
	}
	return nil
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}
