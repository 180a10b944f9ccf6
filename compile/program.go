package compile

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/runtime"
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

// invoke calls f on in, turning panics into errors and a non-nil error
// result into the error.
func (c *Compiled) invoke(in []reflect.Value) (out []reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*tensor.Error); ok {
				err = e
				return
			}
			err = &tracePanic{name: c.name, value: r, stack: debug.Stack()}
		}
	}()
	out = c.fn.Call(in)
	if c.errOut {
		if e := out[c.nTensor]; !e.IsNil() {
			return nil, e.Interface().(error)
		}
	}
	for i := range c.nTensor {
		if err := tensor.Usable(c.name, "result "+strconv.Itoa(i), out[i].Interface().(*tensor.Tensor)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Trace runs f on traced tensors of the given types. Tensor parameter i
// is named arg<i>, as logs name it.
func (p program) Trace(args []runtime.Arg) (m *ir.Module, err error) {
	c := p.c
	tr := trace.New(c.name)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if a.IsStatic() {
			in[i] = reflect.ValueOf(a.Static)
			continue
		}
		in[i] = reflect.ValueOf(tensor.Traced(tr.Param(fmt.Sprintf("arg%d", i), a.Type), tr))
	}
	out, err := c.invoke(in)
	if err != nil {
		return nil, err
	}
	defer tensor.Recover(&err)
	vals := make([]*ir.Value, c.nTensor)
	for i := range vals {
		vals[i] = out[i].Interface().(*tensor.Tensor).ValueIn(tr)
	}
	m, err = tr.Finish(vals...)
	if err != nil || c.grad == nil {
		return m, err
	}
	return c.grad.differentiate(m, c.static)
}

// Eager runs f on concrete tensors (LimitEager).
func (p program) Eager(args []runtime.Arg) ([]*backend.Buffer, error) {
	c := p.c
	if c.grad != nil {
		return nil, fmt.Errorf("%s: a gradient is not computed eagerly: raise the recompile limit instead of LimitEager", c.name)
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		if a.IsStatic() {
			in[i] = reflect.ValueOf(a.Static)
		} else {
			in[i] = reflect.ValueOf(tensor.FromBuffer(a.Tensor))
		}
	}
	out, err := c.invoke(in)
	if err != nil {
		return nil, err
	}
	res := make([]*backend.Buffer, c.nTensor)
	for i := range res {
		t := out[i].Interface().(*tensor.Tensor)
		if t.IsTraced() {
			return nil, fmt.Errorf("%s: result %d is a traced tensor of another trace", c.name, i)
		}
		res[i] = t.Buffer()
	}
	return res, nil
}
