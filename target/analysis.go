package target

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// Analysis is the cost of a whole function on one target: every group's
// roofline, their total, and the memory the program needs.
type Analysis struct {
	Target *Target
	Func   *ir.Func
	Groups [][]*ir.Instr // in program order
	Costs  []Cost        // one per group
	Total  Cost          // the sum; Total.Seconds is the groups' times added up

	// ParamBytes is the size of the parameters, ConstBytes that of the dense
	// constants of the function and of every function it calls (each function
	// once; splats are immediates and take none), both padded.
	ParamBytes, ConstBytes int64
	// PeakBytes is the most that values written by groups (activations and
	// results, not parameters) occupy at once, with groups run in order and
	// each value freed after the last group that reads it; returned values
	// live to the end. A call adds its callee's own peak while it runs.
	PeakBytes int64
}

// Footprint is the device memory the program needs: parameters, constants
// and the peak of live activations.
func (a *Analysis) Footprint() int64 {
	return addOK(addOK(a.ParamBytes, a.ConstBytes), a.PeakBytes)
}

// Fits reports whether the program fits one chip's memory.
func (a *Analysis) Fits() bool {
	fp := a.Footprint()
	return fp >= 0 && fp <= a.Target.Memory
}

// Singletons is the grouping Analyze uses when given none: every
// instruction of f's body its own group, in program order, except constants
// (data, not kernels) and the return. After the fuse pass this is the
// program's kernels: a fusion instruction is one group, its body inside it.
func Singletons(f *ir.Func) [][]*ir.Instr {
	var gs [][]*ir.Instr
	for _, in := range f.Body.Instrs {
		if in.Op == ir.OpConstant || in.Op == ir.OpReturn {
			continue
		}
		gs = append(gs, []*ir.Instr{in})
	}
	return gs
}

// Analyze costs f on t with the given groups, nil meaning Singletons(f).
// groups must partition the instructions of f's body other than constants
// and the return (constants may be members, and cost nothing), and list them
// in an order where every group comes after the groups whose results it reads.
// Programs with symbolic shapes cannot be costed; that error is positioned.
func Analyze(f *ir.Func, t *Target, groups [][]*ir.Instr) (*Analysis, error) {
	a := &analyzer{t: t, m: f.Module, done: map[*ir.Func]*Analysis{}}
	return a.analyze(f, groups)
}

func (a *analyzer) analyze(f *ir.Func, groups [][]*ir.Instr) (*Analysis, error) {
	if groups == nil {
		if an, ok := a.done[f]; ok {
			return an, nil
		}
		for _, g := range a.stack {
			if g == f {
				return nil, ir.Errorf(f.Pos, "cannot cost @%s: it calls itself", f.Name)
			}
		}
		a.stack = append(a.stack, f)
		defer func() { a.stack = a.stack[:len(a.stack)-1] }()
	}
	explicit := groups != nil
	if !explicit {
		groups = Singletons(f)
	}
	owner, err := groupIndex(f, groups)
	if err != nil {
		return nil, err
	}
	an := &Analysis{Target: a.t, Func: f, Groups: groups}
	for _, p := range f.Params {
		b := a.t.Bytes(p.Type)
		if b < 0 {
			return nil, ir.Errorf(p.Pos, "cannot cost @%s: parameter type %s is not static", f.Name, p.Type)
		}
		an.ParamBytes = addOK(an.ParamBytes, b)
	}
	if an.ConstBytes, err = a.constBytes(f); err != nil {
		return nil, err
	}
	results, lastUse, err := a.costGroups(an, owner)
	if err != nil {
		return nil, err
	}
	live, peak := a.peak(results, lastUse)
	an.PeakBytes = peak
	if live < 0 || peak < 0 || an.Total.Bytes() < 0 || an.Footprint() < 0 {
		return nil, ir.Errorf(f.Pos, "cannot cost @%s: the counts overflow int64", f.Name)
	}
	if !explicit {
		a.done[f] = an
	}
	return an, nil
}

