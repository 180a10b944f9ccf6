package stablehlo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// while lowers to stablehlo.while as JAX prints lax.while_loop:
//
//	%0:2 = stablehlo.while(%arg2 = %c, %arg3 = %arg0) : tensor<i32>, tensor<6xf32>
//	cond {
//	  ...
//	  stablehlo.return %1 : tensor<i1>
//	} do {
//	  ...
//	  stablehlo.return %4, %5 : tensor<i32>, tensor<6xf32>
//	}
//
// The iteration arguments are block arguments of both regions, so the cond
// and do regions' parameters are both bound to them.
func (e *emitter) while(in *ir.Instr, args []hv) ([]hv, error) {
	iters := make([]hv, len(args))
	binds := make([]string, len(args))
	for i, a := range args {
		iters[i] = hv{e.freshArg(), a.t}
		binds[i] = iters[i].ref + " = " + a.ref
	}
	ts := resultTypesOf(in)
	res := e.defN(ts, "stablehlo.while(", strings.Join(binds, ", "), ") : ", typeList(ts))
	e.line("cond {")
	if err := e.region(in.Regions[ir.WhileCond], iters); err != nil {
		return nil, err
	}
	e.line("} do {")
	if err := e.region(in.Regions[ir.WhileBody], iters); err != nil {
		return nil, err
	}
	e.line("}")
	return res, nil
}

// caseOp lowers to stablehlo.case as JAX prints lax.switch, whose branches
// read the operands from the enclosing scope (StableHLO's case regions take
// no arguments), so each branch's parameters are bound to the operands.
// StableHLO runs the last branch for an index outside [0, N), as ir's case
// does, so unlike lax.switch there is no clamp.
func (e *emitter) caseOp(in *ir.Instr, args []hv) ([]hv, error) {
	ts := resultTypesOf(in)
	r := e.fresh()
	name := r
	if len(ts) > 1 {
		name += ":" + strconv.Itoa(len(ts))
	}
	e.line(name, " = \"stablehlo.case\"(", args[0].ref, ") ({")
	for i, br := range in.Regions {
		if i > 0 {
			e.line("}, {")
		}
		if err := e.region(br, args[1:]); err != nil {
			return nil, err
		}
	}
	e.line("}) : (", tensorType(args[0].t), ") -> ", resultTypes(ts))
	if len(ts) == 1 {
		return []hv{{r, ts[0]}}, nil
	}
	out := make([]hv, len(ts))
	for i, t := range ts {
		out[i] = hv{r + "#" + strconv.Itoa(i), t}
	}
	return out, nil
}

// region lowers the body of a while or case region, one step indented, with
// its parameters bound to params; its return becomes stablehlo.return.
func (e *emitter) region(r *ir.Block, params []hv) error {
	for i, p := range r.Params {
		e.vals[p] = hv{params[i].ref, p.Type}
	}
	saved := e.indent
	e.indent += "  "
	e.regions++
	defer func() { e.indent = saved; e.regions-- }()
	for _, x := range r.Instrs {
		if x.Op != ir.OpReturn {
			if err := e.instr(x); err != nil {
				return err
			}
			continue
		}
		rets := make([]hv, len(x.Args))
		for i, a := range x.Args {
			v, ok := e.vals[a]
			if !ok {
				return fmt.Errorf("internal: a %s region returns an undefined value", r.Parent.Op)
			}
			rets[i] = v
		}
		e.line("stablehlo.return ", refs(rets), " : ", typeList(types(rets)))
		return nil
	}
	return fmt.Errorf("internal: a %s region does not end with return", r.Parent.Op)
}

func resultTypesOf(in *ir.Instr) []ir.Type {
	ts := make([]ir.Type, len(in.Results))
	for i, r := range in.Results {
		ts[i] = r.Type
	}
	return ts
}

// sort lowers to stablehlo.sort in the generic form JAX prints, its
// comparator a region whose block arguments (two scalars per operand) are
// the region's parameters.
func (e *emitter) sort(in *ir.Instr, args []hv) ([]hv, error) {
	a := in.Attr.(*ir.SortAttr)
	// Sub-byte operands sort in eight bits (XLA:CPU's sort scrambles i2
	// values: oracle seed 20542); the comparator converts its scalars back,
	// so that it computes in the operands' own dtype.
	wide := make([]hv, len(args))
	ts := resultTypesOf(in)
	wts := make([]ir.Type, len(ts))
	for i, x := range args {
		wide[i] = e.exactByte(x)
		wts[i] = ts[i].WithDType(wide[i].t.DType)
	}
	r := e.fresh()
	name := r
	if len(ts) > 1 {
		name += ":" + strconv.Itoa(len(ts))
	}
	e.line(name, " = \"stablehlo.sort\"(", refs(wide), ") <{dimension = ", strconv.FormatInt(a.Dimension, 10),
		" : i64, is_stable = ", strconv.FormatBool(a.Stable), "}> ({")
	body := in.Regions[0]
	params := make([]hv, len(body.Params))
	decls := make([]string, len(body.Params))
	for i, p := range body.Params {
		params[i] = hv{e.freshArg(), p.Type.WithDType(byteWide(p.Type.DType))}
		decls[i] = params[i].ref + ": " + tensorType(params[i].t)
	}
	e.line("^bb0(", strings.Join(decls, ", "), "):")
	e.push()
	for i, p := range body.Params {
		params[i] = e.convert(params[i], p.Type.DType)
	}
	e.pop()
	if err := e.region(body, params); err != nil {
		return nil, err
	}
	e.line("}) : (", typeList(types(wide)), ") -> ", resultTypes(wts))
	out := make([]hv, len(ts))
	for i, t := range wts {
		out[i] = hv{r, t}
		if len(ts) > 1 {
			out[i].ref += "#" + strconv.Itoa(i)
		}
		out[i] = e.convert(out[i], ts[i].DType)
	}
	return out, nil
}
