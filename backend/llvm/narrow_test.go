package llvm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestNarrowOperands: a dot_general operand that is an f32 convert of an
// f16/bf16 value is read at its own width by every product kernel (the
// streamed one, the swapped one, the blocked one with either packing),
// the convert is never materialised unless something else uses it, and
// the numbers are the reference executor's.
func TestNarrowOperands(t *testing.T) {
	b := testBackend(t)
	b.bf16 = bf16Widen // the widening kernels on every host (bf16dot_test.go has vdpbf16ps)
	for _, c := range []struct {
		name           string
		m, k, n        int64
		xdt, wdt       string
		wT, alsoReturn bool // w stored [N, K]; the converted w returned too
		steps          string
	}{
		{"gemv", 1, 40, 24, "f32", "bf16", true, false, "gemv"},
		{"gemv-f16", 3, 64, 20, "f32", "f16", true, false, "gemv"},
		// 8 rhs rows at a time, past 64-row blocks, a rest of 6 and K off 8
		{"gemv-narrow-groups", 2, 45, 150, "f32", "bf16", true, false, "gemv"},
		{"gemv-both", 6, 45, 16, "bf16", "bf16", true, false, "gemv"},
		{"swapped", 24, 77, 32, "f32", "bf16", true, false, "dot_general (swapped)"},
		{"blocked-T", 70, 300, 40, "f32", "bf16", true, false, "dot_general"},
		{"blocked-T-f16", 70, 300, 40, "f32", "f16", true, false, "dot_general"},
		{"swapped-f16", 40, 33, 16, "f32", "f16", true, false, "dot_general (swapped)"},
		{"blocked", 70, 33, 40, "f32", "f16", false, false, "dot_general"},
		{"blocked-lhs", 30, 50, 20, "bf16", "f32", false, false, "dot_general"},
		{"used-twice", 1, 40, 24, "f32", "bf16", true, true, "loop convert; gemv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wShape, contract := fmt.Sprintf("%d,%d", c.k, c.n), "rhs_contract=[0]"
			if c.wT {
				wShape, contract = fmt.Sprintf("%d,%d", c.n, c.k), "rhs_contract=[1]"
			}
			var body strings.Builder
			x, w := "%x", "%w"
			if c.xdt != "f32" {
				fmt.Fprintf(&body, "  %%x32 = convert %%x : f32[%d,%d]\n", c.m, c.k)
				x = "%x32"
			}
			if c.wdt != "f32" {
				fmt.Fprintf(&body, "  %%w32 = convert %%w : f32[%s]\n", wShape)
				w = "%w32"
			}
			fmt.Fprintf(&body, "  %%d = dot_general %s, %s {lhs_contract=[1], %s} : f32[%d,%d]\n", x, w, contract, c.m, c.n)
			rets, results := "%d", fmt.Sprintf("f32[%d,%d]", c.m, c.n)
			if c.alsoReturn {
				rets, results = "%d, %w32", results+", f32["+wShape+"]"
			}
			src := fmt.Sprintf("func @f(%%x: %s[%d,%d], %%w: %s[%s]) -> (%s) {\n%s  return %s\n}\n",
				c.xdt, c.m, c.k, c.wdt, wShape, results, body.String(), rets)
			exe := compileText(t, "narrow", []byte(src))
			xe := differential(t, b, exe.Module, exe.Entry, 3)
			var got []string
			for _, st := range xe.plan.steps {
				got = append(got, st.what)
			}
			if strings.Join(got, "; ") != c.steps {
				t.Errorf("plan:\n%s\nwant steps: %s", xe.plan, c.steps)
			}
		})
	}
}

