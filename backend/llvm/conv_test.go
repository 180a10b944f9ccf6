package llvm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// TestConvIm2col: float convolutions in every layout and window option run
// as im2col and the GEMM with the reference executor's numbers (within the
// oracle's tolerance); integer ones run on the reference executor, with
// the reason.
func TestConvIm2col(t *testing.T) {
	b := testBackend(t)
	for i, c := range []struct {
		sig, attrs string
		gen        bool
	}{
		{"%x: f32[2,9,9,5], %w: f32[3,3,5,7]) -> f32[2,5,9,7]", "lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2], stride=[2,1], pad_low=[1,1], pad_high=[1,1]", true},
		{"%x: f32[2,4,6,6], %w: f32[8,4,3,3]) -> f32[2,8,6,6]", "lhs_dims=[0,1,2,3], rhs_dims=[0,1,2,3], out_dims=[0,1,2,3], pad_low=[1,1], pad_high=[1,1]", true},
		{"%x: f32[1,5,5,4], %w: f32[3,3,4,8]) -> f32[1,2,9,8]", "lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2], stride=[2,1], pad_low=[1,1], pad_high=[0,1], lhs_dilation=[1,2]", true},
		{"%x: f32[2,4,7], %w: f32[6,2,3]) -> f32[2,6,7]", "lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2], pad_low=[1], pad_high=[1], feature_groups=2", true},
		{"%x: f32[4,3,5,5], %w: f32[4,3,2,2]) -> f32[2,4,4,4]", "lhs_dims=[0,1,2,3], rhs_dims=[0,1,2,3], out_dims=[0,1,2,3], batch_groups=2", true},
		{"%x: f32[7,1,3,6], %w: f32[2,3,3,2]) -> f32[1,2,6,4]", "lhs_dims=[3,2,0,1], rhs_dims=[0,1,2,3], out_dims=[2,1,3,0], pad_low=[-1,0], pad_high=[2,1], rhs_dilation=[2,1]", true},
		{"%x: f32[1,2,5,4,3], %w: f32[3,2,2,2,2]) -> f32[1,3,4,3,2]", "lhs_dims=[0,1,2,3,4], rhs_dims=[0,1,2,3,4], out_dims=[0,1,2,3,4]", true},
		{"%x: bf16[1,8,8,6], %w: bf16[3,3,6,4]) -> bf16[1,8,8,4]", "lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2], pad_low=[1,1], pad_high=[1,1]", true},
		{"%x: bf16[1,8,8,6], %w: bf16[3,3,6,4]) -> f32[1,6,6,4]", "lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2]", true},
		{"%x: i32[1,2,5], %w: i32[3,2,2]) -> i32[1,3,4]", "lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]", false},
	} {
		res := c.sig[strings.LastIndex(c.sig, " ")+1:]
		src := fmt.Sprintf("func @f(%s {\n  %%y = convolution %%x, %%w {%s} : %s\n  return %%y\n}\n", c.sig, c.attrs, res)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			m, f, x := compileSrc(t, b, src)
			agree(t, x, m, f, cpu.RandomInputs(f, int64(i)))
			if gen := x.plan.generated[ir.OpConvolution] == 1 && x.plan.fallback[ir.OpConvolution] == 0; gen != c.gen {
				t.Errorf("%s: generated %v, want %v (fallbacks %v)", src, gen, c.gen, (&Executable{plan: x.plan}).Fallbacks())
			}
		})
	}
}

// TestConvProgen: the convolutions of generated programs (any dimension
// numbers, negative padding, both dilations, groups), each alone, agree
// with the reference executor.
func TestConvProgen(t *testing.T) {
	b := testBackend(t)
	n := 0
	for seed := int64(0); seed < 1000 && n < 16; seed++ {
		for _, f := range progen.Generate(seed, progen.Config{}).Funcs {
			f.Body.Walk(func(in *ir.Instr) {
				if in.Op != ir.OpConvolution || n >= 16 {
					return
				}
				n++
				m := ir.NewModule("conv.tir")
				g := m.NewFunc("f", nil, []ir.Type{in.Args[0].Type, in.Args[1].Type}, []ir.Type{in.Results[0].Type}, ir.Pos{})
				bd := ir.NewBuilder(g)
				c, err := bd.Emit(in.Op, in.Attr, []ir.Type{in.Results[0].Type}, g.Params...)
				if err != nil {
					t.Fatal(err)
				}
				bd.Return(c.Results...)
				differential(t, b, m, g, seed)
			})
		}
	}
	if n < 8 {
		t.Errorf("only %d convolutions in 1000 generated programs", n)
	}
}

// TestReduceWindowGather: pooling (max with -inf, sums with padding and
// both dilations, windows over the channels, integers, one-element
// windows) runs as a take and a reduction with the reference executor's
// numbers.
func TestReduceWindowGather(t *testing.T) {
	b := testBackend(t)
	for i, c := range []struct{ sig, body string }{
		{"%x: f32[2,8,8,5]) -> f32[2,4,4,5]", "%i = constant -inf : f32[]\n  %y = reduce_window %x, %i {kind=max, window=[1,2,2,1], stride=[1,2,2,1]}"},
		{"%x: f32[1,6,7,3]) -> f32[1,4,13,3]", "%i = constant 0.5 : f32[]\n  %y = reduce_window %x, %i {kind=sum, window=[1,3,3,1], pad_low=[0,1,1,0], pad_high=[0,1,1,0], base_dilation=[1,1,2,1], window_dilation=[1,2,1,1]}"},
		{"%x: f32[4,6]) -> f32[4,3]", "%i = constant 1.0 : f32[]\n  %y = reduce_window %x, %i {kind=min, window=[1,3], stride=[1,2], pad_high=[0,1]}"},
		{"%x: i32[3,5,4]) -> i32[2,4,2]", "%i = constant 0 : i32[]\n  %y = reduce_window %x, %i {kind=sum, window=[2,2,3], stride=[1,1,2], pad_low=[0,0,1]}"},
		{"%x: bf16[2,6]) -> bf16[2,6]", "%i = constant 2.0 : bf16[]\n  %y = reduce_window %x, %i {kind=prod, window=[1,1]}"},
	} {
		res := c.sig[strings.LastIndex(c.sig, " ")+1:]
		src := fmt.Sprintf("func @f(%s {\n  %s : %s\n  return %%y\n}\n", c.sig, c.body, res)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			m, f, x := compileSrc(t, b, src)
			agree(t, x, m, f, cpu.RandomInputs(f, int64(i)))
			if x.plan.generated[ir.OpReduceWindow] != 1 || x.plan.fallback[ir.OpReduceWindow] != 0 {
				t.Errorf("%s: not generated (fallbacks %v)", src, (&Executable{plan: x.plan}).Fallbacks())
			}
		})
	}
}
