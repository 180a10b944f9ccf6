package tir

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/ir"
)

const goldenDir = "../../testdata/golden/parse"

// TestGolden parses each case's in.tir: the expected output is the canonical
// print (out.tir) or the exact diagnostics (error).
func TestGolden(t *testing.T) {
	golden.Run(t, goldenDir, func(t *testing.T, c *golden.Case) map[string]string {
		in, ok := c.Input("in.tir")
		if !ok {
			t.Fatal("no in.tir section")
		}
		m, err := Parse("in.tir", []byte(in))
		if err != nil {
			checkDiagnostics(t, "in.tir", err)
			return map[string]string{"error": err.Error()}
		}
		return map[string]string{"out.tir": ir.Print(m)}
	})
}

var diagLine = regexp.MustCompile(`^[^:]+:[0-9]+:[0-9]+: error: .+$`)

// checkDiagnostics asserts the error is ir's positioned kind, every line
// FILE:LINE:COL: error: MSG.
func checkDiagnostics(t *testing.T, file string, err error) {
	t.Helper()
	var one *ir.Error
	var list *ir.ErrorList
	if !errors.As(err, &list) && !errors.As(err, &one) {
		t.Errorf("error is %T, want *ir.Error or *ir.ErrorList: %v", err, err)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, file+":") || !diagLine.MatchString(line) {
			t.Errorf("diagnostic %q is not %s:LINE:COL: error: MSG", line, file)
		}
	}
}

// roundTrip asserts that text, which must be canonical, parses and prints back unchanged.
func roundTrip(t *testing.T, name, text string) {
	t.Helper()
	m, err := Parse(name, []byte(text))
	if err != nil {
		t.Errorf("%s: canonical text does not parse: %v\n%s", name, err, text)
		return
	}
	if got := ir.Print(m); got != text {
		t.Errorf("%s: print(parse(text)) differs from text\n--- text\n%s--- printed\n%s", name, text, got)
	}
}

// TestRoundTrip checks print -> parse -> print over every golden case's
// canonical output and every file in examples/.
func TestRoundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	n := 0
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name == "out.tir" {
				roundTrip(t, filepath.Base(p), string(f.Data))
				n++
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d golden cases have out.tir", n)
	}
	examples, _ := filepath.Glob("../../examples/*.tir")
	for _, p := range examples {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(p, src)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		roundTrip(t, p, ir.Print(m))
	}
}