// TestNarrowDirect: a dot_general written with bf16 operands and an f32
// result (a wider result type, as StableHLO allows) runs on the same
// kernels as converted operands, with the reference executor's numbers.
func TestNarrowDirect(t *testing.T) {
	b := testBackend(t)
	b.bf16 = bf16Widen
	for _, c := range []struct {
		m     int64
		steps string
	}{{2, "gemv"}, {20, "dot_general"}, {80, "dot_general"}} {
		t.Run(fmt.Sprint(c.m), func(t *testing.T) {
			src := fmt.Sprintf("func @f(%%x: bf16[%d,48], %%w: bf16[32,48]) -> f32[%d,32] {\n"+
				"  %%d = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[%d,32]\n  return %%d\n}\n", c.m, c.m, c.m)
			exe := compileText(t, "direct", []byte(src))
			xe := differential(t, b, exe.Module, exe.Entry, 5)
			if len(xe.plan.steps) != 1 || xe.plan.steps[0].what != c.steps {
				t.Errorf("plan:\n%s\nwant one step: %s", xe.plan, c.steps)
			}
		})
	}
}

// TestNarrowAcrossGroups: a bf16 matrix converted in one group and used in
// later ones, as a model converts its weights first and uses them layers
// later. A product in a later group still reads it narrow; a transpose
// written before a call that separates it from its ragged_dot is moved
// beside the ragged_dot (sunk), where it stays virtual: the ragged_dot
// reads the bf16 weights as stored, and the numbers are the reference's.
func TestNarrowAcrossGroups(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct {
		name, body, steps string
	}{
		{"dot", "  %c = convert %w : f32[2,16,24]\n  %x2 = call @g(%x)\n  %d = dot_general %x2, %c {lhs_contract=[1], rhs_contract=[2]} : f32[20,2,16]\n  %y = reshape %d : f32[20,32]\n",
			"loop exp; dot_general (swapped); loop reshape"},
		{"ragged", "  %c = convert %w : f32[2,16,24]\n  %t = transpose %c {perm=[0,2,1]} : f32[2,24,16]\n  %x2 = call @g(%x)\n  %z = ragged_dot %x2, %t, %s\n  %y = concat %z, %z {axis=1} : f32[20,32]\n",
			"loop exp; ragged_dot (rhs [g,n,k]); loop concat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "func @g(%a: f32[20,24]) -> f32[20,24] {\n  %e = exp %a\n  return %e\n}\n\n" +
				"func @f(%x: f32[20,24], %w: bf16[2,16,24], %s: i32[2]) -> f32[20,32] {\n" + c.body + "  return %y\n}\n"
			m, err := tir.Parse("groups.tir", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			f := m.Func("f")
			in := cpu.RandomInputs(f, 2)
			in[2] = backend.FromInts(ir.Tensor(ir.I32, 2), 7, 13)
			x, err := b.compile(m, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, x, m, f, in)
			var got []string
			for _, st := range x.plan.steps {
				got = append(got, st.what)
			}
			if strings.Join(got, "; ") != c.steps {
				t.Errorf("plan:\n%s\nwant steps: %s", x.plan, c.steps)
			}
		})
	}
}

