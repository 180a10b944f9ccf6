package tensor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// Error is the panic value of every misuse of the package: a shape or dtype
// error, a wrong argument, a traced tensor read as data. It prints as
// FILE:LINE: OP: MSG, where FILE:LINE is the user's call site.
type Error struct {
	Pos   ir.Pos    // the user's call site (Col is 0: Go frames have no column)
	Op    string    // the operation as the user called it, in snake case: "add", "matmul", "sum"
	Msg   string    // what is wrong, with the operand types involved
	Types []ir.Type // the operand types, when the error is about them
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Msg
	if e.Pos.Known() {
		s = e.Pos.File + ":" + strconv.Itoa(e.Pos.Line) + ": " + s
	}
	return s
}

// Recover, deferred, turns a panic with a *Error into *err and lets every
// other panic continue:
//
//	func run() (err error) {
//		defer tensor.Recover(&err)
//		...
//	}
func Recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if e, ok := r.(*Error); ok {
		*err = e
		return
	}
	panic(r)
}

// fail panics with an Error positioned at the user's call site.
func fail(op string, types []ir.Type, format string, args ...any) {
	panic(&Error{Pos: trace.CallerPos(0), Op: op, Msg: fmt.Sprintf(format, args...), Types: types})
}

// failErr panics with err's message; a positioned ir diagnostic loses its
// position (it is the executor's or the tracer's, not the user's).
func failErr(op string, types []ir.Type, err error) {
	msg := err.Error()
	var ie *ir.Error
	if errors.As(err, &ie) {
		msg = ie.Msg
	}
	// "top_k: top_k k = 4 must be ..." reads better as "top_k: k = 4 must be ...".
	msg = strings.TrimPrefix(msg, op+" ")
	fail(op, types, "%s", msg)
}

// typesOf returns the operands' types for an Error.
func typesOf(ts ...*Tensor) []ir.Type {
	out := make([]ir.Type, len(ts))
	for i, t := range ts {
		out[i] = t.Type()
	}
	return out
}

// check makes sure every operand is a usable tensor: not nil, not the zero Tensor.
func check(op string, ts ...*Tensor) {
	for i, t := range ts {
		if t == nil || (t.c == nil && t.v == nil) {
			what := "nil"
			if t != nil {
				what = "the zero Tensor"
			}
			if len(ts) == 1 {
				fail(op, nil, "the tensor is %s", what)
			}
			fail(op, nil, "operand %d is %s", i, what)
		}
	}
}

// Usable returns nil when t holds a value, concrete or traced, and otherwise a
// *Error at the user's call site saying that what ("argument 1", "result 0")
// of op is nil or the zero Tensor. compile.Func checks the arguments and
// results of the function it wraps with it, so that the message names the
// user's function and call rather than a method of this package.
func Usable(op, what string, t *Tensor) error {
	switch {
	case t == nil:
		return &Error{Pos: trace.CallerPos(0), Op: op, Msg: what + " is a nil *tensor.Tensor"}
	case t.c == nil && t.v == nil:
		return &Error{Pos: trace.CallerPos(0), Op: op, Msg: what + " is the zero Tensor, which holds no value"}
	}
	return nil
}

// normAxis turns a possibly negative axis into one in [0, rank).
func normAxis(op string, t ir.Type, axis int) int64 {
	r := t.Rank()
	if axis < -r || axis >= r {
		fail(op, []ir.Type{t}, "axis %d is out of range for %s", axis, t)
	}
	if axis < 0 {
		axis += r
	}
	return int64(axis)
}

// normAxes normalises a list of axes and refuses repeats.
func normAxes(op string, t ir.Type, axes []int) []int64 {
	out := make([]int64, len(axes))
	seen := make([]bool, t.Rank())
	for i, a := range axes {
		out[i] = normAxis(op, t, a)
		if seen[out[i]] {
			fail(op, []ir.Type{t}, "axis %d is given twice for %s", a, t)
		}
		seen[out[i]] = true
	}
	return out
}
