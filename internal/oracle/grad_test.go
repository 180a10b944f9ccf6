package oracle

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/gradcheck"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

var (
	flagGradN     = flag.Int("grad.n", 20, "how many random programs TestGradRandomPrograms differentiates")
	flagGradSeed  = flag.Int64("grad.seed", 0, "the first seed of TestGradRandomPrograms")
	flagGradPicks = flag.Int("grad.picks", 4, "input elements checked per program (at most)")
	// Each program costs XLA two compiles; all 159 f32 golden programs take minutes.
	flagGradGolden = flag.Int("grad.golden", 40, "how many golden and example programs TestGradPrograms differentiates, spread evenly over the corpus; 0: all")
)

// maxGradElements bounds a parameter's size: the finite differences run the program
// 4·picks times, in f64.
const maxGradElements = 4096

// gradCase is one program whose VJP (as tpucc grad writes it, compiled for the cpu
// target, f32) and f64 finite differences both run on XLA.
type gradCase struct {
	name  string
	check *gradcheck.Check
	vjp   string // StableHLO
	fd    string
}

// newGradCase prepares m, or says why it is not a gradient check: no float parameter
// or result, a dtype other than f32, a symbolic shape, or a fusion (autodiff runs
// before fuse).
func newGradCase(name string, m *ir.Module, seed int64) (*gradCase, string, error) {
	return newGradCaseAt(name, m, cpu.RandomInputs(m.Entry(), seed), seed)
}

// newGradCaseAt is newGradCase at the given inputs.
func newGradCaseAt(name string, m *ir.Module, inputs []*backend.Buffer, seed int64) (*gradCase, string, error) {
	f := m.Entry()
	if why := notDifferentiable(m, f); why != "" {
		return nil, why, nil
	}
	c, err := gradcheck.New(m, inputs, uint64(seed), *flagGradPicks)
	if err != nil && bitcastWidths(err) {
		// An f32 bitcast to u32 (progen seeds 5037, 5089): the f64 program
		// for the finite differences does not exist.
		return nil, bitcastReason, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("autodiff: %v", err)
	}
	// Compiled from its text, as tpucc run would: the passes rewrite the module they get.
	vjp, err := tir.Parse(name+" vjp.tir", []byte(ir.Print(c.VJP)))
	if err != nil {
		return nil, "", fmt.Errorf("the VJP does not parse back: %v", err)
	}
	exe, _, err := engine.Compile(vjp, engine.Config{Target: "cpu"})
	if err != nil {
		return nil, "", fmt.Errorf("engine.Compile of the VJP: %v\n%s", err, ir.Print(c.VJP))
	}
	g := &gradCase{name: name, check: c}
	if g.vjp, err = stablehlo.Lower(exe.Module, stablehlo.Options{Entry: exe.Entry.Name}); err != nil {
		return nil, "", fmt.Errorf("lowering the VJP: %v", err)
	}
	if g.fd, err = stablehlo.Lower(c.FD, stablehlo.Options{Entry: c.FD.Funcs[0].Name}); err != nil {
		return nil, "", fmt.Errorf("lowering the finite differences: %v", err)
	}
	return g, "", nil
}