// costGroups costs an's groups in order into an.Costs and an.Total, and
// finds for each value a group writes the index of the last group reading
// it (len(groups) for a returned value), by value ID.
func (a *analyzer) costGroups(an *Analysis, owner map[*ir.Instr]int) ([]groupResult, []int, error) {
	f, groups := an.Func, an.Groups
	uses := f.Uses()
	lastUse := make([]int, f.NumValues())
	for i := range lastUse {
		lastUse[i] = -1
	}
	results := make([]groupResult, len(groups))
	for gi, g := range groups {
		r, err := a.group(f, g, uses)
		if err != nil {
			return nil, nil, err
		}
		results[gi] = r
		an.Costs = append(an.Costs, r.cost)
		an.Total.add(r.cost)
		for _, v := range r.written {
			last := gi
			for _, u := range uses.Users(v) {
				ui, ok := owner[u]
				switch {
				case u.Op == ir.OpReturn && u.Block == f.Body:
					last = len(groups)
				case !ok:
					continue
				case ui < gi:
					return nil, nil, fmt.Errorf("tpu: groups of @%s out of order: group %d reads a value group %d writes", f.Name, ui, gi)
				default:
					last = max(last, ui)
				}
			}
			lastUse[v.ID] = last
		}
	}
	return results, lastUse, nil
}

// peak runs the groups in order, each value written live until the last
// group reading it has run, and returns what is live at the end and the most
// live at once (a call's transient memory included while it runs).
func (a *analyzer) peak(results []groupResult, lastUse []int) (live, peak int64) {
	freeAt := make([][]*ir.Value, len(results)+1)
	for _, r := range results {
		for _, v := range r.written {
			freeAt[lastUse[v.ID]] = append(freeAt[lastUse[v.ID]], v)
		}
	}
	for gi, r := range results {
		for _, v := range r.written {
			live = addOK(live, a.t.Bytes(v.Type))
		}
		peak = max(peak, addOK(live, r.transient))
		for _, v := range freeAt[gi] {
			live -= a.t.Bytes(v.Type)
		}
	}
	return live, peak
}

// groupIndex maps every top-level instruction of f that groups name, and
// every instruction nested in one, to its group, and checks that groups
// partition the body (constants optional, the return excluded).
func groupIndex(f *ir.Func, groups [][]*ir.Instr) (map[*ir.Instr]int, error) {
	owner := map[*ir.Instr]int{}
	top := map[*ir.Instr]bool{}
	for _, in := range f.Body.Instrs {
		top[in] = true
	}
	for gi, g := range groups {
		for _, in := range g {
			if !top[in] || in.Op == ir.OpReturn {
				return nil, fmt.Errorf("tpu: group %d of @%s holds a %s that is not an instruction of its body", gi, f.Name, in.Op)
			}
			if prev, dup := owner[in]; dup {
				return nil, fmt.Errorf("tpu: a %s of @%s is in groups %d and %d", in.Op, f.Name, prev, gi)
			}
			owner[in] = gi
			for _, reg := range in.Regions {
				reg.Walk(func(x *ir.Instr) { owner[x] = gi })
			}
		}
	}
	for _, in := range f.Body.Instrs {
		if _, ok := owner[in]; !ok && in.Op != ir.OpConstant && in.Op != ir.OpReturn {
			return nil, fmt.Errorf("tpu: a %s of @%s is in no group", in.Op, f.Name)
		}
	}
	return owner, nil
}

// constBytes is the padded size of the dense constants of f and of the
// functions it calls, each function counted once.
func (a *analyzer) constBytes(f *ir.Func) (int64, error) {
	seen := map[*ir.Func]bool{}
	var total int64
	var visit func(g *ir.Func) error
	visit = func(g *ir.Func) error {
		if seen[g] {
			return nil
		}
		seen[g] = true
		var err error
		g.Body.Walk(func(in *ir.Instr) {
			if err != nil {
				return
			}
			switch in.Op {
			case ir.OpConstant:
				ca, ok := in.Attr.(*ir.ConstAttr)
				if !ok || ca.Value == nil || ca.Value.Len() <= 1 {
					return
				}
				b := a.t.Bytes(in.Result().Type)
				if b < 0 {
					err = ir.Errorf(in.Pos, "cannot cost constant: type %s is not static", in.Result().Type)
					return
				}
				total = addOK(total, b)
			case ir.OpCall:
				if ca, ok := in.Attr.(*ir.CallAttr); ok && a.m != nil {
					if callee := a.m.Func(ca.Callee); callee != nil {
						err = visit(callee)
					}
				}
			}
		})
		return err
	}
	if err := visit(f); err != nil {
		return 0, err
	}
	if total < 0 {
		return 0, ir.Errorf(f.Pos, "cannot cost @%s: the counts overflow int64", f.Name)
	}
	return total, nil
}
