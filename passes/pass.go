package passes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Pass is one IR-to-IR transformation. Run rewrites f in place and reports
// whether it changed anything; an error is a failure of the pass (an internal
// problem or a limit), not a diagnostic about the program, which the frontend
// has already verified. Names are kebab-case and double as flag values.
type Pass struct {
	Name string
	Doc  string // one line: what the pass does, as `tpucc passes` prints it
	Run  func(f *ir.Func, c *Context) (changed bool, err error)
	// Regions makes the runner run the pass inside the regions of while and
	// case too, each as a function of its own (ir.Func.RegionFunc): a pass
	// that only rewrites one block at a time, never looking across a region
	// boundary, is sound there as it is in a function.
	Regions bool
}

// Evaluator computes the results of one instruction on constant operands.
// args[i] holds the elements of in.Args[i], of type in.Args[i].Type (one
// element stands for a splat); Fold returns one literal per result, of type
// in.Results[i].Type. It must not modify args (they are the program's
// constants). in need not belong to a function: fold-constants hands in a
// detached scalar copy of an elementwise op to fold splats of any size. An
// error means "cannot fold this" and leaves the instruction as it is. The
// reference CPU executor implements it (cpu.Folder); passes never imports it.
type Evaluator interface {
	Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error)
}

// Context is what a pass may use besides its function: the evaluator for
// constant folding (nil when none was given) and the statistics it adds to.
type Context struct {
	Eval  Evaluator
	Stats *Stats
	// Target is the machine compiled for (Options.Target); nil when none was
	// chosen. Tests running a pass by hand set it after NewContext.
	Target Target
	pass   string // the running pass, which Count files counts under
}

// NewContext returns a context for running passes by hand (tests, tools);
// Run makes its own. The statistics are attributed to pass.
func NewContext(pass string, eval Evaluator) *Context {
	return &Context{Eval: eval, Stats: &Stats{}, pass: pass}
}

// Count records that rule fired once in the running pass.
func (c *Context) Count(rule string) { c.Stats.Add(c.pass, rule, 1) }

// Stats counts how often each rule of each pass fired. The zero value is empty
// and ready to use. Entries come out in the order they were first counted
// (pipeline order, then first firing), never in map order.
type Stats struct {
	index   map[statKey]int
	entries []Stat
}

type statKey struct{ pass, rule string }

// Stat is one counter: Count firings of Rule in Pass, summed over functions.
type Stat struct {
	Pass, Rule string
	Count      int
}

// Add adds n to the counter of rule in pass.
func (s *Stats) Add(pass, rule string, n int) {
	if s.index == nil {
		s.index = map[statKey]int{}
	}
	k := statKey{pass, rule}
	i, ok := s.index[k]
	if !ok {
		i = len(s.entries)
		s.index[k] = i
		s.entries = append(s.entries, Stat{Pass: pass, Rule: rule})
	}
	s.entries[i].Count += n
}

// Get returns the counter of rule in pass (0 if it never fired).
func (s *Stats) Get(pass, rule string) int {
	if i, ok := s.index[statKey{pass, rule}]; ok {
		return s.entries[i].Count
	}
	return 0
}

// Entries returns the counters in first-counted order.
func (s *Stats) Entries() []Stat { return append([]Stat(nil), s.entries...) }

// String prints one "pass/rule: count" line per counter, grouped by pass in
// the order the passes first counted, rules sorted by name within a pass.
func (s *Stats) String() string {
	es := s.Entries()
	first := map[string]int{}
	for i, e := range es {
		if _, ok := first[e.Pass]; !ok {
			first[e.Pass] = i
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Pass != es[j].Pass {
			return first[es[i].Pass] < first[es[j].Pass]
		}
		return es[i].Rule < es[j].Rule
	})
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s/%s: %d\n", e.Pass, e.Rule, e.Count)
	}
	return b.String()
}

