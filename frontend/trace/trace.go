// Package trace records tensor operations into an ir.Module instead of
// computing them: it is the frontend behind package tensor's traced mode and
// compile.Func.
//
// A Tracer builds one function. Parameters are added in call order (Param),
// operations are appended as they happen (Emit, Const), and Finish adds the
// return, sets the result types and verifies the module; Control records a
// while or case, tracing each region from a Go callback (see region.go).
// Every instruction carries the Go call site of the user's code that caused
// it (CallerPos), so verifier diagnostics, pass dumps and lowering errors
// point at user code rather than at this package.
//
// A Tracer accepts only its own values: a value of another tracer, or one used
// after Finish (a tracer that leaked out of the traced function, as jax calls
// it), is an error, never silently a wrong program. Callers that hold data
// rather than values (package tensor's concrete tensors, closed over by the
// traced function) turn it into constants with Const, as jax does with
// closed-over arrays.
//
// A Tracer is safe for concurrent use; instructions appear in the order the
// calls were serialised.
package trace

import (
	"fmt"
	"sync"

	"github.com/tpucc/tpucc/ir"
)

// Tracer records one function into its own module.
type Tracer struct {
	mu       sync.Mutex
	m        *ir.Module
	f        *ir.Func
	b        *ir.Builder
	owned    []*ir.Value // indexed by Value.ID: the values this tracer created
	home     []*ir.Block // indexed by Value.ID: the block defining each owned value
	finished bool
	// captured maps a control op being traced to the operand index of each
	// outer value its regions captured (see bring).
	captured map[capture]int
}

// New starts a module holding one function named name, with no parameters
// yet. The function's position is the user's call site. The name is made a
// valid .tir name (see Identifier); an empty one becomes "main".
func New(name string) *Tracer {
	pos := CallerPos(0)
	if name = Identifier(name); name == "" {
		name = "main"
	}
	m := ir.NewModule(pos.File)
	f := m.NewFunc(name, nil, nil, nil, pos)
	b := ir.NewBuilder(f)
	b.Pos = pos
	return &Tracer{m: m, f: f, b: b}
}

// Name is the traced function's name.
func (t *Tracer) Name() string { return t.f.Name }

// HasMesh reports whether the program declares a mesh called name (Mesh).
func (t *Tracer) HasMesh(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m.Mesh(name) != nil
}

// Mesh declares the device mesh the traced program will run on, so that
// its sharding constraints verify; the compile path that knows the mesh
// (engine.ShardModule) declares it again, with the entry's shardings.
func (t *Tracer) Mesh(mesh *ir.Mesh) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := *mesh
	x.Axes = append([]ir.MeshAxis(nil), mesh.Axes...)
	t.m.Meshes = []*ir.Mesh{&x}
}

// Param adds a parameter named name (without %, made a valid .tir name by
// Identifier; "" lets the printer number it) of type ty after the ones
// already added; parameters are the function's arguments in call order.
// Adding one after Finish panics: it is a broken invariant of the caller.
func (t *Tracer) Param(name string, ty ir.Type) *ir.Value {
	name = Identifier(name)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		panic(fmt.Sprintf("trace: Param %q after Finish of @%s", name, t.f.Name))
	}
	v := t.f.NewValue(ty)
	v.Index = len(t.f.Params)
	v.Name = name
	v.Pos = t.f.Pos
	t.f.Params = append(t.f.Params, v)
	t.f.Body.Params = t.f.Params
	t.own(v, t.f.Body)
	return v
}

// Identifier makes s a name that .tir can spell after % or @: letters,
// digits, '_' and '.', not starting with a digit or '.'. Other characters
// (the slashes of a Go import path, spaces) become '_', and a leading digit
// or '.' gets a '_' in front. "" stays "".
func Identifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && (b[0] == '.' || b[0] >= '0' && b[0] <= '9') {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// Finished reports whether Finish has run: the tracer accepts nothing more.
func (t *Tracer) Finished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// own records v as created by t in blk. Callers hold t.mu.
func (t *Tracer) own(v *ir.Value, blk *ir.Block) {
	for len(t.owned) <= v.ID {
		t.owned = append(t.owned, nil)
		t.home = append(t.home, nil)
	}
	t.owned[v.ID] = v
	t.home[v.ID] = blk
}

// Owns reports whether v is a value of this tracer's function.
func (t *Tracer) Owns(v *ir.Value) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.owns(v)
}

