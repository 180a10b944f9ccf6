package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
)

// twoFuncSrc has a helper and an entry that is not the first function.
const twoFuncSrc = `func @g(%a: f32[4], %b: f32[4]) -> f32[4] {
  %0 = mul %a, %b : f32[4]
  %1 = add %0, %0 : f32[4]
  return %1
}

func @main(%x: f32[4]) -> f32[4] {
  %one = constant 1.0 : f32[4]
  %y = mul %x, %one : f32[4]
  %z = call @g(%y, %x) : f32[4]
  return %z
}
`

// lowered is what build must print: the program parsed, run through the default pipeline
// with opts (plus the CPU folder) and lowered with entry.
func lowered(t *testing.T, src, entry string, opts passes.Options) string {
	t.Helper()
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts.Eval = cpu.Folder{}
	if err := passes.Run(m, passes.Default(), opts); err != nil {
		t.Fatal(err)
	}
	text, err := stablehlo.Lower(m, stablehlo.Options{Entry: entry})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestBuildStdout(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	want := lowered(t, expSrc, "", passes.Options{})
	if !strings.Contains(want, "stablehlo.exponential") {
		t.Fatalf("unexpected lowering:\n%s", want)
	}
	tpucc(t, "", "build", model).want(t, 0, want, "")
	tpucc(t, "", "build", model, "-o", "-").want(t, 0, want, "")
	tpucc(t, "", "build", "-o=-", model).want(t, 0, want, "")
	tpucc(t, expSrc, "build", "-").want(t, 0, want, "")
	noFiles(t, dir, "m.tir")
}

func TestBuildOutputFile(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoFuncSrc))
	want := lowered(t, twoFuncSrc, "main", passes.Options{})
	for i, args := range [][]string{
		{"build", model, "-o", filepath.Join(dir, "out.hlo")},
		{"build", "-o", filepath.Join(dir, "out.hlo"), model},
		{"build", "--o=" + filepath.Join(dir, "out.hlo"), model, "--verify-each"},
		{"build", "--target", "tpu-v5p", model, "--o", filepath.Join(dir, "out.hlo")},
	} {
		os.Remove(filepath.Join(dir, "out.hlo"))
		tpucc(t, "", args...).want(t, 0, "", "")
		got, err := os.ReadFile(filepath.Join(dir, "out.hlo"))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if string(got) != want {
			t.Errorf("case %d: out.hlo:\n%s\nwant:\n%s", i, got, want)
		}
		st, err := os.Stat(filepath.Join(dir, "out.hlo"))
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("case %d: out.hlo mode %v, %v; want 0644", i, st.Mode().Perm(), err)
		}
		noFiles(t, dir, "m.tir", "out.hlo")
	}
}

func TestBuildEntry(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoFuncSrc))
	want := lowered(t, twoFuncSrc, "g", passes.Options{})
	if !strings.Contains(want, "func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>)") {
		t.Fatalf("unexpected lowering of @g:\n%s", want)
	}
	tpucc(t, "", "build", model, "--entry", "g").want(t, 0, want, "")
	tpucc(t, "", "build", model, "--entry=@g").want(t, 0, want, "")
	r := tpucc(t, "", "build", model, "--entry", "h", "-o", filepath.Join(dir, "out.hlo"))
	r.want(t, exitUsage, "", "tpucc build: --entry h: "+model+" has no function @h (it has @g, @main)")
	noFiles(t, dir, "m.tir")
}

// TestBuildTargets: every target is accepted, and (until the target models exist) all give
// the same StableHLO.
func TestBuildTargets(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	want := lowered(t, expSrc, "", passes.Options{})
	for _, target := range targets {
		tpucc(t, "", "build", model, "--target="+target).want(t, 0, want, "")
	}
	tpucc(t, "", "build", model, "--target", "tpu-v9").want(t, exitUsage, "",
		`tpucc build: unknown target "tpu-v9" (want one of tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, tpu-v7x, cpu)`)
}

