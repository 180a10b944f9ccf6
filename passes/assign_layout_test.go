package passes_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
	"golang.org/x/tools/txtar"
)

// layoutTargets are the targets the layout tests run for: the CPU and a TPU
// of each MXU width.
var layoutTargets = []string{"cpu", "tpu-v5e", "tpu-v6e"}

// TestAssignLayoutKeepsNumbers: the default pipeline with a target gives
// bit-identical results on the reference executor to the pipeline without
// one, for every example: layouts are physical only, and a transpose folded
// into a dot_general computes the same sums in the same order. It also
// checks the laid-out module verifies, prints as .tir that parses back to
// itself, and that a second assign-layout reports no change.
func TestAssignLayoutKeepsNumbers(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.tir"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		base := runDefault(t, file, src, nil)
		want := runEntry(t, base)
		var cpuHLO string
		for _, name := range layoutTargets {
			target, _ := engine.LookupTarget(name)
			m := runDefault(t, file, src, target)
			// The StableHLO carries no layouts: every target lowers to the
			// same text (folding does not depend on the target).
			hlo, err := stablehlo.Lower(m, stablehlo.Options{})
			if err != nil {
				t.Fatalf("%s on %s: %v", file, name, err)
			}
			if cpuHLO == "" {
				cpuHLO = hlo
			} else if hlo != cpuHLO {
				t.Errorf("%s: the StableHLO for %s differs from the cpu target's", file, name)
			}
			if strings.Contains(hlo, ":T(") {
				t.Errorf("%s on %s: a layout reached the StableHLO", file, name)
			}
			printed := ir.Print(m)
			m2, err := tir.Parse("laid-out.tir", []byte(printed))
			if err != nil {
				t.Fatalf("%s on %s: the output does not parse: %v", file, name, err)
			}
			if again := ir.Print(m2); again != printed {
				t.Errorf("%s on %s: print -> parse -> print changed the output", file, name)
			}
			assign, _ := passes.Lookup("assign-layout")
			var st passes.Stats
			if err := passes.Run(m2, []passes.Pass{assign}, passes.Options{VerifyEach: true, Target: target, Stats: &st}); err != nil {
				t.Fatal(err)
			}
			if s := st.String(); s != "" || ir.Print(m2) != printed {
				t.Errorf("%s on %s: a second assign-layout changed the program (%q)", file, name, s)
			}
			got := runEntry(t, m)
			for i := range want {
				if !want[i].Equal(got[i]) {
					t.Errorf("%s on %s: result %d differs from the build without a target", file, name, i)
				}
			}
		}
	}
}

func runDefault(t *testing.T, file string, src []byte, target passes.Target) *ir.Module {
	t.Helper()
	m, err := tir.Parse(file, src)
	if err != nil {
		t.Fatal(err)
	}
	// The layout figures are of the unfused program: fusion (which runs
	// before assign-layout) is measured by its own tests.
	opts := passes.Options{VerifyEach: true, Eval: cpu.Folder{}, Disable: []string{"fuse"}}
	if target != nil {
		opts.Target = target
	}
	if err := passes.Run(m, passes.Default(), opts); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

func runEntry(t *testing.T, m *ir.Module) []*backend.Buffer {
	t.Helper()
	f := m.Entry()
	out, err := cpu.Run(m, f, cpu.RandomInputs(f, 1))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAssignLayoutTransformer: on tpu-v6e the transformer block's values are
// tiled; its rotary halves and position tables, whose minor dimension of 32
// would fill a quarter of the 128 lanes, take the order that puts 64 minor,
// which the cost model sees as fewer bytes. v's transpose is gone on every
// target: contract folds it into the attention's dot_general.
func TestAssignLayoutTransformer(t *testing.T) {
	file := filepath.Join("..", "examples", "transformer_block.tir")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	count := func(m *ir.Module) (transposes int, bytes int64) {
		f := m.Entry()
		f.Body.Walk(func(in *ir.Instr) {
			if in.Op == ir.OpTranspose {
				transposes++
			}
			for _, r := range in.Results {
				bytes += target.V6e.Bytes(r.Type)
			}
		})
		return transposes, bytes
	}
	// Without fuse, so that every value is materialised and counted.
	var pipeline []passes.Pass
	for _, p := range passes.Default() {
		if p.Name != "fuse" {
			pipeline = append(pipeline, p)
		}
	}
	run := func(target passes.Target) *ir.Module {
		m, err := tir.Parse(file, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := passes.Run(m, pipeline, passes.Options{VerifyEach: true, Eval: cpu.Folder{}, Target: target}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tr0, b0 := count(run(nil))
	m := run(target.V6e)
	tr1, b1 := count(m)
	if tr0 != 3 || tr1 != 3 {
		t.Errorf("transposes: %d without a target, %d on tpu-v6e; want 3 and 3", tr0, tr1)
	}
	// Saved: 18 f32[4,64,32] values (the rotary halves of q and k, their products
	// and sums, the two broadcast tables) at 65536 bytes each instead of 131072,
	// 8 f32[64,32] position tables at 16384 instead of 32768:
	// 1179648 + 131072 = 1310720. (The transpose contract removed, an
	// f32[4,64,64], is counted in neither.)
	if b0 != 6135808 || b1 != 4825088 {
		t.Errorf("result bytes on tpu-v6e: %d row-major, %d laid out; want 6135808 and 4825088", b0, b1)
	}
	f := m.Entry()
	for _, p := range f.Params {
		if l := p.Type.Layout; l == nil || !slices.Equal(l.MinorToMajor, target.V6e.Layout(p.Type).MinorToMajor) {
			t.Errorf("parameter %s is not row-major: %s", p.Name, p.Type)
		}
	}
	if got := f.Results[0].String(); got != "f32[64,256]{1,0:T(8,128)}" {
		t.Errorf("result type %s", got)
	}
}

// TestAssignLayoutOnGoldenInputs: the default pipeline with each layout target
// verifies after every pass on every program of the golden cases that parses
// (parse, lowering and pass cases alike), and a second assign-layout changes
// nothing: layouts stay consistent across calls, fusions and symbolic shapes.
func TestAssignLayoutOnGoldenInputs(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*/*.txtar", "*/*/*.txtar"} {
		fs, err := filepath.Glob(filepath.Join("..", "testdata", "golden", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	ran := 0
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range ar.Files {
			if sec.Name != "in.tir" {
				continue
			}
			if _, err := tir.Parse(file, sec.Data); err != nil {
				continue // an error case
			}
			for _, name := range layoutTargets {
				target, _ := engine.LookupTarget(name)
				m := runDefault(t, file, sec.Data, target)
				before := ir.Print(m)
				assign, _ := passes.Lookup("assign-layout")
				if err := passes.Run(m, []passes.Pass{assign}, passes.Options{VerifyEach: true, Target: target}); err != nil {
					t.Fatalf("%s on %s: %v", file, name, err)
				}
				if ir.Print(m) != before {
					t.Errorf("%s on %s: a second assign-layout changed the program", file, name)
				}
			}
			ran++
		}
	}
	t.Logf("%d golden programs, %d targets each", ran, len(layoutTargets))
	if ran < 50 {
		t.Errorf("only %d golden programs parsed", ran)
	}
}
