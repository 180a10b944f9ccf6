// Package progen generates random, verified tpucc programs from a seed, for
// the oracle test (internal/oracle) that runs each through the CPU executor
// and through XLA and compares.
//
// A program is a module whose entry @main has 1-4 parameters, 3-25
// instructions and 1-3 results, sometimes calling a helper @f1. Across a few
// hundred seeds the programs use every op of ir's table (but the two
// NotGenerated names: return, and the pass-made fusion), every dtype, scalars,
// size-1 and zero-size dimensions, broadcasts and shapes up to rank 4 (at most
// 8 per dimension and 4096 elements per tensor).
//
// The hard part is numerical hygiene, because the oracle compares integers,
// bools and exact floats bit for bit. Every value carries an analysis (see
// val): a range, whether it may hold NaN, and an estimate of how far XLA and
// the executor may drift apart on it. Values with no drift are exact:
// parameters, constants, integer and bool ops, compare/select/max/min/clamp,
// neg/abs/sign/floor/ceil/round, rem, shape and indexing ops on exact values,
// and f32/f64/f16/bf16 add, sub and mul of exact values (IEEE round to nearest
// is deterministic, and XLA:CPU rounds every f16/bf16 op). Transcendentals,
// div, pow, dot_general, float reductions and the composites are approximate.
// The rules the analysis enforces, each learnt from XLA:CPU (jax 0.10.2):
//
//   - Discontinuous ops (floor, ceil, round, sign, compare, rem, convert of a
//     float to an integer or i1, argmax/argmin, argsort, top_k, and every index
//     operand) take only exact operands, so a last-bit difference never flips
//     a result. Integers and bools are therefore always exact.
//   - XLA:CPU contracts a multiply feeding an add or subtract into an FMA, so
//     an add of an f32/f64 product is approximate (by half an ulp).
//   - XLA:CPU flushes denormals to zero; ranges keep exp and friends away from
//     results that small.
//   - argsort and top_k never see NaN (the two sides' NaNs may differ in sign,
//     which the total order tells apart) nor zeros of ambiguous sign.
//   - An approximate operand stays away from an op's singularities: log, sqrt
//     and rsqrt of values bounded away from 0, division by values bounded away
//     from 0, pow of positive bases, atan2 away from its branch cut.
//   - Error estimates grow with magnitude, so approximate values stay small on
//     their own: an op whose estimate would exceed the budget is not made.
//   - and/or never take a value XLA may simplify to a signed integer convert
//     to a narrower signed type: XLA:CPU segfaults compiling that, an XLA
//     bug that no lowering can avoid.
//
// Everything else XLA gets wrong is left in, for the oracle to report.
package progen

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tpucc/tpucc/ir"
)

// Config tunes the generator; the zero value gives the defaults.
type Config struct {
	MinInstrs, MaxInstrs int   // instructions of @main, return excluded: 3 and 25
	MaxParams            int   // 4
	MaxElements          int64 // per tensor: 4096
	MaxDim               int64 // per dimension: 8

	// FloatInputs and IntInputs bound the parameters' elements as the inputs
	// will hold them, which the analysis relies on. The defaults are
	// cpu.RandomInputs' ranges: floats in [-2, 2], signed integers in [-8, 8],
	// unsigned ones in [0, 16] (IntInputs 8: [-8, 8] and [0, 2*8]).
	FloatInputs float64
	IntInputs   int64

	// Tolerance is the oracle's allowance per float dtype (default
	// DefaultTolerance); Budget is the fraction of it an approximate value's
	// error estimate may use (default 0.5).
	Tolerance func(ir.DType) Tolerance
	Budget    float64

	// DTypes are the dtypes constants and converts may take (default
	// drawnDTypes: all of ir's but the complex ones); parameters are drawn from the usual floats and
	// integers whatever it says.
	DTypes []ir.DType

	// Force, when set, is an op @main must hold: the generator draws it
	// first, retrying until an instance is made, then goes on as usual.
	// A test that needs every op of the table draws Corpus, which adds a
	// forced program per op to the seeds' programs, so that no op depends
	// on the seeds' random stream to appear; ops added to the table after
	// bagLast appear only there. The zero value forces nothing.
	Force ir.Op
}

func (c Config) withDefaults() Config {
	if c.DTypes == nil {
		c.DTypes = drawnDTypes
	}
	if c.MinInstrs <= 0 {
		c.MinInstrs = 3
	}
	if c.MaxInstrs <= 0 {
		c.MaxInstrs = 25
	}
	if c.MaxInstrs < c.MinInstrs {
		c.MaxInstrs = c.MinInstrs
	}
	if c.MaxParams <= 0 {
		c.MaxParams = 4
	}
	if c.MaxElements <= 0 {
		c.MaxElements = 4096
	}
	if c.MaxDim <= 0 {
		c.MaxDim = 8
	}
	if c.FloatInputs <= 0 {
		c.FloatInputs = 2
	}
	if c.IntInputs <= 0 {
		c.IntInputs = 8
	}
	if c.Tolerance == nil {
		c.Tolerance = DefaultTolerance
	}
	if c.Budget <= 0 {
		c.Budget = 0.5
	}
	return c
}