func TestBuildDisable(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoFuncSrc))
	want := lowered(t, twoFuncSrc, "", passes.Options{Disable: []string{"canonicalize", "dce"}})
	if want == lowered(t, twoFuncSrc, "", passes.Options{}) {
		t.Fatal("disabling canonicalize and dce changes nothing: the test program is too simple")
	}
	tpucc(t, "", "build", model, "--disable=canonicalize,dce").want(t, 0, want, "")
	tpucc(t, "", "build", model, "--disable", "canonicalize", "--disable", "dce").want(t, 0, want, "")
	tpucc(t, "", "build", model, "--disable", "cse,fusion").want(t, exitUsage, "",
		`tpucc build: --disable: unknown pass "fusion" (tpucc passes lists them)`)
}

func TestBuildDump(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	want := lowered(t, expSrc, "", passes.Options{})
	dumps := filepath.Join(dir, "dumps")
	tpucc(t, "", "build", model, "--dump-after=all", "--dump-dir", dumps).want(t, 0, want, "")
	if got := strings.Join(entries(t, dumps), " "); got != "f_00_input.tir f_01_canonicalize.tir f_02_fold-constants.tir f_03_cse.tir f_04_canonicalize.tir f_05_contract.tir f_06_moe-route.tir f_07_licm.tir f_08_dce.tir f_09_fuse.tir f_10_assign-layout.tir" {
		t.Errorf("dumps: %s", got)
	}
	got, err := os.ReadFile(filepath.Join(dumps, "f_08_dce.tir"))
	if err != nil || string(got) != expSrc {
		t.Errorf("f_08_dce.tir: %q, %v; want %q", got, err, expSrc)
	}

	only := filepath.Join(dir, "only")
	tpucc(t, "", "build", model, "--dump-after", "^c", "--dump-dir="+only).want(t, 0, want, "")
	if got := strings.Join(entries(t, only), " "); got != "f_00_input.tir f_01_canonicalize.tir f_03_cse.tir f_04_canonicalize.tir f_05_contract.tir" {
		t.Errorf("dumps after ^c: %s", got)
	}

	tpucc(t, "", "build", model, "--dump-after=(").want(t, exitUsage, "",
		"tpucc build: --dump-after: bad regular expression: error parsing regexp: missing closing ): `(`")
	tpucc(t, "", "build", model, "--dump-dir", dumps).want(t, exitUsage, "",
		"tpucc build: --dump-dir without --dump-after dumps nothing; add --dump-after=all or a pass name")
}

// TestBuildProgramErrors: a program error leaves no output file, and an existing one keeps
// its contents.
func TestBuildProgramErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.tir", []byte("func @f(%x: f32[2,3]) -> f32[2,3] {\n  %0 = exp %y : f32[2,3]\n  return %0\n}\n"))
	out := filepath.Join(dir, "out.hlo")
	r := tpucc(t, "", "build", bad, "-o", out)
	r.want(t, exitProgram, "", bad+":2:12: error: undefined value %y")
	noFiles(t, dir, "bad.tir")

	writeFile(t, dir, "out.hlo", []byte("old"))
	tpucc(t, "", "build", bad, "-o", out).want(t, exitProgram, "", bad+":2:12: error: undefined value %y")
	if got, _ := os.ReadFile(out); string(got) != "old" {
		t.Errorf("out.hlo was changed by a failed build: %q", got)
	}
	noFiles(t, dir, "bad.tir", "out.hlo")

	// Output into a directory that does not exist, or onto a directory.
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	nodir := filepath.Join(dir, "nodir", "out.hlo")
	tpucc(t, "", "build", model, "-o", nodir).want(t, exitProgram, "", nodir+": error: no such file or directory")
	tpucc(t, "", "build", model, "-o", dir).want(t, exitProgram, "", dir+": error: is a directory")
	noFiles(t, dir, "bad.tir", "m.tir", "out.hlo")
}

