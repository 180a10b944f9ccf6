package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/tpucc/tpucc/ir"
)

// errShort is the decoder's error for input that ends too early.
var errShort = errors.New("truncated")

// DecodeModule rebuilds a module from EncodeModule's bytes and verifies it.
// Malformed input of any kind is an error, never a panic.
func DecodeModule(data []byte) (*ir.Module, error) {
	if len(data) < len(codecMagic) || string(data[:len(codecMagic)]) != codecMagic {
		return nil, fmt.Errorf("not a binary module")
	}
	d := &decoder{buf: data[len(codecMagic):]}
	m := ir.NewModule(d.str())
	n := d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		d.fn(m)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.shardings(m)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.replicas(m)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("%d bytes after the module", len(d.buf))
	}
	if d.err != nil {
		return nil, d.err
	}
	if err := ir.Verify(m); err != nil {
		return nil, fmt.Errorf("invalid module: %v", err)
	}
	return m, nil
}

// decoder reads the encoding; after the first error (err) every read
// returns zero values, so callers check err once per loop.
type decoder struct {
	buf      []byte
	err      error
	ops      []ir.Op
	vals     []*ir.Value
	f        *ir.Func
	lastFile string
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) uvar() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("%v", errShort)
		return 0
	}
	d.buf = d.buf[n:]
	return x
}

