package stablehlo

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// The StableHLO interpreter tests (openxla/stablehlo stablehlo/tests/interpret)
// state expected values with check.expect_* ops. ParseTest reads such a file's
// chunk with those ops turned into extra results of their function, and a
// Check for each saying which results must agree.

// Check is one check.expect_eq(_const), check.expect_almost_eq(_const) or
// check.expect_close: the function's results Got and Want must be equal
// (NaN equal to NaN), or within Tolerance of each other when Almost, or,
// when Close, floats apart by MinULP to MaxULP steps of their type.
type Check struct {
	Pos            ir.Pos
	Got, Want      int
	Almost         bool
	Tolerance      float64
	Close          bool
	MinULP, MaxULP int64
}

// checkOps are the check ops read in test mode.
var checkOps = map[string]bool{
	"check.expect_eq_const": true, "check.expect_almost_eq_const": true,
	"check.expect_eq": true, "check.expect_almost_eq": true, "check.expect_close": true,
	"check.expect_serialized_eq": true,
}

// probeOp is the interpreter's probe: its result is its operand, and the
// interpreter serializes each value it sees, by probe_id and iteration,
// for check.expect_serialized_eq. tpucc keeps the values instead of
// writing them (test mode writes no files): a probe in the function body
// runs once per execution of it in order, so iteration k of an id is its
// k-th probe there; a probe directly in a while's do region is carried
// through the loop (loopProbes); a probe in any other region is refused.
const probeOp = "interpreter.probe"

// probe binds o's result to its operand and records it under its id.
func (bd *builder) probe(o *op) {
	args := bd.args(o)
	id := bd.attr(o, "probe_id")
	if id.kind != attrStr || len(args) != 1 {
		bd.s.failf(o.pos, "%s needs one operand and a probe_id string", probeOp)
	}
	if bd.looped[id.text] != nil {
		bd.s.failf(o.pos, "unsupported %s %s after a while that probes it (its iteration is not known)", probeOp, id.describe())
	}
	bd.probes[id.text] = append(bd.probes[id.text], args[0])
	bd.results(o, args[0])
}

// serializedCheck is check.expect_serialized_eq: x equals the value probe
// probe_id recorded at iteration iter (0 unless written).
func (bd *builder) serializedCheck(o *op) {
	args := bd.args(o)
	id := bd.attr(o, "probe_id")
	iter := int64(0)
	if a := o.attrs["iter"]; a != nil {
		iter = a.int(bd.s, "iter")
	}
	if lpd := bd.looped[id.text]; lpd != nil && iter >= lpd.base && len(args) == 1 {
		bd.loopedCheck(o, lpd, iter, args[0])
		return
	}
	seen := bd.probes[id.text]
	if id.kind != attrStr || len(args) != 1 || iter < 0 || iter >= int64(len(seen)) {
		bd.s.failf(o.pos, "%s: no %s probe_id %s iteration %d before it", o.name, probeOp, id.describe(), iter)
	}
	want := seen[iter]
	if !want.Type.Equal(args[0].Type) {
		bd.s.failf(o.pos, "%s compares %s with the probe's %s", o.name, mlirType(args[0].Type), mlirType(want.Type))
	}
	bd.pending = append(bd.pending, args[0], want)
	bd.checks = append(bd.checks, Check{Pos: o.pos})
}

// Tests is one interpreter test chunk as ParseTest reads it: a module
// whose functions return, after their own results, the values each check
// compares; Checks lists them per function name, and Parallel the
// functions that run programs on a process grid.
type Tests struct {
	Module   *ir.Module
	Checks   map[string][]Check
	Parallel map[string]*Parallel
}

// Parallel is a test function's interpreter.run_parallel: Programs[r][p]
// is the function process (replica r, partition p) runs; the grid's
// processes, in row-major order, take their arguments from Inputs one
// after the other, as many as their function has parameters, and their
// results, in the same order, become the test function's parameters
// First, First+1, ...
type Parallel struct {
	Pos      ir.Pos
	Programs [][]string
	Inputs   []*ir.Literal
	First    int
}

const runParallel = "interpreter.run_parallel"

// ParseTest reads one interpreter test chunk.
func ParseTest(file string, src []byte) (*Tests, error) {
	return parse(file, src, true)
}