func (t *Tracer) owns(v *ir.Value) bool {
	return v != nil && v.ID >= 0 && v.ID < len(t.owned) && t.owned[v.ID] == v
}

// checkArgs reports an operand that is not this tracer's, or a finished
// trace, and returns the operands as values of the block being traced: a
// value of an enclosing block, captured by a region's Go closure, is brought
// in as an operand of the control ops around it (see bring). Callers hold
// t.mu.
func (t *Tracer) checkArgs(pos ir.Pos, what string, args []*ir.Value) ([]*ir.Value, error) {
	if t.finished {
		return nil, ir.Errorf(pos, "%s after the trace of @%s finished: a traced tensor escaped the traced function", what, t.f.Name)
	}
	out := make([]*ir.Value, len(args))
	for i, a := range args {
		switch {
		case a == nil:
			return nil, ir.Errorf(pos, "operand %d of %s is missing", i, what)
		case !t.owns(a):
			return nil, ir.Errorf(pos, "operand %d of %s (%s) belongs to another trace than @%s", i, what, a.Type, t.f.Name)
		}
		if out[i] = t.bring(a, t.b.Block); out[i] == nil {
			return nil, ir.Errorf(pos, "operand %d of %s (%s) was defined inside a while or case region that has ended: "+
				"a region's values leave it only as its results", i, what, a.Type)
		}
	}
	return out, nil
}

// Emit appends op(args) with attr at pos and returns its results. hint gives
// result types for ops that need them (reshape, convert, broadcast, iota,
// one_hot) and may be nil otherwise. A type error, an operand of another
// tracer and a finished trace are reported as an *ir.Error at pos; nothing is
// appended then.
func (t *Tracer) Emit(pos ir.Pos, op ir.Op, attr ir.Attr, hint []ir.Type, args ...*ir.Value) ([]*ir.Value, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	args, err := t.checkArgs(pos, op.String(), args)
	if err != nil {
		return nil, err
	}
	if op == ir.OpReturn || op == ir.OpCall || ir.IsControl(op) {
		return nil, ir.Errorf(pos, "%s cannot be traced as an operation", op)
	}
	t.b.Pos = pos
	in, err := t.b.Emit(op, attr, hint, args...)
	if err != nil {
		return nil, ir.Errorf(pos, "%v", err)
	}
	for _, r := range in.Results {
		t.own(r, t.b.Block)
	}
	return in.Results, nil
}

// Const appends a constant of the static type ty holding lit (one element is
// a splat). A literal that does not fit ty, or a finished trace, is a broken
// invariant of the caller and panics.
func (t *Tracer) Const(pos ir.Pos, ty ir.Type, lit *ir.Literal) *ir.Value {
	res, err := t.Emit(pos, ir.OpConstant, &ir.ConstAttr{Value: lit}, []ir.Type{ty})
	if err != nil {
		panic(fmt.Sprintf("trace: Const: %v", err))
	}
	return res[0]
}

// Finish ends the function: it appends return of results (at the user's call
// site), makes the results' types the function's result types and verifies
// the module. After Finish the tracer accepts nothing more. A result of
// another tracer is an error; so is a second Finish.
func (t *Tracer) Finish(results ...*ir.Value) (*ir.Module, error) {
	pos := CallerPos(0)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.b.Block != t.f.Body {
		return nil, ir.Errorf(pos, "the trace of @%s finished inside a while or case region", t.f.Name)
	}
	results, err := t.checkArgs(pos, "return", results)
	if err != nil {
		return nil, err
	}
	t.finished = true
	t.f.Results = make([]ir.Type, len(results))
	for i, r := range results {
		t.f.Results[i] = r.Type
	}
	t.b.Pos = pos
	t.b.Return(results...)
	if err := ir.Verify(t.m); err != nil {
		return nil, err
	}
	return t.m, nil
}
