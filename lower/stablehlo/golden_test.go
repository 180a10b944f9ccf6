package stablehlo

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/golden"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
	"golang.org/x/tools/txtar"
)

// Golden cases: testdata/golden/lower/*.txtar hold in.tir and the expected
// out.hlo (or error). Comment directives: "entry: NAME" picks Options.Entry,
// "module: NAME" Options.ModuleName, "native-ragged-dot: true"
// Options.NativeRaggedDot (the form TPU targets get), "donate: 0,2"
// Options.Donate, "precision: highest" Options.Precision.
var goldenDir = filepath.Join("..", "..", "testdata", "golden", "lower")

func lowerGolden(t *testing.T, c *golden.Case) (string, *ir.Module, error) {
	src, ok := c.Input("in.tir")
	if !ok {
		t.Fatalf("%s has no in.tir section", c.Path)
	}
	m, err := tir.Parse("in.tir", []byte(src))
	if err != nil {
		t.Fatalf("in.tir does not parse: %v", err)
	}
	if printed := ir.Print(m); printed != src {
		t.Errorf("in.tir is not in canonical form; ir.Print gives\n%s", printed)
	}
	text, err := Lower(m, Options{Entry: c.Directive("entry"), ModuleName: c.Directive("module"),
		NativeRaggedDot: c.Directive("native-ragged-dot") == "true", Donate: donateList(t, c.Directive("donate")),
		Precision: c.Directive("precision")})
	return text, m, err
}

func TestGolden(t *testing.T) {
	golden.Run(t, goldenDir, func(t *testing.T, c *golden.Case) map[string]string {
		text, _, err := lowerGolden(t, c)
		if err != nil {
			return map[string]string{"error": err.Error()}
		}
		// Lowering twice gives the same text.
		if again, _, _ := lowerGolden(t, c); again != text {
			t.Errorf("lowering is not deterministic:\n%s\nthen\n%s", text, again)
		}
		return map[string]string{"out.hlo": text}
	})
}

// TestGoldenXLA hands every golden case's lowering to XLA, which must parse,
// verify, compile and run it on deterministic small inputs; TestXLA checks the
// numbers themselves.
func TestGoldenXLA(t *testing.T) {
	h, err := xlacheck.Find()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases in %s: %v", goldenDir, err)
	}
	sort.Strings(paths)
	var cases []xlacheck.Case
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var src string
		for _, f := range a.Files {
			if f.Name == "in.tir" {
				src = string(f.Data)
			}
		}
		m, err := tir.Parse("in.tir", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		opts := Options{Entry: directive(string(a.Comment), "entry"), ModuleName: directive(string(a.Comment), "module"),
			Donate: donateList(t, directive(string(a.Comment), "donate"))}
		text, err := Lower(m, opts)
		if err != nil {
			continue // an error case; TestGolden checks the message
		}
		if partitions(m) > 1 || m.NumReplicas() > 1 {
			continue // the harness runs one device; backend/pjrt's TestShard* and TestReplicated* run four
		}
		if directive(string(a.Comment), "xla") == "no" {
			continue // custom calls of kernels XLA:CPU does not have; TestGolden checks the text
		}
		entry := m.Entry()
		if opts.Entry != "" {
			entry = m.Func(opts.Entry)
		}
		var inputs []*npy.Array
		for _, v := range entry.Params {
			inputs = append(inputs, smallInput(v.Type))
		}
		cases = append(cases, xlacheck.Case{ID: filepath.Base(p), Module: text, Inputs: inputs})
	}
	results, err := h.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if !r.OK {
			t.Errorf("%s: XLA %s failed: %s\n%s\nrepro: %s", r.ID, r.Stage, r.Error, cases[i].Module, r.Repro)
		}
	}
}

// donateList reads a "donate" directive: parameter positions, comma separated.
func donateList(t *testing.T, v string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		i, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("donate directive %q: %v", v, err)
		}
		out = append(out, i)
	}
	return out
}

// directive reads "key: value" from an archive comment, as golden.Case.Directive does.
func directive(comment, key string) string {
	for _, line := range strings.Split(comment, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// smallInput is a deterministic input of type t: small values of both signs
// (non-negative for unsigned types), alternating booleans.
func smallInput(t ir.Type) *npy.Array {
	n, _ := t.NumElements()
	vals := make([]float64, n)
	for i := range vals {
		k := float64((i*7)%11 - 5)
		switch {
		case t.DType == ir.I1:
			k = float64(i % 2)
		case t.DType.IsUnsigned():
			k = float64((i * 7) % 11)
		case t.DType.IsFloat(), t.DType.IsComplex():
			k *= 0.5
		}
		vals[i] = k
	}
	return arr(t.DType, t.Dims(), vals...)
}
