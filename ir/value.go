package ir

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// Pos is a source position: a .tir file location or, for traced Go programs, a call site.
type Pos struct {
	File      string
	Line, Col int
}

// Known reports whether p carries a location.
func (p Pos) Known() bool { return p.Line > 0 }

func (p Pos) String() string {
	file := p.File
	if file == "" {
		file = "<input>"
	}
	if !p.Known() {
		return file
	}
	if p.Col == 0 {
		// A call site from a traced Go program: Go frames carry no column.
		return file + ":" + strconv.Itoa(p.Line)
	}
	return file + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Error is a diagnostic about the user's program, printed as FILE:LINE:COL: error: MSG.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": error: " + e.Msg }

// Errorf makes a positioned diagnostic.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Value is an SSA value: a function or block parameter, or one result of an Instr.
// ID is dense within its Func, so passes can index slices by it.
type Value struct {
	ID    int
	Type  Type
	Def   *Instr // defining instruction; nil for a parameter
	Index int    // result index within Def, or parameter index
	Name  string // source name without %, kept by the printer; "" to number it
	Pos   Pos    // where it is defined
}

// Instr is one operation: an Op applied to Args, producing Results.
type Instr struct {
	ID      int
	Op      Op
	Args    []*Value
	Results []*Value
	Attr    Attr     // typed attribute struct, or nil for ops without attributes
	Regions []*Block // nested bodies (fusions); empty for plain ops
	Block   *Block   // the block holding this instruction
	Pos     Pos
}

// Result returns the single result of an instruction with exactly one.
func (in *Instr) Result() *Value {
	if len(in.Results) != 1 {
		panic(fmt.Sprintf("ir: %s has %d results", in.Op, len(in.Results)))
	}
	return in.Results[0]
}

// Block is a straight-line list of instructions ending in a terminator (return).
type Block struct {
	Params []*Value
	Instrs []*Instr
	Parent *Instr // the instruction owning this region, nil for a function body
}

// Func is a function: named parameters, result types and one body block.
// It owns the ID spaces of its values and instructions.
type Func struct {
	Name    string
	Params  []*Value // the same values as Body.Params
	Results []Type
	Body    *Block
	Pos     Pos
	Module  *Module

	// ArgShardings and ResultShardings, when not nil, hold one sharding per
	// parameter and per result; a nil entry is unannotated.
	ArgShardings    []*Sharding
	ResultShardings []*Sharding

	nextValue int
	nextInstr int
	// owner is set on a region's view (RegionFunc): the function whose ID
	// spaces the view allocates from.
	owner *Func
}

// Module is a .tir file: its functions in source order.
type Module struct {
	Funcs []*Func
	File  string
	// Meshes are the device meshes that shardings name, in source order.
	Meshes []*Mesh
	// Replicas is how many replicas of the program run side by side
	// (StableHLO's mhlo.num_replicas, JAX's pmap); 0 is undeclared, which
	// is one. ReplicasPos is where the .tir declared it, for diagnostics.
	Replicas    int64
	ReplicasPos Pos

	// index finds functions by name for Func. Passes, the verifier and
	// the executors look a callee up at every call, so a linear search made
	// a module of n calling functions cost O(n²). Funcs stays a plain slice
	// that callers may append to, reorder or edit; Func notices and rebuilds.
	index atomic.Pointer[funcIndex]
}

// funcIndex maps each name to the position of the first function so named,
// for the Funcs slice it was built from (its first element and length).
type funcIndex struct {
	first  **Func
	n      int
	byName map[string]int
}

// NewModule returns an empty module for the named file.
func NewModule(file string) *Module { return &Module{File: file} }

// Func returns the first function named name, or nil. It is safe for
// concurrent use as long as nothing modifies m.
func (m *Module) Func(name string) *Func {
	idx := m.index.Load()
	if idx == nil || !idx.builtFrom(m.Funcs) {
		idx = m.reindex()
	}
	if i, ok := idx.byName[name]; ok && m.Funcs[i] != nil && m.Funcs[i].Name == name {
		return m.Funcs[i]
	}
	// A miss, or a function renamed or replaced in place since the index was
	// built: look again with a fresh one.
	idx = m.reindex()
	if i, ok := idx.byName[name]; ok {
		return m.Funcs[i]
	}
	return nil
}

func (x *funcIndex) builtFrom(funcs []*Func) bool {
	if len(funcs) != x.n {
		return false
	}
	return x.n == 0 || &funcs[0] == x.first
}

func (m *Module) reindex() *funcIndex {
	idx := &funcIndex{n: len(m.Funcs), byName: make(map[string]int, len(m.Funcs))}
	if idx.n > 0 {
		idx.first = &m.Funcs[0]
	}
	for i, f := range m.Funcs {
		if f == nil {
			continue
		}
		if _, dup := idx.byName[f.Name]; !dup {
			idx.byName[f.Name] = i
		}
	}
	m.index.Store(idx)
	return idx
}

// Entry returns the entry function: @main if present, else the first function.
func (m *Module) Entry() *Func {
	if f := m.Func("main"); f != nil {
		return f
	}
	if len(m.Funcs) > 0 {
		return m.Funcs[0]
	}
	return nil
}

// NewFunc adds a function with the given parameter names and types to m.
func (m *Module) NewFunc(name string, paramNames []string, params []Type, results []Type, pos Pos) *Func {
	f := &Func{Name: name, Results: results, Pos: pos, Module: m}
	f.Body = &Block{}
	for i, t := range params {
		v := f.NewValue(t)
		v.Index = i
		if i < len(paramNames) {
			v.Name = paramNames[i]
		}
		v.Pos = pos
		f.Params = append(f.Params, v)
	}
	f.Body.Params = f.Params
	m.Funcs = append(m.Funcs, f)
	return f
}

// NewValue allocates a value with the next dense ID; the caller attaches it.
func (f *Func) NewValue(t Type) *Value {
	if f.owner != nil {
		return f.owner.NewValue(t)
	}
	v := &Value{ID: f.nextValue, Type: t}
	f.nextValue++
	return v
}

// NumValues bounds the value IDs of f: every ID is below it.
func (f *Func) NumValues() int {
	if f.owner != nil {
		return f.owner.NumValues()
	}
	return f.nextValue
}

// NumInstrs bounds the instruction IDs of f.
func (f *Func) NumInstrs() int {
	if f.owner != nil {
		return f.owner.NumInstrs()
	}
	return f.nextInstr
}

// NewInstr allocates an instruction with results of the given types, not yet in a block.
func (f *Func) NewInstr(op Op, attr Attr, args []*Value, results []Type, pos Pos) *Instr {
	if f.owner != nil {
		return f.owner.NewInstr(op, attr, args, results, pos)
	}
	in := &Instr{ID: f.nextInstr, Op: op, Args: args, Attr: attr, Pos: pos}
	f.nextInstr++
	for i, t := range results {
		v := f.NewValue(t)
		v.Def = in
		v.Index = i
		v.Pos = pos
		in.Results = append(in.Results, v)
	}
	return in
}

// Terminator returns the block's final return instruction, or nil if it has none.
func (b *Block) Terminator() *Instr {
	if n := len(b.Instrs); n > 0 && b.Instrs[n-1].Op == OpReturn {
		return b.Instrs[n-1]
	}
	return nil
}

// Walk calls fn for every instruction of b and of nested regions, in order.
func (b *Block) Walk(fn func(*Instr)) {
	for _, in := range b.Instrs {
		fn(in)
		for _, r := range in.Regions {
			r.Walk(fn)
		}
	}
}

// UseCounts returns, indexed by value ID, how many operands refer to each value.
func (f *Func) UseCounts() []int {
	uses := make([]int, f.NumValues())
	f.Body.Walk(func(in *Instr) {
		for _, a := range in.Args {
			uses[a.ID]++
		}
	})
	return uses
}

// ReplaceUses makes every operand that refers to old refer to new instead.
func (f *Func) ReplaceUses(old, new *Value) {
	f.Body.Walk(func(in *Instr) {
		for i, a := range in.Args {
			if a == old {
				in.Args[i] = new
			}
		}
	})
}

// Remove deletes the instructions for which dead returns true from b (not recursing).
func (b *Block) Remove(dead func(*Instr) bool) {
	out := b.Instrs[:0]
	for _, in := range b.Instrs {
		if !dead(in) {
			out = append(out, in)
		}
	}
	for i := len(out); i < len(b.Instrs); i++ {
		b.Instrs[i] = nil
	}
	b.Instrs = out
}

// InsertBefore puts in into b just before the instruction at index i.
func (b *Block) InsertBefore(i int, in *Instr) {
	in.Block = b
	b.Instrs = append(b.Instrs, nil)
	copy(b.Instrs[i+1:], b.Instrs[i:])
	b.Instrs[i] = in
}

// Append adds in at the end of b.
func (b *Block) Append(in *Instr) {
	in.Block = b
	b.Instrs = append(b.Instrs, in)
}
