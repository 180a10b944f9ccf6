// Package stablehlo lowers an ir.Module to StableHLO text in the pretty form
// jax.jit(f).lower(...).as_text() prints, so that XLA parses, compiles and runs it.
//
// The entry function becomes func.func public @main with the entry's parameters
// and results in order; every other function reachable through call becomes a
// func.func private, in module order. Composite ops are decomposed into
// primitive StableHLO. Each op's lowering keeps the semantics its Doc line in
// ir/op.go states, edge cases included: XLA's own behaviour is relied on only
// where it was checked to match (see the comment on each lowering).
//
// Output is deterministic: values are numbered %0, %1, ... in emission order,
// parameters and region arguments %arg0, %arg1, ..., and nothing depends on
// pointer values or map order.
package stablehlo

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Options control Lower.
type Options struct {
	Entry      string // the function to lower as @main; "" means m.Entry()
	ModuleName string // the module's symbol; "" means "jit_" + the entry's name
	// NativeRaggedDot writes ragged_dot as chlo.ragged_dot, which XLA:TPU
	// compiles to a grouped matmul; without it ragged_dot becomes a gather
	// and a batched dot that every XLA backend runs (XLA:CPU has no
	// chlo.ragged_dot of its own).
	NativeRaggedDot bool
	// Donate lists the entry's parameters (by position) whose buffers each
	// call consumes. Each is paired, in order, with the first result of the
	// same type not yet taken and marked tf.aliasing_output = N, which XLA
	// reads as "result N may be written into this argument's memory"; one
	// with no such result is marked jax.buffer_donor = true, which lets XLA
	// use it as it can. JAX's donate_argnums writes the same attributes.
	// Only a device backend (PJRT) acts on them.
	Donate []int
	// Precision is the precision every dot_general and ragged_dot asks of
	// the device: "" or "default", "high", "highest", as JAX's
	// default_matmul_precision. XLA runs an f32 product of DEFAULT precision
	// in one bf16 pass on a TPU and in TF32 on an NVIDIA GPU; HIGHEST keeps
	// f32 (six bf16 passes on a TPU). CPU backends compute f32 either way.
	Precision string
}

// Precisions are the values Options.Precision takes, as JAX names them.
var Precisions = []string{"default", "high", "highest"}

// CheckPrecision is nil for a value Options.Precision takes ("" is the
// default), else an error naming the values there are.
func CheckPrecision(p string) error {
	if p == "" || slices.Contains(Precisions, p) {
		return nil
	}
	return fmt.Errorf("unknown precision %q (want one of %s)", p, strings.Join(Precisions, ", "))
}

// precisionAttr is the StableHLO spelling of a precision CheckPrecision
// accepts.
func precisionAttr(p string) string {
	if p == "" {
		return "DEFAULT"
	}
	return strings.ToUpper(p)
}

// Lower returns the StableHLO text of m's entry function and everything it calls.
// Errors are positioned (*ir.Error or *ir.ErrorList): an unknown entry, a symbolic
// shape, an op the lowering does not handle; an unknown Options.Precision is
// an error of the options, not of the module, and has no position.
func Lower(m *ir.Module, opts Options) (string, error) {
	entry, err := findEntry(m, opts.Entry)
	if err != nil {
		return "", err
	}
	if err := CheckPrecision(opts.Precision); err != nil {
		return "", err
	}
	funcs := reachable(m, entry)
	if err := checkStatic(funcs); err != nil {
		return "", err
	}
	syms := symbols(m, funcs)
	name := opts.ModuleName
	if name == "" {
		name = "jit_" + sanitize(entry.Name)
	}
	var b strings.Builder
	b.WriteString("module @" + symbol(name) + " attributes {mhlo.num_partitions = " + strconv.FormatInt(partitions(m), 10) + " : i32, mhlo.num_replicas = " + strconv.FormatInt(m.NumReplicas(), 10) + " : i32} {\n")
	meshLines(&b, m)
	var errs []*ir.Error
	for i, f := range funcs {
		errs = append(errs, lowerFunc(&b, f, i == 0, syms, opts)...)
	}
	b.WriteString("}\n")
	if len(errs) > 0 {
		return "", errorList(errs)
	}
	return b.String(), nil
}

func findEntry(m *ir.Module, name string) (*ir.Func, error) {
	pos := ir.Pos{File: m.File}
	if name != "" {
		if f := m.Func(name); f != nil {
			return f, nil
		}
		return nil, ir.Errorf(pos, "no function @%s to lower", name)
	}
	if f := m.Entry(); f != nil {
		return f, nil
	}
	return nil, ir.Errorf(pos, "nothing to lower: the module has no functions")
}