// runParallel reads interpreter.run_parallel into the function's
// Parallel: its operands must be constants, and its results become
// parameters of f.
func (bd *builder) runParallel(o *op, f *ir.Func) {
	if bd.all[f.Name] != nil || bd.par[f.Name] != nil {
		bd.s.failf(o.pos, "unsupported: a second %s in @%s", runParallel, f.Name)
	}
	p := &Parallel{Pos: o.pos, First: len(f.Params)}
	progs := bd.attr(o, "programs")
	bad := func() {
		bd.s.failf(progs.pos, "%s: programs must be a non-empty list of equally long, non-empty lists of functions", runParallel)
	}
	if progs.kind != attrList || len(progs.list) == 0 {
		bad()
	}
	var ins, outs int
	for _, row := range progs.list {
		if row.kind != attrList || len(row.list) == 0 || len(row.list) != len(progs.list[0].list) {
			bad()
		}
		var names []string
		for _, a := range row.list {
			g := bd.funcs[a.text]
			if a.kind != attrStr || g == nil {
				bd.s.failf(a.pos, "%s: programs must name functions, got %s", runParallel, a.describe())
			}
			names = append(names, a.text)
			ins, outs = ins+len(g.Params), outs+len(g.Results)
		}
		p.Programs = append(p.Programs, names)
	}
	args := bd.args(o)
	if len(args) != ins || len(o.outs) != outs {
		bd.s.failf(o.pos, "%s: the programs take %d operands and give %d results, the op has %d and %d", runParallel, ins, outs, len(args), len(o.outs))
	}
	bd.gridTypes(o, p.Programs, args)
	for i, a := range args {
		if a.Def == nil || a.Def.Op != ir.OpConstant {
			bd.s.failf(o.args[i].pos, "unsupported form of %s: operand %d is not a constant", runParallel, i)
		}
		p.Inputs = append(p.Inputs, a.Def.Attr.(*ir.ConstAttr).Value)
	}
	res := make([]*ir.Value, len(o.outs))
	for i, t := range o.outs {
		v := f.NewValue(t)
		v.Index, v.Pos = len(f.Params), o.pos
		f.Params = append(f.Params, v)
		res[i] = v
	}
	f.Body.Params = f.Params
	bd.par[f.Name] = p
	bd.results(o, res...)
}

// prettyCheck reads %x, dense<...> : T [, tolerance = F] [{tolerance = F}]
// or %x, %y [, tolerance = F] : T.
func (s *scanner) prettyCheck(o *op) {
	o.args = append(o.args, s.use())
	s.expect(",")
	if strings.HasSuffix(o.name, "_const") {
		s.skip()
		if !s.peek("dense<") {
			s.failf(s.pos(), "unsupported expected value %s", s.found())
		}
		o.attrs["value"] = s.attrValue(false)
	} else {
		o.args = append(o.args, s.use())
	}
	for s.accept(",") {
		s.skip()
		pos := s.pos()
		name := s.word()
		if name != "tolerance" && (o.name != "check.expect_close" || name != "max_ulp_difference" && name != "min_ulp_difference") {
			s.failf(pos, "unsupported attribute %s of %s", name, o.name)
		}
		s.expect("=")
		o.attrs[name] = s.attrValue(false)
	}
	if s.peek("{") {
		for k, v := range s.attrDict() {
			o.attrs[k] = v
		}
	}
	if !strings.HasSuffix(o.name, "_const") {
		s.expect(":")
		s.opType()
	}
}

// check builds a check op: the value compared and the expected one become
// pending results of the function.
func (bd *builder) check(o *op) {
	if o.name == "check.expect_serialized_eq" {
		bd.serializedCheck(o)
		return
	}
	args := bd.args(o)
	c := Check{Pos: o.pos, Almost: strings.Contains(o.name, "almost"), Tolerance: 1e-4}
	if o.name == "check.expect_close" {
		c.Close, c.MaxULP = true, 3 // the check dialect's defaults: 0 to 3 steps
		if a := o.attrs["max_ulp_difference"]; a != nil {
			c.MaxULP = a.int(bd.s, "max_ulp_difference")
		}
		if a := o.attrs["min_ulp_difference"]; a != nil {
			c.MinULP = a.int(bd.s, "min_ulp_difference")
		}
		if t := args[0].Type.DType; !t.IsFloat() && !t.IsComplex() || c.MinULP < 0 || c.MinULP > c.MaxULP {
			bd.s.failf(o.pos, "%s needs float or complex values and 0 <= min_ulp_difference <= max_ulp_difference, got %s, %d, %d",
				o.name, mlirType(args[0].Type), c.MinULP, c.MaxULP)
		}
	}
	if t := o.attrs["tolerance"]; t != nil {
		v, err := strconv.ParseFloat(t.text, 64)
		if t.kind != attrNum || err != nil {
			bd.s.failf(t.pos, "bad tolerance %s", t.describe())
		}
		c.Tolerance = v
	}
	want := args[len(args)-1]
	if a := o.attrs["value"]; a != nil {
		if a.kind != attrDense {
			bd.s.failf(a.pos, "unsupported expected value %s", a.describe())
		}
		want = bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: a.dense.literal(bd.s)}, []ir.Type{a.dense.typ})
	}
	if !want.Type.Equal(args[0].Type) {
		bd.s.failf(o.pos, "%s compares %s with %s", o.name, mlirType(args[0].Type), mlirType(want.Type))
	}
	bd.pending = append(bd.pending, args[0], want)
	bd.checks = append(bd.checks, c)
}