func notDifferentiable(m *ir.Module, f *ir.Func) string {
	floatParam, floatResult := false, false
	for _, p := range f.Params {
		floatParam = floatParam || p.Type.DType.IsFloat()
		if !p.Type.IsStatic() {
			return "symbolic shapes"
		}
		if n, _ := p.Type.NumElements(); n > maxGradElements {
			return "inputs too large for a light test"
		}
	}
	for _, r := range f.Results {
		floatResult = floatResult || r.DType.IsFloat()
	}
	if !floatParam || !floatResult {
		return "no float parameter or result"
	}
	elements := int64(0)
	for _, p := range f.Params {
		if n, _ := p.Type.NumElements(); p.Type.DType.IsFloat() {
			elements += n
		}
	}
	if elements == 0 {
		return "no float input element"
	}
	why := ""
	// A copy into a layout is differentiated (as the identity, on logical types);
	// layouts elsewhere mean the program was dumped after assign-layout.
	look := func(vs []*ir.Value, copied bool) {
		for _, v := range vs {
			if v.Type.DType.IsFloat() && v.Type.DType != ir.F32 {
				why = "a float type other than f32"
			}
			if v.Type.Layout != nil && !copied {
				why = "layouts (autodiff runs before assign-layout)"
			}
		}
	}
	for _, g := range m.Funcs {
		look(g.Params, false)
		g.Body.Walk(func(in *ir.Instr) {
			if in.Op == ir.OpFusion {
				why = "fused (autodiff runs before fuse)"
			}
			if _, static := ir.TripCount(in); in.Op == ir.OpWhile && !static && carriesFloat(in) {
				why = "a while whose trip count depends on the data (refused, as JAX's while_loop)"
			} else if in.Op != ir.OpWhile && in.Op != ir.OpCase && in.Op != ir.OpFusion && in.Op != ir.OpCall &&
				in.Op != ir.OpReturn && autodiff.Refused(in) != "" {
				// max pooling's gradient (second order), a window product,
				// a dilated or non-identity window maximum (docs/TRAINING.md);
				// calls are inlined and return is the transform's own
				why = "an instruction autodiff refuses"
			}
			look(in.Results, in.Op == ir.OpCopy)
		})
	}
	return why
}

// runGradCases runs every case's VJP and finite differences in one harness process
// and reports each disagreement.
func runGradCases(t *testing.T, cases []*gradCase) (picks, rough int) {
	h := harness(t)
	var xc []xlacheck.Case
	for _, g := range cases {
		xc = append(xc, xlaCase(g.name+" vjp", g.vjp, g.check.VJPArgs), xlaCase(g.name+" fd", g.fd, g.check.FDArgs))
	}
	results := runCases(t, h, xc)
	for i, g := range cases {
		rv, rf := results[2*i], results[2*i+1]
		if !rv.OK || !rf.OK {
			t.Errorf("%s: XLA refused a module: vjp %s %s; fd %s %s", g.name, rv.Stage, rv.Error, rf.Stage, rf.Error)
			continue
		}
		vjp, err := buffersOf(rv.Outputs)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := buffersOf(rf.Outputs)
		if err != nil {
			t.Fatal(err)
		}
		msgs, r, coarse := g.check.Compare(vjp, fd[0])
		picks += len(g.check.Picks)
		rough += r
		if coarse > 0 {
			t.Logf("%s: %d of %d picks not compared: %s (Σ|ct·r| = %.4g)", g.name, coarse, len(g.check.Picks), gradcheck.UnresolvedReason, g.check.Magnitude(fd[0]))
		}
		if len(msgs) > 0 {
			t.Errorf("%s: %d of %d gradient elements disagree with the f64 finite differences:\n  %s\nprogram:\n%s\nVJP:\n%s",
				g.name, len(msgs), len(g.check.Picks), strings.Join(msgs, "\n  "), ir.Print(g.check.Module), ir.Print(g.check.VJP))
		}
	}
	return picks, rough
}

func xlaCase(id, hlo string, args []*backend.Buffer) xlacheck.Case {
	c := xlacheck.Case{ID: id, Module: hlo}
	for _, a := range args {
		c.Inputs = append(c.Inputs, npyOf(a))
	}
	return c
}

