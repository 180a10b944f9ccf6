package tir

import (
	"math"
	"math/rand"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// TestPrintParseProperty builds random modules through ir.Builder (random
// dtypes, shapes with symbols and layouts, names that collide, constants with
// special values, multi-result ops and calls) and checks that parsing the
// printed text prints identically.
func TestPrintParseProperty(t *testing.T) {
	for seed := int64(0); seed < 400; seed++ {
		r := rand.New(rand.NewSource(seed))
		m := randomModule(r)
		if err := ir.Verify(m); err != nil {
			t.Fatalf("seed %d: the generator built an invalid module: %v\n%s", seed, err, ir.Print(m))
		}
		text := ir.Print(m)
		m2, err := Parse("prop.tir", []byte(text))
		if err != nil {
			t.Fatalf("seed %d: printed module does not parse: %v\n%s", seed, err, text)
		}
		if got := ir.Print(m2); got != text {
			t.Fatalf("seed %d: parse(print(m)) prints differently\n--- print(m)\n%s--- print(parse(print(m)))\n%s", seed, text, got)
		}
	}
}

var (
	propNames  = []string{"", "", "", "x", "x", "h.1", "_t", "x_1", "acc"}
	propFloats = []ir.DType{ir.F32, ir.F32, ir.BF16, ir.F16, ir.F64}
	propShapes = [][]ir.Dim{{}, {ir.D(4)}, {ir.D(2), ir.D(3)}, {{Sym: "B"}, ir.D(3)}, {ir.D(2), ir.D(3), ir.D(4)}, {ir.D(1), ir.D(3)}}
	propValues = []float64{0, 1, -1, 0.1, 2.5, -0.0, 1e-5, 65504, 3.4e38, math.Inf(1), math.Inf(-1), math.NaN(), 1.0 / 3}
)

func randomModule(r *rand.Rand) *ir.Module {
	m := ir.NewModule("prop.tir")
	n := 1 + r.Intn(3)
	for i := 0; i < n; i++ {
		randomFunc(r, m, i)
	}
	// Each function calls only earlier ones; reversing makes calls refer to
	// functions defined later in the file.
	if r.Intn(2) == 0 {
		for i, j := 0, len(m.Funcs)-1; i < j; i, j = i+1, j-1 {
			m.Funcs[i], m.Funcs[j] = m.Funcs[j], m.Funcs[i]
		}
	}
	return m
}

func randomType(r *rand.Rand) ir.Type {
	shape := propShapes[r.Intn(len(propShapes))]
	t := ir.Type{DType: propFloats[r.Intn(len(propFloats))], Shape: append([]ir.Dim{}, shape...)}
	if r.Intn(4) == 0 {
		l := &ir.Layout{MinorToMajor: r.Perm(t.Rank())}
		if t.Rank() > 0 && r.Intn(2) == 0 {
			l.Tiles = [][]int64{{8, 128}}
			if r.Intn(2) == 0 {
				l.Tiles = append(l.Tiles, []int64{2, 1})
			}
		}
		t.Layout = l
	}
	return t
}

type propFunc struct {
	r    *rand.Rand
	b    *ir.Builder
	vals []*ir.Value
}

func randomFunc(r *rand.Rand, m *ir.Module, i int) {
	np := 1 + r.Intn(3)
	names := make([]string, np)
	params := make([]ir.Type, np)
	for k := range params {
		names[k] = propNames[r.Intn(len(propNames))]
		params[k] = randomType(r)
	}
	callees := append([]*ir.Func(nil), m.Funcs...)
	f := m.NewFunc([]string{"main", "g", "h.2"}[i], names, params, nil, ir.Pos{})
	p := &propFunc{r: r, b: ir.NewBuilder(f), vals: append([]*ir.Value(nil), f.Params...)}
	steps := 1 + r.Intn(10)
	for k := 0; k < steps; k++ {
		p.step(callees)
	}
	var ret []*ir.Value
	for k := r.Intn(3); k > 0; k-- {
		ret = append(ret, p.pick())
	}
	for _, v := range ret {
		f.Results = append(f.Results, v.Type)
	}
	p.b.Return(ret...)
}

func (p *propFunc) pick() *ir.Value { return p.vals[p.r.Intn(len(p.vals))] }

// emit adds an instruction if it type-checks; generated ops that do not are skipped.
func (p *propFunc) emit(op ir.Op, attr ir.Attr, hint []ir.Type, args ...*ir.Value) {
	in, err := p.b.Emit(op, attr, hint, args...)
	if err != nil {
		return
	}
	for _, v := range in.Results {
		v.Name = propNames[p.r.Intn(len(propNames))]
		p.vals = append(p.vals, v)
	}
}

func (p *propFunc) step(callees []*ir.Func) {
	r := p.r
	x := p.pick()
	rank := x.Type.Rank()
	switch r.Intn(14) {
	case 0:
		ops := []ir.Op{ir.OpExp, ir.OpNeg, ir.OpTanh, ir.OpAbs, ir.OpSigmoid, ir.OpRound, ir.OpRelu, ir.OpSilu}
		p.emit(ops[r.Intn(len(ops))], nil, nil, x)
	case 1:
		ops := []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpPow}
		y := p.pick()
		if !y.Type.SameShape(x.Type) || y.Type.DType != x.Type.DType {
			y = x
		}
		p.emit(ops[r.Intn(len(ops))], nil, nil, x, y)
	case 2:
		p.constant()
	case 3:
		var axes []int64
		for a := 0; a < rank; a++ {
			if r.Intn(2) == 0 {
				axes = append(axes, int64(a))
			}
		}
		p.emit([]ir.Op{ir.OpReduceSum, ir.OpReduceMax}[r.Intn(2)], &ir.AxesAttr{Axes: append([]int64{}, axes...), KeepDims: r.Intn(2) == 0}, nil, x)
	case 4:
		perm := make([]int64, rank)
		for i, v := range r.Perm(rank) {
			perm[i] = int64(v)
		}
		p.emit(ir.OpTranspose, &ir.PermAttr{Perm: perm}, nil, x)
	case 5:
		p.emit(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpDir(r.Intn(6))}, nil, x, x)
		if c := p.vals[len(p.vals)-1]; c.Type.DType == ir.I1 {
			p.emit(ir.OpSelect, nil, nil, c, x, x)
		}
	case 6:
		if n, ok := x.Type.NumElements(); ok {
			t := ir.Tensor(x.Type.DType, n)
			p.emit(ir.OpReshape, nil, []ir.Type{t}, x)
		}
	case 7:
		dts := []ir.DType{ir.F32, ir.BF16, ir.I32, ir.I1, ir.U8}
		p.emit(ir.OpConvert, nil, []ir.Type{x.Type.WithDType(dts[r.Intn(len(dts))])}, x)
	case 8:
		if rank > 0 && !x.Type.Shape[rank-1].Symbolic() {
			k := r.Int63n(x.Type.Shape[rank-1].Size + 1)
			p.emit(ir.OpTopK, &ir.TopKAttr{K: k}, nil, x)
		}
	case 9:
		if x.Type.IsStatic() {
			a := &ir.SliceAttr{}
			for _, d := range x.Type.Shape {
				s := r.Int63n(d.Size + 1)
				a.Start = append(a.Start, s)
				a.Limit = append(a.Limit, s+r.Int63n(d.Size-s+1))
				a.Stride = append(a.Stride, 1+r.Int63n(2))
			}
			p.emit(ir.OpSlice, a, nil, x)
		}
	case 10:
		if rank > 0 {
			p.emit(ir.OpGelu, &ir.GeluAttr{Approximate: r.Intn(2) == 0}, nil, x)
			p.emit(ir.OpSoftmax, &ir.AxisAttr{Axis: int64(r.Intn(rank))}, nil, x)
		}
	case 11:
		if rank > 0 {
			last := x.Type.Shape[rank-1]
			st := ir.Type{DType: x.Type.DType, Shape: []ir.Dim{last}}
			if !last.Symbolic() {
				s := p.b.Const(st, propValues[r.Intn(len(propValues))])
				p.emit(ir.OpLayerNorm, &ir.EpsAttr{Eps: propValues[r.Intn(7)]}, nil, x, s, s)
			}
		}
	case 12:
		if rank > 0 && x.Type.IsStatic() {
			p.emit(ir.OpConcat, &ir.AxisAttr{Axis: int64(r.Intn(rank))}, nil, x, x)
			p.emit(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{ir.Tensor(x.Type.DType, 2)}, p.b.Const(ir.Scalar(x.Type.DType), 1.5))
		}
	case 13:
		if len(callees) == 0 {
			return
		}
		g := callees[r.Intn(len(callees))]
		args := make([]*ir.Value, len(g.Params))
		for i, gp := range g.Params {
			for _, v := range p.vals {
				if v.Type.Equal(gp.Type) {
					args[i] = v
				}
			}
			if args[i] == nil {
				if !gp.Type.IsStatic() || gp.Type.Layout != nil {
					return
				}
				args[i] = p.b.Const(gp.Type, propValues[r.Intn(len(propValues))])
			}
		}
		p.emit(ir.OpCall, &ir.CallAttr{Callee: g.Name}, append([]ir.Type{}, g.Results...), args...)
	}
}