// Program is a generated module with what the analysis knows of its results.
type Program struct {
	Seed    int64
	Module  *ir.Module
	Outputs []Output // one per result of @main
}

// Output describes one result of @main.
type Output struct {
	// Exact: XLA and the executor agree bit for bit (NaN payloads and zero
	// signs aside), so the oracle compares without tolerance.
	Exact bool
	// Abs and Rel are the analysis' estimate of the drift on an element y:
	// |XLA - executor| <= Abs + Rel*|y|.
	Abs, Rel float64
}

// Generate returns the verified module for seed (see New).
func Generate(seed int64, cfg Config) *ir.Module { return New(seed, cfg).Module }

// maxAttempts bounds the retries of one seed; attempts fail when the op
// choices leave @main too short or too long, which is rare.
const maxAttempts = 200

// New generates the program for seed. The same seed and Config always give
// the same program. It panics only if the generator itself is broken (an
// attempt built a module the verifier rejects, or no attempt succeeded).
func New(seed int64, cfg Config) *Program {
	cfg = cfg.withDefaults()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		g := &gen{
			cfg: cfg,
			r:   rand.New(rand.NewPCG(uint64(seed), uint64(attempt)*0x9e3779b97f4a7c15+1)),
		}
		p, ok := g.program(seed)
		if !ok {
			continue
		}
		if err := ir.Verify(p.Module); err != nil {
			panic(fmt.Sprintf("progen: seed %d attempt %d built an invalid module: %v\n%s", seed, attempt, err, ir.Print(p.Module)))
		}
		return p
	}
	panic(fmt.Sprintf("progen: seed %d: no valid program in %d attempts", seed, maxAttempts))
}

// gen is one attempt. fn is the function being built: @main, or @f1 while
// a call builds its callee.
type gen struct {
	cfg    Config
	r      *rand.Rand
	m      *ir.Module
	fn     *fnState
	main   *fnState
	helper bool    // @f1 exists
	base   []int64 // the attempt's base shape, which most shapes derive from
	opBag  []ir.Op // ops still owed a try in this attempt (see nextOp)
}

// fnState is a function under construction and its pool of values.
type fnState struct {
	f    *ir.Func
	b    *ir.Builder
	info []*val // by Value.ID
	pool []*val // in definition order
	// simple restricts a callee to elementwise ops, so it stays small.
	simple bool
}

func (g *gen) program(seed int64) (*Program, bool) {
	g.m = ir.NewModule(fmt.Sprintf("progen_%d.tir", seed))
	g.base = g.randomShape(4)
	n := 1 + g.r.IntN(g.cfg.MaxParams)
	names := make([]string, n)
	types := make([]ir.Type, n)
	for i := range types {
		names[i] = fmt.Sprintf("p%d", i)
		types[i] = ir.Tensor(g.paramDType(), g.shapeLike()...)
	}
	f := g.m.NewFunc("main", names, types, nil, ir.Pos{})
	g.main = g.newFn(f, false)
	g.fn = g.main
	for _, p := range f.Params {
		g.add(g.paramInfo(p))
	}

	if g.cfg.Force != ir.OpInvalid && !g.force(g.cfg.Force) {
		return nil, false
	}
	target := g.cfg.MinInstrs + g.r.IntN(g.cfg.MaxInstrs-g.cfg.MinInstrs+1)
	for tries := 0; len(f.Body.Instrs) < target && tries < 50*g.cfg.MaxInstrs; tries++ {
		g.genOp(g.nextOp())
	}
	if k := len(f.Body.Instrs); k < g.cfg.MinInstrs || k > g.cfg.MaxInstrs {
		return nil, false
	}
	outs := g.pickOutputs(g.main)
	if outs == nil {
		return nil, false
	}
	p := &Program{Seed: seed, Module: g.m}
	vals := make([]*ir.Value, len(outs))
	for i, o := range outs {
		vals[i] = o.v
		f.Results = append(f.Results, o.v.Type)
		p.Outputs = append(p.Outputs, Output{Exact: o.exact(), Abs: o.ea, Rel: o.er})
	}
	g.main.b.Return(vals...)
	if len(g.m.Funcs) > 1 {
		// Callees first: the order a reader expects, and the order a parser
		// that resolves calls in one pass needs.
		g.m.Funcs = append(g.m.Funcs[1:], g.m.Funcs[0])
	}
	return p, true
}

// forceTries bounds the tries of one attempt at the forced op; the ops
// whose operands are hardest to meet (atan2's ranges, ragged_dot's groups)
// succeed within a few.
const forceTries = 50

// force draws op until the module holds an instance of it.
func (g *gen) force(op ir.Op) bool {
	for try := 0; try < forceTries; try++ {
		g.genOp(op)
		if holds(g.m, op) {
			return true
		}
	}
	return false
}

// holds reports whether a function of m has an instruction of op.
func holds(m *ir.Module, op ir.Op) bool {
	found := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) { found = found || in.Op == op })
	}
	return found
}

