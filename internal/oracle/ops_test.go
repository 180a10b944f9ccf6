package oracle

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// seededOps are ops whose golden programs run with several input seeds:
// ragged_contract (issue 31) and
// those read from StableHLO's interpreter suite (issue 33), checked here on
// more inputs than TestGoldenModules's one seed.
var seededOps = map[ir.Op]bool{ir.OpTriangularSolve: true,
	ir.OpShiftLeft: true, ir.OpShiftRightLogical: true, ir.OpShiftRightArithmetic: true,
	ir.OpPopcnt: true, ir.OpClz: true, ir.OpTan: true, ir.OpRoundAFZ: true, ir.OpReducePrecision: true,
	ir.OpBitcastConvert: true, ir.OpRaggedContract: true}

// TestOpPrograms runs every golden program holding one of seededOps through
// the executor and XLA:CPU with each of loopSeeds' inputs
// (go test ./internal/oracle -run TestOpPrograms).
func TestOpPrograms(t *testing.T) {
	h := harness(t)
	var checks []*check
	found := map[ir.Op]bool{}
	for _, mod := range goldenModules(t, repoRoot(t)) {
		m, err := tir.Parse(mod.file, []byte(mod.src))
		if mod.expectsError || err != nil || !holds(m, found) {
			continue
		}
		for _, seed := range loopSeeds {
			m, _ := tir.Parse(mod.file, []byte(mod.src))
			key := unsafeName.ReplaceAllString(strings.TrimSuffix(mod.file, ":in.tir"), "_") + fmt.Sprintf("_seed%d", seed)
			checks = append(checks, &check{
				name:   fmt.Sprintf("%s (seed %d)", mod.file, seed),
				key:    key,
				m:      m,
				inputs: cpu.RandomInputs(m.Entry(), seed),
				about:  fmt.Sprintf("inputs cpu.RandomInputs(@%s, %d)", m.Entry().Name, seed),
				repro:  "go test ./internal/oracle -run TestOpPrograms  # " + mod.file,
			})
		}
	}
	for op := range seededOps {
		if !found[op] {
			t.Errorf("no golden program holds %s", op)
		}
	}
	checks = append(checks, edgeChecks(t)...)
	failed := runAll(t, h, checks)
	t.Logf("%d checks run, %d failed", len(checks), failed)
}

// holds reports whether m has an op of seededOps, recording which in found.
func holds(m *ir.Module, found map[ir.Op]bool) bool {
	any := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) {
			if seededOps[in.Op] {
				found[in.Op], any = true, true
			}
		})
	}
	return any
}

// edgeChecks run the bit ops on the values random inputs rarely hold:
// shift amounts at and past the bit width and negative ones, the dtypes'
// extremes, unsigned arithmetic shifts; round_afz on halves.
func edgeChecks(t *testing.T) []*check {
	var checks []*check
	for _, d := range []string{"i8", "u8", "i16", "i32", "u32", "i64"} {
		dt, _ := ir.ParseDType(d)
		lo, hi := dt.IntRange()
		w := int64(dt.Bits())
		xs := []int64{lo, lo + 1, -1, 0, 1, 7, w - 1, w, w + 1, 2 * w, hi}
		var as, bs []int64
		for _, a := range xs {
			for _, b := range xs {
				as, bs = append(as, a), append(bs, b)
			}
		}
		n := len(as)
		src := fmt.Sprintf("func @f(%%a: %[1]s[%[2]d], %%b: %[1]s[%[2]d]) -> (%[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d]) {\n"+
			"  %%l = shift_left %%a, %%b : %[1]s[%[2]d]\n  %%r = shift_right_logical %%a, %%b : %[1]s[%[2]d]\n"+
			"  %%s = shift_right_arithmetic %%a, %%b : %[1]s[%[2]d]\n  %%p = popcnt %%a : %[1]s[%[2]d]\n"+
			"  %%c = clz %%a : %[1]s[%[2]d]\n  return %%l, %%r, %%s, %%p, %%c\n}\n", d, n)
		m, err := tir.Parse("bits_"+d+".tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		ps := m.Entry().Params
		checks = append(checks, &check{name: "bit ops on " + d + " extremes", key: "bits_" + d, m: m,
			inputs: []*backend.Buffer{backend.FromInts(ps[0].Type, as...), backend.FromInts(ps[1].Type, bs...)},
			about:  "every pair of extremes and amounts around the bit width", repro: "go test ./internal/oracle -run TestOpPrograms"})
	}
	halves := []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.4, math.Copysign(0, -1), math.Inf(-1), math.NaN(), 8388609}
	for _, d := range []string{"f32", "bf16", "f16", "f64"} {
		src := fmt.Sprintf("func @f(%%x: %[1]s[%[2]d]) -> %[1]s[%[2]d] {\n  %%r = round_afz %%x : %[1]s[%[2]d]\n  return %%r\n}\n", d, len(halves))
		m, err := tir.Parse("round_"+d+".tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, &check{name: "round_afz on " + d + " halves", key: "round_afz_" + d, m: m,
			inputs: []*backend.Buffer{backend.FromFloats(m.Entry().Params[0].Type, halves...)},
			about:  "halves, signed zero, infinity, NaN", repro: "go test ./internal/oracle -run TestOpPrograms"})
	}
	return append(checks, precisionChecks(t)...)
}

// precisionChecks run reduce_precision on every float dtype, to formats
// narrower and wider than the dtype's, on values that round up into the next
// exponent or to infinity, halfway cases, subnormals, NaN and infinities.
func precisionChecks(t *testing.T) []*check {
	vals := []float64{1, 1.5, 2.5, 1.75, 65505, 65520, 65536, 3.4e38, 1e-5, 6e-8, 1e-30, 1e-320,
		math.Copysign(0, -1), -1.3, math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(math.NaN(), -1), 0.1, -7e4}
	var checks []*check
	for _, d := range []string{"f32", "bf16", "f16", "f64"} {
		src := fmt.Sprintf("func @f(%%x: %[1]s[%[2]d]) -> (%[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d]) {\n"+
			"  %%a = reduce_precision %%x {exponent_bits=5, mantissa_bits=10} : %[1]s[%[2]d]\n"+
			"  %%b = reduce_precision %%x {exponent_bits=5, mantissa_bits=0} : %[1]s[%[2]d]\n"+
			"  %%c = reduce_precision %%x {exponent_bits=8, mantissa_bits=7} : %[1]s[%[2]d]\n"+
			"  %%e = reduce_precision %%x {exponent_bits=2, mantissa_bits=1} : %[1]s[%[2]d]\n"+
			"  %%g = reduce_precision %%x {exponent_bits=11, mantissa_bits=52} : %[1]s[%[2]d]\n"+
			"  return %%a, %%b, %%c, %%e, %%g\n}\n", d, len(vals))
		m, err := tir.Parse("precision_"+d+".tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, &check{name: "reduce_precision on " + d, key: "reduce_precision_" + d, m: m,
			inputs: []*backend.Buffer{backend.FromFloats(m.Entry().Params[0].Type, vals...)},
			about:  "carries into the exponent, overflow, subnormals, NaN, infinities", repro: "go test ./internal/oracle -run TestOpPrograms"})
	}
	return checks
}
