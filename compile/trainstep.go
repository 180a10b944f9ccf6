package compile

import (
	"fmt"
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// Step is a compiled training step of a traced Go loss function (TrainStep)
// with the trained parameters and the optimizer's state it keeps between
// calls.
type Step struct {
	c     *Compiled
	opt   train.Optimizer
	rt    *engine.Function  // made by Init, once the number of trained parameters is known
	n     int               // the trained parameters: the loss's first n parameters
	state []*backend.Buffer // the parameters, then the optimizer's state (train.Step's order)
	steps int
}

// TrainStep compiles the training step of loss, a function returning one
// float scalar (optionally followed by an error) whose first parameters are
// the trained f32 tensors (Init says how many and gives their values) and
// whose other parameters are the batch, tensors or static values. Each Run
// computes the loss, its gradient and opt's update in one program
// (train.Step), traced and compiled once per batch signature and cached as
// Func's programs are; the parameters and the state are donated to it, so
// they are updated in place on a device.
func TrainStep(loss any, opt train.Optimizer, opts ...Option) (*Step, error) {
	c, err := newCompiled(loss, nil, append(slices.Clone(opts), nameSuffix("_train_step")))
	if err != nil {
		return nil, err
	}
	if c.nTensor != 1 {
		return nil, fmt.Errorf("compile: %s returns %d tensors; a training step needs exactly one, the scalar loss", c.ft, c.nTensor)
	}
	return &Step{c: c, opt: opt}, nil
}

// Init starts training from params, the values of the loss's first
// len(params) parameters (f32 tensors), with the optimizer's state zeros
// and the step count 0.
func (s *Step) Init(params ...*tensor.Tensor) error {
	n := len(params)
	if n == 0 || n > len(s.c.static) || slices.Contains(s.c.static[:n], true) {
		return fmt.Errorf("compile: %s: Init got %d parameters; want between 1 and the number of leading tensor parameters", s.c.name, n)
	}
	o := s.c.opts
	o.Donate = s.opt.Donate(n)
	rt, err := engine.NewFunction(stepProgram{s, n}, o)
	if err != nil {
		return fmt.Errorf("compile: %v", err)
	}
	var ws, st []*backend.Buffer
	for i, p := range params {
		if err := tensor.Usable(s.c.name, fmt.Sprintf("parameter %d", i), p); err != nil {
			return err
		}
		if p.IsTraced() || p.DType() != ir.F32 {
			return fmt.Errorf("compile: %s: parameter %d is %s; a trained parameter is a concrete f32 tensor", s.c.name, i, p.Type())
		}
		// A copy: the step consumes what it is given.
		w := backend.New(p.Type())
		copy(w.Bytes(), p.Buffer().Bytes())
		ws = append(ws, w)
		for range s.opt.StateNames() {
			st = append(st, backend.New(p.Type()))
		}
	}
	s.rt, s.n, s.state, s.steps = rt, n, append(ws, st...), 0
	return nil
}

// Run takes one step on the batch (the loss's parameters after the trained
// ones) and returns the loss before the update.
func (s *Step) Run(batch ...any) (*tensor.Tensor, error) {
	if s.rt == nil {
		return nil, fmt.Errorf("compile: %s: Run before Init", s.c.name)
	}
	// Checked and converted as the loss's own arguments.
	full, err := s.c.args(s.concrete(batch), false)
	if err != nil {
		return nil, err
	}
	args := make([]engine.Arg, 0, len(s.state)+1+len(batch))
	for _, b := range s.state {
		args = append(args, engine.TensorArg(b))
	}
	args = append(args, engine.TensorArg(tensor.FromSlice([]int32{int32(s.steps)}).Buffer()))
	args = append(args, full[s.n:]...)
	out, err := s.rt.Call(args)
	if err != nil {
		return nil, err
	}
	s.state, s.steps = out[1:], s.steps+1
	return tensor.FromBuffer(out[0]), nil
}

// concrete is the trained parameters' current values followed by batch.
func (s *Step) concrete(batch []any) []any {
	out := make([]any, 0, s.n+len(batch))
	for _, b := range s.state[:s.n] {
		out = append(out, tensor.FromBuffer(b))
	}
	return append(out, batch...)
}

// Params are the trained parameters' current values (copies on the host).
func (s *Step) Params() []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, b := range s.state[:s.n] {
		c := backend.New(b.Type())
		copy(c.Bytes(), b.Bytes())
		out = append(out, tensor.FromBuffer(c))
	}
	return out
}

// stepProgram is a Step as the runtime compiles it: its arguments are
// train.Step's, the parameters, the state, the step count and the batch.
type stepProgram struct {
	s *Step
	n int
}

func (p stepProgram) Trace(args []engine.Arg) (*ir.Module, error) {
	k := p.n * (1 + len(p.s.opt.StateNames()))
	lossArgs := append(slices.Clone(args[:p.n]), args[k+1:]...)
	m, err := program{p.s.c}.Trace(lossArgs)
	if err != nil {
		return nil, err
	}
	return train.Step(m, p.n, p.s.opt)
}

func (p stepProgram) Eager([]engine.Arg) ([]*backend.Buffer, error) {
	return nil, fmt.Errorf("%s: a training step is not computed eagerly: raise the recompile limit instead of LimitEager", p.s.c.name)
}

// Stats returns the cache's counters for the step (engine.Stats); zero
// before Init.
func (s *Step) Stats() engine.Stats {
	if s.rt == nil {
		return engine.Stats{}
	}
	return s.rt.Stats()
}
