package autodiff_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/gradcheck"
	"github.com/tpucc/tpucc/ir"
)

// TestEveryOpHasRule walks ir's op table: an op added without a VJP rule or a reason
// for having none would make autodiff silently drop gradients through it.
func TestEveryOpHasRule(t *testing.T) {
	for _, op := range ir.Ops() {
		if autodiff.Rule(op) == "" {
			t.Errorf("%s has neither a VJP rule nor a reason for having none in autodiff's table", op)
		}
	}
}

// ruleCases exercise each rule once (some twice) on small f32 programs; the reference
// executor runs the VJP in f32 and the finite differences in f64.
var ruleCases = map[string]string{
	"unary": `func @f(%x: f32[2,3]) -> f32[2,3] {
  %a = neg %x
  %b = exp %a
  %c = tanh %x
  %d = sigmoid %c
  %e = sin %d
  %f = cos %e
  %g = erf %x
  %h = abs %x
  %s = mul %h, %h
  %i = add %s, %b
  %j = log %i
  %k = log1p %i
  %l = expm1 %g
  %m = sqrt %i
  %n = rsqrt %i
  %o = add %j, %k
  %p = add %o, %l
  %q = add %p, %m
  %r = add %q, %n
  %t0 = add %r, %f
  %cb = cbrt %i
  %t1 = add %t0, %cb
  %tn = tan %c
  %t = add %t1, %tn
  %u0 = floor %x
  %ra = round_afz %x
  %u = add %u0, %ra
  %v = mul %t, %u
  %w = add %v, %t
  return %w
}`,
	"binary": `func @f(%x: f32[2,3], %y: f32[2,3]) -> (f32[2,3], f32[2,3]) {
  %a = mul %x, %y
  %b = sub %a, %x
  %e = exp %y
  %c = div %b, %e
  %d = max %c, %y
  %f = min %d, %x
  %g = atan2 %f, %e
  %h = pow %e, %x
  %i = rem %x, %e
  %j = add %g, %h
  return %j, %i
}`,
	"select_clamp": `func @f(%x: f32[4], %y: f32[4], %lo: f32[]) -> f32[4] {
  %p = compare %x, %y {dir=lt}
  %s = select %p, %x, %y
  %hi = constant 0.5 : f32[4]
  %c = clamp %lo, %s, %hi
  %r = mul %c, %x
  return %r
}`,
	// lo = hi: the result is the bound, whose gradient must be all of g.
	"clamp_tie": `func @f(%p: f32[3], %x: f32[3]) -> f32[3] {
  %one = constant 1.0 : f32[3]
  %below = sub %p, %one
  %above = add %p, %one
  %c = clamp %p, %below, %p
  %d = clamp %p, %above, %p
  %s = add %c, %d
  %e = exp %s
  return %e
}`,
	"shape": `func @f(%x: f32[2,3], %b: f32[3]) -> f32[3,4] {
  %t = transpose %x {perm=[1,0]}
  %bb = broadcast %b {dims=[0]} : f32[3,2]
  %s = mul %t, %bb
  %z = constant 0.25 : f32[]
  %p = pad %s, %z {low=[1,-1], high=[0,2], interior=[1,1]}
  %q = slice %p {start=[1,0], limit=[4,4], stride=[1,1]}
  %r = reshape %q : f32[12]
  %c = concat %r, %r {axis=0}
  %l = slice %c {start=[3], limit=[15], stride=[1]}
  %o = reshape %l : f32[3,4]
  %w = slice %p {start=[0,0], limit=[5,4], stride=[2,3]}
  %ws = reduce_sum %w {axes=[0,1]}
  %wb = broadcast %ws {dims=[]} : f32[3,4]
  %y = add %o, %wb
  return %y
}`,
	"dot": `func @f(%a: f32[2,3,4], %b: f32[4,2,5]) -> f32[2,3,5] {
  %d = dot_general %a, %b {lhs_batch=[0], rhs_batch=[1], lhs_contract=[2], rhs_contract=[0]}
  return %d
}`,
	"dot_transposed": `func @f(%a: f32[3,2], %b: f32[4,3]) -> f32[2,4] {
  %d = dot_general %a, %b {lhs_contract=[0], rhs_contract=[1]}
  return %d
}`,
	"reductions": `func @f(%x: f32[3,4]) -> (f32[3], f32[4], f32[3,1], f32[3,4]) {
  %m = reduce_max %x {axes=[1]}
  %n = reduce_min %x {axes=[0]}
  %p = reduce_prod %x {axes=[1], keepdims=true}
  %c = cumsum %x {axis=1}
  return %m, %n, %p, %c
}`,
	"indexing": `func @f(%x: f32[5,3], %i: i32[4], %u: f32[4,3], %s: i32[]) -> (f32[4,3], f32[5,3], f32[2,3], f32[5,3]) {
  %t = take %x, %i {axis=0}
  %a = scatter_add %x, %i, %u {axis=0}
  %z = constant 0 : i32[]
  %d = dynamic_slice %x, %s, %z {sizes=[2,3]}
  %v = slice %u {start=[0,0], limit=[2,3]}
  %e = dynamic_update_slice %x, %v, %s, %z
  return %t, %a, %d, %e
}`,
	"top_k": `func @f(%x: f32[2,6]) -> (f32[2,3], i32[2,3]) {
  %v, %i = top_k %x {k=3}
  return %v, %i
}`,
	"composites": `func @f(%x: f32[2,5], %s: f32[5], %b: f32[5]) -> (f32[2,5], f32[2,5], f32[2,5], f32[2,5]) {
  %a = softmax %x {axis=1}
  %l = log_softmax %x {axis=0}
  %n = layer_norm %x, %s, %b {eps=0.001}
  %r = rms_norm %x, %s {eps=0.001}
  %g = gelu %n {approximate=false}
  %h = gelu %r {approximate=true}
  %i = silu %a
  %j = relu %l
  return %g, %h, %i, %j
}`,
	"call_convert": `func @main(%x: f32[3], %y: f32[3]) -> (f32[3], i32[3]) {
  %c = call @g(%x, %y)
  %d = convert %c : f64[3]
  %e = exp %d
  %f = convert %e : f32[3]
  %k = convert %x : i32[3]
  return %f, %k
}

func @g(%a: f32[3], %b: f32[3]) -> f32[3] {
  %m = mul %a, %b
  %n = mul %m, %a
  return %n
}`,
	"copy": `func @f(%x: f32[2,3]) -> f32[2,3] {
  %c = copy %x : f32[2,3]{0,1}
  %e = exp %c
  return %e
}`,
	"ragged_dot": `func @f(%l: f32[6,3], %r: f32[3,3,2]) -> f32[6,2] {
  %s = constant [2,0,3] : i32[3]
  %d = ragged_dot %l, %r, %s
  return %d
}`,
	"ragged_contract": `func @f(%l: f32[7,3], %r: f32[7,2]) -> f32[4,3,2] {
  %s = constant [2,0,4,-1] : i32[4]
  %d = ragged_contract %l, %r, %s
  return %d
}`,
	"ragged_dot_past_rows": `func @f(%l: f32[6,3], %r: f32[2,3,2]) -> f32[6,2] {
  %s = constant [1,3] : i32[2]
  %d = ragged_dot %l, %r, %s
  %t = tanh %d
  return %t
}`,
	"conv_nhwc": `func @f(%x: f32[2,5,6,3], %w: f32[3,2,3,4]) -> f32[2,3,5,4] {
  %y = convolution %x, %w {lhs_dims=[0,3,1,2], rhs_dims=[3,2,0,1], out_dims=[0,3,1,2], stride=[2,1], pad_low=[1,0], pad_high=[1,1], rhs_dilation=[1,2]}
  return %y
}`,
	"conv_dilated": `func @f(%x: f32[1,2,4,3], %w: f32[3,2,2,2]) -> f32[1,3,8,2] {
  %y = convolution %x, %w {lhs_dims=[0,1,2,3], rhs_dims=[0,1,2,3], out_dims=[0,1,2,3], lhs_dilation=[2,1], pad_low=[1,-1], pad_high=[1,1]}
  return %y
}`,
	"conv_groups": `func @f(%x: f32[2,4,7], %w: f32[6,2,3], %z: f32[4,3,5], %u: f32[4,3,2]) -> (f32[2,6,4], f32[2,4,4]) {
  %y = convolution %x, %w {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2], stride=[2], pad_low=[1], pad_high=[1], feature_groups=2}
  %v = convolution %z, %u {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2], batch_groups=2}
  return %y, %v
}`,
	// No output position (a window of 3 over 2): both gradients are zeros
	// (progen seed 80291 panicked building the kernel's gradient).
	"conv_empty": `func @f(%x: f32[2,3,2], %w: f32[4,3,3]) -> (f32[2,4,0], f32[2,3,2]) {
  %y = convolution %x, %w {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]}
  %t = tanh %x
  return %y, %t
}`,
	"pool": `func @f(%x: f32[1,5,6,2], %z: f32[]) -> (f32[1,2,3,2], f32[1,2,6,2], f32[1,4,4,2]) {
  %ninf = constant -inf : f32[]
  %m = reduce_window %x, %ninf {kind=max, window=[1,2,2,1], stride=[1,2,2,1]}
  %s = reduce_window %x, %z {kind=sum, window=[1,3,2,1], pad_low=[0,1,0,0], pad_high=[0,0,1,0], window_dilation=[1,2,1,1]}
  %b = reduce_window %x, %z {kind=sum, window=[1,2,3,1], stride=[1,2,3,1], base_dilation=[1,2,2,1], pad_low=[0,0,1,0]}
  return %m, %s, %b
}`,
	"triangular_solve": `func @f(%a: f32[2,3,3], %b: f32[2,3,4], %c: f32[4,3]) -> (f32[2,3,4], f32[4,3], f32[2,3,4]) {
  %t = tanh %a
  %h = constant 0.4 : f32[2,3,3]
  %s = mul %t, %h
  %two = constant 2 : f32[2,3,3]
  %d = add %s, %two
  %x = triangular_solve %d, %b {left_side=true, lower=true, transpose_a=false, unit_diagonal=false}
  %a0 = slice %s {start=[0,0,0], limit=[1,3,3]}
  %a1 = reshape %a0 : f32[3,3]
  %y = triangular_solve %a1, %c {left_side=false, lower=false, transpose_a=true, unit_diagonal=true}
  %z = triangular_solve %d, %b {left_side=true, lower=false, transpose_a=true, unit_diagonal=false}
  return %x, %y, %z
}`,
	"cross_entropy": `func @f(%logits: f32[4,6], %labels: i32[4]) -> f32[] {
  %l = log_softmax %logits {axis=1}
  %o = one_hot %labels {depth=6} : f32[4,6]
  %p = mul %l, %o
  %s = reduce_sum %p {axes=[0,1]}
  %n = constant -0.25 : f32[]
  %r = mul %s, %n
  return %r
}`,
}

