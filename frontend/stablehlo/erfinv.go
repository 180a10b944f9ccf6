package stablehlo

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// Giles' approximations of erf⁻¹ ("Approximating the erfinv function", GPU
// Computing Gems Jade, 2011) in the form CHLO's legalisation writes them,
// which is what XLA runs for chlo.erf_inv and what jax.export writes in its
// place: w = -log1p(-x²), a polynomial in a shift of w or √w picked per
// element, times x. Each list is highest degree first.
var (
	// f32: w < 5 uses w - 2.5, else √w - 3.
	erfInvF32Low  = []float64{2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941}
	erfInvF32High = []float64{-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682}
	// f64: w < 6.25 uses w - 3.125, w < 16 √w - 3.25, else √w - 5.
	erfInvF64Low = []float64{-3.6444120640178197e-21, -1.6850591381820166e-19, 1.28584807152564e-18, 1.1157877678025181e-17,
		-1.3331716628546209e-16, 2.0972767875968562e-17, 6.6376381343583238e-15, -4.0545662729752069e-14,
		-8.1519341976054721e-14, 2.6335093153082323e-12, -1.2975133253453532e-11, -5.4154120542946279e-11,
		1.0512122733215323e-09, -4.1126339803469837e-09, -2.9070369957882005e-08, 4.2347877827932404e-07,
		-1.3654692000834679e-06, -1.3882523362786469e-05, 1.8673420803405714e-04, -7.4070253416626698e-04,
		-0.0060336708714301491, 0.24015818242558962, 1.6536545626831027}
	erfInvF64Mid = []float64{2.2137376921775787e-09, 9.075656193888539e-08, -2.7517406297064545e-07, 1.8239629214389228e-08,
		1.5027403968909828e-06, -4.013867526981546e-06, 2.9234449089955446e-06, 1.2475304481671779e-05,
		-4.7318229009055734e-05, 6.8284851459573175e-05, 2.4031110387097894e-05, -3.5503752036284748e-04,
		9.5328937973738049e-04, -0.0016882755560235047, 0.0024914420961078508, -0.0037512085075692412,
		0.0053709145535900636, 1.0052589676941592, 3.0838856104922208}
	erfInvF64High = []float64{-2.7109920616438573e-11, -2.5556418169965252e-10, 1.5076572693500548e-09, -3.789465440126737e-09,
		7.6157012080783394e-09, -1.496002662714924e-08, 2.9147953450901081e-08, -6.7711997758452339e-08,
		2.2900482228026655e-07, -9.9298272942317003e-07, 4.5260625972231537e-06, -1.9681778105531671e-05,
		7.5995277030017761e-05, -2.1503011930044477e-04, -1.3871931833623122e-04, 1.0103004648645344, 4.8499064014085844}
)

// erfInv maps chlo.erf_inv as CHLO's legalisation expands it (f16 and bf16
// through f32), so the numbers are XLA's.
func (bd *builder) erfInv(o *op, args []*ir.Value) *ir.Value {
	return bd.realFloat(o, args, func(x *ir.Value) *ir.Value {
		if x.Type.DType == ir.F64 {
			return bd.erfInvWith(o, x, [][]float64{erfInvF64Low, erfInvF64Mid, erfInvF64High}, []float64{6.25, 16}, []float64{3.125, 3.25, 5})
		}
		return bd.erfInvWith(o, x, [][]float64{erfInvF32Low, erfInvF32High}, []float64{5}, []float64{2.5, 3})
	})
}

// erfInvWith evaluates polys[k] at w - shifts[0] (k = 0) or √w - shifts[k]
// where w < bounds[k] first holds (the last where none does), by one Horner
// chain whose coefficients are selected per element; a step past a
// polynomial's degree keeps the value where that polynomial is in force.
// erf⁻¹(±1) is ±inf.
func (bd *builder) erfInvWith(o *op, x *ir.Value, polys [][]float64, bounds, shifts []float64) *ir.Value {
	k := kit{bd, o, x.Type}
	c, bin, sel := k.c, k.bin, k.sel
	negx := bd.emit(o, ir.OpNeg, nil, nil, x)
	w := bd.emit(o, ir.OpNeg, nil, nil, bd.emit(o, ir.OpLog1p, nil, nil, bin(ir.OpMul, x, negx)))
	in := make([]*ir.Value, len(bounds)) // in[k]: w < bounds[k]
	for k, b := range bounds {
		in[k] = bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, nil, w, c(b))
	}
	root := bd.emit(o, ir.OpSqrt, nil, nil, w)
	var shift []*ir.Value // the shifts of √w, for the bounds after the first
	for _, v := range shifts[1:] {
		shift = append(shift, c(v))
	}
	arg := sel(in[0], bin(ir.OpSub, w, c(shifts[0])), bin(ir.OpSub, root, pickOf(shift, sel, in[1:])))
	p := bd.erfInvHorner(o, polys, arg, c, sel, in)
	inf := bin(ir.OpMul, x, c(math.Inf(1)))
	one := bd.emit(o, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpEQ}, nil, bd.emit(o, ir.OpAbs, nil, nil, x), c(1))
	return sel(one, inf, bin(ir.OpMul, p, x))
}

// erfInvHorner is the Horner chain of erfInvWith: the polynomials (longest
// first) are aligned at their leading coefficients, and a step that only
// the longer ones take keeps the value where a shorter one is in force.
func (bd *builder) erfInvHorner(o *op, polys [][]float64, arg *ir.Value, c func(float64) *ir.Value,
	sel func(p, a, b *ir.Value) *ir.Value, in []*ir.Value) *ir.Value {
	var p *ir.Value
	for i := range polys[0] {
		var live []*ir.Value // step i's coefficients of the polynomials that have one
		for _, poly := range polys {
			if i < len(poly) {
				live = append(live, c(poly[i]))
			}
		}
		next := pickOf(live, sel, in)
		if p != nil {
			next = bd.emit(o, ir.OpAdd, nil, nil, next, bd.emit(o, ir.OpMul, nil, nil, p, arg))
		}
		if p != nil && len(live) < len(polys) {
			next = sel(in[len(live)-1], next, p)
		}
		p = next
	}
	return p
}

// pickOf is vs[k] for the first k < len(vs)-1 whose bound holds, else vs's last.
func pickOf(vs []*ir.Value, sel func(p, a, b *ir.Value) *ir.Value, in []*ir.Value) *ir.Value {
	v := vs[len(vs)-1]
	for k := len(vs) - 2; k >= 0; k-- {
		v = sel(in[k], vs[k], v)
	}
	return v
}
