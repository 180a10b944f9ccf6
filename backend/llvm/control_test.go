package llvm

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// loopGoldens are the in.tir programs of testdata/golden/** that hold a
// while or a case and compile (the error goldens do not), by file name:
// the programs internal/oracle's TestLoopPrograms runs on XLA:CPU.
func loopGoldens(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := filepath.Join("..", "..", "testdata", "golden")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txtar") {
			return err
		}
		a, err := txtar.ParseFile(path)
		if err != nil {
			return err
		}
		for _, f := range a.Files {
			if f.Name != "in.tir" || !bytes.Contains(f.Data, []byte("while ")) && !bytes.Contains(f.Data, []byte("= case ")) {
				continue
			}
			if m, err := tir.Parse(path, f.Data); err == nil && ir.Verify(m) == nil {
				out[path] = f.Data
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestControlCompiled: every golden program with a while or a case runs
// on the llvm backend with its regions compiled (no while or case step
// runs on the reference executor, and the plan holds the loop or branch
// steps) and agrees with the reference executor on several input seeds,
// which decide the trip counts and case indices.
func TestControlCompiled(t *testing.T) {
	b := testBackend(t)
	progs := loopGoldens(t)
	if len(progs) < 10 {
		t.Fatalf("found %d loop goldens, want at least 10", len(progs))
	}
	for path, src := range progs {
		t.Run(strings.TrimPrefix(filepath.ToSlash(path), "../../testdata/golden/"), func(t *testing.T) {
			exe := compileText(t, path, src)
			var x *Executable
			for seed := int64(1); seed <= 4; seed++ {
				x = differential(t, b, exe.Module, exe.Entry, seed)
			}
			_, fb := x.Coverage()
			if strings.Contains(fb, "while=") || strings.Contains(fb, "case=") {
				t.Errorf("fallbacks %q: a while or case ran on the reference executor", fb)
			}
			ctl := 0
			for _, st := range x.plan.steps {
				if st.ctl != nil {
					ctl++
				}
			}
			if ctl == 0 {
				t.Errorf("no while or case step in the plan:\n%s", x.plan)
			}
		})
	}
}

// collatz counts the Collatz steps from %n to 1: a data-dependent trip
// count, with a case inside the loop choosing the step.
const collatz = `func @main(%n: i32[]) -> (i32[], i32[]) {
  %z = constant 0 : i32[]
  %k, %v = while %z, %n cond (%k: i32[], %v: i32[]) {
      %one = constant 1 : i32[]
      %go = compare %v, %one {dir=gt}
      return %go
    } do (%k: i32[], %v: i32[]) {
      %two = constant 2 : i32[]
      %r = rem %v, %two
      %v1 = case %r, %v : i32[] (%a: i32[]) {
          %c2 = constant 2 : i32[]
          %h = div %a, %c2
          return %h
        } (%a: i32[]) {
          %c3 = constant 3 : i32[]
          %c1 = constant 1 : i32[]
          %t = mul %a, %c3
          %u = add %t, %c1
          return %u
        }
      %one = constant 1 : i32[]
      %k1 = add %k, %one
      return %k1, %v1
    }
  return %k, %v
}
`

// TestWhileCollatz: the trip count is the data's (27 takes 111 steps, 97
// takes 118), 1 runs the body zero times, and each agrees exactly with
// the reference executor.
func TestWhileCollatz(t *testing.T) {
	b := testBackend(t)
	m, f, x := compileSrc(t, b, collatz)
	for _, c := range []struct{ n, steps int64 }{{27, 111}, {97, 118}, {1, 0}, {6, 8}} {
		in := []*backend.Buffer{backend.FromInts(ir.Tensor(ir.I32), c.n)}
		got, err := x.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		if k, v := got[0].Int64At(0), got[1].Int64At(0); k != c.steps || v != 1 {
			t.Errorf("collatz(%d) = %d steps ending at %d, want %d steps ending at 1", c.n, k, v, c.steps)
		}
		agree(t, x, m, f, in)
	}
}

// counted runs %n iterations of a small elementwise body on f32[64].
const counted = `func @main(%n: i32[], %x0: f32[64]) -> f32[64] {
  %z = constant 0 : i32[]
  %i, %x, %lim = while %z, %x0, %n cond (%i: i32[], %x: f32[64], %lim: i32[]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %x: f32[64], %lim: i32[]) {
      %hb = constant 0.5 : f32[64]
      %y = mul %x, %hb
      %t = tanh %y
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %t, %lim
    }
  return %x
}
`

// TestWhileAllocations: an iteration allocates nothing: a run of 10
// iterations allocates as much as a run of 10000.
func TestWhileAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates per call")
	}
	b := testBackend(t)
	m, f, x := compileSrc(t, b, counted)
	x0 := cpu.RandomInputs(f, 1)[1]
	allocs := func(n int64) float64 {
		in := []*backend.Buffer{backend.FromInts(ir.Tensor(ir.I32), n), x0}
		agree(t, x, m, f, in)
		return testing.AllocsPerRun(5, func() {
			if _, err := x.Run(in); err != nil {
				t.Fatal(err)
			}
		})
	}
	if short, long := allocs(10), allocs(10000); short != long {
		t.Errorf("a run of 10 iterations allocates %v times, of 10000 %v: iterations allocate", short, long)
	}
}

