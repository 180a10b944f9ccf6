package models

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// drawTraced computes draw's numbers exactly, traced on the reference
// executor and eagerly, for seeds with both halves set and steps past
// 2^16 (where the step's product wraps).
func TestDrawTraced(t *testing.T) {
	const B = 5
	for _, seed := range []uint64{0, 7, 0xdeadbeef12345678} {
		for _, step := range []int32{0, 1, 70000} {
			args := []*backend.Buffer{tensor.FromSlice([]uint32{uint32(seed), uint32(seed >> 32)}, 2).Buffer(),
				tensor.FromSlice([]int32{step}).Buffer()}
			f := func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
				return []*tensor.Tensor{drawTraced(ts[0], ts[1], B)}, nil
			}
			m, err := tensor.Trace("draw", []string{"seed", "step"}, []ir.Type{args[0].Type(), args[1].Type()}, f)
			if err != nil {
				t.Fatal(err)
			}
			traced, err := cpu.Run(m, m.Funcs[0], args)
			if err != nil {
				t.Fatal(err)
			}
			eager, err := tensor.Eval("draw", args, f)
			if err != nil {
				t.Fatal(err)
			}
			for mode, got := range map[string][]float32{"traced": tensor.FromBuffer(traced[0]).Float32s(), "eager": tensor.FromBuffer(eager[0]).Float32s()} {
				for row := range B {
					if want := draw(seed, row, int(step)); float64(got[row]) != want {
						t.Errorf("seed %#x step %d row %d: %s %v, want %v", seed, step, row, mode, got[row], want)
					}
				}
			}
		}
	}
}

// loopBackends are where the decode loop is checked against the steps: the
// reference executor, the llvm backend (which runs the loop on the
// reference executor) and XLA:CPU through PJRT.
var loopBackends = []Options{{Backend: "reference"}, {}, {Device: "pjrt", Precision: "highest"}}

func loopName(o Options) string {
	switch {
	case o.Device != "":
		return o.Device
	case o.Backend != "":
		return o.Backend
	}
	return "llvm"
}

// generateBoth runs r step by step and as one loop with o's backend, and
// requires the same tokens; it returns them and the loop's generator.
func generateBoth(t *testing.T, m *Model, o Options, r Request) ([][]int32, *Generator) {
	t.Helper()
	o.Decode = DecodeSteps
	steps, err := NewGenerator(m, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Decode = DecodeLoop
	loop, err := NewGenerator(m, o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := steps.Generate(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loop.Generate(r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.Tokens, want.Tokens, slices.Equal) {
		t.Fatalf("%+v: the loop's tokens\n%v\nstep by step\n%v", r.Sampler, got.Tokens, want.Tokens)
	}
	if st := steps.LoopStats(); st.Calls != 0 || st.Programs != 0 {
		t.Errorf("step by step the loop was called %d times and holds %d programs", st.Calls, st.Programs)
	}
	if got.DecodeTokens != want.DecodeTokens {
		t.Errorf("the loop decoded %d tokens, step by step %d", got.DecodeTokens, want.DecodeTokens)
	}
	return got.Tokens, loop
}

// The decode loop chooses the tokens the host chooses step by step, greedy
// and sampling (the same draws: draw), on every backend, in one call of
// one compiled program per generation.
func TestDecodeLoopMatchesSteps(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	samplers := []Sampler{{}, {Temperature: 1.5, Seed: 11}, {Temperature: 0.8, TopK: 5, TopP: 0.9, Seed: 1 << 40}}
	r := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}, {7}}, MaxNew: 10}
	for _, o := range loopBackends {
		t.Run(loopName(o), func(t *testing.T) {
			o.Cache = engine.NewCache("", engine.CacheOptions{}) // in memory: each program compiles here
			for i, s := range samplers {
				if i == 1 && o.Device != "" {
					continue // XLA compiles for seconds; the third sampler samples too, and cuts
				}
				r.Sampler = s
				toks, g := generateBoth(t, m, o, r)
				if len(toks[0]) != r.MaxNew {
					t.Errorf("%+v: %d tokens, want %d", s, len(toks[0]), r.MaxNew)
				}
				if st := g.LoopStats(); st.Calls != 1 || st.Compiles != 1 {
					t.Errorf("%+v: the loop was called %d times and compiled %d, want 1 and 1 (a program per sampler)", s, st.Calls, st.Compiles)
				}
				if st := g.decode.Stats(); st.Calls != 0 {
					t.Errorf("%+v: the loop's generator called the decode step %d times", s, st.Calls)
				}
			}
		})
	}
}