func buffersOf(as []*npy.Array) ([]*backend.Buffer, error) {
	out := make([]*backend.Buffer, len(as))
	for i, a := range as {
		b, err := bufferOf(a)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// TestGradPrograms differentiates the attention, cross-entropy and MoE programs of
// testdata/grad and -grad.golden programs of the golden corpus and examples/ (those
// that are f32, unfused and small: the others are counted in the log).
func TestGradPrograms(t *testing.T) {
	root := repoRoot(t)
	var mods []module
	files, _ := filepath.Glob(filepath.Join("testdata", "grad", "*.tir"))
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, module{file: f, src: string(src), mustParse: true})
	}
	own := len(mods)
	mods = append(mods, goldenModules(t, root)...)
	var cases, golden []*gradCase
	skipped := map[string]int{}
	for i, md := range mods {
		if md.expectsError {
			continue
		}
		m, err := tir.Parse(md.file, []byte(md.src))
		if err != nil {
			if md.mustParse {
				t.Errorf("%s: %v", md.file, err)
			}
			continue
		}
		if hasComplex(m) {
			skipped[complexReason]++
			continue
		}
		// What TestGoldenModules cannot run, XLA cannot run differentiated
		// either (op_narrow_float's f6 values crashed XLA:CPU's compile).
		if why := unrunnable(m, m.Entry()); i >= own && why != "" {
			skipped[why]++
			continue
		}
		// Programs in bf16, f16 or f64 are differentiated in f32.
		if m, err = gradcheck.Retype(m, ir.F32); err != nil && bitcastWidths(err) {
			skipped[bitcastReason]++
			continue
		} else if err != nil {
			t.Errorf("%s in f32: %v", md.file, err)
			continue
		}
		g, why, err := newGradCase(md.file, m, goldenSeed)
		if err != nil {
			t.Errorf("%s: %v", md.file, err)
			continue
		}
		switch {
		case g == nil && i < own:
			t.Errorf("%s is not differentiated: %s", md.file, why)
		case g == nil:
			skipped[why]++
		case i < own:
			cases = append(cases, g)
		default:
			golden = append(golden, g)
		}
	}
	n := len(golden)
	cases = append(cases, spread(golden, *flagGradGolden)...)
	picks, rough := runGradCases(t, cases)
	t.Logf("%d programs differentiated (%d of the %d differentiable golden ones), %d input elements checked, %d of them skipped (not smooth within the step, or NaN through a non-finite result); not differentiated: %v",
		len(cases), len(cases)-own, n, picks, rough, skipped)
}

// spread keeps n of cases, evenly spaced in their order (all of them for n <= 0).
func spread(cases []*gradCase, n int) []*gradCase {
	if n <= 0 || n >= len(cases) {
		return cases
	}
	out := make([]*gradCase, n)
	for i := range out {
		out[i] = cases[i*len(cases)/n]
	}
	return out
}

// TestGradRandomPrograms differentiates -grad.n programs of internal/progen from
// -grad.seed on.
func TestGradRandomPrograms(t *testing.T) {
	var cases []*gradCase
	skipped := map[string]int{}
	for seed := *flagGradSeed; seed < *flagGradSeed+int64(*flagGradN); seed++ {
		p := progen.New(seed, genConfig())
		// Programs in bf16, f16 or f64 are differentiated in f32.
		m, err := gradcheck.Retype(p.Module, ir.F32)
		if err != nil && strings.Contains(err.Error(), "is out of range for f32") {
			skipped["f64 constants beyond f32's range"]++
			continue
		}
		if err != nil && bitcastWidths(err) {
			skipped[bitcastReason]++
			continue
		}
		if err != nil {
			t.Errorf("progen seed %d in f32: %v", seed, err)
			continue
		}
		g, why, err := newGradCase(fmt.Sprintf("progen seed %d", seed), m, seed)
		if err != nil {
			t.Errorf("progen seed %d: %v\n%s", seed, err, ir.Print(p.Module))
			continue
		}
		if g == nil {
			skipped[why]++
			continue
		}
		cases = append(cases, g)
	}
	picks, rough := runGradCases(t, cases)
	t.Logf("%d programs differentiated, %d input elements checked, %d of them skipped (not smooth within the step, or NaN through a non-finite result); not differentiated: %v",
		len(cases), picks, rough, skipped)
}

// bitcastReason: a bitcast_convert between a float and a type of another
// width fixes the float's width, so the program has no f32 (or f64) form.
const bitcastReason = "bitcast_convert of a float of another width"

func bitcastWidths(err error) bool { return strings.Contains(err.Error(), "error: bitcast_convert ") }

// complexReason: autodiff refuses complex values, and retyping a program's
// floats to f32 would leave its c128 parts f64.
const complexReason = "complex values (autodiff refuses them)"

// hasComplex reports whether any value of m is complex.
func hasComplex(m *ir.Module) bool {
	found := false
	look := func(vs []*ir.Value) {
		for _, v := range vs {
			found = found || v.Type.DType.IsComplex()
		}
	}
	for _, f := range m.Funcs {
		look(f.Params)
		f.Body.Walk(func(in *ir.Instr) { look(in.Results) })
	}
	return found
}