// TestWhileStackedWeight: a loop over a stacked weight, as models run
// their layers: x = tanh(x·W[i]) for each of the L layers of W: [L,H,H],
// read with dynamic_slice (in place: no step copies the layer out);
// checked against the same sum computed here.
func TestWhileStackedWeight(t *testing.T) {
	const L, H = 5, 16
	src := fmt.Sprintf(`func @main(%%w: f32[%[1]d,%[2]d,%[2]d], %%x0: f32[1,%[2]d]) -> f32[1,%[2]d] {
  %%z = constant 0 : i32[]
  %%i, %%x, %%ww = while %%z, %%x0, %%w cond (%%i: i32[], %%x: f32[1,%[2]d], %%w: f32[%[1]d,%[2]d,%[2]d]) {
      %%n = constant %[1]d : i32[]
      %%go = compare %%i, %%n {dir=lt}
      return %%go
    } do (%%i: i32[], %%x: f32[1,%[2]d], %%w: f32[%[1]d,%[2]d,%[2]d]) {
      %%zero = constant 0 : i32[]
      %%ws = dynamic_slice %%w, %%i, %%zero, %%zero {sizes=[1, %[2]d, %[2]d]}
      %%wl = reshape %%ws : f32[%[2]d,%[2]d]
      %%y = dot_general %%x, %%wl {lhs_contract=[1], rhs_contract=[0]}
      %%t = tanh %%y
      %%one = constant 1 : i32[]
      %%i1 = add %%i, %%one
      return %%i1, %%t, %%w
    }
  return %%x
}
`, L, H)
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	// The layer is read where it is in W (view.go), not copied out.
	for _, st := range x.plan.steps {
		if strings.Contains(st.what, "reshape") || strings.Contains(st.what, "dynamic_slice") {
			t.Errorf("step %q copies the layer's weights:\n%s", st.what, x.plan)
		}
	}
	in := cpu.RandomInputs(f, 3)
	agree(t, x, m, f, in)
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	w, v := in[0].Float32s(), append([]float32{}, in[1].Float32s()...)
	for l := 0; l < L; l++ {
		next := make([]float32, H)
		for j := 0; j < H; j++ {
			var s float64
			for k := 0; k < H; k++ {
				s += float64(v[k]) * float64(w[(l*H+k)*H+j])
			}
			next[j] = float32(math.Tanh(s))
		}
		v = next
	}
	for j, g := range got[0].Float32s() {
		if math.Abs(float64(g-v[j])) > 1e-5 {
			t.Fatalf("x[%d] = %v, want %v", j, g, v[j])
		}
	}
}

