package ir

import "fmt"

// Builder appends (or inserts) instructions into a block, inferring result types.
type Builder struct {
	F     *Func
	Block *Block
	Pos   Pos // position given to new instructions
	// Uses, when set, records the operands of every instruction the builder
	// makes, so a pass's use-list stays right while it builds.
	Uses *Uses
	at   int // insertion index into Block.Instrs; -1 appends
}

// NewBuilder returns a builder appending to f's body.
func NewBuilder(f *Func) *Builder { return &Builder{F: f, Block: f.Body, at: -1} }

// SetInsertBefore makes later instructions go just before in, in in's block,
// and gives them in's position.
func (b *Builder) SetInsertBefore(in *Instr) {
	b.Block = in.Block
	b.Pos = in.Pos
	for i, x := range in.Block.Instrs {
		if x == in {
			b.at = i
			return
		}
	}
	panic("ir: SetInsertBefore: instruction not in its block")
}

// SetAppend makes later instructions go at the end of blk.
func (b *Builder) SetAppend(blk *Block) { b.Block, b.at = blk, -1 }

// Emit creates op(args) with attr, checks it with Infer and inserts it.
// hint gives result types for ops that need them (and may be nil otherwise).
func (b *Builder) Emit(op Op, attr Attr, hint []Type, args ...*Value) (*Instr, error) {
	types := make([]Type, len(args))
	for i, a := range args {
		types[i] = a.Type
	}
	res, err := Infer(op, types, attr, hint)
	if err != nil {
		return nil, err
	}
	in := b.F.NewInstr(op, attr, args, res, b.Pos)
	b.insert(in)
	return in, nil
}

func (b *Builder) insert(in *Instr) {
	if b.Uses != nil {
		b.Uses.Add(in)
	}
	if b.at < 0 {
		b.Block.Append(in)
		return
	}
	b.Block.InsertBefore(b.at, in)
	b.at++
}

// Op1 emits a single-result op whose operands are known to be valid; a type
// error here is a broken invariant of the caller (a pass), so it panics.
func (b *Builder) Op1(op Op, attr Attr, args ...*Value) *Value {
	return b.Typed(op, attr, nil, args...)
}

// Typed is Op1 with the result type given (reshape, convert, broadcast, iota, one_hot).
func (b *Builder) Typed(op Op, attr Attr, result *Type, args ...*Value) *Value {
	var hint []Type
	if result != nil {
		hint = []Type{*result}
	}
	in, err := b.Emit(op, attr, hint, args...)
	if err != nil {
		panic(fmt.Sprintf("ir: building %s: %v", op, err))
	}
	return in.Result()
}

// Const emits a constant of type t: one value is a splat, otherwise one per element.
func (b *Builder) Const(t Type, vals ...float64) *Value {
	return b.Typed(OpConstant, &ConstAttr{Value: NewLiteral(t, vals)}, &t)
}

// Return ends the block.
func (b *Builder) Return(vals ...*Value) *Instr {
	in := b.F.NewInstr(OpReturn, nil, vals, nil, b.Pos)
	b.insert(in)
	return in
}