// TestNarrowStackedLoopSunk: as a model's layer loop leaves them, every
// stacked bf16 weight is sliced and converted at the top of the body and
// the products come after a norm that is a step of its own (an input
// fusion). The slices and converts are planned beside their products
// (sunk), which read the layers where they lie, bf16: no step copies or
// converts a layer's weights (each iteration converted them all to f32,
// which made the bf16 decode step of Qwen3-0.6B 4.5x slower than f32's).
func TestNarrowStackedLoopSunk(t *testing.T) {
	const src = `func @main(%x0: f32[2,40], %g: f32[40], %wu: bf16[3,24,40], %wd: bf16[3,40,24]) -> f32[2,40] {
  %z = constant 0 : i32[]
  %i, %x, %gg, %a, %b = while %z, %x0, %g, %wu, %wd cond (%i: i32[], %x: f32[2,40], %gg: f32[40], %a: bf16[3,24,40], %b: bf16[3,40,24]) {
      %n = constant 3 : i32[]
      %go = compare %i, %n {dir=lt}
      return %go
    } do (%i: i32[], %x: f32[2,40], %gg: f32[40], %a: bf16[3,24,40], %b: bf16[3,40,24]) {
      %zz = constant 0 : i32[]
      %su = dynamic_slice %a, %i, %zz, %zz {sizes=[1,24,40]} : bf16[1,24,40]
      %cu = fusion %su {kind=loop} : f32[24,40] (%p0: bf16[1,24,40]) {
        %ru = reshape %p0 : bf16[24,40]
        %c0 = convert %ru : f32[24,40]
        return %c0
      }
      %sd = dynamic_slice %b, %i, %zz, %zz {sizes=[1,40,24]} : bf16[1,40,24]
      %cd = fusion %sd {kind=loop} : f32[40,24] (%p3: bf16[1,40,24]) {
        %rd = reshape %p3 : bf16[40,24]
        %c1 = convert %rd : f32[40,24]
        return %c1
      }
      %xn = fusion %x, %gg {kind=input} : f32[2,40] (%q0: f32[2,40], %q1: f32[40]) {
        %nr = rms_norm %q0, %q1 {eps=1e-06}
        return %nr
      }
      %t = fusion %xn, %cu {kind=output} : f32[2,24] (%p1: f32[2,40], %p2: f32[24,40]) {
        %h = dot_general %p1, %p2 {lhs_contract=[1], rhs_contract=[1]} : f32[2,24]
        %t1 = tanh %h
        return %t1
      }
      %y = fusion %t, %cd, %x {kind=output} : f32[2,40] (%p4: f32[2,24], %p5: f32[40,24], %p6: f32[2,40]) {
        %d = dot_general %p4, %p5 {lhs_contract=[1], rhs_contract=[1]} : f32[2,40]
        %r = add %d, %p6
        return %r
      }
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %y, %gg, %a, %b
    }
  return %x
}
`
	b := testBackend(t)
	b.bf16 = bf16Widen
	m, f, x := compileSrc(t, b, src)
	var products []string
	for _, st := range x.plan.steps {
		if strings.Contains(st.what, "gemv") || strings.Contains(st.what, "dot") {
			products = append(products, st.what)
		}
		if strings.Contains(st.what, "convert") || strings.Contains(st.what, "reshape") || strings.Contains(st.what, "copy") {
			t.Errorf("step %q copies or converts a layer's weights:\n%s", st.what, x.plan)
		}
	}
	if got := strings.Join(products, "; "); got != "gemv+tanh; gemv+add" {
		t.Errorf("products %q, want %q:\n%s", got, "gemv+tanh; gemv+add", x.plan)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 9))
}

// TestNarrowStackedLoop: a loop over stacked bf16 weights as the fusion
// pass leaves a model's layer loop: each layer's weight is a loop fusion
// of reshape and convert of a dynamic_slice, and a product with an
// epilogue sits in an output fusion. The products read the weights where
// they are, bf16 (operandSource): no step copies or converts them, for
// the product in the output fusion too; the numbers are the reference
// executor's.
func TestNarrowStackedLoop(t *testing.T) {
	const src = `func @main(%x0: f32[2,40], %wu: bf16[3,24,40], %wd: bf16[3,40,24]) -> f32[2,40] {
  %z = constant 0 : i32[]
  %i, %x, %a, %b = while %z, %x0, %wu, %wd cond (%i: i32[], %x: f32[2,40], %a: bf16[3,24,40], %b: bf16[3,40,24]) {
      %n = constant 3 : i32[]
      %go = compare %i, %n {dir=lt}
      return %go
    } do (%i: i32[], %x: f32[2,40], %a: bf16[3,24,40], %b: bf16[3,40,24]) {
      %zz = constant 0 : i32[]
      %su = dynamic_slice %a, %i, %zz, %zz {sizes=[1,24,40]} : bf16[1,24,40]
      %cu = fusion %su {kind=loop} : f32[24,40] (%p0: bf16[1,24,40]) {
        %ru = reshape %p0 : bf16[24,40]
        %c0 = convert %ru : f32[24,40]
        return %c0
      }
      %t = fusion %x, %cu {kind=output} : f32[2,24] (%p1: f32[2,40], %p2: f32[24,40]) {
        %h = dot_general %p1, %p2 {lhs_contract=[1], rhs_contract=[1]} : f32[2,24]
        %t1 = tanh %h
        return %t1
      }
      %sd = dynamic_slice %b, %i, %zz, %zz {sizes=[1,40,24]} : bf16[1,40,24]
      %cd = fusion %sd {kind=loop} : f32[40,24] (%p3: bf16[1,40,24]) {
        %rd = reshape %p3 : bf16[40,24]
        %c1 = convert %rd : f32[40,24]
        return %c1
      }
      %y = fusion %t, %cd, %x {kind=output} : f32[2,40] (%p4: f32[2,24], %p5: f32[40,24], %p6: f32[2,40]) {
        %d = dot_general %p4, %p5 {lhs_contract=[1], rhs_contract=[1]} : f32[2,40]
        %r = add %d, %p6
        return %r
      }
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %y, %a, %b
    }
  return %x
}
`
	b := testBackend(t)
	b.bf16 = bf16Widen
	m, f, x := compileSrc(t, b, src)
	var products []string
	for _, st := range x.plan.steps {
		if strings.Contains(st.what, "gemv") || strings.Contains(st.what, "dot") {
			products = append(products, st.what)
		}
		if strings.Contains(st.what, "convert") || strings.Contains(st.what, "reshape") || strings.Contains(st.what, "copy") {
			t.Errorf("step %q copies or converts a layer's weights:\n%s", st.what, x.plan)
		}
	}
	if got := strings.Join(products, "; "); got != "gemv+tanh; gemv+add" {
		t.Errorf("products %q, want %q:\n%s", got, "gemv+tanh; gemv+add", x.plan)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 5))
}

