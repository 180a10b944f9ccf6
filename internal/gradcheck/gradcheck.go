// Package gradcheck checks gradients against central finite differences. It builds
// one f64 program that evaluates the loss Σ ct·f(x) at every perturbed input the check
// needs, so that an executor (the reference executor, or XLA through tools/xlacheck)
// computes all the differences in one run.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// FDEntry names the finite-difference program's entry (with _ appended while the
// program has a function so named).
const FDEntry = "fd"

// Step is the finite-difference step, relative to max(1, |x|).
const Step = 1e-5

// Tol is the allowed difference between a gradient and the finite difference: Atol
// plus Rtol times the difference's magnitude.
const Tol = 1e-3

// Check is one program's gradient check.
type Check struct {
	Module *ir.Module // the program, as given
	VJP    *ir.Module // autodiff.Module(Module)
	FD     *ir.Module // the f64 finite-difference program, its entry FD.Funcs[0]

	Inputs  []*backend.Buffer // the program's inputs
	VJPArgs []*backend.Buffer // Inputs then the cotangents
	FDArgs  []*backend.Buffer // Inputs in f64
	Picks   []Pick            // the elements checked, in the order @fd returns them

	// nonFinite: some result is NaN or infinite at Inputs. Its cotangent is 0, but
	// the chain rule still multiplies 0 by the NaN derivatives inside (as JAX does).
	nonFinite bool
}

// Pick is one input element whose gradient is checked: parameter Param, flat Index,
// Grad the index of that parameter's gradient among the VJP's gradient results.
type Pick struct {
	Param, Index, Grad int
	H                  float64
}

// New prepares the check of m's entry at inputs, with cotangents drawn from seed, and
// at most maxPicks input elements (all of them when they are fewer).
func New(m *ir.Module, inputs []*backend.Buffer, seed uint64, maxPicks int) (*Check, error) {
	vjp, err := autodiff.Module(m)
	if err != nil {
		return nil, err
	}
	c := &Check{Module: m, VJP: vjp, Inputs: inputs}
	f := m.Entry()
	rng := rand.New(rand.NewPCG(seed, 0x6772616463686b))
	c.VJPArgs = append([]*backend.Buffer{}, inputs...)
	// A result that is not finite at these inputs takes the cotangent 0 (and the
	// finite differences leave it out), so that the rest of the program is checked.
	fwd, err := cpu.Run(m, f, inputs)
	if err != nil {
		return nil, fmt.Errorf("gradcheck: running the program: %v", err)
	}
	var cts []*backend.Buffer
	for r, t := range f.Results {
		if !t.DType.IsFloat() {
			continue
		}
		ct := backend.New(t)
		for i := range ct.Len() {
			v := float64(rng.IntN(33)-16) / 8 // exact in every float dtype
			if x := fwd[r].Float64At(i); math.IsNaN(x) || math.IsInf(x, 0) {
				v = 0
				c.nonFinite = true
			}
			ct.SetFloat64(i, v)
		}
		c.VJPArgs = append(c.VJPArgs, ct)
		cts = append(cts, ct)
	}
	for _, x := range inputs {
		c.FDArgs = append(c.FDArgs, toF64(x))
	}
	c.Picks = picks(f, inputs, rng, maxPicks)
	if len(c.Picks) == 0 {
		return nil, fmt.Errorf("gradcheck: @%s has no float input element to check", f.Name)
	}
	if c.FD, err = fdModule(m, cts, c.Picks); err != nil {
		return nil, err
	}
	return c, nil
}

func toF64(x *backend.Buffer) *backend.Buffer {
	t := x.Type()
	if !t.DType.IsFloat() || t.DType == ir.F64 {
		return x
	}
	y := backend.New(t.WithDType(ir.F64))
	for i := range x.Len() {
		y.SetFloat64(i, x.Float64At(i))
	}
	return y
}

