package engine

import (
	"encoding/binary"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// The binary module encoding (this file: the format and the encoder;
// codec_decode.go: the decoder) lets the persistent cache load a program
// without parsing .tir text (parsing costs far more than a compile of a
// small program). It is built on ir's public API only, so it survives
// changes to ir's internals:
//
//	module  = "tirb1" file:str nops:uvar nfuncs:uvar func*
//	func    = name:str pos nparams:uvar (name:str type)* nresults:uvar type* block
//	block   = ninstrs:uvar instr*
//	instr   = op:uvar pos nargs:uvar arg:uvar* nresults:uvar (type name:str)* attr
//	          nregions:uvar (nparams:uvar (type name:str)* block)*
//	attr    = 0 (none) | 1 nfields:uvar (name:str value)* | 2 literal | 3 callee:str
//	literal = flags:byte (bit 0 Floats set, bit 1 Ints set) [n:uvar f64*] [n:uvar svar*]
//	value   = kind:byte then int:svar | float:f64 | bool:byte | str | n:uvar value*
//	type    = dtype:byte rank:uvar (sym:str [size:svar when sym is ""])* layout
//	layout  = 0 | 1 n:uvar svar* ntiles:uvar (n:uvar svar*)*
//	pos     = file (uvar 0: the previous file; k+1: k bytes follow) line:uvar col:uvar
//
// Ops are written by name, once per module (op k is the k-th name listed the
// first time it appears: its number is len(names) and the name follows), so
// renumbering ir's op table cannot misread an entry. An argument is the
// index of a value of its function in definition order: the parameters,
// then each instruction's results followed by its regions' parameters, in
// the order Block.Walk visits them. Attributes other than constants and
// calls are their Fields, rebuilt by ir.BuildAttr; the decoded module is
// checked by ir.Verify (which also fills rank-dependent attribute defaults
// through ir.Infer), so a decoded module is as valid as a parsed one.
const codecMagic = "tirb1"

// maxRegionDepth and maxListDepth bound the decoder's recursion on hostile input.
const (
	maxRegionDepth = 4
	maxListDepth   = 8
)

// EncodeModule returns the binary encoding of m.
func EncodeModule(m *ir.Module) []byte {
	e := &encoder{ops: map[ir.Op]int{}}
	e.buf = append(e.buf, codecMagic...)
	e.str(m.File)
	e.uvar(uint64(len(m.Funcs)))
	for _, f := range m.Funcs {
		e.fn(f)
	}
	if hasShardings(m) {
		e.shardings(m)
	}
	e.replicas(m)
	return e.buf
}

type encoder struct {
	buf      []byte
	ops      map[ir.Op]int
	vals     map[*ir.Value]int
	lastFile string
}

func (e *encoder) uvar(x uint64) { e.buf = binary.AppendUvarint(e.buf, x) }
func (e *encoder) svar(x int64)  { e.buf = binary.AppendVarint(e.buf, x) }
func (e *encoder) f64(x float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(x))
}

