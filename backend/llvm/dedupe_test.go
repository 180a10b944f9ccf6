package llvm

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// TestDedupeKernels: a program with four identical layers (a matmul with its
// bias and relu each) has one function per distinct kernel in its module,
// and still computes what the reference executor computes.
func TestDedupeKernels(t *testing.T) {
	src := `func @layers(%x: f32[8,32], %w1: f32[32,32], %w2: f32[32,32], %w3: f32[32,32], %w4: f32[32,32], %b: f32[32]) -> f32[8,32] {
  %h1 = matmul %x, %w1 : f32[8,32]
  %a1 = add %h1, %b : f32[8,32]
  %r1 = relu %a1 : f32[8,32]
  %h2 = matmul %r1, %w2 : f32[8,32]
  %a2 = add %h2, %b : f32[8,32]
  %r2 = relu %a2 : f32[8,32]
  %h3 = matmul %r2, %w3 : f32[8,32]
  %a3 = add %h3, %b : f32[8,32]
  %r3 = relu %a3 : f32[8,32]
  %h4 = matmul %r3, %w4 : f32[8,32]
  %a4 = add %h4, %b : f32[8,32]
  %r4 = relu %a4 : f32[8,32]
  return %r4
}
`
	m, err := tir.Parse("layers.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlan(m, m.Funcs[0], target{threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	kernels, names := 0, map[string]bool{}
	for _, st := range p.steps {
		if st.kind == stepKernel {
			kernels++
			names[st.name] = true
		}
	}
	defined := strings.Count(p.gen.text(), "\ndefine ")
	if kernels != 4 || len(names) != 1 || defined != 1 {
		t.Errorf("%d kernel steps calling %d functions, %d defined; want 4 steps, 1 function, 1 defined\nplan:\n%s", kernels, len(names), defined, p)
	}
	differential(t, testBackend(t), m, m.Funcs[0], 1)
}

// TestDedupeAcrossSizes: elementwise kernels that read their operands at
// their own flat index keep no trace of their shape (linear gives
// delinear's index back and the unused remainders are dropped), so the
// same convert of a reshaped 1 x 1024 and 1 x 128 (a layer's norm weight
// sliced from its stack) is one function, and both agree with the
// reference executor.
func TestDedupeAcrossSizes(t *testing.T) {
	src := `func @f(%a: bf16[1,1024], %b: bf16[1,128]) -> (f32[1024], f32[128]) {
  %ra = reshape %a : bf16[1024]
  %x = convert %ra : f32[1024]
  %rb = reshape %b : bf16[128]
  %y = convert %rb : f32[128]
  return %x, %y
}
`
	m, err := tir.Parse("sizes.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Funcs[0], 2)
	var steps []string
	for _, st := range x.plan.steps {
		steps = append(steps, st.what+" "+st.name)
	}
	text := x.plan.gen.text()
	if len(steps) != 2 || steps[0] != steps[1] || strings.Count(text, "\ndefine ") != 1 || strings.Contains(text, "1024") {
		t.Errorf("steps %q; want two converts calling one function, without the size in its text:\n%s", steps, text)
	}
}

// TestNormSharedAcrossLengths: rms_norms over lines of 1024 and of 128
// (a model's hidden size and a head's q and k norms), and two layer_norms
// likewise, are one kernel each, the line's length read at run time: the
// text holds neither length, and both agree with the reference executor.
func TestNormSharedAcrossLengths(t *testing.T) {
	src := `func @f(%a: f32[2,1024], %sa: f32[1024], %b: f32[8,128], %sb: f32[128], %ba: f32[1024], %bb: f32[128]) -> (f32[2,1024], f32[8,128], f32[2,1024], f32[8,128]) {
  %x = rms_norm %a, %sa {eps=1e-06}
  %y = rms_norm %b, %sb {eps=1e-06}
  %u = layer_norm %a, %sa, %ba {eps=1e-05}
  %v = layer_norm %b, %sb, %bb {eps=1e-05}
  return %x, %y, %u, %v
}
`
	m, err := tir.Parse("norms.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Funcs[0], 3)
	var steps []string
	for _, st := range x.plan.steps {
		steps = append(steps, st.what+" "+st.name)
	}
	text := x.plan.gen.text()
	if len(steps) != 4 || steps[0] != steps[1] || steps[2] != steps[3] || strings.Count(text, "\ndefine ") != 2 ||
		strings.Contains(text, "1024") || strings.Contains(text, "128") {
		t.Errorf("steps %q; want two norms of each kind calling one function each, without the lengths in their text:\n%s", steps, text)
	}
}

// TestDedupeAcrossRows: copies whose rows the range splits along leading
// dims (a decode step's 8 and 16 heads of 128) and whose columns a loop
// runs are one kernel once linear folds the split rows back (gen.go): the
// text holds the column count, not the head counts.
func TestDedupeAcrossRows(t *testing.T) {
	src := `func @f(%a: f32[8,128], %b: f32[16,128], %s: f32[128]) -> (f32[1,8,128], f32[1,16,128]) {
  %na = rms_norm %a, %s {eps=1e-06}
  %nb = rms_norm %b, %s {eps=1e-06}
  %x = reshape %na : f32[1,8,128]
  %y = reshape %nb : f32[1,16,128]
  return %x, %y
}
`
	m, err := tir.Parse("rows.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Funcs[0], 4)
	var copies []string
	for _, st := range x.plan.steps {
		if strings.HasPrefix(st.what, "loop") {
			copies = append(copies, st.what+" "+st.name)
		}
	}
	text := x.plan.gen.text()
	if len(copies) != 2 || copies[0] != copies[1] || strings.Count(text, "\ndefine ") != 2 || strings.Contains(text, ", 16\n") {
		t.Errorf("copies %q; want two calling one function, without the head count in its text:\n%s\n%s", copies, x.plan, text)
	}
}

// TestDedupeFlatAcrossShapes: kernels that read every value at their own
// flat index (reshapes of a norm's result, as a decode step's heads and
// its hidden rows; reshapes of a bf16 product) are one loop over the flat
// index whatever their shape: one kernel of each kind, with no dimension
// in its text. A transpose is not flat and keeps its nest. All agree with
// the reference executor.
func TestDedupeFlatAcrossShapes(t *testing.T) {
	src := `func @f(%a: f32[24,96], %b: f32[12,96], %c: f32[2,1000], %s: f32[96], %w: f32[1000], %p: bf16[4,250], %q: bf16[4,250], %r: bf16[2,5,40], %u: bf16[2,5,40], %v: f32[3,7]) -> (f32[1,24,96], f32[1,12,96], f32[2,1,1000], bf16[1000], bf16[10,40], f32[7,3]) {
  %na = rms_norm %a, %s {eps=1e-06}
  %nb = rms_norm %b, %s {eps=1e-06}
  %nc = rms_norm %c, %w {eps=1e-06}
  %x = reshape %na : f32[1,24,96]
  %y = reshape %nb : f32[1,12,96]
  %z = reshape %nc : f32[2,1,1000]
  %pq = mul %p, %q
  %m1 = reshape %pq : bf16[1000]
  %ru = mul %r, %u
  %m2 = reshape %ru : bf16[10,40]
  %vt = transpose %v {perm=[1,0]}
  return %x, %y, %z, %m1, %m2, %vt
}
`
	m, err := tir.Parse("flat.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Funcs[0], 5)
	var reshapes, transposes []string
	for _, st := range x.plan.steps {
		switch st.what {
		case "loop reshape":
			reshapes = append(reshapes, st.name)
		case "loop transpose":
			transposes = append(transposes, st.name)
		}
	}
	// The copies of the norms' results, then the products fused into
	// their reshapes.
	text := x.plan.gen.text()
	if len(reshapes) != 5 || reshapes[0] != reshapes[1] || reshapes[0] != reshapes[2] || reshapes[3] != reshapes[4] ||
		reshapes[0] == reshapes[3] || len(transposes) != 1 || strings.Count(text, "\ndefine void @k") != 4 {
		t.Errorf("reshapes call %q, transposes %q; want the copies one kernel, the products another, one transpose, 4 kernels with the norm:\n%s\n%s", reshapes, transposes, x.plan, text)
	}
	for _, dim := range []string{", 24\n", ", 12\n", ", 96\n", ", 1000\n", ", 250\n", ", 40\n"} {
		if strings.Contains(text, dim) {
			t.Errorf("the module holds a dimension (%q):\n%s", strings.TrimSpace(dim), text)
		}
	}
}

// TestModuleTextFromBodies: the module's text, written from the kernels'
// texts that dedupeKernels printed, is what llir prints for the module:
// programs with norms, products, softmax (an internal helper, expf), a
// concat, a loop and deduplicated kernels.
func TestModuleTextFromBodies(t *testing.T) {
	srcs := []string{
		`func @f(%a: f32[24,96], %b: f32[12,96], %s: f32[96], %w: f32[96,40], %v: f32[3,7]) -> (f32[1,24,96], f32[12,40], f32[7,3], f32[24,96]) {
  %na = rms_norm %a, %s {eps=1e-06}
  %nb = rms_norm %b, %s {eps=1e-06}
  %x = reshape %na : f32[1,24,96]
  %p = dot_general %nb, %w {lhs_contract=[1], rhs_contract=[0]} : f32[12,40]
  %vt = transpose %v {perm=[1,0]}
  %e = exp %a
  return %x, %p, %vt, %e
}
`,
		`func @g(%a: f32[4,8], %b: f32[4,8]) -> (f32[4,16], f32[4,8]) {
  %c = concat %a, %b {axis=1} : f32[4,16]
  %m = softmax %a {axis=1}
  return %c, %m
}
`,
		`func @h(%i0: i32[], %x0: f32[6]) -> f32[6] {
  %n, %x = while %i0, %x0 : i32[], f32[6] cond (%i: i32[], %v: f32[6]) {
      %k = constant 5 : i32[]
      %go = compare %i, %k {dir=lt} : i1[]
      return %go
    } do (%i: i32[], %v: f32[6]) {
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      %v1 = tanh %v
      return %i1, %v1
    }
  return %x
}
`,
	}
	b := testBackend(t)
	for i, src := range srcs {
		m, err := tir.Parse("text.tir", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		x := differential(t, b, m, m.Funcs[0], int64(i+1))
		g := x.plan.gen
		if len(g.bodies) == 0 {
			t.Fatalf("program %d: no kernel texts kept", i)
		}
		got, want := g.text(), "; tpucc kernels\n"+g.m.String()
		if got != want {
			t.Errorf("program %d: the text from the kernels' texts differs from llir's:\n%s\n---- llir:\n%s", i, got, want)
		}
	}
}
