// Package steps prints where the llvm backend's programs spent their time:
// each program's longest plan steps, for the benchmarks' -steps flag, and
// the same time grouped by kind (products by shape and layout, every other
// step by what it computes) with the rate each group ran at.
package steps

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
)

// Profile is the step times of every program a cache holds that ran on the
// llvm backend, at one moment; Since gives those of the runs in between two.
type Profile []Program

// Program is one executable's step times.
type Program struct {
	Entry string
	x     *llvm.Executable
	Steps []llvm.StepTime
}

// Take reads c's programs' step times now.
func Take(c *engine.Cache) Profile {
	var p Profile
	for _, exe := range c.Executables() {
		if x, ok := exe.Exec.(*llvm.Executable); ok {
			p = append(p, Program{Entry: exe.Entry.Name, x: x, Steps: x.StepTimes()})
		}
	}
	return p
}

// Since is p less the times and calls that old (taken earlier) had.
func (p Profile) Since(old Profile) Profile {
	out := make(Profile, len(p))
	for i, pr := range p {
		st := slices.Clone(pr.Steps)
		for _, o := range old {
			if o.x != pr.x {
				continue
			}
			for j := range st {
				st[j].Calls -= o.Steps[j].Calls
				st[j].Total -= o.Steps[j].Total
			}
		}
		out[i] = Program{Entry: pr.Entry, x: pr.x, Steps: st}
	}
	return out
}

// Print writes, for each program c holds that ran on the llvm backend, its n
// longest steps over the runs so far (warm-up included): time per call and
// share of the program's step time. prefix starts each program's line.
func Print(w io.Writer, prefix string, c *engine.Cache, n int) {
	Take(c).Print(w, prefix, n)
}

// Print writes each program's n longest steps in p.
func (p Profile) Print(w io.Writer, prefix string, n int) {
	if n <= 0 {
		return
	}
	for _, pr := range p {
		st := slices.Clone(pr.Steps)
		all := total(st)
		if all == 0 {
			continue
		}
		slices.SortStableFunc(st, func(a, b llvm.StepTime) int { return cmp.Compare(b.Total, a.Total) })
		fmt.Fprintf(w, "%s%s: %.3f s in %d steps; the longest:\n", prefix, pr.Entry, all.Seconds(), len(st))
		for _, s := range st[:min(n, len(st))] {
			per := time.Duration(0)
			if s.Calls > 0 {
				per = s.Total / time.Duration(s.Calls)
			}
			fmt.Fprintf(w, "  %5d %-6s %-44s %7d calls %9.3f ms/call %5.1f%% %s  %s\n", s.Step, s.Kernel, s.What, s.Calls, per.Seconds()*1e3, 100*s.Total.Seconds()/all.Seconds(),
				rate(s.Bytes*s.Calls, s.MACs*s.Calls, s.Total), cmp.Or(s.Shape, s.Out))
		}
	}
}

func total(st []llvm.StepTime) time.Duration {
	var all time.Duration
	for _, s := range st {
		all += s.Total
	}
	return all
}

// Kind is the steps of one group: products of one shape and layout, or
// other steps that compute the same thing.
type Kind struct {
	Name         string
	Steps, Calls int64
	Total        time.Duration
	// Bytes and MACs are summed over the calls: Bytes/Total is the rate
	// of a step that only moves memory, 2·MACs/Total a product's FLOP rate.
	Bytes, MACs int64
}

// Kinds groups each program's steps in p, the longest group first.
func (p Profile) Kinds() map[string][]Kind {
	out := map[string][]Kind{}
	for _, pr := range p {
		byName := map[string]*Kind{}
		var order []string
		for _, s := range pr.Steps {
			if s.Calls == 0 {
				continue
			}
			name := s.What
			if s.MACs > 0 {
				name = "product " + s.Shape
				if s.Shape == "" {
					name = "product " + s.What
				}
			}
			k := byName[name]
			if k == nil {
				k = &Kind{Name: name}
				byName[name] = k
				order = append(order, name)
			}
			k.Steps++
			k.Calls += s.Calls
			k.Total += s.Total
			k.Bytes += s.Bytes * s.Calls
			k.MACs += s.MACs * s.Calls
		}
		var ks []Kind
		for _, n := range order {
			ks = append(ks, *byName[n])
		}
		slices.SortStableFunc(ks, func(a, b Kind) int { return cmp.Compare(b.Total, a.Total) })
		out[pr.Entry] = ks
	}
	return out
}

// PrintKinds writes each program's n longest kinds of step in p: their time
// over p's runs, share, steps and calls, and the rate:
// GFLOP/s for products, GB/s of the values read and written for the rest.
func (p Profile) PrintKinds(w io.Writer, prefix string, n int) {
	kinds := p.Kinds()
	for _, pr := range p {
		ks := kinds[pr.Entry]
		all := total(pr.Steps)
		if all == 0 || len(ks) == 0 {
			continue
		}
		var prod time.Duration
		for _, k := range ks {
			if k.MACs > 0 {
				prod += k.Total
			}
		}
		fmt.Fprintf(w, "%s%s by kind: %.3f s, products %.3f s (%.1f%%), the rest %.3f s:\n", prefix, pr.Entry,
			all.Seconds(), prod.Seconds(), 100*prod.Seconds()/all.Seconds(), (all - prod).Seconds())
		for _, k := range ks[:min(n, len(ks))] {
			fmt.Fprintf(w, "  %9.1f ms %5.1f%% %4d steps %6d calls %s  %s\n", k.Total.Seconds()*1e3,
				100*k.Total.Seconds()/all.Seconds(), k.Steps, k.Calls, rate(k.Bytes, k.MACs, k.Total), k.Name)
		}
	}
}

// rate is a product's GFLOP/s (macs > 0), else the GB/s of bytes moved, in d.
func rate(bytes, macs int64, d time.Duration) string {
	if d <= 0 {
		return "      - GB/s"
	}
	if macs > 0 {
		return fmt.Sprintf("%7.1f GFLOP/s", 2*float64(macs)/d.Seconds()/1e9)
	}
	return fmt.Sprintf("%7.1f GB/s", float64(bytes)/d.Seconds()/1e9)
}
