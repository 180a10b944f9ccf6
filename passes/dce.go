package passes

import "github.com/tpucc/tpucc/ir"

// dce removes instructions none of whose results is used, walking the body
// backward so that an instruction used only by dead ones goes in the same
// sweep. The return is never removed, nor (once there are any) an instruction
// with side effects; function parameters stay, being the signature.
func dce(f *ir.Func, c *Context) (bool, error) {
	// Inner loops first: what a nested loop stops carrying, its parent's
	// body may stop computing.
	inner := false
	for _, in := range f.Body.Instrs {
		if ir.IsControl(in.Op) {
			for _, r := range in.Regions {
				inner = dceRegion(f.RegionFunc(r), c) || inner
			}
		}
	}
	uses := f.UseCounts()
	carried := dropDeadCarried(f, uses, c)
	removed := sweepDead(f, uses, c)
	return inner || carried+removed > 0, nil
}

// dceRegion runs dce on a region's view (and so inside its nested loops).
func dceRegion(f *ir.Func, c *Context) bool {
	changed, _ := dce(f, c)
	return changed
}

// sweepDead removes the instructions of f's body whose results are unused,
// backward, and returns how many it removed.
func sweepDead(f *ir.Func, uses []int, c *Context) int {
	dead := make([]bool, f.NumInstrs())
	removed := 0
	instrs := f.Body.Instrs
	for i := len(instrs) - 1; i >= 0; i-- {
		in := instrs[i]
		if in.Op == ir.OpReturn || hasSideEffects(in) || live(in, uses) {
			continue
		}
		dead[in.ID] = true
		removed++
		c.Count(in.Op.String())
		drop := func(x *ir.Instr) {
			for _, a := range x.Args {
				uses[a.ID]--
			}
		}
		drop(in)
		for _, r := range in.Regions {
			r.Walk(drop)
		}
	}
	if removed > 0 {
		f.Body.Remove(func(in *ir.Instr) bool { return dead[in.ID] })
	}
	return removed
}
