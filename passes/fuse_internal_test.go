package passes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// planInputs are the programs the plan is checked on: the examples and the
// inputs of the fuse golden cases, after the passes that run before fuse.
func planInputs(t *testing.T) map[string]*ir.Func {
	t.Helper()
	srcs := map[string]string{}
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.tir"))
	for _, file := range examples {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		srcs[file] = string(src)
	}
	cases, _ := filepath.Glob(filepath.Join("..", "testdata", "golden", "passes", "fuse", "*.txtar"))
	for _, file := range cases {
		a, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name == "in.tir" {
				srcs[file] = string(f.Data)
			}
		}
	}
	if len(examples) < 3 || len(cases) < 15 {
		t.Fatalf("%d examples and %d fuse cases; want at least 3 and 15", len(examples), len(cases))
	}
	funcs := map[string]*ir.Func{}
	for file, src := range srcs {
		m, err := tir.Parse(file, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		opts := Options{Eval: cpu.Folder{}, Disable: []string{"fuse", "assign-layout"}}
		if err := Run(m, Default(), opts); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range m.Funcs {
			funcs[file+"@"+f.Name] = f
		}
	}
	return funcs
}

// TestFuseTrafficIsGroupBytes: the running sums the plan keeps give, for
// every group before and after planning, what the target's GroupBytes (or,
// without a target, the logical traffic) gives for the group's members; and
// the plan's order of groups is topological.
func TestFuseTrafficIsGroupBytes(t *testing.T) {
	for name, f := range planInputs(t) {
		for _, target := range []Target{nil, target.V5e, target.V6e} {
			c := NewContext("fuse", nil)
			c.Target = target
			p := newFusePlan(f, c)
			if p == nil {
				continue // symbolic shapes
			}
			label := fmt.Sprintf("%s for %v", name, target)
			p.checkGroups(t, label+", unmerged")
			for round := 0; round < maxFuseRounds; round++ {
				changed := p.producerConsumer()
				if p.siblings() {
					changed = true
				}
				if !changed {
					break
				}
			}
			p.checkGroups(t, label+", planned")
		}
	}
}

func (p *fusePlan) checkGroups(t *testing.T, label string) {
	t.Helper()
	for g, grp := range p.groups {
		if grp == nil || !p.fusible(g) {
			continue
		}
		group := make([]*ir.Instr, len(grp.members))
		for k, i := range grp.members {
			group[k] = p.instrs[i]
		}
		want := logicalGroupBytes(p.f, group)
		if p.c.Target != nil {
			want = p.c.Target.GroupBytes(p.f, group)
		}
		if got := grp.traffic.bytes(); got != want {
			t.Errorf("%s: group of %s (%d members): running sums %d, GroupBytes %d", label, group[0].Op, len(group), got, want)
		}
	}
	for i, us := range p.users {
		for _, u := range us {
			if a, b := p.find(i), p.find(u); a != b && p.order.ord[a] >= p.order.ord[b] {
				t.Errorf("%s: group %d reads group %d but is not after it in the order", label, b, a)
			}
		}
	}
}

// logicalGroupBytes is GroupBytes without a target, computed directly:
// values read from outside the group once at dtype size times elements,
// results of non-constants read outside it written once.
func logicalGroupBytes(f *ir.Func, group []*ir.Instr) int64 {
	in := map[*ir.Instr]bool{}
	for _, x := range group {
		in[x] = true
	}
	uses := f.Uses()
	read := map[*ir.Value]bool{}
	total := int64(0)
	add := func(t ir.Type) bool {
		n := logicalBytes(t)
		total += n
		return n >= 0
	}
	for _, x := range group {
		for _, a := range x.Args {
			if read[a] || in[a.Def] {
				continue
			}
			read[a] = true
			if !add(a.Type) {
				return -1
			}
		}
		if x.Op == ir.OpConstant {
			continue
		}
		for _, r := range x.Results {
			for _, u := range uses.Users(r) {
				if !in[u] {
					if !add(r.Type) {
						return -1
					}
					break
				}
			}
		}
	}
	return total
}

// TestFusePlanNearLinear: planning a chain of adds visits a bounded number
// of members and groups per instruction, whatever the chain's length (it
// once re-walked the whole group at every merge: cubic). Counts, not times.
func TestFusePlanNearLinear(t *testing.T) {
	perInstr := map[int]float64{}
	for _, n := range []int{1000, 2000, 4000} {
		var b strings.Builder
		b.WriteString("func @chain(%x: f32[4], %y: f32[4]) -> f32[4] {\n  %v0 = add %x, %y\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "  %%v%d = add %%v%d, %%y\n", i, i-1)
		}
		fmt.Fprintf(&b, "  return %%v%d\n}\n", n-1)
		m, err := tir.Parse("chain.tir", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		c := NewContext("fuse", nil)
		c.Target = target.V6e
		p := newFusePlan(m.Funcs[0], c)
		for p.producerConsumer() || p.siblings() {
		}
		if got := p.size(p.find(n - 1)); got != n {
			t.Fatalf("chain of %d: the root's group has %d members, want all", n, got)
		}
		perInstr[n] = float64(p.steps) / float64(n)
	}
	t.Logf("steps per instruction: %v", perInstr)
	if perInstr[4000] > 1.2*perInstr[1000] {
		t.Errorf("steps per instruction grow with the chain: %v", perInstr)
	}
}
