package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes/padding"
)

// TestPaddingRules checks each op's rule: the template's {N} is the padded
// size (8 in the bucket trace, 5 in the exact one); {2N} is twice it. Every
// parameter's dimension 0 is padded.
func TestPaddingRules(t *testing.T) {
	for _, tc := range []struct {
		name, src, why string
	}{
		{"elementwise", `(%x: f32[{N},4], %y: f32[{N},4]) -> f32[{N},4] {
  %a = add %x, %y
  %e = exp %a
  %c = compare %e, %y {dir=lt}
  %s = select %c, %a, %e
  return %s`, ""},
		{"bias broadcast and matmul", `(%x: f32[{N},4], %w: f32[4,3]) -> f32[{N},3] {
  %h = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[{N},3]
  %b = constant 1.5 : f32[3]
  %bb = broadcast %b {dims=[1]} : f32[{N},3]
  %y = add %h, %bb
  return %y`, ""},
		{"reduce over another axis", `(%x: f32[{N},4]) -> f32[{N}] {
  %t = transpose %x {perm=[1,0]}
  %s = reduce_max %t {axes=[0]}
  return %s`, ""},
		{"row-major reshape", `(%x: f32[{N},4,2]) -> f32[{N},8] {
  %r = reshape %x : f32[{N},8]
  return %r`, ""},
		{"reshape moving the dimension", `(%x: f32[{N},4]) -> f32[4,{N}] {
  %r = reshape %x : f32[4,{N}]
  return %r`, "reshape at p.tir:2 merges or splits arg 0 dim 0"},
		{"reshape merging the dimension", `(%x: f32[{N},4]) -> f32[{4N}] {
  %r = reshape %x : f32[{4N}]
  return %r`, "a dimension of reshape at p.tir:2 is 32 when traced at 8 and 20 at 5: it is not one of the padded dimensions"},
		{"batched contraction", `(%x: f32[{N},4,3], %y: f32[{N},3,2]) -> f32[{N},4,2] {
  %z = dot_general %x, %y {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]} : f32[{N},4,2]
  return %z`, ""},
		{"contraction over zero padding", `(%x: f32[{N},4]) -> f32[4,4] {
  %g = dot_general %x, %x {lhs_contract=[0], rhs_contract=[0]} : f32[4,4]
  return %g`, ""},
		{"contraction over zero times one", `(%x: f32[{N},4]) -> f32[4,4] {
  %e = exp %x
  %g = dot_general %e, %x {lhs_contract=[0], rhs_contract=[0]} : f32[4,4]
  return %g`, ""},
		{"contraction over ones", `(%x: f32[{N},4]) -> f32[4,4] {
  %e = exp %x
  %g = dot_general %e, %e {lhs_contract=[0], rhs_contract=[0]} : f32[4,4]
  return %g`, "dot_general at p.tir:3 contracts over arg 0 dim 0, whose padding is 1.0 on the left and 1.0 on the right (it needs 0 on one side and a finite value on the other)"},
		{"contraction over an unknown padding", `(%x: f32[{N},4], %w: f32[4,4]) -> f32[4,4] {
  %h = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[{N},4]
  %g = dot_general %h, %x {lhs_contract=[0], rhs_contract=[0]} : f32[4,4]
  return %g`, "dot_general at p.tir:3 contracts over arg 0 dim 0, whose padding is not known on the left and 0.0 on the right (it needs 0 on one side and a finite value on the other)"},
		{"max over zero padding", `(%x: f32[{N},4]) -> f32[4] {
  %m = reduce_max %x {axes=[0]}
  return %m`, "reduce_max at p.tir:2 takes the maximum over arg 0 dim 0, whose padding is 0.0, not -inf"},
		{"masked max", `(%x: f32[{N},4], %keep: i1[{N},4]) -> f32[4] {
  %ninf = constant -inf : f32[{N},4]
  %v = select %keep, %x, %ninf
  %m = reduce_max %v {axes=[0]}
  return %m`, ""},
		{"masked softmax", `(%x: f32[4,{N}], %keep: i1[4,{N}]) -> f32[4,{N}] {
  %ninf = constant -inf : f32[]
  %nb = broadcast %ninf {dims=[]} : f32[4,{N}]
  %v = select %keep, %x, %nb
  %p = softmax %v {axis=1}
  return %p`, ""},
		{"softmax over zero padding", `(%x: f32[4,{N}]) -> f32[4,{N}] {
  %p = softmax %x {axis=1}
  return %p`, "softmax at p.tir:2 normalises over arg 0 dim 1, whose padding is 0.0, not -inf"},
		{"softmax over an unknown padding", `(%x: f32[4,{N}], %w: f32[4,4]) -> f32[4,{N}] {
  %h = dot_general %w, %x {lhs_contract=[1], rhs_contract=[0]} : f32[4,{N}]
  %p = softmax %h {axis=1}
  return %p`, "softmax at p.tir:3 normalises over arg 0 dim 1, whose padding is not known to be -inf"},
		{"softmax over rows", `(%x: f32[{N},4]) -> f32[{N},4] {
  %p = softmax %x {axis=1}
  %l = log_softmax %x {axis=1}
  %s = add %p, %l
  return %s`, ""},
		{"argmax", `(%x: f32[{N},4]) -> i32[4] {
  %a = argmax %x {axis=0}
  return %a`, "argmax at p.tir:2 searches along arg 0 dim 0, whose padding is 0.0, not -inf"},
		{"integer masked argmin", `(%x: i32[{N}], %keep: i1[{N}]) -> i32[] {
  %big = constant 2147483647 : i32[{N}]
  %v = select %keep, %x, %big
  %a = argmin %v {axis=0}
  return %a`, ""},
		{"sum of products", `(%x: f32[{N},4], %y: f32[{N},4]) -> f32[4] {
  %p = mul %x, %y
  %s = reduce_sum %p {axes=[0]}
  return %s`, ""},
		{"product over ones", `(%x: f32[{N}]) -> f32[] {
  %e = exp %x
  %p = reduce_prod %e {axes=[0]}
  return %p`, ""},
		{"cumsum along the dimension", `(%x: f32[{N},4]) -> f32[{N},4] {
  %e = exp %x
  %c = cumsum %e {axis=0}
  return %c`, ""},
		{"slice of another dimension", `(%x: f32[{N},4]) -> f32[{N},2] {
  %s = slice %x {start=[0,1], limit=[{N},3]}
  return %s`, ""},
		{"slice cutting the dimension", `(%x: f32[{N},4]) -> f32[{N-1},4] {
  %s = slice %x {start=[1,0], limit=[{N},4]}
  return %s`, "a dimension of slice at p.tir:2 is 7 when traced at 8 and 4 at 5: it is not one of the padded dimensions"},
		{"strided slice", `(%x: f32[{N},4]) -> f32[{N},4] {
  %s = slice %x {start=[0,0], limit=[{N},4], stride=[1,1]}
  %t = slice %s {start=[0,0], limit=[{N},4], stride=[1,2]}
  return %s`, ""},
		{"concat along the dimension", `(%x: f32[{N},4]) -> f32[{2N},4] {
  %c = concat %x, %x {axis=0}
  return %c`, "a dimension of concat at p.tir:2 is 16 when traced at 8 and 10 at 5: it is not one of the padded dimensions"},
		{"concat along another", `(%x: f32[{N},4]) -> f32[{N},8] {
  %c = concat %x, %x {axis=1}
  %s = reduce_sum %c {axes=[0]}
  return %c`, ""},
		{"pad of another dimension", `(%x: f32[{N},4]) -> f32[{N}] {
  %z = constant 0.0 : f32[]
  %p = pad %x, %z {low=[0,1], high=[0,2]}
  %t = transpose %p {perm=[1,0]}
  %s = reduce_sum %t {axes=[0]}
  return %s`, ""},
		{"take along the dimension", `(%x: f32[{N},4], %i: i32[3]) -> f32[3,4] {
  %t = take %x, %i {axis=0}
  return %t`, "take at p.tir:2 gathers along arg 0 dim 0: clamped indices would read the padding"},
		{"embedding lookup", `(%ids: i32[{N}], %table: f32[10,4]) -> f32[{N},4] {
  %t = take %table, %ids {axis=0}
  return %t`, ""},
		{"scatter of padded rows", `(%ids: i32[{N}], %u: f32[{N},4]) -> f32[10,4] {
  %z = constant 0.0 : f32[10,4]
  %s = scatter_add %z, %ids, %u {axis=0}
  return %s`, "scatter_add at p.tir:3 scatters rows indexed along arg 0 dim 0: padded indices would add padding to row 0"},
		{"layer norm over rows", `(%x: f32[{N},4], %g: f32[4], %b: f32[4]) -> f32[{N},4] {
  %y = layer_norm %x, %g, %b {eps=1e-5}
  return %y`, ""},
		{"layer norm over the dimension", `(%x: f32[4,{N}], %g: f32[{N}]) -> f32[4,{N}] {
  %y = rms_norm %x, %g {eps=1e-5}
  return %y`, "rms_norm at p.tir:2 normalises over arg 0 dim 1"},
		{"top_k", `(%x: f32[4,{N}]) -> f32[4,2] {
  %v, %i = top_k %x {k=2}
  return %v`, "top_k at p.tir:2 sorts along arg 0 dim 1"},
		{"argsort of rows", `(%x: f32[{N},4]) -> i32[{N},4] {
  %i = argsort %x {axis=1}
  return %i`, ""},
		{"iota and one_hot", `(%x: i32[{N}]) -> f32[{N},{N}] {
  %io = iota {axis=0} : i32[{N}]
  %s = add %x, %io
  %h = one_hot %s {depth={N}} : f32[{N},{N}]
  return %h`, ""},
		{"dynamic slice of another dimension", `(%x: f32[{N},4], %i: i32[]) -> f32[{N},2] {
  %z = constant 0 : i32[]
  %s = dynamic_slice %x, %z, %i {sizes=[{N},2]}
  return %s`, ""},
		{"dynamic slice window", `(%x: f32[{N},4], %i: i32[]) -> f32[2,4] {
  %z = constant 0 : i32[]
  %s = dynamic_slice %x, %i, %z {sizes=[2,4]}
  return %s`, "dynamic_slice at p.tir:3 takes a window along arg 0 dim 0"},
		{"size as a value", `(%x: f32[{N}]) -> f32[{N}] {
  %c = constant {N}.0 : f32[]
  %cb = broadcast %c {dims=[]} : f32[{N}]
  %y = mul %x, %cb
  return %y`, "the program traced at 8 differs from the one traced at 5 at p.tir:2 (the value of constant)"},
		{"size-shaped constant", `(%x: i32[{N}]) -> i32[{N}] {
  %c = constant {RANGE} : i32[{N}]
  %y = add %x, %c
  return %y`, ""},
		{"size-dependent constant", `(%x: f32[{N}]) -> f32[{N}] {
  %c = constant {LINSPACE} : f32[{N}]
  %y = add %x, %c
  return %y`, "the program traced at 8 differs from the one traced at 5 at p.tir:2 (the value of constant)"},
		{"program differs", `(%x: f32[{N}]) -> f32[{N}] {
  %y = {OP} %x
  return %y`, "the program traced at 8 differs from the one traced at 5 at p.tir:2 (exp vs neg)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket, exact := parseAt(t, tc.src, 8), parseAt(t, tc.src, 5)
			var pads []padding.Dim
			for i, p := range bucket.Funcs[0].Params {
				for d, dim := range p.Type.Shape {
					if e := exact.Funcs[0].Params[i].Type.Shape[d].Size; e != dim.Size {
						pads = append(pads, padding.Dim{Name: DimRef{i, d}.String(), Real: e, Padded: dim.Size})
					}
				}
			}
			_, why := checkPadding(bucket, exact, pads)
			if why != tc.why {
				t.Errorf("got  %q\nwant %q", why, tc.why)
			}
		})
	}
}