// TestWhileWeightViewAcrossFusion: as a model's layer loop, the body
// slices each stacked weight at its top and multiplies by it after a norm
// that is its own fusion (a step between the slice and the product). The
// product still reads the layer where it lies in W: no step copies it out
// (a copy of every layer's weights each iteration made the looped decode
// step of Qwen3-0.6B four times slower than the unrolled one). The slice
// of the norm's scale, which the body also carries out as a value, is
// read by the loop's carry, which cannot read a view: it is planned in
// memory instead, and the results agree with the reference executor.
func TestWhileWeightViewAcrossFusion(t *testing.T) {
	const L, H = 4, 32
	src := fmt.Sprintf(`func @main(%%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d], %%x0: f32[1,%[2]d]) -> (f32[1,%[2]d], f32[%[2]d]) {
  %%z = constant 0 : i32[]
  %%s0 = constant 0.0 : f32[%[2]d]
  %%i, %%x, %%s, %%ww, %%gg = while %%z, %%x0, %%s0, %%w, %%g cond (%%i: i32[], %%x: f32[1,%[2]d], %%s: f32[%[2]d], %%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d]) {
      %%n = constant %[1]d : i32[]
      %%go = compare %%i, %%n {dir=lt}
      return %%go
    } do (%%i: i32[], %%x: f32[1,%[2]d], %%s: f32[%[2]d], %%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d]) {
      %%zero = constant 0 : i32[]
      %%ws = dynamic_slice %%w, %%i, %%zero, %%zero {sizes=[1, %[2]d, %[2]d]}
      %%wl = reshape %%ws : f32[%[2]d,%[2]d]
      %%gs = dynamic_slice %%g, %%i, %%zero {sizes=[1, %[2]d]}
      %%gl = reshape %%gs : f32[%[2]d]
      %%h = fusion %%gs, %%x {kind=input} : f32[1,%[2]d] (%%a: f32[1,%[2]d], %%b: f32[1,%[2]d]) {
        %%a1 = reshape %%a : f32[%[2]d]
        %%r = rms_norm %%b, %%a1 {eps=1e-06}
        return %%r
      }
      %%y = dot_general %%h, %%wl {lhs_contract=[1], rhs_contract=[1]}
      %%t = tanh %%y
      %%one = constant 1 : i32[]
      %%i1 = add %%i, %%one
      return %%i1, %%t, %%gl, %%w, %%g
    }
  return %%x, %%s
}
`, L, H)
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	copies := 0
	for _, st := range x.plan.steps {
		for _, s := range st.bufs[:st.outs] {
			if typ := x.plan.slots[s].typ; typ.Rank() == 2 && typ.Shape[0].Size == H && typ.Shape[1].Size == H {
				t.Errorf("step %q writes a layer of W (%s):\n%s", st.what, typ, x.plan)
			}
			if typ := x.plan.slots[s].typ; typ.Rank() == 1 && typ.Shape[0].Size == H && st.kind == stepKernel {
				copies++
			}
		}
	}
	if copies == 0 {
		t.Errorf("no kernel writes the carried slice of g in memory:\n%s", x.plan)
	}
	agree(t, x, m, f, cpu.RandomInputs(f, 5))
}