// reachable returns entry, then every function it reaches through calls, in module order.
func reachable(m *ir.Module, entry *ir.Func) []*ir.Func {
	seen := map[*ir.Func]bool{entry: true}
	work := []*ir.Func{entry}
	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		f.Body.Walk(func(in *ir.Instr) {
			if a, ok := in.Attr.(*ir.CallAttr); ok && in.Op == ir.OpCall {
				if g := m.Func(a.Callee); g != nil && !seen[g] {
					seen[g] = true
					work = append(work, g)
				}
			}
		})
	}
	out := []*ir.Func{entry}
	for _, f := range m.Funcs {
		if f != entry && seen[f] {
			out = append(out, f)
		}
	}
	return out
}

// symbols names each lowered function: the entry is main, the others keep their
// names, except that a callee itself named main is renamed out of the way.
func symbols(m *ir.Module, funcs []*ir.Func) map[string]string {
	taken := map[string]bool{"main": true}
	for _, f := range m.Funcs {
		taken[f.Name] = true
	}
	syms := map[string]string{funcs[0].Name: "main"}
	for _, f := range funcs[1:] {
		name := f.Name
		if name == "main" {
			for k := 1; ; k++ {
				name = fmt.Sprintf("main_%d", k)
				if !taken[name] {
					break
				}
			}
			taken[name] = true
		}
		syms[f.Name] = name
	}
	return syms
}