func TestRulesAgainstFiniteDifferences(t *testing.T) {
	for name, src := range ruleCases {
		t.Run(name, func(t *testing.T) {
			m, err := tir.Parse(name+".tir", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			runCheck(t, m, 1)
		})
	}
}

func runCheck(t *testing.T, m *ir.Module, seed int64) {
	t.Helper()
	runCheckAt(t, m, cpu.RandomInputs(m.Entry(), seed), seed)
}

// runCheckAt is runCheck at the given inputs.
func runCheckAt(t *testing.T, m *ir.Module, inputs []*backend.Buffer, seed int64) {
	t.Helper()
	runCheckWith(t, m, inputs, seed, nil)
}

// runCheckWith is runCheckAt checking, when o is not nil, the VJP that
// autodiff.ModuleOfWith gives with o instead of the default one.
func runCheckWith(t *testing.T, m *ir.Module, inputs []*backend.Buffer, seed int64, o *autodiff.Options) {
	t.Helper()
	c, err := gradcheck.New(m, inputs, uint64(seed), 64)
	if err != nil {
		t.Fatal(err)
	}
	if o != nil {
		if c.VJP, err = autodiff.ModuleOfWith(m.Entry(), *o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cpu.Run(c.VJP, c.VJP.Entry(), c.VJPArgs)
	if err != nil {
		t.Fatalf("running the VJP: %v\n%s", err, ir.Print(c.VJP))
	}
	fd, err := cpu.Run(c.FD, c.FD.Funcs[0], c.FDArgs)
	if err != nil {
		t.Fatalf("running the finite differences: %v", err)
	}
	msgs, rough, coarse := c.Compare(got, fd[0])
	if rough > 0 {
		t.Errorf("%d of %d picks are not smooth within the step: choose other inputs", rough, len(c.Picks))
	}
	if coarse > 0 {
		t.Errorf("%d of %d picks are not compared (%s): choose other inputs", coarse, len(c.Picks), gradcheck.UnresolvedReason)
	}
	if len(msgs) > 0 {
		t.Errorf("%d of %d gradient elements disagree:\n  %s\nVJP:\n%s", len(msgs), len(c.Picks), strings.Join(msgs, "\n  "), ir.Print(c.VJP))
	}
	if len(c.Picks) == 0 {
		t.Errorf("nothing checked")
	}
}

// TestSecondOrder differentiates VJPs: their backward ops have rules too, so the VJP of
// a VJP agrees with the finite differences of the first VJP.
func TestSecondOrder(t *testing.T) {
	for _, name := range []string{"unary", "binary", "shape", "dot", "composites", "cross_entropy", "ragged_dot", "ragged_contract", "ragged_dot_past_rows", "conv_nhwc", "conv_groups", "triangular_solve"} {
		t.Run(name, func(t *testing.T) {
			m, err := tir.Parse(name+".tir", []byte(ruleCases[name]))
			if err != nil {
				t.Fatal(err)
			}
			v, err := autodiff.Module(m)
			if err != nil {
				t.Fatal(err)
			}
			runCheck(t, v, 2)
		})
	}
}

// TestImportsOnlyIR: autodiff is an IR transform; like the passes it imports only ir.
func TestImportsOnlyIR(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, p := range pkgs {
		for name, f := range p.Files {
			files++
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if strings.Contains(path, ".") && path != "github.com/tpucc/tpucc/ir" {
					t.Errorf("%s imports %s; autodiff may import only the standard library and ir", name, path)
				}
			}
		}
	}
	if files < 5 {
		t.Errorf("read the imports of %d files; autodiff has more", files)
	}
}
