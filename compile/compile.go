package compile

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Compiled is a Go function with its compilation cache.
type Compiled struct {
	fn      reflect.Value
	ft      reflect.Type
	name    string
	static  []bool // per parameter: a static (non-tensor) parameter
	nTensor int    // results before the optional error
	errOut  bool   // the last result is an error
	rt      *engine.Function
	grad    *gradSpec      // Grad and ValueAndGrad: the program computes gradients
	opts    engine.Options // what rt was made with (TrainStep makes its own from them)
}

var (
	tensorType = reflect.TypeFor[*tensor.Tensor]()
	errorType  = reflect.TypeFor[error]()
	irType     = reflect.TypeFor[ir.Type]()
)

// New wraps f, a function whose parameters are *tensor.Tensor or static
// values (bool, integers, floats, strings, or named types of them) and whose
// results are *tensor.Tensor, optionally followed by an error.
func New(f any, opts ...Option) (*Compiled, error) { return newCompiled(f, nil, opts) }

func newCompiled(f any, grad *gradSpec, opts []Option) (*Compiled, error) {
	fv := reflect.ValueOf(f)
	if fv.Kind() != reflect.Func || fv.IsNil() {
		return nil, fmt.Errorf("compile: want a function, got %T", f)
	}
	ft := fv.Type()
	if ft.IsVariadic() {
		return nil, fmt.Errorf("compile: %s is variadic; give it fixed parameters", ft)
	}
	c := &Compiled{fn: fv, ft: ft, static: make([]bool, ft.NumIn()), grad: grad}
	for i := range ft.NumIn() {
		p := ft.In(i)
		switch {
		case p == tensorType:
		case isStaticKind(p.Kind()):
			c.static[i] = true
		default:
			return nil, fmt.Errorf("compile: parameter %d of %s is %s; want *tensor.Tensor or a static bool, integer, float or string", i, ft, p)
		}
	}
	c.nTensor = ft.NumOut()
	if c.nTensor > 0 && ft.Out(c.nTensor-1) == errorType {
		c.errOut = true
		c.nTensor--
	}
	if c.nTensor == 0 {
		return nil, fmt.Errorf("compile: %s returns no tensor", ft)
	}
	for i := range c.nTensor {
		if ft.Out(i) != tensorType {
			return nil, fmt.Errorf("compile: result %d of %s is %s; want *tensor.Tensor (and an optional final error)", i, ft, ft.Out(i))
		}
	}
	o := engine.Options{}
	pc := fv.Pointer()
	symbol := ""
	if fn := runtime.FuncForPC(pc); fn != nil {
		symbol = fn.Name()
		file, line := fn.FileLine(fn.Entry())
		o.Pos = ir.Pos{File: file, Line: line}
		o.Name = shortName(symbol)
	}
	for _, opt := range opts {
		opt(&o)
	}
	for _, d := range o.Dynamic {
		if d.Arg >= len(c.static) || d.Arg < 0 || c.static[d.Arg] {
			return nil, fmt.Errorf("compile: Dynamic(%d, %d): parameter %d of %s is not a tensor", d.Arg, d.Dim, d.Arg, ft)
		}
	}
	// The identity is the symbol and the name given: two closures of one
	// function share a symbol, but they trace differently, and the program
	// hash in the key keeps them apart.
	o.Identity = symbol + "|" + o.Name
	c.name = o.Name
	c.opts = o
	rt, err := engine.NewFunction(program{c}, o)
	if err != nil {
		return nil, fmt.Errorf("compile: %v", err)
	}
	c.rt = rt
	return c, nil
}

func isStaticKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// shortName drops the package path: main.mlp is mlp, pkg.(*M).F is (*M).F,
// main.main.func1 is main.func1.
func shortName(symbol string) string {
	if i := strings.LastIndexByte(symbol, '/'); i >= 0 {
		symbol = symbol[i+1:]
	}
	if _, rest, ok := strings.Cut(symbol, "."); ok {
		return rest
	}
	return symbol
}

// Func compiles f and returns a function of f's own type. Each call traces
// and compiles once per input signature and then reuses the program. Errors
// (a shape error while tracing, a call past the recompile limit under
// LimitError) are returned through f's final error result if it has one,
// and panic otherwise, as eager tensor code does. Options that New rejects
// panic at once.
func Func[F any](f F, opts ...Option) F {
	c, err := New(f, opts...)
	if err != nil {
		panic(err)
	}
	return reflect.MakeFunc(c.ft, c.reflectCall).Interface().(F)
}

// reflectCall is Func's body: the fast path from reflect values to the
// runtime and back.
func (c *Compiled) reflectCall(in []reflect.Value) []reflect.Value {
	args := make([]engine.Arg, len(in))
	for i, v := range in {
		if c.static[i] {
			a, err := engine.StaticArg(v.Interface())
			if err != nil {
				return c.fail(err)
			}
			args[i] = a
			continue
		}
		t := v.Interface().(*tensor.Tensor)
		if err := tensor.Usable(c.name, "argument "+strconv.Itoa(i), t); err != nil {
			return c.fail(err)
		}
		if t.IsTraced() {
			// Called while another function is being traced: record f inline.
			return c.fn.Call(in)
		}
		args[i] = engine.TensorArg(t.Buffer())
	}
	res, err := c.rt.Call(args)
	if err == nil {
		err = c.checkResults(len(res))
	}
	if err != nil {
		return c.fail(err)
	}
	out := make([]reflect.Value, c.ft.NumOut())
	for i, r := range res {
		out[i] = reflect.ValueOf(tensor.FromBuffer(r))
	}
	if c.errOut {
		out[c.nTensor] = reflect.Zero(errorType)
	}
	return out
}