// TestWhileViewStartFromArray: as training's reverse loop reads its saved
// layers, the layer index is read out of an array (a slice of it, reshaped
// to a scalar) and used by slices in two groups, before a norm fusion and
// after it. The index is in memory, never a view: the executor reads a
// view's start from storage (a view of the array there was a nil buffer).
func TestWhileViewStartFromArray(t *testing.T) {
	const L, H = 4, 32
	src := fmt.Sprintf(`func @main(%%order: i32[%[1]d], %%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d], %%x0: f32[1,%[2]d]) -> f32[1,%[2]d] {
  %%z = constant 0 : i32[]
  %%i, %%x, %%oo, %%ww, %%gg = while %%z, %%x0, %%order, %%w, %%g cond (%%i: i32[], %%x: f32[1,%[2]d], %%o: i32[%[1]d], %%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d]) {
      %%n = constant %[1]d : i32[]
      %%go = compare %%i, %%n {dir=lt}
      return %%go
    } do (%%i: i32[], %%x: f32[1,%[2]d], %%o: i32[%[1]d], %%w: f32[%[1]d,%[2]d,%[2]d], %%g: f32[%[1]d,%[2]d]) {
      %%zero = constant 0 : i32[]
      %%ks = dynamic_slice %%o, %%i {sizes=[1]}
      %%k = reshape %%ks : i32[]
      %%gs = dynamic_slice %%g, %%k, %%zero {sizes=[1, %[2]d]}
      %%h = fusion %%gs, %%x {kind=input} : f32[1,%[2]d] (%%a: f32[1,%[2]d], %%b: f32[1,%[2]d]) {
        %%a1 = reshape %%a : f32[%[2]d]
        %%r = rms_norm %%b, %%a1 {eps=1e-06}
        return %%r
      }
      %%ws = dynamic_slice %%w, %%k, %%zero, %%zero {sizes=[1, %[2]d, %[2]d]}
      %%wl = reshape %%ws : f32[%[2]d,%[2]d]
      %%y = dot_general %%h, %%wl {lhs_contract=[1], rhs_contract=[1]}
      %%t = tanh %%y
      %%one = constant 1 : i32[]
      %%i1 = add %%i, %%one
      return %%i1, %%t, %%o, %%w, %%g
    }
  return %%x
}
`, L, H)
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	in := cpu.RandomInputs(f, 6)
	in[0] = backend.FromInts(ir.Tensor(ir.I32, L), 3, 1, 0, 2)
	agree(t, x, m, f, in)
}

