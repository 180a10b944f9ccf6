package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func TestComposite(t *testing.T) {
	// softmax([1,2,3]) = [e^-2, e^-1, 1] / (e^-2 + e^-1 + 1).
	s := math.Exp(-2) + math.Exp(-1) + 1
	ax := func(a int64) *ir.AxisAttr { return &ir.AxisAttr{Axis: a} }
	sq5 := math.Sqrt(1.25) // std of [1,2,3,4]
	rms := math.Sqrt(12.5) // rms of [3,4]
	runCases(t, []opCase{
		{name: "relu f32", op: ir.OpRelu, args: ts(F(f32(5), -1, 2, negZero, nan, -inf)), want: ts(F(f32(5), 0, 2, 0, nan, 0))},
		{name: "relu i8", op: ir.OpRelu, args: ts(I(i8(3), -128, 0, 127)), want: ts(I(i8(3), 0, 0, 127))},
		{name: "relu u8", op: ir.OpRelu, args: ts(I(u8(2), 0, 200)), want: ts(I(u8(2), 0, 200))},
		{name: "gelu exact", op: ir.OpGelu, attr: &ir.GeluAttr{},
			args: ts(F(f32(4), 0, 1, 10, -10)), want: ts(F(f32(4), 0, r32(0.8413447460685429), 10, negZero))}, // 1+erf(-10/√2) is 0 in f64 and f32
		{name: "gelu approximate", op: ir.OpGelu, attr: &ir.GeluAttr{Approximate: true},
			args: ts(F(f32(3), 0, 1, -inf)), want: ts(F(f32(3), 0, r32(0.8411919906082768), nan))},
		{name: "gelu bf16", op: ir.OpGelu, attr: &ir.GeluAttr{}, args: ts(F(bf16(1), 1)), want: ts(F(bf16(1), 0.83984375))},
		{name: "silu", op: ir.OpSilu, args: ts(F(f32(3), 0, 1, -inf)), want: ts(F(f32(3), 0, r32(0.7310585786300049), nan))},
		{name: "silu f64", op: ir.OpSilu, args: ts(F(f64(1), 1)), want: ts(F(f64(1), 1/(1+math.Exp(-1))))},

		{name: "softmax", op: ir.OpSoftmax, attr: ax(0),
			args: ts(F(f32(3), 1, 2, 3)), want: ts(F(f32(3), r32(math.Exp(-2)/s), r32(math.Exp(-1)/s), r32(1/s)))},
		{name: "softmax axis 0 of a matrix", op: ir.OpSoftmax, attr: ax(0),
			args: ts(F(f32(2, 2), 5, 1, 5, 2)), want: ts(F(f32(2, 2), 0.5, r32(1/(1+math.E)), 0.5, r32(math.E/(1+math.E))))},
		{name: "softmax -inf entries", op: ir.OpSoftmax, attr: ax(1),
			args: ts(F(f32(2, 2), -inf, 0, -inf, -inf)), want: ts(F(f32(2, 2), 0, 1, nan, nan))},
		{name: "softmax +inf", op: ir.OpSoftmax, attr: ax(0),
			args: ts(F(f32(2), inf, 0)), want: ts(F(f32(2), nan, nan))},
		{name: "softmax bf16 rounds once", op: ir.OpSoftmax, attr: ax(0),
			args: ts(F(bf16(3), 0, 0, 0)), want: ts(F(bf16(3), 0.333984375, 0.333984375, 0.333984375))},
		{name: "softmax empty", op: ir.OpSoftmax, attr: ax(0), args: ts(F(f32(0))), want: ts(F(f32(0)))},
		{name: "log_softmax", op: ir.OpLogSoftmax, attr: ax(0),
			args: ts(F(f32(3), 1, 2, 3)), want: ts(F(f32(3), r32(-2-math.Log(s)), r32(-1-math.Log(s)), r32(-math.Log(s))))},
		{name: "log_softmax -inf", op: ir.OpLogSoftmax, attr: ax(0),
			args: ts(F(f32(2), -inf, 0)), want: ts(F(f32(2), -inf, 0))},

		{name: "layer_norm", op: ir.OpLayerNorm, attr: &ir.EpsAttr{Eps: 0},
			args: ts(F(f32(1, 4), 1, 2, 3, 4), F(f32(4), 1, 1, 1, 2), F(f32(4), 0, 0, 10, 0)),
			want: ts(F(f32(1, 4), r32(-1.5/sq5), r32(-0.5/sq5), r32(10+0.5/sq5), r32(2*1.5/sq5)))},
		{name: "layer_norm eps on a constant row", op: ir.OpLayerNorm, attr: &ir.EpsAttr{Eps: 0.25},
			args: ts(F(f32(2, 2), 3, 3, 1, -1), F(f32(2), 1, 1), F(f32(2), 1, 0)),
			want: ts(F(f32(2, 2), 1, 0, r32(1+1/math.Sqrt(1.25)), r32(-1/math.Sqrt(1.25))))},
		{name: "rms_norm", op: ir.OpRMSNorm, attr: &ir.EpsAttr{Eps: 0},
			args: ts(F(f32(2), 3, 4), F(f32(2), 1, 2)), want: ts(F(f32(2), r32(3/rms), r32(8/rms)))},
		{name: "rms_norm zeros with eps", op: ir.OpRMSNorm, attr: &ir.EpsAttr{Eps: 1e-6},
			args: ts(F(f32(1, 2), 0, 0), F(f32(2), 1, 1)), want: ts(F(f32(1, 2), 0, 0))},
		{name: "rms_norm zeros without eps", op: ir.OpRMSNorm, attr: &ir.EpsAttr{Eps: 0},
			args: ts(F(f32(2), 0, 0), F(f32(2), 1, 1)), want: ts(F(f32(2), nan, nan))},
		{name: "layer_norm f16", op: ir.OpLayerNorm, attr: &ir.EpsAttr{Eps: 0},
			args: ts(F(f16(2), 1, 3), F(f16(2), 1, 1), F(f16(2), 0, 0)), want: ts(F(f16(2), -1, 1))},
		{name: "layer_norm empty rows", op: ir.OpLayerNorm, attr: &ir.EpsAttr{Eps: 0},
			args: ts(F(f32(2, 0)), F(f32(0)), F(f32(0))), want: ts(F(f32(2, 0)))},
	})
}