// constant adds a literal of a random static type: a splat or every element.
func (p *propFunc) constant() {
	r := p.r
	dts := []ir.DType{ir.F32, ir.BF16, ir.F16, ir.F64, ir.I32, ir.I8, ir.U8, ir.U32, ir.I64, ir.I1}
	dt := dts[r.Intn(len(dts))]
	shapes := [][]int64{{}, {3}, {2, 2}, {0}, {2, 0}, {1}, {2, 1, 2}}
	t := ir.Tensor(dt, shapes[r.Intn(len(shapes))]...)
	n, _ := t.NumElements()
	count := int(n)
	if r.Intn(3) == 0 {
		count = 1
	}
	var lit *ir.Literal
	if dt.IsFloat() {
		vals := make([]float64, count)
		for i := range vals {
			vals[i] = propValues[r.Intn(len(propValues))] * float64(1+r.Intn(3))
		}
		lit = ir.NewLiteral(t, vals)
	} else {
		lo, hi := dt.IntRange()
		vals := make([]int64, count)
		for i := range vals {
			switch r.Intn(3) {
			case 0:
				vals[i] = lo
			case 1:
				vals[i] = hi
			default:
				vals[i] = int64(r.Intn(7)) - 3
			}
		}
		lit = ir.NewIntLiteral(t, vals)
	}
	p.emit(ir.OpConstant, &ir.ConstAttr{Value: lit}, []ir.Type{t})
}