// Corpus is the programs of seeds 0..n-1 under cfg, then, for every op the
// generator draws, one program with that op forced (seed 0, Config.Force):
// every generated op of the table has an instance in it whatever the
// seeds' programs hold.
func Corpus(n int, cfg Config) []*ir.Module {
	var out []*ir.Module
	for seed := range int64(n) {
		out = append(out, Generate(seed, cfg))
	}
	for _, op := range ir.Ops() {
		if _, skip := NotGenerated(op); !skip {
			forced := cfg
			forced.Force = op
			out = append(out, Generate(0, forced))
		}
	}
	return out
}

func (g *gen) newFn(f *ir.Func, simple bool) *fnState {
	return &fnState{f: f, b: ir.NewBuilder(f), simple: simple}
}

// pickOutputs returns 1-3 results of instructions, preferring values
// computed from the parameters, then values nothing uses (so that little of
// the program is dead), then the longest computations.
func (g *gen) pickOutputs(fs *fnState) []*val {
	uses := fs.f.UseCounts()
	var cands []*val
	for _, x := range fs.pool {
		if x.v.Def != nil {
			cands = append(cands, x)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	score := func(x *val) int {
		s := x.depth
		if uses[x.v.ID] == 0 {
			s += 100
		}
		if x.live {
			s += 1000
		}
		return s
	}
	slices.SortStableFunc(cands, func(a, b *val) int { return score(b) - score(a) })
	n := 1 + g.r.IntN(3)
	if n > len(cands) {
		n = len(cands)
	}
	out := cands[:n]
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// add records a value's analysis in the current function's pool.
func (g *gen) add(x *val) *val {
	fs := g.fn
	x.live, x.depth = x.v.Def == nil && !fs.simple, 0
	if d := x.v.Def; d != nil {
		for _, a := range d.Args {
			if ai := fs.info[a.ID]; ai != nil {
				x.live = x.live || ai.live
				x.depth = max(x.depth, ai.depth+1)
				// XLA may simplify an op to one of its operands of the same dtype.
				x.narrowed = x.narrowed || (ai.narrowed && a.Type.DType == x.dt() && d.Op != ir.OpConvert)
			}
		}
		if d.Op == ir.OpConvert {
			src := d.Args[0].Type.DType
			x.narrowed = src.IsSigned() && x.dt().IsSigned() && x.dt().Bits() < src.Bits()
		}
	}
	for len(fs.info) <= x.v.ID {
		fs.info = append(fs.info, nil)
	}
	fs.info[x.v.ID] = x
	fs.pool = append(fs.pool, x)
	return x
}

func (g *gen) paramInfo(p *ir.Value) *val {
	x := &val{v: p}
	switch dt := p.Type.DType; {
	case dt.IsFloat():
		x.lo, x.hi = -g.cfg.FloatInputs, g.cfg.FloatInputs
	case dt.IsSigned():
		x.lo, x.hi = fitRange(dt, float64(-g.cfg.IntInputs), float64(g.cfg.IntInputs))
	case dt.IsUnsigned():
		x.lo, x.hi = fitRange(dt, 0, float64(2*g.cfg.IntInputs))
	default:
		x.lo, x.hi = 0, 1
	}
	return x
}

// emit builds op on the current function; nil if Infer refuses it.
func (g *gen) emit(op ir.Op, attr ir.Attr, hint []ir.Type, args ...*val) *ir.Instr {
	vs := make([]*ir.Value, len(args))
	for i, a := range args {
		vs[i] = a.v
	}
	in, err := g.fn.b.Emit(op, attr, hint, vs...)
	if err != nil {
		return nil
	}
	return in
}

// emit1 is emit for a single-result op whose result analysis is x (with v
// filled in here); nil if Infer refuses it.
func (g *gen) emit1(op ir.Op, attr ir.Attr, hint *ir.Type, x *val, args ...*val) *val {
	var h []ir.Type
	if hint != nil {
		h = []ir.Type{*hint}
	}
	in := g.emit(op, attr, h, args...)
	if in == nil {
		return nil
	}
	x.v = in.Result()
	return g.add(x)
}

// ok reports whether a value's drift estimate fits the budget for dt.
func (g *gen) ok(dt ir.DType, x *val) bool {
	if x.exact() {
		return true
	}
	if !dt.IsFloat() {
		return false
	}
	t := g.cfg.Tolerance(dt)
	return x.ea <= g.cfg.Budget*t.Atol && x.er <= g.cfg.Budget*t.Rtol
}

// Random choices.

func (g *gen) coin(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

var floatDTypes = []ir.DType{ir.F32, ir.F16, ir.BF16, ir.F64}
var intDTypes = []ir.DType{ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.U32}

func (g *gen) paramDType() ir.DType {
	switch k := g.r.IntN(20); {
	case k < 6:
		return ir.F32
	case k < 12:
		return pick(g, floatDTypes)
	case k < 13:
		return ir.I1
	default:
		return pick(g, intDTypes)
	}
}

func (g *gen) anyDType() ir.DType {
	if g.coin(0.1) {
		return ir.I1
	}
	return g.numericDType()
}

func (g *gen) numericDType() ir.DType {
	if g.coin(0.6) {
		return pick(g, floatDTypes)
	}
	return pick(g, intDTypes)
}