// TestWhileSwap: a body that returns its carried values in another order
// (a, b -> b, a+b) reads each before the carry overwrites it.
func TestWhileSwap(t *testing.T) {
	src := `func @main() -> (i32[], i32[]) {
  %z = constant 0 : i32[]
  %o = constant 1 : i32[]
  %i, %a, %b = while %z, %z, %o cond (%i: i32[], %a: i32[], %b: i32[]) {
      %ten = constant 10 : i32[]
      %go = compare %i, %ten {dir=lt}
      return %go
    } do (%i: i32[], %a: i32[], %b: i32[]) {
      %s = add %a, %b
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %b, %s
    }
  return %a, %b
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	got, err := x.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, c := got[0].Int64At(0), got[1].Int64At(0); a != 55 || c != 89 {
		t.Errorf("fib after 10 steps = %d, %d; want 55, 89", a, c)
	}
	agree(t, x, m, f, nil)
}

// scanRows writes row i of a carried f32[1000,8] for i < %n, as a scan's
// stacked outputs (and a KV cache) are written.
const scanRows = `func @main(%n: i32[], %x0: f32[8]) -> (f32[1000,8], f32[8]) {
  %z = constant 0 : i32[]
  %ys0 = constant 0.0 : f32[1000,8]
  %i, %x, %ys, %lim = while %z, %x0, %ys0, %n cond (%i: i32[], %x: f32[8], %ys: f32[1000,8], %lim: i32[]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %x: f32[8], %ys: f32[1000,8], %lim: i32[]) {
      %t = tanh %x
      %row = reshape %t : f32[1,8]
      %zero = constant 0 : i32[]
      %ys1 = dynamic_update_slice %ys, %row, %i, %zero
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %t, %ys1, %lim
    }
  return %ys, %x
}
`

// TestWhileUpdatesInPlace: a dynamic_update_slice of a carried value that
// the body returns as that value writes its rows into the carried storage
// (a step "update in place", no copy of the whole tensor per iteration),
// agrees with the reference executor, and allocates nothing per
// iteration.
func TestWhileUpdatesInPlace(t *testing.T) {
	x, m, f := planInPlace(t, "scan_rows.tir", scanRows, true)
	x0 := cpu.RandomInputs(f, 2)[1]
	allocs := map[int64]float64{}
	for _, n := range []int64{10, 1000} {
		in := []*backend.Buffer{backend.FromInts(ir.Tensor(ir.I32), n), x0}
		agree(t, x, m, f, in)
		if !raceEnabled {
			allocs[n] = testing.AllocsPerRun(5, func() {
				if _, err := x.Run(in); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	if allocs[10] != allocs[1000] {
		t.Errorf("a run of 10 iterations allocates %v times, of 1000 %v", allocs[10], allocs[1000])
	}
}

// addRows adds g into row i of a carried f32[1000,8] for i < %n, as a
// layer loop's reverse adds each layer's gradient into its stacked weight's
// cotangent: the update reads the row it writes.
const addRows = `func @main(%n: i32[], %g: f32[8]) -> f32[1000,8] {
  %z = constant 0 : i32[]
  %ys0 = constant 1.0 : f32[1000,8]
  %i, %ys, %lim, %gg = while %z, %ys0, %n, %g cond (%i: i32[], %ys: f32[1000,8], %lim: i32[], %h: f32[8]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %ys: f32[1000,8], %lim: i32[], %h: f32[8]) {
      %zero = constant 0 : i32[]
      %old = dynamic_slice %ys, %i, %zero {sizes=[1,8]} : f32[1,8]
      %hi = reshape %h : f32[1,8]
      %new = add %old, %hi
      %ys1 = dynamic_update_slice %ys, %new, %i, %zero
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %ys1, %lim, %h
    }
  return %ys
}
`

// TestWhileAddsRowsInPlace: a dynamic_update_slice of a carried value whose
// update reads the rows it replaces (and nothing else reads the carried
// value) writes into the carried storage too, with the reference
// executor's numbers; one whose operand is read after it is not.
func TestWhileAddsRowsInPlace(t *testing.T) {
	x, m, f := planInPlace(t, "add_rows.tir", addRows, true)
	g := cpu.RandomInputs(f, 3)[1]
	for _, n := range []int64{0, 7, 1000} {
		agree(t, x, m, f, []*backend.Buffer{backend.FromInts(ir.Tensor(ir.I32), n), g})
	}
	// %ys read again after the update (its sum returned): not in place.
	later := strings.Replace(addRows, "return %i1, %ys1, %lim, %h", "%s = add %ys, %ys1\n      return %i1, %s, %lim, %h", 1)
	x, m, f = planInPlace(t, "add_rows_later.tir", later, false)
	agree(t, x, m, f, []*backend.Buffer{backend.FromInts(ir.Tensor(ir.I32), 5), g})
}

// planInPlace compiles src for the llvm backend and checks whether its plan
// updates a carried value in place.
func planInPlace(t *testing.T, name, src string, want bool) (*Executable, *ir.Module, *ir.Func) {
	t.Helper()
	exe := compileText(t, name, []byte(src))
	x, err := testBackend(t).compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(x.plan.String(), "update in place dynamic_update_slice"); got != want {
		t.Errorf("%s: updates in place: %v, want %v:\n%s", name, got, want, x.plan)
	}
	return x, exe.Module, exe.Entry
}

// TestControlRandom: every random program (internal/progen, seeds 0..99; 0..39 with -short)
// that holds a while or a case, with nested regions and data-dependent
// trip counts among them, agrees with the reference executor on two input
// seeds, after the cpu pipeline (licm included).
func TestControlRandom(t *testing.T) {
	b := testBackend(t)
	seeds, n := int64(100), int64(0)
	if testing.Short() {
		seeds = 40
	}
	for seed := int64(0); seed < seeds; seed++ {
		m := progen.Generate(seed, progen.Config{})
		control := false
		for _, f := range m.Funcs {
			f.Body.Walk(func(in *ir.Instr) { control = control || ir.IsControl(in.Op) })
		}
		if !control {
			continue
		}
		n++
		exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
		if err != nil {
			t.Fatalf("seed %d: compile: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			differential(t, b, exe.Module, exe.Entry, 2*seed)
			differential(t, b, exe.Module, exe.Entry, 2*seed+1)
		})
	}
	if n < seeds/10 {
		t.Fatalf("%d of %d random programs hold a while or case, want at least %d", n, seeds, seeds/10)
	}
}

// TestSliceViewClamped: a product reads a layer of a stacked weight in
// place (view.go) at start indices clamped as dynamic_slice clamps them:
// negative reads layer 0, past the end the last layer; each agrees with
// the reference executor.
func TestSliceViewClamped(t *testing.T) {
	src := `func @main(%w: f32[3,2,8,8], %k: i32[], %j: i32[], %x: f32[1,8]) -> f32[1,8] {
  %z = constant 0 : i32[]
  %ws = dynamic_slice %w, %k, %j, %z, %z {sizes=[1, 1, 8, 8]}
  %wl = reshape %ws : f32[8,8]
  %y = dot_general %x, %wl {lhs_contract=[1], rhs_contract=[1]}
  return %y
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	viewed := false
	for _, sl := range x.plan.slots {
		viewed = viewed || sl.view != nil
	}
	if !viewed {
		t.Fatalf("the slice is not read in place:\n%s", x.plan)
	}
	in := cpu.RandomInputs(f, 4)
	for _, kj := range [][2]int64{{-3, 0}, {0, 1}, {2, 1}, {7, -1}, {1, 5}} {
		in[1], in[2] = backend.FromInts(ir.Tensor(ir.I32), kj[0]), backend.FromInts(ir.Tensor(ir.I32), kj[1])
		agree(t, x, m, f, in)
	}
}

// TestWhileAdoptsOperand: a loop nested in another that carries its
// parent's state (used nowhere else) runs in the parent's carried slot:
// nothing is copied into the inner loop or back out to the outer one's
// carry; the numbers agree with the reference executor.
func TestWhileAdoptsOperand(t *testing.T) {
	src := `func @main(%c0: f32[4,256], %n: i32[]) -> f32[4,256] {
  %z = constant 0 : i32[]
  %i, %c, %lim = while %z, %c0, %n cond (%i: i32[], %c: f32[4,256], %lim: i32[]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %c: f32[4,256], %lim: i32[]) {
      %zz = constant 0 : i32[]
      %l, %d = while %zz, %c cond (%l: i32[], %d: f32[4,256]) {
          %three = constant 3 : i32[]
          %go = compare %l, %three {dir=lt}
          return %go
        } do (%l: i32[], %d: f32[4,256]) {
          %h = constant 0.5 : f32[4,256]
          %e = mul %d, %h
          %s = sin %e
          %one = constant 1 : i32[]
          %l1 = add %l, %one
          return %l1, %s
        }
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %d, %lim
    }
  return %c
}
`
	b := testBackend(t)
	m, f, x := compileSrc(t, b, src)
	var loops []step
	for _, st := range x.plan.steps {
		if st.kind == stepWhile || st.kind == stepCarry {
			loops = append(loops, st)
		}
	}
	// outer while, inner while, inner carry, outer carry: the state is
	// carried value 1 of both loops.
	if len(loops) != 4 || loops[1].bufs[1] != loops[1].bufs[loops[1].outs+1] || loops[3].bufs[1] != loops[3].bufs[loops[3].outs+1] {
		t.Errorf("the inner loop does not run in the outer loop's carried slot:\n%s", x.plan)
	}
	in := cpu.RandomInputs(f, 1)
	for _, n := range []int64{0, 1, 4} {
		in[1] = backend.FromInts(ir.Tensor(ir.I32), n)
		agree(t, x, m, f, in)
	}
}