// parseAt instantiates a padding-rule template at size n.
func parseAt(t *testing.T, src string, n int64) *ir.Module {
	t.Helper()
	var rng, lin []string
	for i := int64(0); i < n; i++ {
		rng = append(rng, fmt.Sprint(i))
		lin = append(lin, ir.FormatFloat(ir.F32.RoundFloat(float64(i)/float64(n)), ir.F32))
	}
	op := "exp"
	if n == 5 {
		op = "neg"
	}
	r := strings.NewReplacer("{N}", fmt.Sprint(n), "{2N}", fmt.Sprint(2*n), "{4N}", fmt.Sprint(4*n), "{N-1}", fmt.Sprint(n-1),
		"{RANGE}", "["+strings.Join(rng, ",")+"]", "{LINSPACE}", "["+strings.Join(lin, ",")+"]", "{OP}", op)
	m, err := tir.Parse("p.tir", []byte(r.Replace("func @p"+src+"\n}\n")))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPaddingPlanSlicesDerivedOutputs(t *testing.T) {
	src := `(%x: f32[{N},4], %w: f32[4,3]) -> (f32[{N},3], f32[4], f32[4,{N}]) {
  %h = dot_general %x, %w {lhs_contract=[1], rhs_contract=[0]} : f32[{N},3]
  %s = reduce_sum %x {axes=[0]}
  %t = transpose %x {perm=[1,0]}
  return %h, %s, %t`
	plan, why := checkPadding(parseAt(t, src, 8), parseAt(t, src, 5), []padding.Dim{{Name: DimRef{0, 0}.String(), Real: 5, Padded: 8}})
	if why != "" {
		t.Fatal(why)
	}
	got := fmt.Sprint(plan.Inputs, plan.Outputs)
	if want := "[[8 4] []] [[5 3] [] [4 5]]"; got != want {
		t.Errorf("plan %s, want %s", got, want)
	}
}

func TestPadAndSliceTensors(t *testing.T) {
	x := backend.FromInts(ir.Tensor(ir.I32, 2, 3), 1, 2, 3, 4, 5, 6)
	p := padTo(x, []int64{3, 4})
	if got := fmt.Sprint(backend.Elems[int32](p)); got != "[1 2 3 0 4 5 6 0 0 0 0 0]" {
		t.Errorf("padTo: %s", got)
	}
	if s := sliceTo(p, []int64{2, 3}); sameTensors([]*backend.Buffer{s}, []*backend.Buffer{x}) != "" {
		t.Errorf("sliceTo: %v", s)
	}
	sc := backend.FromFloats(ir.Scalar(ir.F32), 2.5)
	if s := padTo(sc, nil); s.Float64At(0) != 2.5 {
		t.Errorf("scalar: %v", s)
	}
	if e := padTo(backend.New(ir.Tensor(ir.F32, 0, 2)), []int64{1, 2}); fmt.Sprint(e.Float32s()) != "[0 0]" {
		t.Errorf("empty: %v", e)
	}
}