// The passes, by name. A function (not an init-filled registry) so the set is
// visible in one place.
func all() []Pass {
	return []Pass{
		{Name: "canonicalize", Regions: true, Run: canonicalize,
			Doc: "rewrites identities (x+(-0.0), x*1, neg(neg x), reshape of reshape, no-op shape ops, constant predicates) and moves constants right, to a fixed point"},
		{Name: "fold-constants", Regions: true, Run: foldConstants,
			Doc: "evaluates instructions whose operands are all constants (results up to 1024 elements, or splats of any size) into constants"},
		{Name: "cse", Regions: true, Run: cse,
			Doc: "merges instructions that compute the same op on the same operands with the same attributes and types"},
		{Name: "dce", Regions: true, Run: dce,
			Doc: "removes instructions whose results are unused"},
		{Name: "contract", Regions: true, Run: contract,
			Doc: "rewrites products summed over axes (through broadcasts, transposes and unit reshapes) into dot_general and folds transposes into dot_general's dimension numbers (f32, f64 and integer products; docs/MOE.md)"},
		{Name: "moe-route", Regions: true, Run: moeRoute,
			Doc: "rewrites dense mixture-of-experts layers whose combine weights are provably zero outside each token's top-k experts into sorted rows and ragged_dot grouped matmuls"},
		{Name: "licm", Run: licm,
			Doc: "computes the work of a while loop that is the same every iteration (its operands carried unchanged) once before the loop and carries it in; views, constants and scalars stay, as do values larger than their operands"},
		{Name: "fuse", Regions: true, Run: fuse,
			Doc: "groups elementwise chains, reductions with their producers and dot_general with its epilogue into fusion instructions, by bytes saved under the target's cost model"},
		{Name: "assign-layout", Run: assignLayout,
			Doc: "gives every value a physical layout for the target (minor-to-major order and tiles; row-major at function boundaries, with a copy inserted where one pays) and folds transposes into dot_general; nothing without a target"},
	}
}

// Lookup returns the pass called name.
func Lookup(name string) (Pass, bool) {
	for _, p := range all() {
		if p.Name == name {
			return p, true
		}
	}
	return Pass{}, false
}

// Names lists every known pass name, in the order Default first runs them.
func Names() []string {
	var out []string
	for _, p := range all() {
		out = append(out, p.Name)
	}
	return out
}

// Default is the pipeline `tpucc build` runs.
//
// canonicalize goes first so the other passes see one spelling of each
// computation (constants on the right, reshape chains collapsed).
// fold-constants then evaluates what is all-constant, including constants
// canonicalize made (x*0 -> 0 for integers). cse comes after both, because it
// compares constants by literal and operands by identity, so it merges most
// once those two have normalised the program. canonicalize runs a second time
// because merging exposes identities it could not see before (x - x, compare
// x, x once the two operands are one value) and folding exposes constant
// operands (x + c where c folded to 0). dce runs once, after them, removing
// everything the others left dead.
//
// contract then puts every contraction in dot_general form, so that
// moe-route, right after it, matches one spelling of each matmul.
//
// licm comes after them and before dce: it hoists a loop's invariant work
// once the body is in its simplest form (folded constants stay in the body,
// where trip counts read them), and dce then removes the originals and the
// carried values nothing reads any more.
//
// fuse follows dce: fusion wants canonical, CSE'd input with nothing dead,
// so that no kernel carries a no-op, a duplicate or an unused value.
//
// The group is not iterated to a fixed point: a constant that the second
// canonicalize makes (x - x -> 0) and that feeds another op stays unfolded
// (testdata/golden/passes/default/not-iterated.txtar). Looping in the runner
// would make the dump sequence numbers depend on the program; revisit when a
// real program shows the need.
//
// assign-layout runs last, after fuse, as XLA assigns layouts after fusion:
// it chooses one layout per fused kernel's operands and results, and every
// pass that builds values (ir.Infer gives them no layout) must come before
// it (passOrder). Without Options.Target it does nothing.
func Default() []Pass {
	byName := func(name string) Pass {
		p, ok := Lookup(name)
		if !ok {
			panic("passes: Default names unknown pass " + name)
		}
		return p
	}
	return []Pass{
		byName("canonicalize"),
		byName("fold-constants"),
		byName("cse"),
		byName("canonicalize"),
		byName("contract"),
		byName("moe-route"),
		byName("licm"),
		byName("dce"),
		byName("fuse"),
		byName("assign-layout"),
	}
}