// checkResults refuses results that f's type cannot return. The runtime
// gives a program f's own signature (it checks loaded programs against
// the trace), so this is an internal error, but an error, not a panic in
// reflect.
func (c *Compiled) checkResults(n int) error {
	if n != c.outputs() {
		return fmt.Errorf("%s: internal error: the program returned %d results, want %d", c.name, n, c.outputs())
	}
	return nil
}

// fail returns err through f's error result, or panics with it: the
// original panic value for a panic while tracing, else the error.
func (c *Compiled) fail(err error) []reflect.Value {
	if !c.errOut {
		var p *tracePanic
		if errors.As(err, &p) {
			panic(p.value)
		}
		panic(err)
	}
	out := make([]reflect.Value, c.ft.NumOut())
	for i := range c.nTensor {
		out[i] = reflect.Zero(tensorType)
	}
	out[c.nTensor] = reflect.ValueOf(&err).Elem()
	return out
}

// args converts Call's and Lower's arguments; shapes allows ir.Type in
// place of a tensor (Lower).
func (c *Compiled) args(vals []any, shapes bool) ([]engine.Arg, error) {
	if len(vals) != len(c.static) {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", c.name, len(c.static), len(vals))
	}
	args := make([]engine.Arg, len(vals))
	for i, v := range vals {
		p := c.ft.In(i)
		if c.static[i] {
			rv := reflect.ValueOf(v)
			if !rv.IsValid() || !rv.Type().AssignableTo(p) {
				if !rv.IsValid() || !rv.Type().ConvertibleTo(p) || !isStaticKind(rv.Kind()) || !roundTrips(rv, p) {
					return nil, fmt.Errorf("%s: argument %d is %T, want %s", c.name, i, v, p)
				}
			}
			a, err := engine.StaticArg(rv.Convert(p).Interface())
			if err != nil {
				return nil, err
			}
			args[i] = a
			continue
		}
		switch x := v.(type) {
		case *tensor.Tensor:
			if err := tensor.Usable(c.name, "argument "+strconv.Itoa(i), x); err != nil {
				return nil, err
			}
			if x.IsTraced() {
				return nil, fmt.Errorf("%s: argument %d is traced: call the function itself, or its Func form, inside a traced function", c.name, i)
			}
			if shapes {
				args[i] = engine.ShapeArg(x.Type())
			} else {
				args[i] = engine.TensorArg(x.Buffer())
			}
		case ir.Type:
			if !shapes {
				return nil, fmt.Errorf("%s: argument %d is a type (%s); Call needs a tensor", c.name, i, x)
			}
			args[i] = engine.ShapeArg(x)
		default:
			want := "*tensor.Tensor"
			if shapes {
				want += " or ir.Type"
			}
			return nil, fmt.Errorf("%s: argument %d is %T, want %s", c.name, i, v, want)
		}
	}
	return args, nil
}

// roundTrips reports whether converting v to p loses nothing (3 to int8
// does not; 300 to int8 and 0.5 to int do).
func roundTrips(v reflect.Value, p reflect.Type) bool {
	kindClass := func(k reflect.Kind) int {
		switch k {
		case reflect.Bool:
			return 1
		case reflect.String:
			return 2
		}
		return 3
	}
	if kindClass(v.Kind()) != kindClass(p.Kind()) {
		return false
	}
	back := v.Convert(p).Convert(v.Type())
	return back.Equal(v)
}

// Call runs the compiled function: args are *tensor.Tensor for tensor
// parameters and values for static ones; it returns the function's tensor
// results in order. Shape errors while tracing and calls refused at the limit
// are errors.
func (c *Compiled) Call(args ...any) ([]*tensor.Tensor, error) {
	return c.callInto(nil, nil, args)
}

// callInto is Call with the results written into bufs (the storage of
// into's tensors) when it is not nil.
func (c *Compiled) callInto(into []*tensor.Tensor, bufs []*backend.Buffer, args []any) ([]*tensor.Tensor, error) {
	ra, err := c.args(args, false)
	if err != nil {
		return nil, err
	}
	res, err := c.rt.CallInto(bufs, ra)
	if err == nil {
		err = c.checkResults(len(res))
	}
	if err != nil {
		var p *tracePanic
		if errors.As(err, &p) {
			panic(p.value)
		}
		return nil, err
	}
	out := make([]*tensor.Tensor, len(res))
	for i, r := range res {
		if i < len(into) && into[i] != nil && r == bufs[i] {
			out[i] = into[i]
			continue
		}
		out[i] = tensor.FromBuffer(r)
	}
	return out, nil
}

// Lower returns the StableHLO text of the program for the given shapes (a
// tensor or an ir.Type per tensor parameter, a value per static one), as
// jax.jit(f).lower(x).as_text() does: ahead-of-time, without running it.
func (c *Compiled) Lower(args ...any) (string, error) {
	ra, err := c.args(args, true)
	if err != nil {
		return "", err
	}
	return c.rt.Lower(ra)
}

// Stats returns the cache's counters for this function.
func (c *Compiled) Stats() engine.Stats { return c.rt.Stats() }

// Explain returns the cache's decisions, one line each: compiles and their
// reasons, programs loaded from disk, calls placed in buckets, padding
// refused and why, calls refused at the limit.
func (c *Compiled) Explain() []string { return c.rt.Explain() }