// Rows that emit an EOS mid-loop finish at different steps: their later
// tokens are Pad while the other rows go on, and the loop stops when every
// row has finished, with the tokens of a generation without EOS up to each
// row's end (rows do not see each other). A row finished by the first
// token (from prefill's logits) stays Pad throughout the loop.
func TestDecodeLoopEOS(t *testing.T) {
	// The rows' ends below were read off this random model with each layer
	// its own weight: stacked layers draw the same numbers into other
	// weights (TestDecodeLoopMatchesSteps runs the loop over looped layers).
	t.Setenv(unrollEnv, "1")
	m := randomModel(t, tinyQwen3Config, 0.5)
	r := Request{Prompts: [][]int32{{3, 1, 4, 1, 5}, {9, 2, 6}, {7, 7}}, MaxNew: 12}
	for _, o := range []Options{{Backend: "reference"}, {Device: "pjrt", Precision: "highest"}} {
		t.Run(loopName(o), func(t *testing.T) {
			o.Cache = engine.NewCache("", engine.CacheOptions{})
			free, _ := generateBoth(t, m, o, r)
			eos := []int{int(free[0][2]), int(free[1][3]), int(free[2][0])}
			ends := make([]int, len(free)) // the index of each row's first EOS
			for b, row := range free {
				ends[b] = slices.IndexFunc(row, func(x int32) bool { return slices.Contains(eos, int(x)) })
			}
			if ends[0] != 2 || ends[1] != 3 || ends[2] != 0 {
				t.Fatalf("rows end at %v with EOS %v: want 2, 3 and 0 (rows finishing at different steps)", ends, eos)
			}
			e := r
			e.EOS, e.Pad = eos, 99
			got, _ := generateBoth(t, m, o, e)
			want := make([][]int32, len(free))
			for b, row := range free {
				for i := range 4 { // the loop stops when the last row ends
					want[b] = append(want[b], row[i])
					if i > ends[b] {
						want[b][i] = 99
					}
				}
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("tokens with EOS %v\n%v\nwant\n%v", eos, got, want)
			}
		})
	}
}

// Sampling in the loop depends only on the seed: the same seed gives the
// same tokens, another seed others.
func TestDecodeLoopSeed(t *testing.T) {
	m := randomModel(t, tinyQwen3Config, 0.5)
	g, err := NewGenerator(m, Options{Backend: "reference", Decode: DecodeLoop})
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) [][]int32 {
		res, err := g.Generate(Request{Prompts: [][]int32{{3, 1, 4}, {1, 5}}, MaxNew: 16, Sampler: Sampler{Temperature: 2, Seed: seed}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Tokens
	}
	a, b, c := run(5), run(5), run(6)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("seed 5 gave\n%v\nthen\n%v", a, b)
	}
	if slices.EqualFunc(a, c, slices.Equal) {
		t.Errorf("seeds 5 and 6 gave the same tokens %v", a)
	}
}