// TestRaggedStackedLoop: a layer loop of an MoE as the fusion pass leaves
// it: each layer's experts, stored [layers, experts, out, in], are one loop
// fusion of slice, reshape, convert (bf16 weights) and transpose beside
// the ragged_dot. The ragged_dot reads the layer's experts where they lie
// in the stack, at their own width: no step transposes, converts or copies
// them (each call did, 1.8 s a projection of a bf16 Qwen3-30B-A3B-shaped
// layer); the numbers are the reference executor's.
func TestRaggedStackedLoop(t *testing.T) {
	for _, dt := range []string{"bf16", "f32"} {
		t.Run(dt, func(t *testing.T) {
			cv := "%c0 = convert %r0 : f32[4,24,16]"
			if dt == "f32" {
				cv = "%c0 = reshape %p0 : f32[4,24,16]" // no convert
			}
			src := fmt.Sprintf(`func @main(%%x0: f32[6,16], %%w: %[1]s[3,4,24,16], %%s: i32[4]) -> f32[6,16] {
  %%z = constant 0 : i32[]
  %%i, %%x, %%ww, %%ss = while %%z, %%x0, %%w, %%s cond (%%i: i32[], %%x: f32[6,16], %%w: %[1]s[3,4,24,16], %%s: i32[4]) {
      %%n = constant 3 : i32[]
      %%go = compare %%i, %%n {dir=lt}
      return %%go
    } do (%%i: i32[], %%x: f32[6,16], %%w: %[1]s[3,4,24,16], %%s: i32[4]) {
      %%zz = constant 0 : i32[]
      %%sl = dynamic_slice %%w, %%i, %%zz, %%zz, %%zz {sizes=[1,4,24,16]} : %[1]s[1,4,24,16]
      %%wt = fusion %%sl {kind=loop} : f32[4,16,24] (%%p0: %[1]s[1,4,24,16]) {
        %%r0 = reshape %%p0 : %[1]s[4,24,16]
        %[2]s
        %%t0 = transpose %%c0 {perm=[0,2,1]} : f32[4,16,24]
        return %%t0
      }
      %%h = ragged_dot %%x, %%wt, %%s : f32[6,24]
      %%y = slice %%h {start=[0,0], limit=[6,16], stride=[1,1]} : f32[6,16]
      %%t = tanh %%y
      %%one = constant 1 : i32[]
      %%i1 = add %%i, %%one
      return %%i1, %%t, %%w, %%s
    }
  return %%x
}
`, dt, cv)
			b := testBackend(t)
			b.bf16 = bf16Widen
			m, f, x := compileSrc(t, b, src)
			for _, st := range x.plan.steps {
				if strings.Contains(st.what, "transpose") || strings.Contains(st.what, "convert") || strings.Contains(st.what, "copy") {
					t.Errorf("step %q copies, converts or transposes the layer's experts:\n%s", st.what, x.plan)
				}
			}
			if !strings.Contains(x.plan.String(), "ragged_dot (rhs [g,n,k])") {
				t.Errorf("the ragged_dot does not read the experts as stored:\n%s", x.plan)
			}
			in := cpu.RandomInputs(f, 4)
			in[2] = backend.FromInts(ir.Tensor(ir.I32, 4), 2, 0, 3, 1)
			agree(t, x, m, f, in)
		})
	}
}