var testFunc = regexp.MustCompile(`(?m)^\s*func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)\(\)`)

// TestChunk is one // ----- separated part of an interpreter test file.
type TestChunk struct {
	Src   []byte   // the chunk, preceded by blank lines so positions are the file's
	Tests []string // its test functions: no parameters, called by no other function
	Lines []int    // the line of each test function
}

// SplitTests cuts an interpreter test file into its chunks.
func SplitTests(src []byte) []TestChunk {
	var out []TestChunk
	line := 1
	for _, part := range strings.Split(string(src), "\n// -----\n") {
		c := TestChunk{Src: []byte(strings.Repeat("\n", line-1) + part)}
		for _, m := range testFunc.FindAllStringSubmatchIndex(part, -1) {
			name := part[m[2]:m[3]]
			if strings.Contains(part, "call @"+name+"(") || inPrograms(part, name) {
				continue
			}
			c.Tests = append(c.Tests, name)
			c.Lines = append(c.Lines, line+strings.Count(part[:m[2]], "\n"))
		}
		out = append(out, c)
		line += strings.Count(part, "\n") + 2
	}
	return out
}

var programsAttr = regexp.MustCompile(`programs\s*=\s*\[(?:\s*\[[^\]]*\]\s*,?)*\s*\]`)

// inPrograms reports whether a run_parallel of part runs @name: a program,
// not a test of its own.
func inPrograms(part, name string) bool {
	ref := regexp.MustCompile(`@` + regexp.QuoteMeta(name) + `\s*[\],]`)
	for _, p := range programsAttr.FindAllString(part, -1) {
		if ref.MatchString(p) {
			return true
		}
	}
	return false
}

// gridTypes checks run_parallel's operand and result types against its
// programs', process by process.
func (bd *builder) gridTypes(o *op, programs [][]string, args []*ir.Value) {
	var in, out int
	for _, row := range programs {
		for _, name := range row {
			g := bd.funcs[name]
			for _, p := range g.Params {
				if !args[in].Type.Equal(p.Type) {
					bd.s.failf(o.args[in].pos, "%s: operand %d is %s, @%s takes %s", runParallel, in, mlirType(args[in].Type), name, mlirType(p.Type))
				}
				in++
			}
			for _, r := range g.Results {
				if !o.outs[out].Equal(r) {
					bd.s.failf(o.pos, "%s: result %d is %s, @%s returns %s", runParallel, out, mlirType(o.outs[out]), name, mlirType(r))
				}
				out++
			}
		}
	}
}

// loopProbes are the probes directly in the do region of a while, which
// the interpreter records once per iteration. ir's while carries values,
// so each probe_id is carried as the count of its values so far (it goes
// on from the body's static count) and, for each iteration a
// check.expect_serialized_eq of the function reads, the value kept when
// the count reached it (zeros until then). Only the iterations checked
// are kept: the others are never read.
type loopProbes struct {
	inits  []*ir.Value // the carried values' initial values, after the while's own
	ids    []string
	at     map[string]int     // the index in inits of an id's count; its kept values follow
	iters  map[string][]int64 // the iterations kept, by id
	types  map[string]ir.Type
	region *region     // the do region being built
	next   []*ir.Value // the carried values as far as the do region has built
}

// loopedProbe is what a while left of a probe_id: the count its values
// started from and reached, and the values kept by iteration.
type loopedProbe struct {
	base  int64
	count *ir.Value
	kept  map[int64]*ir.Value
}

// serialIters lists, by probe_id, the iterations the check ops among ops
// read.
func serialIters(ops []*op, s *scanner) map[string][]int64 {
	out := map[string][]int64{}
	for _, o := range ops {
		id := o.attrs["probe_id"]
		if o.name != "check.expect_serialized_eq" || id == nil || id.kind != attrStr {
			continue
		}
		iter := int64(0)
		if a := o.attrs["iter"]; a != nil {
			iter = a.int(s, "iter")
		}
		if !slices.Contains(out[id.text], iter) {
			out[id.text] = append(out[id.text], iter)
		}
	}
	return out
}

