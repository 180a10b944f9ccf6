package compile

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// program is a Compiled as the runtime sees it.
type program struct{ c *Compiled }

// tracePanic is a panic of the user's function other than a *tensor.Error
// (a nil dereference, an index out of range), caught so that the runtime
// never unwinds with its lock held. Func and Call panic again with value.
type tracePanic struct {
	name  string
	value any
	stack []byte
}

func (p *tracePanic) Error() string {
	return fmt.Sprintf("%s panicked: %v", p.name, p.value)
}

// call runs f with args' static values and ts in its tensor parameters,
// turning panics into errors and a non-nil error result into the error, and
// returns its tensor results.
func (c *Compiled) call(args []engine.Arg, ts []*tensor.Tensor) (res []*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*tensor.Error); ok {
				err = e
				return
			}
			err = &tracePanic{name: c.name, value: r, stack: debug.Stack()}
		}
	}()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if a.IsStatic() {
			in[i] = reflect.ValueOf(a.Static)
		} else {
			in[i], ts = reflect.ValueOf(ts[0]), ts[1:]
		}
	}
	out := c.fn.Call(in)
	if c.errOut {
		if e := out[c.nTensor]; !e.IsNil() {
			return nil, e.Interface().(error)
		}
	}
	res = make([]*tensor.Tensor, c.nTensor)
	for i := range res {
		res[i] = out[i].Interface().(*tensor.Tensor)
		if err := tensor.Usable(c.name, "result "+strconv.Itoa(i), res[i]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Trace runs f on traced tensors of the given types (tensor.Trace). Tensor
// parameter i is named arg<i>, as logs name it.
func (p program) Trace(args []engine.Arg) (*ir.Module, error) {
	var names []string
	var types []ir.Type
	for i, a := range args {
		if !a.IsStatic() {
			names = append(names, fmt.Sprintf("arg%d", i))
			types = append(types, a.Type)
		}
	}
	m, err := tensor.TraceOn(p.c.opts.Mesh, p.c.name, names, types, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return p.c.call(args, ts)
	})
	if err != nil || p.c.grad == nil {
		return m, err
	}
	return p.c.grad.differentiate(m, p.c.static)
}

// Eager runs f on concrete tensors (LimitEager).
func (p program) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	if p.c.grad != nil {
		return nil, fmt.Errorf("%s: a gradient is not computed eagerly: raise the recompile limit instead of LimitEager", p.c.name)
	}
	var bufs []*backend.Buffer
	for _, a := range args {
		if !a.IsStatic() {
			bufs = append(bufs, a.Tensor)
		}
	}
	return tensor.Eval(p.c.name, bufs, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return p.c.call(args, ts)
	})
}
