package stablehlo

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	lower "github.com/tpucc/tpucc/lower/stablehlo"
)

// notYet are the golden programs whose lowering uses a form the importer
// does not read yet, each with the exact refusal.
var notYet = map[string]string{

	"ragged_contract_native": "unsupported op chlo.ragged_dot",
	"ragged_dot_bf16":        "unsupported op chlo.ragged_dot",
	"ragged_dot_native":      "unsupported op chlo.ragged_dot",
	"ragged_dot_native_high": "unsupported op chlo.ragged_dot",
	"sharding":               "unsupported op sdy.mesh (a program split over a mesh)",
	"sharding_axes":          "unsupported op sdy.mesh (a program split over a mesh)",
}

// textOnly are golden programs that cannot run alone, each with the
// reason: their import must lower back to the same text.
var textOnly = map[string]string{
	"collectives_forms":         "its process groups span processes that a program run alone does not have",
	"collective_broadcast_root": "its process groups span processes that a program run alone does not have",
	"replicas":                  "it runs as four replicas (backend/pjrt's TestReplicasRun runs it on the grid): mhlo.num_replicas = 4 must come back",
}

// TestRoundTrip: every golden program, lowered to StableHLO and imported
// back, computes what the original computes on the reference executor:
// exactly for integers and i1, within 2 ulp-scale tolerances for floats
// (the lowering decomposes composites such as softmax into other float ops).
func TestRoundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "lower", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	imported := 0
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src, hlo := section(a, "in.tir"), section(a, "out.hlo")
		if src == "" || hlo == "" {
			continue // an error case: nothing was lowered
		}
		t.Run(name, func(t *testing.T) {
			m2, err := Parse(name+".mlir", []byte(hlo))
			if want, ok := notYet[name]; ok {
				if err == nil || !strings.Contains(err.Error(), "error: "+want) {
					t.Fatalf("want the refusal %q, got %v", want, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("import: %v\n%s", err, hlo)
			}
			imported++
			if _, ok := textOnly[name]; ok || hasCustomCall(m2) {
				// The kernel does not travel with StableHLO (nor does a
				// fallback): the import must lower back to the same text.
				back, err := lower.Lower(m2, lower.Options{ModuleName: moduleName(hlo)})
				if err != nil || back != hlo {
					t.Fatalf("lowering the import gives %v\n%s\nwant\n%s", err, back, hlo)
				}
				return
			}
			m1, err := tir.Parse("in.tir", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			entry := m1.Entry()
			if e := directive(string(a.Comment), "entry"); e != "" {
				entry = m1.Func(e)
			}
			sameResults(t, m1, entry, m2, m2.Func("main"))
		})
	}
	if imported < 80 {
		t.Errorf("only %d golden programs imported", imported)
	}
}

func hasCustomCall(m *ir.Module) bool {
	found := false
	for _, f := range m.Funcs {
		f.Body.Walk(func(in *ir.Instr) { found = found || in.Op == ir.OpCustomCall })
	}
	return found
}

// moduleName is the symbol of StableHLO text's module: module @NAME.
func moduleName(hlo string) string {
	_, rest, _ := strings.Cut(hlo, "module @")
	name, _, _ := strings.Cut(rest, " ")
	return name
}

func section(a *txtar.Archive, name string) string {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	return ""
}

func directive(comment, key string) string {
	for _, line := range strings.Split(comment, "\n") {
		if v, ok := strings.CutPrefix(line, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func sameResults(t *testing.T, m1 *ir.Module, f1 *ir.Func, m2 *ir.Module, f2 *ir.Func) {
	t.Helper()
	args := cpu.RandomInputs(f1, 7)
	want, err := cpu.Run(m1, f1, args)
	if err != nil {
		t.Fatalf("original: %v", err)
	}
	got, err := cpu.Run(m2, f2, args)
	if err != nil {
		t.Fatalf("imported: %v\n%s", err, ir.Print(m2))
	}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		if msg := compare(got[i], want[i], 1e-5); msg != "" {
			t.Errorf("result %d: %s", i, msg)
		}
	}
}

// compare checks got against want: same type, integers equal, floats within
// rtol (scaled to the dtype's precision), NaN where NaN.
func compare(got, want *backend.Buffer, rtol float64) string {
	if !got.Type().Equal(want.Type()) {
		return "type " + got.Type().String() + ", want " + want.Type().String()
	}
	if want.Type().DType.IsComplex() {
		return compare(parts(got), parts(want), rtol)
	}
	n := want.Len()
	g, w := make([]float64, n), make([]float64, n)
	got.ReadFloat64s(0, g)
	want.ReadFloat64s(0, w)
	switch want.Type().DType {
	case ir.BF16:
		rtol = math.Max(rtol, 1.0/64)
	case ir.F16:
		rtol = math.Max(rtol, 1.0/512)
	}
	exact := !want.Type().DType.IsFloat()
	for i := range w {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) || g[i] == w[i] {
			continue
		}
		if exact || math.Abs(g[i]-w[i]) > rtol*math.Max(1, math.Abs(w[i])) {
			return "element " + itoa(i) + " is " + ftoa(g[i]) + ", want " + ftoa(w[i])
		}
	}
	return ""
}

func ftoa(v float64) string { return strconvFloat(v) }

func strconvFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// corpus is every lowering golden's out.hlo.
func corpus(tb testing.TB) []string {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "lower", "*.txtar"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no golden cases: %v", err)
	}
	var out []string
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if s := section(a, "out.hlo"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parts views a complex buffer as its parts, with a last dimension of 2.
func parts(b *backend.Buffer) *backend.Buffer {
	t := b.Type()
	v, err := backend.View(ir.Tensor(t.DType.ComplexPart(), append(t.Dims(), 2)...), b.Bytes())
	if err != nil {
		panic(err)
	}
	return v
}

// TestComplexHexConstant: a complex constant of more than 100 elements is
// lowered as a hex blob (each element's real part, then its imaginary
// part) and imported back to the same values, signed zeros and NaNs included.
func TestComplexHexConstant(t *testing.T) {
	for _, dt := range []string{"c64", "c128"} {
		var b strings.Builder
		b.WriteString("func @f() -> " + dt + "[120] {\n  %k = constant [")
		for i := range 120 {
			if i > 0 {
				b.WriteString(", ")
			}
			switch i {
			case 7:
				b.WriteString("(-0.0, nan)")
			case 8:
				b.WriteString("(inf, -inf)")
			default:
				b.WriteString("(" + strconv.Itoa(i) + ".5, -" + strconv.Itoa(i) + ".25)")
			}
		}
		b.WriteString("] : " + dt + "[120]\n  return %k\n}\n")
		m1, err := tir.Parse("k.tir", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		hlo, err := lower.Lower(m1, lower.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(hlo, `dense<"0x`) {
			t.Fatalf("%s: a 120-element constant is not a hex blob:\n%s", dt, hlo)
		}
		m2, err := Parse("k.mlir", []byte(hlo))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cpu.Run(m1, m1.Entry(), nil)
		got, err := cpu.Run(m2, m2.Func("main"), nil)
		if err != nil {
			t.Fatal(err)
		}
		// NaN payloads are not kept (the lowering writes the quiet NaN), signs of zeros are.
		if msg := compare(got[0], want[0], 0); msg != "" || !math.Signbit(real(got[0].Complex128At(7))) {
			t.Errorf("%s: %s\nimported %s", dt, msg, got[0])
		}
	}
}
