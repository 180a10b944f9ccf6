package passes

import "github.com/tpucc/tpucc/ir"

// dropDeadCarried removes from each while of f's body the carried values
// nothing needs: a value is needed when the while's result is used, when
// cond reads it, or when do reads it to compute a needed value (found to a
// fixed point, since do feeds the next iteration). An unneeded value is
// dropped from the operands, the results, both regions' parameters and do's
// return; what do computed only for it is then dead, and dce removes it
// from the regions. It reports how many values it dropped.
func dropDeadCarried(f *ir.Func, uses []int, c *Context) int {
	dropped := 0
	for _, in := range f.Body.Instrs {
		if in.Op != ir.OpWhile || len(in.Regions) != 2 {
			continue
		}
		need := neededCarried(in, uses)
		n := 0
		for _, k := range need {
			if !k {
				n++
			}
		}
		if n == 0 || n == len(need) {
			continue // a while carries at least one value
		}
		for _, a := range in.Args {
			uses[a.ID]-- // the operands are re-counted below
		}
		removeCarried(in, need)
		for _, a := range in.Args {
			uses[a.ID]++
		}
		for _, r := range in.Regions {
			dceRegion(f.RegionFunc(r), c) // what fed the dropped values
		}
		c.Count("carried")
		dropped += n
	}
	return dropped
}

// neededCarried marks the carried values of a while that something needs.
func neededCarried(in *ir.Instr, uses []int) []bool {
	cond, body := in.Regions[ir.WhileCond], in.Regions[ir.WhileBody]
	ret := body.Terminator()
	need := make([]bool, len(in.Args))
	condReads := readParams(cond, nil)
	for i := range need {
		need[i] = uses[in.Results[i].ID] > 0 || condReads[cond.Params[i]]
	}
	for changed := true; changed; {
		changed = false
		var roots []*ir.Value
		for i, k := range need {
			if k {
				roots = append(roots, ret.Args[i])
			}
		}
		reads := readParams(body, roots)
		for i, p := range body.Params {
			if !need[i] && reads[p] {
				need[i], changed = true, true
			}
		}
	}
	return need
}

// readParams is the set of r's parameters that the values roots depend on
// within r, or that anything in r reads when roots is nil (cond: all of it
// decides the condition).
func readParams(r *ir.Block, roots []*ir.Value) map[*ir.Value]bool {
	isParam := map[*ir.Value]bool{}
	for _, p := range r.Params {
		isParam[p] = true
	}
	out := map[*ir.Value]bool{}
	if roots == nil {
		r.Walk(func(x *ir.Instr) {
			for _, a := range x.Args {
				if isParam[a] {
					out[a] = true
				}
			}
		})
		return out
	}
	seen := map[*ir.Value]bool{}
	work := append([]*ir.Value(nil), roots...)
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		if isParam[v] {
			out[v] = true
			continue
		}
		if v.Def != nil && v.Def.Block == r {
			work = append(work, v.Def.Args...) // a nested region reads only its op's operands
		}
	}
	return out
}

// removeCarried keeps the carried values marked in keep, renumbering the
// results and parameters that stay.
func removeCarried(in *ir.Instr, keep []bool) {
	pick := func(vs []*ir.Value) []*ir.Value {
		var out []*ir.Value
		for i, v := range vs {
			if keep[i] {
				v.Index = len(out)
				out = append(out, v)
			}
		}
		return out
	}
	in.Args = pickValues(in.Args, keep)
	in.Results = pick(in.Results)
	for _, r := range in.Regions {
		r.Params = pick(r.Params)
	}
	ret := in.Regions[ir.WhileBody].Terminator()
	ret.Args = pickValues(ret.Args, keep)
}

// pickValues keeps the operands marked in keep (operands have no index).
func pickValues(vs []*ir.Value, keep []bool) []*ir.Value {
	var out []*ir.Value
	for i, v := range vs {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}
