package hlosuite

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// hoist turns f's constants into parameters and returns their values as
// the arguments. A test function takes no arguments, so without this every
// value would be a constant and compiling would fold the whole test on the
// reference executor: the backend's own kernels would never run.
func hoist(f *ir.Func) []*backend.Buffer {
	var args []*backend.Buffer
	consts := map[*ir.Instr]bool{}
	for _, in := range f.Body.Instrs {
		if in.Op != ir.OpConstant {
			continue
		}
		c := in.Result()
		p := f.NewValue(c.Type)
		p.Index, p.Name, p.Pos = len(f.Params), "c"+itoa(len(f.Params)), in.Pos
		f.Params = append(f.Params, p)
		f.ReplaceUses(c, p)
		consts[in] = true
		args = append(args, literalBuffer(c.Type, in.Attr.(*ir.ConstAttr).Value))
	}
	f.Body.Params = f.Params
	f.Body.Remove(func(in *ir.Instr) bool { return consts[in] })
	return args
}

func literalBuffer(t ir.Type, l *ir.Literal) *backend.Buffer {
	b := backend.New(t)
	n := b.Len()
	if t.DType.IsComplex() {
		v := make([]complex128, n)
		for i := range v {
			v[i] = l.ComplexAt(i)
		}
		b.WriteComplex128s(0, v)
		return b
	}
	if t.DType.IsFloat() {
		v := make([]float64, n)
		for i := range v {
			v[i] = l.Float(i)
		}
		b.WriteFloat64s(0, v)
		return b
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = l.Int(i)
	}
	b.WriteInt64s(0, v)
	return b
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