// loopProbesOf plans the carried values of the probes directly in while
// o's do region (none outside test mode). A probe deeper in it, in its
// cond region, or in a while inside another region is refused where
// otherOp meets it.
func (bd *builder) loopProbesOf(o *op) *loopProbes {
	lp := &loopProbes{at: map[string]int{}, iters: map[string][]int64{}, types: map[string]ir.Type{}}
	if !bd.s.tests || len(o.regions) != 2 || bd.depth > 0 {
		return lp
	}
	i64 := ir.Scalar(ir.I64)
	for _, x := range o.regions[1].ops {
		if x.name != probeOp {
			continue
		}
		id := bd.attr(x, "probe_id")
		if id.kind != attrStr || len(x.args) != 1 || len(x.outs) != 1 {
			bd.s.failf(x.pos, "%s needs one operand and a probe_id string", probeOp)
		}
		if t, seen := lp.types[id.text]; seen {
			if !t.Equal(x.outs[0]) {
				bd.s.failf(x.pos, "unsupported %s of %s and %s under one probe_id in a loop", probeOp, mlirType(t), mlirType(x.outs[0]))
			}
			continue
		}
		if bd.looped[id.text] != nil {
			bd.s.failf(x.pos, "unsupported %s %s in a second while (its first iteration here is not known)", probeOp, id.describe())
		}
		base := int64(len(bd.probes[id.text]))
		lp.ids, lp.at[id.text], lp.types[id.text] = append(lp.ids, id.text), len(lp.inits), x.outs[0]
		lp.inits = append(lp.inits, bd.constant(x, i64, float64(base)))
		for _, n := range bd.serial[id.text] {
			if n >= base {
				lp.iters[id.text] = append(lp.iters[id.text], n)
				lp.inits = append(lp.inits, bd.constant(x, x.outs[0], 0))
			}
		}
	}
	return lp
}

// constant emits a constant of type t whose elements are all v.
func (bd *builder) constant(o *op, t ir.Type, v float64) *ir.Value {
	n, ok := t.NumElements()
	if !ok {
		bd.s.failf(o.pos, "unsupported %s of a dynamic shape", o.name)
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = v
	}
	return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(t, vals)}, []ir.Type{t})
}

// probe records probe x of the do region being built: the value is kept
// in each checked iteration's slot when the count is that iteration, and
// the count goes up by one.
func (lp *loopProbes) probe(bd *builder, x *op) {
	args := bd.args(x)
	id := bd.attr(x, "probe_id").text
	if !args[0].Type.Equal(lp.types[id]) {
		bd.s.failf(x.pos, "%s of %s written as %s", probeOp, mlirType(args[0].Type), mlirType(lp.types[id]))
	}
	at, i64 := lp.at[id], ir.Scalar(ir.I64)
	count := lp.next[at]
	for j, n := range lp.iters[id] {
		now := bd.emit(x, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, nil, count, bd.constant(x, i64, float64(n)))
		lp.next[at+1+j] = bd.emit(x, ir.OpSelect, nil, nil, now, args[0], lp.next[at+1+j])
	}
	lp.next[at] = bd.emit(x, ir.OpAdd, nil, nil, count, bd.constant(x, i64, 1))
	bd.results(x, args[0])
}

// record keeps the while's results for its probes (res: the carried
// values' results, in inits' order) for the checks after it.
func (lp *loopProbes) record(bd *builder, res []*ir.Value) {
	for _, id := range lp.ids {
		at := lp.at[id]
		lpd := &loopedProbe{base: int64(len(bd.probes[id])), count: res[at], kept: map[int64]*ir.Value{}}
		for j, n := range lp.iters[id] {
			lpd.kept[n] = res[at+1+j]
		}
		bd.looped[id] = lpd
	}
}

// loopedCheck compares x with the value a while kept for iteration iter,
// and checks that the loop did reach it: its count went past iter (else
// the interpreter has no such value, and the test fails).
func (bd *builder) loopedCheck(o *op, lpd *loopedProbe, iter int64, x *ir.Value) {
	want := lpd.kept[iter]
	if !want.Type.Equal(x.Type) {
		bd.s.failf(o.pos, "%s compares %s with the probe's %s", o.name, mlirType(x.Type), mlirType(want.Type))
	}
	reached := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpGT}, nil, lpd.count, bd.constant(o, ir.Scalar(ir.I64), float64(iter)))
	yes := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(ir.Scalar(ir.I1), []float64{1})}, []ir.Type{ir.Scalar(ir.I1)})
	bd.pending = append(bd.pending, reached, yes, x, want)
	bd.checks = append(bd.checks, Check{Pos: o.pos}, Check{Pos: o.pos})
}