func (d *decoder) svar() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("%v", errShort)
		return 0
	}
	d.buf = d.buf[n:]
	return x
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.buf) == 0 {
		d.fail("%v", errShort)
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.fail("%v", errShort)
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) f64() float64 {
	b := d.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func (d *decoder) str() string { return string(d.bytes(d.uvar())) }

// count reads a length whose items take at least size bytes each, so a
// corrupt length cannot make the decoder allocate more than the input.
func (d *decoder) count(size int) int {
	n := d.uvar()
	if d.err == nil && n > uint64(len(d.buf)/size) {
		d.fail("count %d exceeds the input", n)
		return 0
	}
	return int(n)
}

func (d *decoder) int() int {
	x := d.svar()
	if x < math.MinInt32 || x > math.MaxInt32 {
		d.fail("integer %d out of range", x)
		return 0
	}
	return int(x)
}

func (d *decoder) pos() ir.Pos {
	var p ir.Pos
	if k := d.uvar(); k == 0 {
		p.File = d.lastFile
	} else {
		p.File = string(d.bytes(k - 1))
		d.lastFile = p.File
	}
	line, col := d.uvar(), d.uvar()
	if line > math.MaxInt32 || col > math.MaxInt32 {
		d.fail("position out of range")
	}
	p.Line, p.Col = int(line), int(col)
	return p
}

func (d *decoder) typ() ir.Type {
	t := ir.Type{DType: ir.DType(d.byte())}
	if d.err == nil && (t.DType == ir.Invalid || t.DType.String() == ir.Invalid.String()) {
		d.fail("bad dtype %d", t.DType)
	}
	t.Shape = make([]ir.Dim, d.count(2))
	for i := range t.Shape {
		t.Shape[i].Sym = d.str()
		if t.Shape[i].Sym == "" {
			t.Shape[i].Size = d.svar()
		}
	}
	switch d.byte() {
	case 0:
	case 1:
		l := &ir.Layout{MinorToMajor: make([]int, d.count(1))}
		for i := range l.MinorToMajor {
			l.MinorToMajor[i] = d.int()
		}
		l.Tiles = make([][]int64, d.count(1))
		for i := range l.Tiles {
			l.Tiles[i] = make([]int64, d.count(1))
			for j := range l.Tiles[i] {
				l.Tiles[i][j] = d.svar()
			}
		}
		if len(l.Tiles) == 0 {
			l.Tiles = nil
		}
		t.Layout = l
	default:
		d.fail("bad layout tag")
	}
	return t
}

func (d *decoder) fn(m *ir.Module) {
	name, pos := d.str(), d.pos()
	np := d.count(2)
	names := make([]string, np)
	params := make([]ir.Type, np)
	for i := range params {
		names[i] = d.str()
		params[i] = d.typ()
	}
	results := make([]ir.Type, d.count(3))
	for i := range results {
		results[i] = d.typ()
	}
	if d.err != nil {
		return
	}
	d.f = m.NewFunc(name, names, params, results, pos)
	d.vals = append(d.vals[:0], d.f.Params...)
	d.block(d.f.Body, 0)
}

func (d *decoder) block(b *ir.Block, depth int) {
	if depth > maxRegionDepth {
		d.fail("regions nested too deeply")
		return
	}
	n := d.count(4)
	for i := 0; i < n && d.err == nil; i++ {
		d.instr(b, depth)
	}
}

func (d *decoder) op() ir.Op {
	k := d.uvar()
	switch {
	case d.err != nil:
		return ir.OpInvalid
	case k < uint64(len(d.ops)):
		return d.ops[k]
	case k > uint64(len(d.ops)):
		d.fail("bad op number %d", k)
		return ir.OpInvalid
	}
	name := d.str()
	op, ok := ir.LookupOp(name)
	if !ok && d.err == nil {
		d.fail("unknown op %q", name)
	}
	d.ops = append(d.ops, op)
	return op
}

func (d *decoder) instr(b *ir.Block, depth int) {
	op := d.op()
	pos := d.pos()
	args := make([]*ir.Value, d.count(1))
	for i := range args {
		k := d.uvar()
		if d.err == nil && k >= uint64(len(d.vals)) {
			d.fail("bad value index %d", k)
		}
		if d.err != nil {
			return
		}
		args[i] = d.vals[k]
	}
	nr := d.count(4)
	types := make([]ir.Type, nr)
	names := make([]string, nr)
	for i := range types {
		types[i] = d.typ()
		names[i] = d.str()
	}
	attr := d.attr(op, pos)
	if d.err != nil {
		return
	}
	in := d.f.NewInstr(op, attr, args, types, pos)
	for i, r := range in.Results {
		r.Name = names[i]
	}
	d.vals = append(d.vals, in.Results...)
	b.Append(in)
	nreg := d.count(1)
	for i := 0; i < nreg && d.err == nil; i++ {
		r := &ir.Block{Parent: in}
		np := d.count(3)
		for j := 0; j < np && d.err == nil; j++ {
			t := d.typ()
			v := d.f.NewValue(t)
			v.Index = j
			v.Name = d.str()
			v.Pos = pos
			r.Params = append(r.Params, v)
			d.vals = append(d.vals, v)
		}
		in.Regions = append(in.Regions, r)
		d.block(r, depth+1)
	}
}

func (d *decoder) attr(op ir.Op, pos ir.Pos) ir.Attr {
	switch tag := d.byte(); {
	case d.err != nil:
		return nil
	case tag == 0:
		return nil
	case tag == 4 && op == ir.OpCustomCall:
		target := d.str()
		a, _ := d.fields(op, pos).(*ir.CustomCallAttr)
		if a != nil {
			a.Target = target
		}
		return a
	case tag == 1:
		return d.fields(op, pos)
	case tag == 2 && op == ir.OpConstant:
		return &ir.ConstAttr{Value: d.literal()}
	case tag == 3 && op == ir.OpCall:
		return &ir.CallAttr{Callee: d.str()}
	default:
		d.fail("bad attribute tag %d for %s", tag, op)
		return nil
	}
}

// fields reads an attribute written as its fields and rebuilds it.
func (d *decoder) fields(op ir.Op, pos ir.Pos) ir.Attr {
	fields := make([]ir.AttrField, d.count(2))
	for i := range fields {
		fields[i] = ir.AttrField{Name: d.str(), Value: d.value(0), Pos: pos}
	}
	if d.err != nil {
		return nil
	}
	a, err := ir.BuildAttr(op, fields, pos)
	if err != nil {
		d.fail("bad attributes of %s: %v", op, err)
		return nil
	}
	return a
}

func (d *decoder) literal() *ir.Literal {
	l := &ir.Literal{}
	flags := d.byte()
	if flags&^7 != 0 {
		d.fail("bad literal flags %d", flags)
	}
	if flags&1 != 0 {
		l.Floats = make([]float64, d.count(8))
		for i := range l.Floats {
			l.Floats[i] = d.f64()
		}
	}
	if flags&2 != 0 {
		l.Ints = make([]int64, d.count(1))
		for i := range l.Ints {
			l.Ints[i] = d.svar()
		}
	}
	if flags&4 != 0 {
		l.Complex = make([]complex128, d.count(16))
		for i := range l.Complex {
			re := d.f64()
			l.Complex[i] = complex(re, d.f64())
		}
	}
	return l
}

func (d *decoder) value(depth int) ir.AttrValue {
	v := ir.AttrValue{Kind: ir.AttrValueKind(d.byte())}
	switch v.Kind {
	case ir.AttrInt:
		v.Int = d.svar()
	case ir.AttrFloat:
		v.Float = d.f64()
	case ir.AttrBool:
		switch d.byte() {
		case 0:
		case 1:
			v.Bool = true
		default:
			d.fail("bad bool")
		}
	case ir.AttrString, ir.AttrIdent:
		v.Str = d.str()
	case ir.AttrList:
		if depth >= maxListDepth {
			d.fail("attribute lists nested too deeply")
			return v
		}
		v.List = make([]ir.AttrValue, d.count(2))
		for i := range v.List {
			v.List[i] = d.value(depth + 1)
		}
	case ir.AttrSharding:
		v.Sharding = d.sharding()
	default:
		d.fail("bad attribute value kind %d", v.Kind)
	}
	return v
}