// TestBuildHugeSplat: a splat constant far larger than memory builds without allocating
// it (fold-constants folds splats through a scalar; the lowering writes dense<v>).
func TestBuildHugeSplat(t *testing.T) {
	src := "func @f() -> f32[100000000000] {\n  %c = constant 1.0 : f32[100000000000]\n  %0 = exp %c : f32[100000000000]\n  return %0\n}\n"
	dir := t.TempDir()
	model := writeFile(t, dir, "big.tir", []byte(src))
	want := lowered(t, src, "", passes.Options{})
	if !strings.Contains(want, "stablehlo.constant dense<2.7182817459106445e+00> : tensor<100000000000xf32>") {
		t.Errorf("the splat was not folded:\n%s", want)
	}
	tpucc(t, "", "build", model).want(t, 0, want, "")
}

// symSrc has two symbolic dimensions.
const symSrc = `func @f(%x: f32[B,S], %w: f32[S,4]) -> f32[B,4] {
  %y = matmul %x, %w
  %z = exp %y
  return %z
}
`

// TestBuildDim: --dim gives symbols sizes; the result is the build of the program written
// with those sizes.
func TestBuildDim(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(symSrc))
	static := strings.NewReplacer("B,", "2,", "S,", "3,", "S]", "3]").Replace(symSrc)
	if static == symSrc || strings.ContainsAny(static, "BS") {
		t.Fatalf("substitution: %s", static)
	}
	want := lowered(t, static, "", passes.Options{})
	tpucc(t, "", "build", model, "--dim", "B=2", "--dim", "S=3").want(t, 0, want, "")
	tpucc(t, "", "build", "--dim=S=3", model, "--dim=B=2").want(t, 0, want, "")

	out := filepath.Join(dir, "out.hlo")
	tpucc(t, "", "build", model, "--dim", "B=2", "-o", out).want(t, exitProgram, "",
		model+":1:9: error: lowering needs static shapes: %x has f32[2,S]; give S a size")
	for _, c := range []struct{ arg, line string }{
		{"C=2", "tpucc build: --dim C=2: " + model + " has no dimension C (it has B, S)"},
		{"B=x", "tpucc build: --dim B=x: the size must be a non-negative integer"},
		{"B=-1", "tpucc build: --dim B=-1: the size must be a non-negative integer"},
		{"B", "tpucc build: --dim B: want NAME=SIZE, NAME a dimension symbol such as B"},
		{"2B=1", "tpucc build: --dim 2B=1: want NAME=SIZE, NAME a dimension symbol such as B"},
	} {
		tpucc(t, "", "build", model, "--dim", "S=3", "--dim", c.arg, "-o", out).want(t, exitUsage, "", c.line)
	}
	tpucc(t, "", "build", model, "--dim", "B=1", "--dim", "B=2").want(t, exitUsage, "", "tpucc build: --dim B=2: B is given twice")
	noFiles(t, dir, "m.tir")

	// A static program has no symbols to give sizes to.
	plain := writeFile(t, dir, "p.tir", []byte(expSrc))
	tpucc(t, "", "build", plain, "--dim", "B=2").want(t, exitUsage, "",
		"tpucc build: --dim B=2: "+plain+" has no dimension B (it has no symbolic dimensions)")
}

// TestBuildRefusesWhatTheTPUCannotCompile: an i64 matmul builds for the cpu target
// but is refused, at its line and with no output file, for a TPU.
func TestBuildRefusesWhatTheTPUCannotCompile(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte("func @f(%a: i64[2,3], %b: i64[3,4]) -> i64[2,4] {\n  %y = matmul %a, %b\n  return %y\n}\n"))
	out := filepath.Join(dir, "m.hlo")
	tpucc(t, "", "build", model, "--target", "tpu-v6e", "-o", out).want(t, 1, "",
		model+":2:3: error: tpu-v6e has no 64-bit integer matmul: dot_general on i64 cannot be compiled for it (use i32, or a float type)")
	noFiles(t, dir, "m.tir")
	tpucc(t, "", "build", model, "-o", out).want(t, 0, "", "")
}
