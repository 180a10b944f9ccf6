package autodiff_test

import (
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestVJPText pins the contract: the entry's parameters, then one cotangent per float
// result; the entry's results, then one gradient per float parameter. The i32
// parameter gets no gradient and the i32 result no cotangent.
func TestVJPText(t *testing.T) {
	src := `func @main(%x: f32[3], %w: f32[3], %n: i32[]) -> (f32[], i32[]) {
  %y = mul %x, %w
  %s = reduce_sum %y {axes=[0]}
  %t = tanh %s
  return %t, %n
}
`
	want := `func @main_vjp(%x: f32[3], %w: f32[3], %n: i32[], %ct0: f32[]) -> (f32[], i32[], f32[3], f32[3]) {
  %y = mul %x, %w : f32[3]
  %s = reduce_sum %y {axes=[0]} : f32[]
  %t = tanh %s : f32[]
  %0 = constant 1.0 : f32[]
  %1 = mul %t, %t : f32[]
  %2 = sub %0, %1 : f32[]
  %3 = mul %ct0, %2 : f32[]
  %4 = broadcast %3 {dims=[]} : f32[3]
  %5 = mul %4, %w : f32[3]
  %6 = mul %4, %x : f32[3]
  return %t, %n, %5, %6
}
`
	got := vjpText(t, src)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if again := vjpRoundTrip(t, got); again != got {
		t.Errorf("the VJP does not print back the same after parsing:\n%s", again)
	}
}

// TestVJPUnusedAndPassedThrough: a parameter the results do not depend on gets a zero
// gradient; a result that is a parameter passes its cotangent straight back, and two
// uses accumulate.
func TestVJPUnusedAndPassedThrough(t *testing.T) {
	src := `func @f(%a: f32[2], %b: f32[2]) -> (f32[2], f32[2]) {
  %c = add %a, %a
  return %a, %c
}
`
	want := `func @f_vjp(%a: f32[2], %b: f32[2], %ct0: f32[2], %ct1: f32[2]) -> (f32[2], f32[2], f32[2], f32[2]) {
  %c = add %a, %a : f32[2]
  %0 = add %ct0, %ct1 : f32[2]
  %1 = add %0, %ct1 : f32[2]
  %2 = constant 0.0 : f32[2]
  return %a, %c, %1, %2
}
`
	if got := vjpText(t, src); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestVJPErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"symbolic", "func @f(%x: f32[B,4]) -> f32[B,4] {\n  %y = exp %x\n  return %y\n}\n",
			"symbolic.tir:1:9: error: cannot differentiate @f: parameter %x has the symbolic type f32[B,4]; give its sizes (--dim)"},
		{"fusion", "func @f(%x: f32[4]) -> f32[4] {\n  %y = fusion %x {kind=loop} : f32[4] (%p: f32[4]) {\n    %e = exp %p : f32[4]\n    return %e\n  }\n  return %y\n}\n",
			"fusion.tir:2:3: error: cannot differentiate fusion: autodiff runs on unfused IR, before the fuse pass"},
		{"custom_call", "func @f(%x: f32[4]) -> f32[4] {\n  %y = custom_call @k(%x) {fallback=@g} : f32[4]\n  return %y\n}\n\nfunc @g(%a: f32[4]) -> f32[4] {\n  %e = exp %a\n  return %e\n}\n",
			"custom_call.tir:2:3: error: cannot differentiate custom_call @k: its kernel is opaque to tpucc: differentiate its fallback function instead"},
		{"real", "func @f(%x: f32[4]) -> f32[4] {\n  %z = complex %x, %x\n  %y = real %z\n  return %y\n}\n",
			"real.tir:3:3: error: cannot differentiate real: complex values are not differentiated yet (the rules are real; no convention for complex cotangents is chosen)"},
		{"complex_param", "func @f(%x: c64[4]) -> f32[4] {\n  %y = real %x\n  return %y\n}\n",
			"complex_param.tir:1:9: error: cannot differentiate @f: parameter %x is c64[4]; complex values are not differentiated yet (the rules are real; no convention for complex cotangents is chosen)"},
		{"complex_exp", "func @f(%x: f32[4]) -> f64[4] {\n  %z = complex %x, %x\n  %y = exp %z\n  %c = convert %y : f64[4]\n  return %c\n}\n",
			"complex_exp.tir:4:3: error: cannot differentiate convert: complex values are not differentiated yet (the rules are real; no convention for complex cotangents is chosen)"},
		{"complex_result", "func @f(%x: f32[4]) -> c64[4] {\n  %z = complex %x, %x\n  return %z\n}\n",
			"complex_result.tir:1:1: error: cannot differentiate @f: result 0 is c64[4]; complex values are not differentiated yet (the rules are real; no convention for complex cotangents is chosen)"},
		{"pool_init", "func @f(%x: f32[4,4]) -> f32[2,2] {\n  %z = constant 0.0 : f32[]\n  %y = reduce_window %x, %z {kind=max, window=[2,2], stride=[2,2]}\n  return %y\n}\n",
			"pool_init.tir:3:3: error: cannot differentiate reduce_window: a window maximum or minimum is differentiated only with init -inf or +inf (the identity)"},
		{"pool_dilated", "func @f(%x: f32[4,4]) -> f32[2,2] {\n  %z = constant -inf : f32[]\n  %y = reduce_window %x, %z {kind=max, window=[2,2], window_dilation=[2,2]}\n  return %y\n}\n",
			"pool_dilated.tir:3:3: error: cannot differentiate reduce_window: a window maximum or minimum with dilations is not differentiated (select_and_scatter has none)"},
		{"pool_prod", "func @f(%x: f32[4,4], %z: f32[]) -> f32[3,3] {\n  %y = reduce_window %x, %z {kind=prod, window=[2,2]}\n  return %y\n}\n",
			"pool_prod.tir:2:3: error: cannot differentiate reduce_window: the product of a window is not differentiated"},
	}
	for _, c := range cases {
		m, err := tir.Parse(c.name+".tir", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = autodiff.Module(m)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got error %v, want %s", c.name, err, c.want)
		}
	}
}

func vjpText(t *testing.T, src string) string {
	t.Helper()
	m, err := tir.Parse("p.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	v, err := autodiff.Module(m)
	if err != nil {
		t.Fatal(err)
	}
	return ir.Print(v)
}

func vjpRoundTrip(t *testing.T, text string) string {
	t.Helper()
	m, err := tir.Parse("vjp.tir", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return ir.Print(m)
}