// TestPositions checks that instructions, values and functions carry the
// position of their first token.
func TestPositions(t *testing.T) {
	src := "// leading comment\n" +
		"func @f(%a: f32[4],\n" +
		"        %b: f32[4]) -> (f32[4], i32[4]) {\n" +
		"  %s = add %a, %b\n" +
		"  %v, %i = top_k %s {k=4}\n" +
		"  return %v, %i\n" +
		"}\n"
	m, err := Parse("p.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	body := f.Body.Instrs
	got := []string{
		f.Pos.String(), f.Params[0].Pos.String(), f.Params[1].Pos.String(),
		body[0].Pos.String(), body[0].Results[0].Pos.String(),
		body[1].Pos.String(), body[1].Results[0].Pos.String(), body[1].Results[1].Pos.String(),
		body[2].Pos.String(),
	}
	want := []string{
		"p.tir:2:1", "p.tir:2:9", "p.tir:3:9",
		"p.tir:4:3", "p.tir:4:3",
		"p.tir:5:3", "p.tir:5:3", "p.tir:5:7",
		"p.tir:6:3",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("positions\n got %v\nwant %v", got, want)
	}
	if m.File != "p.tir" {
		t.Errorf("module file %q", m.File)
	}
	names := []string{f.Params[0].Name, body[0].Results[0].Name, body[1].Results[1].Name}
	if strings.Join(names, ",") != "a,s,i" {
		t.Errorf("names %v", names)
	}
}

// TestDigitNames checks that digit-only names are not kept (the printer
// numbers values) while they still resolve.
func TestDigitNames(t *testing.T) {
	src := "func @f(%7: f32[]) -> f32[] {\n  %3 = neg %7\n  %x.1 = abs %3\n  return %x.1\n}\n"
	m, err := Parse("d.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	if f.Params[0].Name != "" || f.Body.Instrs[0].Results[0].Name != "" || f.Body.Instrs[1].Results[0].Name != "x.1" {
		t.Errorf("names %q %q %q", f.Params[0].Name, f.Body.Instrs[0].Results[0].Name, f.Body.Instrs[1].Results[0].Name)
	}
	want := "func @f(%0: f32[]) -> f32[] {\n  %1 = neg %0 : f32[]\n  %x.1 = abs %1 : f32[]\n  return %x.1\n}\n"
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLiteralValues checks the stored elements, not just their printing.
func TestLiteralValues(t *testing.T) {
	src := "func @f() -> (bf16[3], i1[2], u32[], f32[2,0]) {\n" +
		"  %a = constant [0.1, -inf, 3] : bf16[3]\n" +
		"  %b = constant [true, false] : i1[2]\n" +
		"  %c = constant 4294967295 : u32[]\n" +
		"  %d = constant [[], []] : f32[2,0]\n" +
		"  return %a, %b, %c, %d\n}\n"
	m, err := Parse("l.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	lit := func(i int) *ir.Literal { return m.Funcs[0].Body.Instrs[i].Attr.(*ir.ConstAttr).Value }
	a := lit(0)
	if len(a.Floats) != 3 || a.Floats[0] != 0.10009765625 || a.Floats[1] != negInf || a.Floats[2] != 3 {
		t.Errorf("bf16 literal %v", a.Floats)
	}
	if b := lit(1); len(b.Ints) != 2 || b.Ints[0] != 1 || b.Ints[1] != 0 {
		t.Errorf("i1 literal %v", b.Ints)
	}
	if c := lit(2); len(c.Ints) != 1 || c.Ints[0] != 4294967295 {
		t.Errorf("u32 literal %v", c.Ints)
	}
	if d := lit(3); d.Len() != 0 || d.Floats == nil {
		t.Errorf("empty literal %#v", d)
	}
}

var negInf = math.Inf(-1)

// TestExpectedText pins the FIRST-set description of participle's grammar fragments.
func TestExpectedText(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{`unexpected token "x" (expected ")" <arrow> (("(" (TypeAST ("," TypeAST)*)? ")") | TypeAST) "{" StmtAST* "}")`, "')'"},
		{`unexpected token "x" (expected (DimAST ("," DimAST)*)? "]" LayoutAST?)`, "a dimension or ']'"},
		{`unexpected token "x" (expected (("(" TypeAST) | TypeAST))`, "'(' or a type"},
		{`unexpected token "x" (expected (?= "{") LayoutAST? "}")`, "a layout or '}'"},
		{`unexpected token "x"`, ""},
	} {
		if got := expectedText(c.msg); got != c.want {
			t.Errorf("expectedText(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}

// TestNestingLimit: brackets nested past maxNesting are a syntax error at the
// first bracket too deep, instead of exhausting the parser's stack. (The
// body's '{' is level 1, so the 256th '[' is the first too deep.)
func TestNestingLimit(t *testing.T) {
	deep := "func @f() -> f32[] {\n  %c = constant " + strings.Repeat("[", 100000) + "\n}\n"
	_, err := Parse("n.tir", []byte(deep))
	want := "n.tir:2:272: error: syntax error: brackets nested more than 256 deep"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// Brackets in comments and strings do not count.
	ok := "// " + strings.Repeat("[", 300) + "\nfunc @f(%x: f32[2]) -> f32[2] {\n  %y = neg %x {s=\"" + strings.Repeat("(", 300) + "\"}\n  return %y\n}\n"
	_, err = Parse("n.tir", []byte(ok))
	if want := "n.tir:3:16: error: neg has no attribute 's'"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestGoldenCoversEveryOp: every op of ir's table is printed and parsed by
// some golden case (an op added to ir needs a case here).
func TestGoldenCoversEveryOp(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	seen := map[ir.Op]bool{}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if f.Name != "out.tir" {
				continue
			}
			m, err := Parse(p, f.Data)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for _, fn := range m.Funcs {
				fn.Body.Walk(func(in *ir.Instr) { seen[in.Op] = true })
			}
		}
	}
	for _, op := range ir.Ops() {
		if !seen[op] {
			t.Errorf("no golden case prints op %s", op)
		}
	}
}

// TestBudgets: a file over MaxSource is refused before it is lexed, and a
// type of more than MaxRank dimensions where it is written (100000 of them
// took a second and 100 MB to reach the verifier).
func TestBudgets(t *testing.T) {
	big := make([]byte, MaxSource+1)
	copy(big, "//")
	for i := 2; i < len(big); i++ {
		big[i] = ' '
	}
	_, err := Parse("big.tir", big)
	if want := "big.tir:1:1: error: the file is 16777217 bytes, more than the 16777216 (16 MiB) a .tir file may have"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	ranked := func(n int) string {
		return "f32[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]"
	}
	src := "func @main(%a: " + ranked(100000) + ") -> f32[1] {\n  return %a\n}\n"
	_, err = Parse("r.tir", []byte(src))
	if want := "r.tir:1:16: error: a type of 100000 dimensions, more than 64"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	src = "func @main(%a: " + ranked(MaxRank) + ") -> " + ranked(MaxRank) + " {\n  return %a\n}\n"
	if _, err := Parse("r.tir", []byte(src)); err != nil {
		t.Errorf("rank %d: %v", MaxRank, err)
	}
}

// TestParseMemoryLinear: what Parse allocates per byte of source stays the
// same from a program to one four times its size, for the shapes a hostile
// file grows in (parameters, a literal's elements, instructions): parsing is
// linear in the source, so MaxSource bounds its memory (about 600 bytes
// allocated and 200 live per byte of source).
func TestParseMemoryLinear(t *testing.T) {
	shapes := map[string]func(n int) string{
		"params": func(n int) string {
			ps := make([]string, n)
			for i := range ps {
				ps[i] = fmt.Sprintf("%%a%d: f32[1]", i)
			}
			return "func @main(" + strings.Join(ps, ", ") + ") -> f32[1] {\n  return %a0\n}\n"
		},
		"literal": func(n int) string {
			elems := strings.TrimSuffix(strings.Repeat("1.5, ", n), ", ")
			return fmt.Sprintf("func @main() -> f32[%d] {\n  %%b = constant [%s] : f32[%d]\n  return %%b\n}\n", n, elems, n)
		},
		"instructions": func(n int) string {
			var b strings.Builder
			b.WriteString("func @main(%a: f32[2]) -> f32[2] {\n  %b0 = neg %a\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(&b, "  %%b%d = neg %%b%d\n", i, i-1)
			}
			fmt.Fprintf(&b, "  return %%b%d\n}\n", n-1)
			return b.String()
		},
	}
	perByte := func(src string) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Parse("m.tir", []byte(src)); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(src))
	}
	for name, gen := range shapes {
		small, large := perByte(gen(1000)), perByte(gen(4000))
		if large > 1.5*small || large > 1000 {
			t.Errorf("%s: %.0f bytes allocated per byte of source at 1000, %.0f at 4000", name, small, large)
		}
	}
}