// sanitize replaces characters outside [A-Za-z0-9_.-] with '_', as JAX does for module names.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// symbol spells a symbol name bare when MLIR allows it ([A-Za-z_][A-Za-z0-9_$.-]*)
// and quoted otherwise.
func symbol(s string) string {
	bare := s != ""
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i > 0 {
			ok = ok || r == '$' || r == '.' || r == '-' || r >= '0' && r <= '9'
		}
		bare = bare && ok
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "\\%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkStatic reports every value where a symbolic dimension first appears: each
// parameter with one, and each op result with one whose operands are all static.
func checkStatic(funcs []*ir.Func) error {
	var errs []*ir.Error
	for _, f := range funcs {
		names := ir.ValueNames(f) // as the user's .tir text names them
		report := func(v *ir.Value, pos ir.Pos) {
			if !pos.Known() {
				pos = f.Pos
			}
			var syms []string
			for _, d := range v.Type.Shape {
				if d.Symbolic() && !contains(syms, d.Sym) {
					syms = append(syms, d.Sym)
				}
			}
			errs = append(errs, ir.Errorf(pos, "lowering needs static shapes: %%%s has %s; give %s", names[v], v.Type, sizeWords(syms)))
		}
		for _, p := range f.Params {
			if !p.Type.IsStatic() {
				report(p, p.Pos)
			}
		}
		f.Body.Walk(func(in *ir.Instr) {
			for _, a := range in.Args {
				if !a.Type.IsStatic() {
					return
				}
			}
			for _, r := range in.Results {
				if !r.Type.IsStatic() {
					report(r, in.Pos)
					return
				}
			}
		})
	}
	if len(errs) == 0 {
		return nil
	}
	return errorList(errs)
}

// sizeWords is "B a size", "B and S sizes", "B, S and T sizes".
func sizeWords(syms []string) string {
	switch len(syms) {
	case 1:
		return syms[0] + " a size"
	case 2:
		return syms[0] + " and " + syms[1] + " sizes"
	}
	return strings.Join(syms[:len(syms)-1], ", ") + " and " + syms[len(syms)-1] + " sizes"
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func errorList(errs []*ir.Error) error {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i].Pos, errs[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	if len(errs) == 1 {
		return errs[0]
	}
	return &ir.ErrorList{Errs: errs}
}

// donorAttrs gives each donated parameter of the entry f its attribute (see
// Options.Donate); nil when none is donated.
func donorAttrs(f *ir.Func, donate []int) []string {
	if len(donate) == 0 {
		return nil
	}
	attrs := make([]string, len(f.Params))
	taken := make([]bool, len(f.Results))
	for _, i := range donate {
		if i < 0 || i >= len(f.Params) || attrs[i] != "" {
			continue
		}
		attrs[i] = "jax.buffer_donor = true"
		want := tensorType(f.Params[i].Type)
		for n, r := range f.Results {
			if !taken[n] && tensorType(r) == want {
				taken[n] = true
				attrs[i] = fmt.Sprintf("tf.aliasing_output = %d : i32", n)
				break
			}
		}
	}
	return attrs
}

// lowerFunc writes one func.func and returns the problems found in its body.
func lowerFunc(b *strings.Builder, f *ir.Func, public bool, syms map[string]string, opts Options) []*ir.Error {
	e := newEmitter(b, syms)
	e.nativeRagged = opts.NativeRaggedDot
	e.precision = precisionAttr(opts.Precision)
	vis := "private"
	if public {
		vis = "public"
	}
	var donor []string
	if public {
		donor = donorAttrs(f, opts.Donate)
	}
	argShard, resShard := signatureShardings(f, public)
	params := make([]string, len(f.Params))
	for i, p := range f.Params {
		v := hv{e.freshArg(), p.Type}
		e.vals[p] = v
		var attrs []string
		if donor != nil {
			attrs = append(attrs, donor[i])
		}
		if s := argShard[i]; s != nil {
			attrs = append(attrs, shardingAttr(s))
		}
		params[i] = v.ref + ": " + tensorType(p.Type) + attrDict(attrs...)
	}
	res := resultList(f.Results, resShard)
	fmt.Fprintf(b, "  func.func %s @%s(%s) -> %s {\n", vis, symbol(syms[f.Name]), strings.Join(params, ", "), res)
	for _, in := range f.Body.Instrs {
		if err := e.instr(in); err != nil {
			// Later instructions may use this one's results: stop at the first problem.
			pos := in.Pos
			if !pos.Known() {
				pos = f.Pos
			}
			return []*ir.Error{ir.Errorf(pos, "%s", err)}
		}
	}
	b.WriteString("  }\n")
	return nil
}

// resultList is a function's result types, each with its sharding if it has
// one, in parentheses unless there is exactly one result and no sharding.
func resultList(ts []ir.Type, shardings []*ir.Sharding) string {
	parts := make([]string, len(ts))
	attrs := false
	for i, t := range ts {
		parts[i] = tensorType(t)
		if s := shardings[i]; s != nil {
			parts[i] += attrDict(shardingAttr(s))
			attrs = true
		}
	}
	if len(ts) == 1 && !attrs {
		return parts[0]
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// instr lowers one instruction, binding its results.
func (e *emitter) instr(in *ir.Instr) error {
	if in.Op == ir.OpFusion {
		return e.flatten(in)
	}
	if len(in.Regions) > 0 && !ir.IsControl(in.Op) && in.Op != ir.OpSort {
		return fmt.Errorf("cannot lower %s with a region: lower before fusing", in.Op)
	}
	if !lowered(in.Op) {
		return fmt.Errorf("lowering of %s to StableHLO is not supported", in.Op)
	}
	args := make([]hv, len(in.Args))
	for i, a := range in.Args {
		v, ok := e.vals[a]
		if !ok {
			return fmt.Errorf("internal: operand %d of %s is not defined", i, in.Op)
		}
		args[i] = v
	}
	var res []hv
	var err error
	switch in.Op.Info().Group {
	case ir.GroupUnary:
		res = []hv{e.unary(in.Op, args[0])}
	case ir.GroupBinary:
		res = []hv{e.binary(in.Op, args[0], args[1], safeOperand(in.Op, in.Args[1]))}
	case ir.GroupCompare:
		res = []hv{e.compareSelect(in, args)}
	case ir.GroupShape, ir.GroupContraction:
		if in.Op == ir.OpRaggedDot {
			var r hv
			r, err = e.raggedDot(args[0], args[1], args[2], in.Results[0].Type)
			res = []hv{r}
			break
		}
		if in.Op == ir.OpRaggedContract {
			res = []hv{e.raggedContract(args[0], args[1], args[2], in.Results[0].Type)}
			break
		}
		if in.Op == ir.OpTriangularSolve {
			res = []hv{e.triangularSolve(in, args[0], args[1])}
			break
		}
		res = []hv{e.shape(in, args)}
	case ir.GroupReduction:
		res = []hv{e.reduction(in, args)}
	case ir.GroupIndexing:
		res, err = e.indexing(in, args)
	case ir.GroupComposite:
		res = []hv{e.composite(in, args)}
	case ir.GroupOther:
		switch in.Op {
		case ir.OpWhile:
			res, err = e.while(in, args)
		case ir.OpCase:
			res, err = e.caseOp(in, args)
		case ir.OpReducePrecision:
			res = []hv{e.reducePrecision(args[0], in.Attr.(*ir.ReducePrecisionAttr))}
		case ir.OpBitcastConvert:
			t := in.Results[0].Type
			res = []hv{e.def(t, "stablehlo.bitcast_convert ", args[0].ref, " : ", funcType(args, []ir.Type{t}))}
		case ir.OpCustomCall:
			res = e.customCall(in, args)
		case ir.OpAllReduce, ir.OpAllGather, ir.OpAllToAll, ir.OpReduceScatter, ir.OpCollectiveBroadcast,
			ir.OpCollectivePermute, ir.OpCollectiveReduce, ir.OpReplicaID, ir.OpPartitionID:
			res = e.collective(in, args)
		case ir.OpFFT:
			res = []hv{e.fft(in, args[0])}
		case ir.OpRngBitGenerator:
			res = e.rngBitGenerator(in, args[0])
		default:
			res, err = e.other(in, args)
		}
	default:
		res, err = e.other(in, args)
	}
	if err != nil {
		return err
	}
	if len(res) != len(in.Results) {
		return fmt.Errorf("internal: lowering %s gave %d results, want %d", in.Op, len(res), len(in.Results))
	}
	for i, r := range in.Results {
		e.vals[r] = hv{res[i].ref, r.Type}
	}
	return nil
}

// other lowers constant, call, return and sharding_constraint.
func (e *emitter) other(in *ir.Instr, args []hv) ([]hv, error) {
	switch in.Op {
	case ir.OpConstant:
		return []hv{e.constant(in.Results[0].Type, in.Attr.(*ir.ConstAttr).Value)}, nil
	case ir.OpShardingConstraint:
		return []hv{e.shardingConstraint(in, args[0])}, nil
	case ir.OpCall:
		callee := in.Attr.(*ir.CallAttr).Callee
		ts := make([]ir.Type, len(in.Results))
		for i, r := range in.Results {
			ts[i] = r.Type
		}
		res := "(" + typeList(ts) + ")"
		if len(ts) == 1 {
			res = tensorType(ts[0])
		}
		// Inside a region (stablehlo.while, stablehlo.case) the default
		// dialect is stablehlo's, so the call is spelled in full, as JAX
		// prints it there.
		op := "call @"
		if e.regions > 0 {
			op = "func.call @"
		}
		return e.defN(ts, op, symbol(e.syms[callee]), "(", refs(args), ") : (", typeList(types(args)), ") -> ", res), nil
	case ir.OpReturn:
		if len(args) == 0 {
			e.line("return")
		} else {
			e.line("return ", refs(args), " : ", typeList(types(args)))
		}
		return nil, nil
	}
	panic("stablehlo: other called for " + in.Op.String())
}

// lowered reports whether op has a lowering; the group lowerings handle
// exactly these ops, so an op added to ir later is an error, never a panic.
func lowered(op ir.Op) bool {
	if g := op.Info().Group; (g == ir.GroupUnary || g == ir.GroupBinary) && hloName(op) != "" {
		return true
	}
	if op.Info().Reduce != ir.ReduceNone {
		return true
	}
	switch op {
	case ir.OpCompare, ir.OpSelect, ir.OpClamp,
		ir.OpReshape, ir.OpConvert, ir.OpBroadcast, ir.OpTranspose, ir.OpSlice, ir.OpConcat, ir.OpPad, ir.OpIota, ir.OpCopy,
		ir.OpDotGeneral, ir.OpRaggedDot, ir.OpRaggedContract, ir.OpConvolution, ir.OpTriangularSolve,
		ir.OpArgmax, ir.OpArgmin, ir.OpCumsum, ir.OpReduceWindow, ir.OpSelectAndScatter,
		ir.OpTake, ir.OpScatterAdd, ir.OpDynamicSlice, ir.OpDynamicUpdateSlice, ir.OpOneHot, ir.OpTopK, ir.OpArgsort,
		ir.OpRelu, ir.OpGelu, ir.OpSilu, ir.OpSoftmax, ir.OpLogSoftmax, ir.OpLayerNorm, ir.OpRMSNorm,
		ir.OpConstant, ir.OpCall, ir.OpReturn, ir.OpFusion, ir.OpShardingConstraint, ir.OpWhile, ir.OpCase, ir.OpReducePrecision, ir.OpBitcastConvert, ir.OpCustomCall,
		ir.OpFFT, ir.OpSort, ir.OpRngBitGenerator:
		return true
	}
	if ir.IsCollective(op) || op == ir.OpReplicaID || op == ir.OpPartitionID {
		return true
	}
	return false
}
