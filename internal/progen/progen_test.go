package progen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// coverageSeeds is the run the oracle test makes by default.
const coverageSeeds = 300

// TestCoverage: Corpus(300) uses every op of the table (but those
// NotGenerated lists), every dtype, and the shapes the package doc promises.
func TestCoverage(t *testing.T) {
	ops := map[ir.Op]bool{}
	dts := map[ir.DType]bool{}
	features := map[string]bool{}
	for _, m := range Corpus(coverageSeeds, Config{}) {
		for _, f := range m.Funcs {
			see := func(v *ir.Value) {
				dts[v.Type.DType] = true
				if v.Type.Rank() == 0 {
					features["scalar"] = true
				}
				if v.Type.Rank() == 4 {
					features["rank 4"] = true
				}
				for _, d := range v.Type.Dims() {
					switch d {
					case 0:
						features["zero-size dimension"] = true
					case 1:
						features["size-1 dimension"] = true
					}
				}
			}
			for _, p := range f.Params {
				see(p)
			}
			f.Body.Walk(func(in *ir.Instr) {
				ops[in.Op] = true
				for _, r := range in.Results {
					see(r)
				}
				if in.Op == ir.OpBroadcast {
					a, _ := in.Args[0].Type.NumElements()
					r, _ := in.Results[0].Type.NumElements()
					if r > a {
						features["broadcast to a larger shape"] = true
					}
				}
			})
		}
	}
	var missing []string
	for _, op := range ir.Ops() {
		if _, skip := NotGenerated(op); !skip && !ops[op] {
			missing = append(missing, "op "+op.String())
		}
	}
	for _, dt := range drawnDTypes {
		if !dts[dt] {
			missing = append(missing, "dtype "+dt.String())
		}
	}
	for _, f := range []string{"scalar", "rank 4", "zero-size dimension", "size-1 dimension", "broadcast to a larger shape"} {
		if !features[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Errorf("Corpus(%d) never uses: %s", coverageSeeds, strings.Join(missing, ", "))
	}
}

// TestForce: a forced program holds its op for every op the generator
// draws, under the default sizes and the large ones; the same op and seed
// give the same program.
func TestForce(t *testing.T) {
	for _, cfg := range []Config{{}, {MaxDim: 64, MaxElements: 1 << 16}} {
		for _, op := range ir.Ops() {
			if _, skip := NotGenerated(op); skip {
				continue
			}
			forced := cfg
			forced.Force = op
			m := Generate(0, forced)
			if !holds(m, op) {
				t.Errorf("Force %s (MaxDim %d): the program has no %s:\n%s", op, cfg.MaxDim, op, ir.Print(m))
			}
			if again := ir.Print(Generate(0, forced)); again != ir.Print(m) {
				t.Errorf("Force %s: two programs for one seed", op)
			}
		}
	}
}

// TestShapeOfPrograms: every program keeps to the promised sizes.
func TestShapeOfPrograms(t *testing.T) {
	cfg := Config{}.withDefaults()
	for seed := int64(0); seed < coverageSeeds; seed++ {
		p := New(seed, Config{})
		main := p.Module.Func("main")
		if main == nil || p.Module.Entry() != main {
			t.Fatalf("seed %d: no entry @main", seed)
		}
		n := len(main.Body.Instrs) - 1
		if len(main.Params) < 1 || len(main.Params) > 4 || n < 3 || n > 25 || len(main.Results) < 1 || len(main.Results) > 3 {
			t.Errorf("seed %d: @main has %d params, %d instructions, %d results", seed, len(main.Params), n, len(main.Results))
		}
		if len(p.Outputs) != len(main.Results) {
			t.Errorf("seed %d: %d outputs described for %d results", seed, len(p.Outputs), len(main.Results))
		}
		for _, f := range p.Module.Funcs {
			check := func(v *ir.Value) {
				n, ok := v.Type.NumElements()
				if !ok || n > cfg.MaxElements || v.Type.Rank() > 4 || slices.ContainsFunc(v.Type.Dims(), func(d int64) bool { return d > cfg.MaxDim }) {
					t.Errorf("seed %d: @%s has a value of type %s", seed, f.Name, v.Type)
				}
			}
			for _, p := range f.Params {
				check(p)
			}
			f.Body.Walk(func(in *ir.Instr) {
				for _, r := range in.Results {
					check(r)
				}
			})
		}
	}
}

// TestDeterministic: a seed always gives the same program.
func TestDeterministic(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		a, b := ir.Print(Generate(seed, Config{})), ir.Print(Generate(seed, Config{}))
		if a != b {
			t.Fatalf("seed %d gave two programs:\n%s\n%s", seed, a, b)
		}
	}
}

