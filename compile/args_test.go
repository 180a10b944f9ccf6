package compile_test

import (
	"errors"
	"runtime"
	"strconv"
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

func block(x, y *tensor.Tensor) *tensor.Tensor { return x.Add(y) }

func blockOrError(x, y *tensor.Tensor) (*tensor.Tensor, error) { return x.Add(y), nil }

// here is the line it is called from: a case calls it on the line of the call under test.
func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

// panicOf runs f and returns what it panicked with.
func panicOf(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestBadTensorArguments: a nil or zero tensor given to a compiled function is a
// *tensor.Error naming the caller's line, the function and the argument, as eager
// tensor errors are: panicked by Func's function, returned through its error result or
// by Call and Lower.
func TestBadTensorArguments(t *testing.T) {
	a := tensor.Zeros(ir.F32, 2)
	zero := &tensor.Tensor{}
	f := compile.Func(block, memory())
	fe := compile.Func(blockOrError, memory())
	c, err := compile.New(block, memory())
	if err != nil {
		t.Fatal(err)
	}
	nilArg := ": block: argument 1 is a nil *tensor.Tensor"
	zeroArg := ": block: argument 0 is the zero Tensor, which holds no value"
	var line int
	check := func(how string, got any, msg string) {
		t.Helper()
		want := "args_test.go:" + strconv.Itoa(line) + msg
		e, ok := got.(*tensor.Error)
		if !ok || e.Error() != want {
			t.Errorf("%s: got %T %v, want *tensor.Error %s", how, got, got, want)
		}
	}
	check("Func, nil", panicOf(func() { line = here(); f(a, nil) }), nilArg)
	check("Func, zero", panicOf(func() { line = here(); f(zero, a) }), zeroArg)

	func() { line = here(); _, err = fe(a, nil) }()
	check("Func with error result, nil", errorValue(err), ": blockOrError: argument 1 is a nil *tensor.Tensor")
	func() { line = here(); _, err = fe(zero, a) }()
	check("Func with error result, zero", errorValue(err), ": blockOrError: argument 0 is the zero Tensor, which holds no value")

	func() { line = here(); _, err = c.Call(a, (*tensor.Tensor)(nil)) }()
	check("Call, nil", errorValue(err), nilArg)
	func() { line = here(); _, err = c.Call(zero, a) }()
	check("Call, zero", errorValue(err), zeroArg)
	func() { line = here(); _, err = c.Lower(zero, a) }()
	check("Lower, zero", errorValue(err), zeroArg)
}

// TestBadTensorResults: a function that returns a nil or zero tensor is told so, at
// the caller's line, naming the result.
func TestBadTensorResults(t *testing.T) {
	a := tensor.Zeros(ir.F32, 2)
	for _, c := range []struct {
		r   *tensor.Tensor
		msg string
	}{
		{nil, "result 0 is a nil *tensor.Tensor"},
		{&tensor.Tensor{}, "result 0 is the zero Tensor, which holds no value"},
	} {
		bad := func(x *tensor.Tensor) (*tensor.Tensor, error) { return c.r, nil }
		f := compile.Func(bad, memory(), compile.Name("bad"))
		var line int
		var err error
		func() { line = here(); _, err = f(a) }()
		want := "args_test.go:" + strconv.Itoa(line) + ": bad: " + c.msg
		var e *tensor.Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("got %T %v, want *tensor.Error %s", err, err, want)
		}
	}
}

// errorValue is err as an any, nil staying nil.
func errorValue(err error) any {
	if err == nil {
		return nil
	}
	return err
}