// orderRule says that after must run after before, and why.
type orderRule struct {
	before, after string
	reason        string
}

// passOrder lists constraints between passes: when both appear in a pipeline,
// after must run after every occurrence of before. Run checks them before it
// starts (as Go's SSA backend checks its passOrder at start-up).
var passOrder = []orderRule{
	{"canonicalize", "dce", "canonicalize leaves the instructions it replaced for dce to remove"},
	{"fold-constants", "dce", "fold-constants leaves the instructions it folded for dce to remove"},
	{"cse", "dce", "cse leaves the duplicates it merged for dce to remove"},
	{"licm", "dce", "licm leaves the instructions it hoisted, and the carried values they no longer read, for dce to remove"},
	{"fold-constants", "cse", "folding makes equal constants (and ops of them) that only cse merges"},
	// Passes that build instructions get result types from ir.Infer, which
	// carries no layout, and cse and canonicalize compare types with their
	// layouts: so layouts are assigned once, after everything that rewrites.
	// XLA, too, assigns layouts after fusion.
	{"canonicalize", "assign-layout", "canonicalize builds values without layouts"},
	{"fold-constants", "assign-layout", "fold-constants builds constants without layouts"},
	{"cse", "assign-layout", "cse compares types, layouts included, and would merge less"},
	{"dce", "assign-layout", "dce removes what the others left dead, so no layout is chosen for it"},
	{"cse", "moe-route", "the match compares values by identity: the same projection computed twice must be one value"},
	{"contract", "moe-route", "moe-route matches contractions in dot_general form only"},
	{"contract", "dce", "contract leaves the products it replaced for dce to remove"},
	{"contract", "assign-layout", "contract builds values without layouts"},
	{"moe-route", "dce", "moe-route leaves the dense layer it replaced for dce to remove"},
	{"moe-route", "fuse", "fusion would hide the dense layer's matmuls and sums inside kernels the match does not look into"},
	{"moe-route", "assign-layout", "moe-route builds values without layouts"},
	{"cse", "fuse", "fusion wants CSE'd input: a duplicate left unmerged would be fused into two kernels"},
	{"canonicalize", "fuse", "fusion wants canonical input: identities removed, so no kernel carries a no-op"},
	{"dce", "fuse", "dead instructions would become fusion members or outputs"},
	{"fuse", "assign-layout", "fuse builds fusion bodies without layouts; layouts are chosen per fused kernel"},
}

// checkOrder reports a constraint of passOrder that names no known pass (a
// misspelt name would otherwise never apply), or else the first one that
// pipeline violates.
func checkOrder(pipeline []Pass) error {
	return checkOrderIn(passOrder, pipeline)
}

func checkOrderIn(order []orderRule, pipeline []Pass) error {
	for _, c := range order {
		for _, name := range []string{c.before, c.after} {
			if _, ok := Lookup(name); !ok {
				return fmt.Errorf("passes: the ordering constraint %s before %s names an unknown pass %q", c.before, c.after, name)
			}
		}
	}
	last := map[string]int{}
	for i, p := range pipeline {
		last[p.Name] = i
	}
	for _, c := range order {
		i, ok1 := last[c.before]
		j, ok2 := last[c.after]
		if ok1 && ok2 && i > j {
			return fmt.Errorf("passes: %s must run after %s: %s", c.after, c.before, c.reason)
		}
	}
	return nil
}
