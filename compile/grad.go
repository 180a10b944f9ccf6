package compile

import (
	"fmt"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
)

// gradSpec makes a Compiled compute gradients of its function instead of its results.
type gradSpec struct {
	argnums []int // the parameters differentiated, as positions in f's parameter list
	value   bool  // the loss comes first
}

// Grad compiles the gradient of f, which returns one float scalar (the loss, optionally
// followed by an error), with respect to its parameters argnums (default: the first).
// Call returns one tensor per argnum, of that parameter's type and shape, as jax.grad
// does. Like Func, the program is traced and compiled once per input signature and
// cached; the trace is differentiated by package autodiff before the passes run.
func Grad(f any, argnums ...int) (*Compiled, error) { return newGrad(f, false, argnums) }

// ValueAndGrad is Grad whose Call returns the loss first, then the gradients, as
// jax.value_and_grad does; both come from one compiled program.
func ValueAndGrad(f any, argnums ...int) (*Compiled, error) { return newGrad(f, true, argnums) }

func newGrad(f any, value bool, argnums []int) (*Compiled, error) {
	if len(argnums) == 0 {
		argnums = []int{0}
	}
	suffix := "_grad"
	if value {
		suffix = "_value_and_grad"
	}
	spec := &gradSpec{argnums: argnums, value: value}
	c, err := newCompiled(f, spec, []Option{nameSuffix(suffix)})
	if err != nil {
		return nil, err
	}
	if c.nTensor != 1 {
		return nil, fmt.Errorf("compile: %s returns %d tensors; a gradient needs exactly one, the scalar loss", c.ft, c.nTensor)
	}
	seen := map[int]bool{}
	for _, a := range argnums {
		if a < 0 || a >= len(c.static) || c.static[a] {
			return nil, fmt.Errorf("compile: argnum %d: parameter %d of %s is not a tensor", a, a, c.ft)
		}
		if seen[a] {
			return nil, fmt.Errorf("compile: argnum %d is given twice", a)
		}
		seen[a] = true
	}
	return c, nil
}

// nameSuffix keeps a gradient's cache identity and logs apart from f's own.
func nameSuffix(s string) Option {
	return func(o *engine.Options) { o.Name += s }
}

// outputs is the number of tensors Call returns.
func (c *Compiled) outputs() int {
	if c.grad == nil {
		return c.nTensor
	}
	n := len(c.grad.argnums)
	if c.grad.value {
		n++
	}
	return n
}

// differentiate turns the traced module of f into the gradient program: the VJP of its
// entry with the loss's cotangent 1, returning the loss (for ValueAndGrad) and the
// gradients asked for.
func (g *gradSpec) differentiate(m *ir.Module, static []bool) (*ir.Module, error) {
	f := m.Entry()
	loss := f.Results[0]
	if !loss.DType.IsFloat() || loss.Rank() != 0 {
		return nil, fmt.Errorf("%s: the loss is %s; a gradient needs a float scalar", f.Name, loss)
	}
	tensorIndex := map[int]int{} // f's parameter position -> the trace's parameter
	k := 0
	for i, s := range static {
		if !s {
			tensorIndex[i] = k
			k++
		}
	}
	gradIndex := map[int]int{} // trace parameter -> the VJP's gradient result
	n := 0
	for i, p := range f.Params {
		if p.Type.DType.IsFloat() {
			gradIndex[i] = n
			n++
		}
	}
	vjpMod, err := autodiff.ModuleOf(f)
	if err != nil {
		return nil, err
	}
	v := vjpMod.Funcs[0]
	ret := v.Body.Terminator()
	rets := []*ir.Value{}
	results := []ir.Type{}
	if g.value {
		rets, results = append(rets, ret.Args[0]), append(results, v.Results[0])
	}
	for _, a := range g.argnums {
		p := tensorIndex[a]
		j, ok := gradIndex[p]
		if !ok {
			return nil, fmt.Errorf("%s: argnum %d is %s: integer and i1 tensors have no gradient", f.Name, a, f.Params[p].Type)
		}
		rets, results = append(rets, ret.Args[1+j]), append(results, v.Results[1+j])
	}
	// The cotangent of the loss becomes the constant 1.
	ct := v.Params[len(f.Params)]
	b := ir.NewBuilder(v)
	b.SetInsertBefore(v.Body.Instrs[0])
	one := b.Const(ct.Type, 1)
	v.ReplaceUses(ct, one)
	v.Params = v.Params[:len(f.Params)]
	v.Body.Params = v.Params
	ret.Args, v.Results = rets, results
	v.Name = f.Name
	if err := ir.Verify(vjpMod); err != nil {
		panic(fmt.Sprintf("compile: the gradient program does not verify: %v", err))
	}
	return vjpMod, nil
}