// TestNarrowActivations: a bf16 checkpoint's products as models' linear
// writes them, convert(convert(x, bf16), f32) times a converted bf16
// weight: the norm's fusion writes the bf16 activations (passes' fuse
// leaves the widening convert apart), and both products read them at
// their width, on vdpbf16ps: the query's directly, the value's, whose
// result is transposed into heads in its output fusion and which a norm
// (a step of its own) separates from the convert, through the fusion's
// binding. No step writes the activations in f32; the numbers are the
// reference executor's.
func TestNarrowActivations(t *testing.T) {
	if hostBF16(cpuFeatures()) != bf16AVX512 {
		t.Skip("this CPU has no avx512_bf16")
	}
	b := testBackend(t)
	src := `func @f(%x: f32[32,64], %s: f32[64], %wq: bf16[48,64], %wv: bf16[32,64], %s2: f32[48]) -> (f32[32,48], f32[2,32,16]) {
  %n = rms_norm %x, %s {eps=1e-06}
  %nb = convert %n : bf16[32,64]
  %n32 = convert %nb : f32[32,64]
  %wq32 = convert %wq : f32[48,64]
  %q = dot_general %n32, %wq32 {lhs_contract=[1], rhs_contract=[1]} : f32[32,48]
  %qn = rms_norm %q, %s2 {eps=1e-06}
  %wv32 = convert %wv : f32[32,64]
  %v = dot_general %n32, %wv32 {lhs_contract=[1], rhs_contract=[1]} : f32[32,32]
  %vr = reshape %v : f32[32,2,16]
  %vt = transpose %vr {perm=[1,0,2]} : f32[2,32,16]
  return %qn, %vt
}
`
	exe := compileText(t, "activations", []byte(src))
	xe := differential(t, b, exe.Module, exe.Entry, 4)
	var got []string
	for _, st := range xe.plan.steps {
		got = append(got, st.what)
	}
	want := "rms_norm; loop convert; dot_general (swapped, vdpbf16ps); rms_norm; dot_general (swapped, vdpbf16ps); loop transpose"
	if strings.Join(got, "; ") != want {
		t.Errorf("plan:\n%s\nwant steps: %s", xe.plan, want)
	}
}

// TestConstantProductOperand: a product whose operand is a constant (a
// splat folded from log1p of one) compiles; operandSource stopped at
// nothing and indexed the constant's missing operand (progen seed 20085:
// "internal error in the llvm backend ... index out of range").
func TestConstantProductOperand(t *testing.T) {
	b := testBackend(t)
	for _, dt := range []string{"f16", "f32"} {
		src := strings.ReplaceAll(`func @main(%b: DT[1,2], %c: DT[1,1]) -> (DT[2,2], DT[2,2]) {
  %a = constant 0.0953 : DT[2,1]
  %y = dot_general %a, %b {lhs_contract=[1], rhs_contract=[0]} : DT[2,2]
  %cb = broadcast %c {dims=[0,1]} : DT[1,2]
  %z = dot_general %a, %cb {lhs_contract=[1], rhs_contract=[0]} : DT[2,2]
  return %y, %z
}
`, "DT", dt)
		exe := compileText(t, "constant_operand_"+dt, []byte(src))
		differential(t, b, exe.Module, exe.Entry, 1)
	}
}
