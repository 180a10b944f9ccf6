package passes_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// twoFuncs builds
//
//	func @f(%x: f32[4]) -> f32[4] { %a = neg %x; %b = neg %x; %s = add %a, %b; return %s }
//	func @g(%y: i32[]) -> i32[] { %d = mul %y, %y; return %y }
func twoFuncs(t *testing.T) *ir.Module {
	t.Helper()
	m := ir.NewModule("t.tir")
	f := m.NewFunc("f", []string{"x"}, []ir.Type{ir.Tensor(ir.F32, 4)}, []ir.Type{ir.Tensor(ir.F32, 4)}, ir.Pos{})
	b := ir.NewBuilder(f)
	a1 := b.Op1(ir.OpNeg, nil, f.Params[0])
	a1.Name = "a"
	a2 := b.Op1(ir.OpNeg, nil, f.Params[0])
	a2.Name = "b"
	s := b.Op1(ir.OpAdd, nil, a1, a2)
	s.Name = "s"
	b.Return(s)

	g := m.NewFunc("g", []string{"y"}, []ir.Type{ir.Scalar(ir.I32)}, []ir.Type{ir.Scalar(ir.I32)}, ir.Pos{})
	b = ir.NewBuilder(g)
	d := b.Op1(ir.OpMul, nil, g.Params[0], g.Params[0])
	d.Name = "d"
	b.Return(g.Params[0])
	if err := ir.Verify(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// logPass records which function it ran on, changing nothing.
func logPass(name string, log *[]string) passes.Pass {
	return passes.Pass{Name: name, Doc: "logs", Run: func(f *ir.Func, c *passes.Context) (bool, error) {
		*log = append(*log, name+"@"+f.Name)
		return false, nil
	}}
}

func TestRunOrderAndDisable(t *testing.T) {
	var log []string
	pipeline := []passes.Pass{logPass("one", &log), logPass("two", &log), logPass("three", &log)}
	if err := passes.Run(twoFuncs(t), pipeline, passes.Options{VerifyEach: true, Disable: []string{"two"}}); err != nil {
		t.Fatal(err)
	}
	// Each pass runs over all functions before the next starts.
	want := "one@f one@g three@f three@g"
	if got := strings.Join(log, " "); got != want {
		t.Errorf("ran %q, want %q", got, want)
	}
}

func TestDisableRealPass(t *testing.T) {
	m := twoFuncs(t)
	if err := passes.Run(m, passes.Default(), passes.Options{VerifyEach: true, Disable: []string{"cse", "fuse"}}); err != nil {
		t.Fatal(err)
	}
	// Without cse the two negs stay; dce still drops the unused mul in @g
	// (fuse is off too, so the body stays readable).
	want := `func @f(%x: f32[4]) -> f32[4] {
  %a = neg %x : f32[4]
  %b = neg %x : f32[4]
  %s = add %a, %b : f32[4]
  return %s
}

func @g(%y: i32[]) -> i32[] {
  return %y
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDisableUnknown(t *testing.T) {
	var log []string
	pipeline := append(passes.Default(), logPass("extra", &log))
	err := passes.Run(twoFuncs(t), pipeline, passes.Options{Disable: []string{"cse", "constant-fold"}})
	want := `passes: cannot disable unknown pass "constant-fold"; valid passes: canonicalize, fold-constants, cse, dce, contract, moe-route, licm, fuse, assign-layout, extra`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if len(log) != 0 {
		t.Errorf("passes ran despite the error: %v", log)
	}
}

func TestPassOrderChecked(t *testing.T) {
	dce, _ := passes.Lookup("dce")
	cse, _ := passes.Lookup("cse")
	err := passes.Run(twoFuncs(t), []passes.Pass{cse, dce, cse}, passes.Options{})
	want := "passes: dce must run after cse: cse leaves the duplicates it merged for dce to remove"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// Disabling the second cse satisfies the constraint: it is checked on what runs.
	if err := passes.Run(twoFuncs(t), []passes.Pass{cse, dce, cse}, passes.Options{Disable: []string{"cse"}}); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultAndLookup(t *testing.T) {
	var names []string
	for _, p := range passes.Default() {
		names = append(names, p.Name)
		if p.Doc == "" || p.Run == nil {
			t.Errorf("pass %s lacks a Doc or a Run", p.Name)
		}
	}
	if got, want := strings.Join(names, ","), "canonicalize,fold-constants,cse,canonicalize,contract,moe-route,licm,dce,fuse,assign-layout"; got != want {
		t.Errorf("Default() = %s, want %s", got, want)
	}
	if got, want := strings.Join(passes.Names(), ","), "canonicalize,fold-constants,cse,dce,contract,moe-route,licm,fuse,assign-layout"; got != want {
		t.Errorf("Names() = %s, want %s", got, want)
	}
	if p, ok := passes.Lookup("fold-constants"); !ok || p.Name != "fold-constants" {
		t.Errorf("Lookup(fold-constants) = %v, %v", p.Name, ok)
	}
	if _, ok := passes.Lookup("inline"); ok {
		t.Error("Lookup(inline) found a pass")
	}
}

func TestPanicNamesPassAndFunc(t *testing.T) {
	explode := passes.Pass{Name: "explode", Run: func(f *ir.Func, c *passes.Context) (bool, error) {
		if f.Name == "g" {
			var xs []int
			_ = xs[len(f.Name)] // index out of range
		}
		return false, nil
	}}
	err := passes.Run(twoFuncs(t), []passes.Pass{explode}, passes.Options{})
	want := "internal error: pass explode panicked on @g: runtime error: index out of range [1] with length 0"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var pe *passes.PanicError
	if !errors.As(err, &pe) || pe.Pass != "explode" || pe.Func != "g" || !strings.Contains(string(pe.Stack), "run_test.go") {
		t.Errorf("PanicError = %+v", pe)
	}
}

func TestPassErrorNamesPassAndFunc(t *testing.T) {
	fail := passes.Pass{Name: "fail", Run: func(f *ir.Func, c *passes.Context) (bool, error) {
		return false, errors.New("out of cheese")
	}}
	err := passes.Run(twoFuncs(t), []passes.Pass{fail}, passes.Options{})
	if want := "pass fail on @f: out of cheese"; err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// breaker retypes @f's add to f32[5], which the verifier rejects.
var breaker = passes.Pass{Name: "breaker", Run: func(f *ir.Func, c *passes.Context) (bool, error) {
	for _, in := range f.Body.Instrs {
		if in.Op == ir.OpAdd {
			in.Results[0].Type = ir.Tensor(ir.F32, 5)
			return true, nil
		}
	}
	return false, nil
}}

func TestVerifyEachNamesPass(t *testing.T) {
	var log []string
	pipeline := []passes.Pass{logPass("before", &log), breaker, logPass("after", &log)}
	err := passes.Run(twoFuncs(t), pipeline, passes.Options{VerifyEach: true})
	want := "pass breaker broke @f:\n" +
		"<input>: error: result type f32[5] of add does not match the inferred f32[4]\n" +
		"<input>: error: result 0 of @f is f32[5], but its signature says f32[4]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if got := strings.Join(log, " "); got != "before@f before@g" {
		t.Errorf("ran %q after the failure", got)
	}
}

func TestVerifyAtEnd(t *testing.T) {
	var log []string
	pipeline := []passes.Pass{breaker, logPass("after", &log)}
	err := passes.Run(twoFuncs(t), pipeline, passes.Options{})
	want := "passes: the IR does not verify after the pipeline (breaker, after); run with VerifyEach to find the pass that broke it:\n" +
		"<input>: error: result type f32[5] of add does not match the inferred f32[4]\n" +
		"<input>: error: result 0 of @f is f32[5], but its signature says f32[4]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestUnreportedChange(t *testing.T) {
	sneaky := passes.Pass{Name: "sneaky", Run: func(f *ir.Func, c *passes.Context) (bool, error) {
		f.Params[0].Name = "renamed"
		return false, nil
	}}
	err := passes.Run(twoFuncs(t), []passes.Pass{sneaky}, passes.Options{VerifyEach: true})
	if want := "pass sneaky changed @f but reported no change"; err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestInputMustVerify(t *testing.T) {
	m := twoFuncs(t)
	m.Funcs[1].Results[0] = ir.Scalar(ir.F32)
	err := passes.Run(m, passes.Default(), passes.Options{})
	want := "passes: the input does not verify:\n<input>: error: result 0 of @g is i32[], but its signature says f32[]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestDump(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dumps") // Run creates it
	m := twoFuncs(t)
	opts := passes.Options{VerifyEach: true, DumpAfter: regexp.MustCompile("^(cse|dce)$"), DumpDir: dir, Disable: []string{"fold-constants"}}
	if err := passes.Run(m, passes.Default(), opts); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	// Sequence numbers are positions in the pipeline as given: disabling
	// fold-constants (02) does not renumber cse (03) or dce (07).
	want := "f_00_input.tir f_03_cse.tir f_08_dce.tir g_00_input.tir g_03_cse.tir g_08_dce.tir"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("dump files %q, want %q (no temporary files may remain)", got, want)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wantFiles := map[string]string{
		"f_00_input.tir": "func @f(%x: f32[4]) -> f32[4] {\n  %a = neg %x : f32[4]\n  %b = neg %x : f32[4]\n  %s = add %a, %b : f32[4]\n  return %s\n}\n",
		"f_03_cse.tir":   "func @f(%x: f32[4]) -> f32[4] {\n  %a = neg %x : f32[4]\n  %b = neg %x : f32[4]\n  %s = add %a, %a : f32[4]\n  return %s\n}\n",
		"f_08_dce.tir":   "func @f(%x: f32[4]) -> f32[4] {\n  %a = neg %x : f32[4]\n  %s = add %a, %a : f32[4]\n  return %s\n}\n",
		"g_03_cse.tir":   "func @g(%y: i32[]) -> i32[] {\n  %d = mul %y, %y : i32[]\n  return %y\n}\n",
		"g_08_dce.tir":   "func @g(%y: i32[]) -> i32[] {\n  return %y\n}\n",
	}
	for _, name := range []string{"f_00_input.tir", "f_03_cse.tir", "f_08_dce.tir", "g_03_cse.tir", "g_08_dce.tir"} {
		if got := read(name); got != wantFiles[name] {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, wantFiles[name])
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "f_03_cse.tir")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("dump mode %v, %v; want 0644", fi.Mode(), err)
	}
}

func TestStatsOfDefault(t *testing.T) {
	m := twoFuncs(t)
	var st passes.Stats
	if err := passes.Run(m, passes.Default(), passes.Options{VerifyEach: true, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	want := "cse/neg: 1\ndce/mul: 1\ndce/neg: 1\nfuse/loop: 1\n"
	if got := st.String(); got != want {
		t.Errorf("stats\n%s\nwant\n%s", got, want)
	}
	if got := st.Get("dce", "mul"); got != 1 {
		t.Errorf("Get(dce, mul) = %d", got)
	}
}

// Times lists the steps that ran, in order, with the disabled one left out
// and the sequence numbers of the pipeline as given (the times themselves
// are not asserted).
func TestTimesListSteps(t *testing.T) {
	var log []string
	pipeline := []passes.Pass{logPass("one", &log), logPass("two", &log), logPass("three", &log)}
	for _, verifyEach := range []bool{false, true} {
		var times []passes.PassTime
		opts := passes.Options{VerifyEach: verifyEach, Disable: []string{"two"}, Times: &times}
		if err := passes.Run(twoFuncs(t), pipeline, opts); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range times {
			got = append(got, s.Pass+"#"+strconv.Itoa(s.Seq))
		}
		want := "verify#0 one#1 three#3 verify#4"
		if verifyEach {
			want = "verify#0 one#1 three#3" // verified after each pass, not again at the end
		}
		if strings.Join(got, " ") != want {
			t.Errorf("VerifyEach %v: steps %q, want %q", verifyEach, strings.Join(got, " "), want)
		}
	}
}