func picks(f *ir.Func, inputs []*backend.Buffer, rng *rand.Rand, max int) []Pick {
	var all []Pick
	grad := 0
	for i, p := range f.Params {
		if !p.Type.DType.IsFloat() {
			continue
		}
		for k := range inputs[i].Len() {
			h := Step * math.Max(1, math.Abs(inputs[i].Float64At(k)))
			all = append(all, Pick{Param: i, Index: k, Grad: grad, H: h})
		}
		grad++
	}
	if len(all) <= max {
		return all
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = all[:max]
	// Keep the order stable for readable reports.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && (all[j].Param < all[j-1].Param || all[j].Param == all[j-1].Param && all[j].Index < all[j-1].Index); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	return all
}

var (
	floatType = regexp.MustCompile(`\b(f64|f32|f16|bf16)\[`)
	// algorithm is a dot_general's algorithm: its operands' and its
	// accumulation's types, then the rest.
	algorithm = regexp.MustCompile(`\balgorithm=\[(f64|f32|f16|bf16),(f64|f32|f16|bf16),(f64|f32|f16|bf16),`)
)

// Retype is m with every float type made dt: the same program, computed in dt.
// A dot_general's algorithm names its operands' types, so it becomes dt's
// too (operands as they are, accumulated in dt).
func Retype(m *ir.Module, dt ir.DType) (*ir.Module, error) {
	text := floatType.ReplaceAllString(ir.Print(m), dt.String()+"[")
	text = algorithm.ReplaceAllString(text, "algorithm=["+dt.String()+","+dt.String()+","+dt.String()+",")
	return tir.Parse(m.File, []byte(text))
}

// steps are the perturbations of each pick, in units of its H: two central differences,
// whose disagreement says the program is not smooth there (a kink or a jump within h).
var steps = []float64{1, -1, 0.5, -0.5}

// fdModule is the f64 program with an entry @fd returning, for each pick, the loss at
// x+s·h for each of steps, then the magnitude Σ|ct·r| of the loss's terms at x:
// f64[4·len(picks)+1].
func fdModule(m *ir.Module, cts []*backend.Buffer, ps []Pick) (*ir.Module, error) {
	m64, err := Retype(m, ir.F64)
	if err != nil {
		return nil, fmt.Errorf("gradcheck: the f64 program does not parse: %v", err)
	}
	target := m64.Entry()
	var types []ir.Type
	for _, p := range target.Params {
		types = append(types, p.Type)
	}
	n := int64(len(steps)*len(ps) + 1)
	name := FDEntry
	for m64.Func(name) != nil {
		name += "_"
	}
	fd := m64.NewFunc(name, nil, types, []ir.Type{ir.Tensor(ir.F64, n)}, ir.Pos{})
	m64.Funcs = append([]*ir.Func{fd}, m64.Funcs[:len(m64.Funcs)-1]...)
	b := ir.NewBuilder(fd)
	var losses []*ir.Value
	for _, p := range ps {
		for _, sign := range steps {
			args := append([]*ir.Value{}, fd.Params...)
			x := fd.Params[p.Param]
			args[p.Param] = b.Op1(ir.OpAdd, nil, x, delta(b, x.Type, p.Index, sign*p.H))
			in, err := b.Emit(ir.OpCall, &ir.CallAttr{Callee: target.Name}, target.Results, args...)
			if err != nil {
				return nil, err
			}
			losses = append(losses, loss(b, in.Results, cts, false))
		}
	}
	in, err := b.Emit(ir.OpCall, &ir.CallAttr{Callee: target.Name}, target.Results, fd.Params...)
	if err != nil {
		return nil, err
	}
	losses = append(losses, loss(b, in.Results, cts, true))
	b.Return(b.Op1(ir.OpConcat, &ir.AxisAttr{Axis: 0}, losses...))
	return m64, ir.Verify(m64)
}

// delta is h at flat index k and 0 elsewhere, built from an iota rather than a literal
// so that the program stays small for large inputs.
func delta(b *ir.Builder, t ir.Type, k int, h float64) *ir.Value {
	n, _ := t.NumElements()
	it := ir.Tensor(ir.I32, n)
	pos := b.Typed(ir.OpIota, &ir.AxisAttr{Axis: 0}, &it)
	at := b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, pos, b.Const(it, float64(k)))
	ft := ir.Tensor(t.DType, n)
	d := b.Op1(ir.OpSelect, nil, at, b.Const(ft, h), b.Const(ft, 0))
	return b.Typed(ir.OpReshape, nil, &t, d)
}