// The decode loop gives transformers' greedy tokens for the qwen3 and
// qwen3_moe oracle checkpoints (the one family checked here: the loop is
// family-agnostic around Model.step, which TestAgainstTransformers checks
// for every family; the MoE blocks routed inside the loop's body, checked
// on XLA:CPU only), and transformers' batched EOS generation for
// qwen3_eos, on the llvm backend (the loop on the reference executor) and
// on XLA:CPU.
func TestDecodeLoopAgainstTransformers(t *testing.T) {
	root := oracleDirs(t)
	var eo struct {
		Prompts [][]int32 `json:"prompts"`
		EOS     []int     `json:"eos"`
		Pad     int32     `json:"pad"`
		Tokens  [][]int32 `json:"tokens"`
	}
	b, err := os.ReadFile(filepath.Join(root, "qwen3_eos", "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &eo); err != nil {
		t.Fatal(err)
	}
	o := readOracle(t, filepath.Join(root, "qwen3"))
	moe := readOracle(t, filepath.Join(root, "qwen3_moe"))
	for _, opts := range []Options{{}, {Device: "pjrt", Precision: "highest"}} {
		t.Run(loopName(opts), func(t *testing.T) {
			opts.Decode = DecodeLoop
			opts.Cache = engine.NewCache("", engine.CacheOptions{})
			for _, c := range []struct {
				name    string
				prompts [][]int32
				eos     []int
				pad     int32
				want    [][]int32
			}{{"qwen3", o.Prompts, nil, 0, o.Greedy}, {"qwen3_eos", eo.Prompts, eo.EOS, eo.Pad, eo.Tokens},
				{"qwen3_moe", moe.Prompts, nil, 0, moe.Greedy}} {
				if c.name == "qwen3_moe" && opts.Device == "" {
					continue // dense experts on the reference executor: 20 s for nothing qwen3 does not check
				}
				m, err := Load(filepath.Join(root, c.name))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				g, err := NewGenerator(m, opts)
				if err != nil {
					t.Fatal(err)
				}
				res, err := g.Generate(Request{Prompts: c.prompts, MaxNew: 32, EOS: c.eos, Pad: c.pad})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(res.Tokens, c.want, slices.Equal) {
					t.Errorf("%s: the loop's tokens\n%v\nwant (transformers)\n%v", c.name, res.Tokens, c.want)
				}
				if st := g.LoopStats(); st.Calls != 1 {
					t.Errorf("%s: %d calls of the loop, want 1", c.name, st.Calls)
				}
			}
		})
	}
}

// Run uncompiled (engine.LimitEager's path), the decode loop is a Go loop
// over eager steps and gives the traced loop's steps, tokens and cache (on
// the reference executor), sampling with EOS ids.
func TestDecodeLoopEager(t *testing.T) {
	t.Setenv(unrollEnv, "1") // the draws below are this model's with unstacked layers, as in TestDecodeLoopEOS
	m := randomModel(t, tinyQwen3Config, 0.5)
	// Without EOS ids these rows draw 53 36 39 53 10 32 61 43 and 58 25 16
	// 4 46 55 53 23: with 10 and 55 they end after 5 and 6 tokens.
	r := Request{MaxNew: 9, Sampler: Sampler{Temperature: 1.3, TopP: 0.8, Seed: 4}, EOS: []int{10, 55}, Pad: 63}
	B, capacity := int64(2), int64(16)
	start := engine.TensorArg(tensor.FromSlice([]int32{0, 0}, B).Buffer())
	args := loopInputs(r, []int32{3, 7}, []bool{false, false}, 8, start)
	for _, ct := range m.CacheTypes(B, capacity) {
		args = append(args, engine.TensorArg(backend.New(ct)))
	}
	for _, p := range m.Params {
		args = append(args, engine.TensorArg(p.Buffer))
	}
	args = append(args, loopStatics(r.Sampler)...)
	p := loopProgram{m, "qwen3.decode_loop"}
	mod, err := p.Trace(args)
	if err != nil {
		t.Fatal(err)
	}
	var bufs []*backend.Buffer
	for _, a := range args[:len(args)-3] {
		bufs = append(bufs, a.Tensor)
	}
	traced, err := cpu.Run(mod, mod.Funcs[0], bufs)
	if err != nil {
		t.Fatal(err)
	}
	eager, err := p.Eager(args)
	if err != nil {
		t.Fatal(err)
	}
	steps := tensor.FromBuffer(traced[0]).Int32s()
	if got := tensor.FromBuffer(eager[0]).Int32s(); !slices.Equal(got, steps) || steps[0] != 6 {
		t.Errorf("eager ran %v steps, traced %v, want 6", got, steps)
	}
	a, b := tensor.FromBuffer(eager[1]).Int32s(), tensor.FromBuffer(traced[1]).Int32s()
	if !slices.Equal(a, b) {
		t.Errorf("eager tokens %v, traced %v", a, b)
	}
	if !slices.Contains(r.EOS, int(b[4])) || !slices.Contains(r.EOS, int(b[8+5])) ||
		slices.ContainsFunc(slices.Concat(b[5:8], b[8+6:]), func(x int32) bool { return x != 63 }) {
		t.Errorf("traced tokens %v: want an EOS at 4 and 5, then 63s", b)
	}
	for i := 2; i < len(traced); i++ {
		a, b := tensor.FromBuffer(eager[i]).Float32s(), tensor.FromBuffer(traced[i]).Float32s()
		for j := range a {
			if math.Abs(float64(a[j]-b[j])) > 1e-4 {
				t.Fatalf("cache %d element %d: eager %v, traced %v", i-2, j, a[j], b[j])
			}
		}
	}
}

// DecodeAuto runs the loop on PJRT backends only, MoE models included
// (moe-route rewrites their blocks inside the loop: TestDecodeLoopRoutesMoE);
// DecodeLoop and DecodeSteps force either way; another mode is refused by
// name.
func TestDecodeMode(t *testing.T) {
	for _, c := range []struct {
		o    Options
		loop bool
		err  string
	}{
		{Options{Device: "pjrt"}, true, ""},
		{Options{Device: "tpu"}, true, ""},
		{Options{Backend: "pjrt-gpu"}, true, ""},
		{Options{Device: "cpu"}, false, ""},
		{Options{Backend: "llvm"}, false, ""},
		{Options{Backend: "reference"}, false, ""},
		{Options{Backend: "llvm", Decode: DecodeLoop}, true, ""},
		{Options{Device: "pjrt", Decode: DecodeSteps}, false, ""},
		{Options{Decode: "fast"}, false, `models: decode "fast": want "loop", "steps" or "" (automatic)`},
		{Options{Device: "npu"}, false, `unknown device "npu" (want one of cpu, pjrt, tpu, gpu)`},
	} {
		loop, err := c.o.loop()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if loop != c.loop || msg != c.err {
			t.Errorf("%+v: loop %v, error %q; want %v, %q", c.o, loop, msg, c.loop, c.err)
		}
	}
}

// The decode loop, greedy and sampling (top-k, top-p and the u32 draw),
// compiles for TPU v5e and v6e through libtpu's compile-only client.
func TestDecodeLoopCompilesForTPU(t *testing.T) {
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("the TPU compile-only harness is required: %v", err)
	}
	m := abstractModel(t, tinyQwen3Config, ir.F32)
	for _, target := range []struct{ name, topology string }{{"tpu-v5e", "v5e:2x2"}, {"tpu-v6e", "v6e:2x2"}} {
		var mods []xlacheck.TPUModule
		for i, s := range []Sampler{{}, {Temperature: 0.7, TopK: 20, TopP: 0.9}} {
			args := append(shapeArgs(m.loopTypes(4, 16, 2, 64)), loopStatics(s)...)
			mod, err := loopProgram{m, "qwen3.decode_loop"}.Trace(args)
			if err != nil {
				t.Fatal(err)
			}
			exe, _, err := engine.Compile(mod, engine.Config{Target: target.name})
			if err != nil {
				t.Fatalf("sampler %+v for %s: %v", s, target.name, err)
			}
			if n, want := strings.Count(exe.HLO, "stablehlo.while"), 1+len(m.Loops()); n != want {
				t.Errorf("sampler %+v for %s: %d stablehlo.while, want %d (the decode loop and its layer loops)", s, target.name, n, want)
			}
			mods = append(mods, xlacheck.TPUModule{ID: fmt.Sprintf("decode_loop.%d", i), Text: exe.HLO})
		}
		res, err := h.CompileTPU(mods, []string{target.topology})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.OK {
				t.Errorf("%s on %s: %s", r.ID, r.Topology, r.Error)
			}
		}
	}
}

// moe-route rewrites the MoE blocks inside the decode loop's body, with the
// layers as a loop nested in it and unrolled: three ragged_dots (gate, up,
// down) per MoE block the program holds (the pass's own tests check that
// the dense form is gone where it rewrites).
func TestDecodeLoopRoutesMoE(t *testing.T) {
	m := randomModel(t, qwen3MoEAll, 0.5)
	u, err := m.Unrolled()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    *Model
		want int
	}{{m, 3}, {u, 3 * len(m.Config.Layers)}} {
		var args []engine.Arg
		for _, ty := range c.m.loopTypes(1, 8, 1, 32) {
			args = append(args, engine.ShapeArg(ty))
		}
		mod, err := loopProgram{c.m, "qwen3_moe.decode_loop"}.Trace(append(args, loopStatics(Sampler{})...))
		if err != nil {
			t.Fatal(err)
		}
		if err := passes.Run(mod, passes.Default(), passes.Options{}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(ir.Print(mod), "= ragged_dot "); n != c.want {
			t.Errorf("loops %v: %d ragged_dots in the decode loop, want %d", c.m.Loops(), n, c.want)
		}
	}
}