func (e *encoder) str(s string) {
	e.uvar(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) pos(p ir.Pos) {
	if p.File == e.lastFile {
		e.uvar(0)
	} else {
		e.uvar(uint64(len(p.File)) + 1)
		e.buf = append(e.buf, p.File...)
		e.lastFile = p.File
	}
	e.uvar(uint64(max(p.Line, 0)))
	e.uvar(uint64(max(p.Col, 0)))
}

func (e *encoder) typ(t ir.Type) {
	e.buf = append(e.buf, byte(t.DType))
	e.uvar(uint64(len(t.Shape)))
	for _, d := range t.Shape {
		e.str(d.Sym)
		if d.Sym == "" {
			e.svar(d.Size)
		}
	}
	if t.Layout == nil {
		e.buf = append(e.buf, 0)
		return
	}
	e.buf = append(e.buf, 1)
	e.uvar(uint64(len(t.Layout.MinorToMajor)))
	for _, x := range t.Layout.MinorToMajor {
		e.svar(int64(x))
	}
	e.uvar(uint64(len(t.Layout.Tiles)))
	for _, tile := range t.Layout.Tiles {
		e.uvar(uint64(len(tile)))
		for _, x := range tile {
			e.svar(x)
		}
	}
}

func (e *encoder) define(v *ir.Value) { e.vals[v] = len(e.vals) }

func (e *encoder) fn(f *ir.Func) {
	e.vals = map[*ir.Value]int{}
	e.str(f.Name)
	e.pos(f.Pos)
	e.uvar(uint64(len(f.Params)))
	for _, p := range f.Params {
		e.str(p.Name)
		e.typ(p.Type)
		e.define(p)
	}
	e.uvar(uint64(len(f.Results)))
	for _, t := range f.Results {
		e.typ(t)
	}
	e.block(f.Body)
}

func (e *encoder) block(b *ir.Block) {
	e.uvar(uint64(len(b.Instrs)))
	for _, in := range b.Instrs {
		e.instr(in)
	}
}

func (e *encoder) instr(in *ir.Instr) {
	if k, ok := e.ops[in.Op]; ok {
		e.uvar(uint64(k))
	} else {
		e.ops[in.Op] = len(e.ops)
		e.uvar(uint64(len(e.ops) - 1))
		e.str(in.Op.String())
	}
	e.pos(in.Pos)
	e.uvar(uint64(len(in.Args)))
	for _, a := range in.Args {
		// A value not defined before its use cannot come from a verified
		// module; its out-of-range index makes the decoder refuse it.
		k, ok := e.vals[a]
		if !ok {
			k = math.MaxInt32
		}
		e.uvar(uint64(k))
	}
	e.uvar(uint64(len(in.Results)))
	for _, r := range in.Results {
		e.typ(r.Type)
		e.str(r.Name)
		e.define(r)
	}
	e.attr(in.Attr)
	e.uvar(uint64(len(in.Regions)))
	for _, r := range in.Regions {
		e.uvar(uint64(len(r.Params)))
		for _, p := range r.Params {
			e.typ(p.Type)
			e.str(p.Name)
			e.define(p)
		}
		e.block(r)
	}
}

func (e *encoder) attr(a ir.Attr) {
	switch a := a.(type) {
	case nil:
		e.buf = append(e.buf, 0)
	case *ir.ConstAttr:
		e.buf = append(e.buf, 2)
		e.literal(a.Value)
	case *ir.CallAttr:
		e.buf = append(e.buf, 3)
		e.str(a.Callee)
	case *ir.CustomCallAttr:
		// The target is not a field: it is written first, then the fields.
		e.buf = append(e.buf, 4)
		e.str(a.Target)
		e.fields(a)
	default:
		e.buf = append(e.buf, 1)
		e.fields(a)
	}
}

func (e *encoder) fields(a ir.Attr) {
	fs := a.Fields()
	e.uvar(uint64(len(fs)))
	for _, f := range fs {
		e.str(f.Name)
		e.value(f.Value)
	}
}

func (e *encoder) literal(l *ir.Literal) {
	var flags byte
	if l != nil && l.Floats != nil {
		flags |= 1
	}
	if l != nil && l.Ints != nil {
		flags |= 2
	}
	if l != nil && l.Complex != nil {
		flags |= 4
	}
	e.buf = append(e.buf, flags)
	if flags&1 != 0 {
		e.uvar(uint64(len(l.Floats)))
		for _, x := range l.Floats {
			e.f64(x)
		}
	}
	if flags&2 != 0 {
		e.uvar(uint64(len(l.Ints)))
		for _, x := range l.Ints {
			e.svar(x)
		}
	}
	if flags&4 != 0 {
		e.uvar(uint64(len(l.Complex)))
		for _, x := range l.Complex {
			e.f64(real(x))
			e.f64(imag(x))
		}
	}
}

func (e *encoder) value(v ir.AttrValue) {
	e.buf = append(e.buf, byte(v.Kind))
	switch v.Kind {
	case ir.AttrInt:
		e.svar(v.Int)
	case ir.AttrFloat:
		e.f64(v.Float)
	case ir.AttrBool:
		b := byte(0)
		if v.Bool {
			b = 1
		}
		e.buf = append(e.buf, b)
	case ir.AttrString, ir.AttrIdent:
		e.str(v.Str)
	case ir.AttrList:
		e.uvar(uint64(len(v.List)))
		for _, x := range v.List {
			e.value(x)
		}
	case ir.AttrSharding:
		e.sharding(v.Sharding)
	}
}