// TestExactness spot-checks the analysis on programs built by hand.
func TestExactness(t *testing.T) {
	cfg := Config{}.withDefaults()
	cases := []struct {
		name  string
		build func(g *gen, p []*val) *val
		exact bool
	}{
		{"add of parameters", func(g *gen, p []*val) *val { return arithInfo(ir.OpAdd, p[0], p[1]) }, true},
		{"mul of parameters", func(g *gen, p []*val) *val { return arithInfo(ir.OpMul, p[0], p[1]) }, true},
		{"add of a product (FMA)", func(g *gen, p []*val) *val {
			m := arithInfo(ir.OpMul, p[0], p[1])
			m.v = p[0].v
			return arithInfo(ir.OpAdd, m, p[1])
		}, false},
		{"convert of a parameter to i32", func(g *gen, p []*val) *val { return convertInfo(p[0], ir.I32) }, true},
	}
	for _, c := range cases {
		g := &gen{cfg: cfg}
		ps := []*val{{lo: -4, hi: 4}, {lo: -4, hi: 4}}
		for _, x := range ps {
			x.v = &ir.Value{Type: ir.Tensor(ir.F32, 2)}
		}
		y := c.build(g, ps)
		if y.exact() != c.exact {
			t.Errorf("%s: exact = %v, want %v (%s)", c.name, y.exact(), c.exact, fmt.Sprint(y.ea, y.er))
		}
	}
	// An approximate value may not reach a discontinuous op.
	if convertInfo(&val{v: &ir.Value{Type: ir.Tensor(ir.F32)}, er: 1e-7}, ir.I32) != nil {
		t.Errorf("convert of an approximate f32 to i32 was allowed")
	}
}

// TestTriangularSolveFiniteB: a triangular_solve's right-hand side is
// finite (no NaN, no infinity) in every program, drawn or forced: where a
// NaN spreads through a solve is the algorithm's choice, and XLA:CPU's
// blocked solve spreads one over a row that substitution does not
// (oracle seed 5166 held triangular_solve(a, sqrt(p0)) and differed so).
func TestTriangularSolveFiniteB(t *testing.T) {
	seen := 0
	for seed := int64(0); seed < 200; seed++ {
		for _, force := range []ir.Op{ir.OpInvalid, ir.OpTriangularSolve} {
			g := &gen{cfg: Config{Force: force}.withDefaults(), r: rand.New(rand.NewPCG(uint64(seed), 1))}
			if _, ok := g.program(seed); !ok {
				continue
			}
			g.main.f.Body.Walk(func(in *ir.Instr) {
				if in.Op != ir.OpTriangularSolve {
					return
				}
				seen++
				if b := g.main.info[in.Args[1].ID]; !b.finite() {
					t.Errorf("seed %d (force %s): b of a solve may hold NaN or infinity (range [%g, %g], nan %v)",
						seed, force, b.lo, b.hi, b.nan)
				}
			})
		}
	}
	if seen < 100 {
		t.Errorf("only %d triangular_solves drawn, want at least 100", seen)
	}
}

// TestNoSplatNaN: no program holds a splat constant of NaN (XLA:CPU
// computes exp(x + NaN) as 0 when it knows the NaN at compile time);
// array constants still hold NaN elements.
func TestNoSplatNaN(t *testing.T) {
	arrays := 0
	for _, m := range Corpus(coverageSeeds, Config{}) {
		for _, f := range m.Funcs {
			f.Body.Walk(func(in *ir.Instr) {
				if in.Op != ir.OpConstant || !in.Results[0].Type.DType.IsFloat() {
					return
				}
				lit := in.Attr.(*ir.ConstAttr).Value
				for i := 0; i < lit.Len(); i++ {
					switch {
					case !math.IsNaN(lit.Float(i)):
					case lit.Len() == 1:
						t.Errorf("%s: a splat constant of NaN at %v", m.File, in.Pos)
					default:
						arrays++
					}
				}
			})
		}
	}
	if arrays == 0 {
		t.Errorf("no array constant holds a NaN element")
	}
}