// loss is Σ_i Σ ct_i·r_i over the float results, as an f64[1]; with magnitude,
// Σ_i Σ |ct_i·r_i|.
func loss(b *ir.Builder, rs []*ir.Value, cts []*backend.Buffer, magnitude bool) *ir.Value {
	one := ir.Tensor(ir.F64, 1)
	total := b.Const(one, 0)
	k := 0
	for _, r := range rs {
		if !r.Type.DType.IsFloat() {
			continue
		}
		ct := cts[k]
		k++
		vals := make([]float64, ct.Len())
		for i := range vals {
			vals[i] = ct.Float64At(i)
		}
		// r-r is 0 exactly where r is finite: the elements left out get 0, not 0·NaN.
		finite := b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, b.Op1(ir.OpSub, nil, r, r), b.Const(r.Type, 0))
		prod := b.Op1(ir.OpSelect, nil, finite, b.Op1(ir.OpMul, nil, r, b.Const(r.Type, vals...)), b.Const(r.Type, 0))
		if magnitude {
			prod = b.Op1(ir.OpAbs, nil, prod)
		}
		s := b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: allAxes(r.Type.Rank())}, prod)
		total = b.Op1(ir.OpAdd, nil, total, b.Typed(ir.OpReshape, nil, &one, s))
	}
	return total
}

func allAxes(n int) []int64 {
	a := make([]int64, n)
	for i := range a {
		a[i] = int64(i)
	}
	return a
}

// Compare checks the VJP's results (the program's results, then the gradients)
// against @fd's output and describes each disagreement. Picks where the program is
// not smooth within h (the two differences disagree, or the loss is not finite), and
// NaN gradients of a program with a non-finite result, are not compared: rough counts
// them. Picks whose step the f64 loss cannot resolve (Unresolved) are not compared
// either: coarse counts them.
func (c *Check) Compare(vjpOut []*backend.Buffer, fd *backend.Buffer) (msgs []string, rough, coarse int) {
	nres := len(c.Module.Entry().Results)
	grads := vjpOut[nres:]
	magnitude := c.Magnitude(fd)
	for j, p := range c.Picks {
		k := len(steps) * j
		wide := (fd.Float64At(k) - fd.Float64At(k+1)) / (2 * p.H)
		want := (fd.Float64At(k+2) - fd.Float64At(k+3)) / p.H
		if !math.IsNaN(wide) && !math.IsInf(wide, 0) && Unresolved(magnitude, p.H, want) {
			coarse++
			continue
		}
		if math.IsNaN(wide) || math.IsInf(wide, 0) || !(math.Abs(wide-want) <= Tol/4*(1+math.Abs(want))) {
			rough++
			continue
		}
		got := grads[p.Grad].Float64At(p.Index)
		if c.nonFinite && (math.IsNaN(got) || math.IsInf(got, 0)) {
			rough++
			continue
		}
		if !(math.Abs(got-want) <= Tol+Tol*math.Abs(want)) {
			name := c.Module.Entry().Params[p.Param].Name
			msgs = append(msgs, fmt.Sprintf("d/d%%%s[%d]: gradient %.7g, finite difference %.7g", name, p.Index, got, want))
		}
	}
	return msgs, rough, coarse
}

// Magnitude is Σ|ct·r| over the finite results at the inputs, from @fd's output.
func (c *Check) Magnitude(fd *backend.Buffer) float64 {
	return fd.Float64At(len(steps) * len(c.Picks))
}

// UnresolvedReason says why Compare leaves out the picks it counts as coarse.
const UnresolvedReason = "the f64 loss cannot resolve the step: one rounding of its terms' magnitude Σ|ct·r|, divided by h, exceeds the roughness bound Tol/4·(1+|fd|)"

// Unresolved reports whether a loss whose terms have magnitude Σ|ct·r| cannot
// resolve a step h for a finite difference fd. The loss is a sum of terms rounded
// in f64, so it is known only to about ε·Σ|ct·r|; divided by h, that is the finite
// difference's own error. Where it exceeds the bound by which the two differences
// may disagree, an element whose result does not move the loss in f64 (a result of
// 1e38 swallows the perturbation of another) reads 0. Which results depend on the
// pick is not known here, so every such pick is left out, rather than compared
// against noise.
func Unresolved(magnitude, h, fd float64) bool {
	const eps = 0x1p-52
	return !(eps*magnitude/h <= Tol/4*(1+math.Abs(fd)))
}
