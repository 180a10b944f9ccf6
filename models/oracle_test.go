package models

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/models/tokenizer"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/tensor"
)

// hfPython is the interpreter of `make venv-hf` (torch and transformers).
const hfPython = "../.venv-hf/bin/python"

// oracleModels are tools/hf/oracle.py's models.
var oracleModels = []string{"qwen3", "qwen3_moe", "gemma4", "qwen3_moe_bf16", "gemma4_wrapped", "llama", "mistral", "qwen2", "mixtral", "gemma3", "gemma3_wrapped", "phi3", "gemma2", "granite", "olmo2", "qwen2_moe"}

// oracle is what transformers computed for one model (oracle.json).
type oracle struct {
	Prompts [][]int32     `json:"prompts"`
	Logits  [][][]float64 `json:"logits"`
	Greedy  [][]int32     `json:"greedy"`
	Margin  float64       `json:"margin"`
}

var (
	oracleOnce sync.Once
	oracleRoot string
	oracleErr  error
)

// oracleDirs runs tools/hf/oracle.py once per version of it and of the
// pinned environment, keeping its checkpoints under the user's cache
// directory (the run takes minutes on a loaded machine). Without .venv-hf
// the test skips, except under CI, where it fails.
func oracleDirs(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(hfPython); err != nil {
		msg := "transformers is not installed (" + hfPython + "): run `make venv-hf` at the repository root"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI this test never skips")
		}
		t.Skip(msg)
	}
	oracleOnce.Do(func() {
		h := sha256.New()
		for _, f := range []string{"../tools/hf/oracle.py", "../tools/hf/requirements.txt"} {
			b, err := os.ReadFile(f)
			if err != nil {
				oracleErr = err
				return
			}
			h.Write(b)
		}
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		oracleRoot = filepath.Join(base, "tpucc", "hf-oracle", hex.EncodeToString(h.Sum(nil))[:16])
		if _, err := os.Stat(filepath.Join(oracleRoot, "done")); err == nil {
			return
		}
		// Made in a private directory and renamed into place, so that two
		// test processes never see each other's half-written checkpoints.
		// 0700: a tpucc directory made here is the runtime's default cache,
		// which is refused unless it is owner-only.
		if err := os.MkdirAll(filepath.Dir(oracleRoot), 0o700); err != nil {
			oracleErr = err
			return
		}
		tmp, err := os.MkdirTemp(filepath.Dir(oracleRoot), "making-")
		if err != nil {
			oracleErr = err
			return
		}
		defer os.RemoveAll(tmp)
		if out, err := exec.Command(hfPython, "../tools/hf/oracle.py", tmp).CombinedOutput(); err != nil {
			oracleErr = fmt.Errorf("oracle.py: %v\n%s", err, out)
			return
		}
		if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
			oracleErr = err
			return
		}
		if _, err := os.Stat(filepath.Join(oracleRoot, "done")); err == nil {
			return // another process finished first
		}
		os.RemoveAll(oracleRoot)
		oracleErr = os.Rename(tmp, oracleRoot)
	})
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracleRoot
}

// oracleGenerator loads dir's checkpoint (closed when the test ends) and
// makes its generator with a cache of its own in memory; all asks for the
// logits of every prompt token.
func oracleGenerator(t *testing.T, dir string, all bool) *Generator {
	t.Helper()
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.F32Products = true // the oracle computes a bf16 model in f32 (TestBF16Products: bf16 products)
	g, err := NewGenerator(m, Options{AllLogits: all, Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func readOracle(t *testing.T, dir string) oracle {
	t.Helper()
	var o oracle
	b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestAgainstTransformers loads each checkpoint transformers saved, runs
// the prompts as one left-padded batch through the compiled prefill, and
// generates 32 tokens with the compiled decode step; it requires every
// prompt token's logits within 1e-4 of transformers' (relative to the
// prompt's largest logit; f32 arithmetic, bf16 weights computed in f32 on
// both sides: Model.F32Products) and the same 32 greedy tokens, each step compiled once. It
// does so for every model with the prefill's attention in one piece, and
// for blockedModels in query blocks of 4 slots (causalBlock; a 512-token
// prefill's blocks are 128).
func TestAgainstTransformers(t *testing.T) {
	root := oracleDirs(t)
	for _, run := range []struct {
		blk    int64
		models []string
	}{{causalBlock, oracleModels}, {4, blockedModels}} {
		t.Run(fmt.Sprintf("block=%d", run.blk), func(t *testing.T) {
			defer func(b int64) { causalBlock = b }(causalBlock)
			causalBlock = run.blk
			againstTransformers(t, root, run.models)
		})
	}
}

// blockedModels are the oracle models whose prefill is also checked with its
// attention in query blocks: one model for each way the families' attention
// scores and masks differ (blocking splits the queries; everything before the
// scores is the same code whole or blocked). The others repeat one of these:
// llama, phi3 and olmo2 qwen3's causal mask (olmo2's q/k norms apply before
// the split), the MoE models and the wrapped ones the attention of their
// dense relatives. Running all sixteen blocked took 70% of ./models' time.
var blockedModels = []string{
	"qwen3",   // causal, q/k norms, GQA
	"qwen2",   // q/k/v biases, sliding layers beside full ones
	"mistral", // one window on every layer
	"gemma2",  // score softcap, every other layer sliding
	"gemma3",  // query_pre_attn_scalar, the sliding pattern, per-type rope
	"gemma4",  // Gemma 4's per-layer inputs and proportional rope
	"granite", // the attention multiplier scales the scores
}

func againstTransformers(t *testing.T, root string, models []string) {
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			o := readOracle(t, dir)
			if o.Margin < 1e-3 {
				t.Fatalf("transformers' greedy choices are near ties (margin %g): the comparison would mean nothing", o.Margin)
			}
			g := oracleGenerator(t, dir, true)
			res, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: len(o.Greedy[0])})
			if err != nil {
				t.Fatal(err)
			}
			checkLogits(t, res.PromptLogits, res.Pad, o)
			for b := range o.Prompts {
				if !slices.Equal(res.Tokens[b], o.Greedy[b]) {
					t.Errorf("prompt %d: greedy tokens\n%v\nwant (transformers)\n%v", b, res.Tokens[b], o.Greedy[b])
				}
			}
			pre, dec := g.Stats()
			if pre.Compiles != 1 || dec.Compiles != 1 || dec.Calls != int64(len(o.Greedy[0])-1) || dec.Hits != dec.Calls-1 {
				t.Errorf("prefill %+v\ndecode %+v\nwant one compile each and every later decode call a hit", pre, dec)
			}
		})
	}
}

// TestEOSAgainstTransformers generates from qwen3_eos, whose
// generation_config.json names end-of-sequence ids that greedy decoding
// emits after a few tokens, and requires the tokens transformers' batched
// generate gave: each row up to its EOS, then the pad id, and no step
// after every row has finished.
func TestEOSAgainstTransformers(t *testing.T) {
	dir := filepath.Join(oracleDirs(t), "qwen3_eos")
	var o struct {
		Prompts [][]int32 `json:"prompts"`
		EOS     []int     `json:"eos"`
		Pad     int32     `json:"pad"`
		Tokens  [][]int32 `json:"tokens"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	gen, err := hf.LoadGeneration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gen.EOS, o.EOS) || int32(gen.Pad) != o.Pad {
		t.Fatalf("generation_config.json read as %+v, want eos %v pad %d", gen, o.EOS, o.Pad)
	}
	if len(o.Tokens[0]) >= 32 {
		t.Fatalf("transformers ran all %d steps: the oracle's EOS ids do not end every row", len(o.Tokens[0]))
	}
	g := oracleGenerator(t, dir, false)
	res, err := g.Generate(Request{Prompts: o.Prompts, MaxNew: 32, EOS: gen.EOS, Pad: int32(gen.Pad)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(res.Tokens, o.Tokens, slices.Equal) {
		t.Errorf("tokens\n%v\nwant (transformers)\n%v", res.Tokens, o.Tokens)
	}
}

// TestTextAgainstTransformers starts from text: the llama directory has a
// SentencePiece-style tokenizer.json (Llama 2's form), and tpucc's Encode,
// greedy generation and Decode must give transformers' tokenizer(text) ids,
// model.generate's 32 tokens and tokenizer.decode's text.
func TestTextAgainstTransformers(t *testing.T) {
	dir := filepath.Join(oracleDirs(t), "llama")
	var o struct {
		Text    string  `json:"text"`
		IDs     []int   `json:"ids"`
		Tokens  []int32 `json:"tokens"`
		Margin  float64 `json:"margin"`
		Decoded string  `json:"decoded"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "text.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if o.Margin < 1e-3 {
		t.Fatalf("transformers' greedy choices are near ties (margin %g)", o.Margin)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode(o.Text)
	if err != nil || !slices.Equal(ids, o.IDs) {
		t.Fatalf("Encode(%q) = %v, %v; want transformers' %v", o.Text, ids, err, o.IDs)
	}
	g := oracleGenerator(t, dir, false)
	prompt := make([]int32, len(ids))
	for i, id := range ids {
		prompt[i] = int32(id)
	}
	res, err := g.Generate(Request{Prompts: [][]int32{prompt}, MaxNew: len(o.Tokens)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Tokens[0], o.Tokens) {
		t.Fatalf("tokens\n%v\nwant (transformers)\n%v", res.Tokens[0], o.Tokens)
	}
	out := make([]int, len(o.Tokens))
	for i, id := range o.Tokens {
		out[i] = int(id)
	}
	if text, err := tok.Decode(out, true); err != nil || text != o.Decoded {
		t.Errorf("Decode = %q, %v; want transformers' %q", text, err, o.Decoded)
	}
}

// checkLogits compares each prompt's real positions of got [B, Tpad, V]
// with transformers' logits of that prompt alone.
// checkLogits returns the largest difference relative to its prompt's
// largest logit.
func checkLogits(t *testing.T, got *tensor.Tensor, pad []int, o oracle) float64 {
	t.Helper()
	rel := 0.0
	s := got.Shape()
	T, V := int(s[1]), int(s[2])
	vals := got.Float32s()
	for b, want := range o.Logits {
		scale := 0.0
		for _, row := range want {
			for _, x := range row {
				scale = math.Max(scale, math.Abs(x))
			}
		}
		worst, at := 0.0, ""
		for p, row := range want {
			for v, x := range row {
				d := math.Abs(float64(vals[(b*T+pad[b]+p)*V+v]) - x)
				if d > worst {
					worst, at = d, fmt.Sprintf("position %d token %d: %v, want %v", p, v, vals[(b*T+pad[b]+p)*V+v], x)
				}
			}
		}
		if worst > 1e-4*scale {
			t.Errorf("prompt %d: logits differ by %.3g (%.3g of the largest, %g): %s", b, worst, worst/scale, scale, at)
		}
		rel = math.Max(rel, worst/scale)
	}
	return rel
}

// TestMoERouted compiles the prefill and decode steps of every MoE
// checkpoint (the bf16 one's experts in bf16 products too) and counts the MoE
// blocks moe-route rewrote: all of them, a
// looped layer's once in its loop's body (its ragged_dots there). Mixtral's
// two MoE layers are one loop; Gemma 4's loop over (sliding, full) has a MoE
// block in each slot and its two KV-sharing layers run unrolled after it;
// the Qwen MoE checkpoints' dense layer 1 between MoE layers leaves nothing
// to loop.
func TestMoERouted(t *testing.T) {
	root := oracleDirs(t)
	for _, c := range []struct {
		name            string
		rewrites, loops int // blocks rewritten; of those, inside a loop's body
	}{{"qwen3_moe", 2, 0}, {"qwen3_moe_bf16", 2, 0}, {"gemma4", 4, 2}, {"mixtral", 1, 1}, {"qwen2_moe", 2, 0}} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(filepath.Join(root, c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, T := range []int64{16, 1} {
				mod, err := m.Trace("step", m.StepTypes(2, T, 32), false)
				if err != nil {
					t.Fatal(err)
				}
				var st passes.Stats
				exe, _, err := engine.Compile(mod, engine.Config{Passes: passes.Options{Stats: &st}})
				if err != nil {
					t.Fatal(err)
				}
				if n := st.Get("moe-route", "combine-dot"); n != c.rewrites {
					t.Errorf("T=%d: moe-route rewrote %d blocks, want %d", T, n, c.rewrites)
				}
				if all, looped := raggedDots(exe.Entry); all != 3*c.rewrites || looped != 3*c.loops {
					t.Errorf("T=%d: %d ragged_dots, %d in loops; want %d, %d in loops", T, all, looped, 3*c.rewrites, 3*c.loops)
				}
			}
		})
	}
}

// raggedDots counts f's ragged_dots, and those inside a while's region
// (in a fusion there or not).
func raggedDots(f *ir.Func) (all, looped int) {
	f.Body.Walk(func(in *ir.Instr) {
		if in.Op != ir.OpRaggedDot {
			return
		}
		all++
		for p := in.Block.Parent; p != nil; p = p.Block.Parent {
			if p.Op == ir.OpWhile {
				looped++
				return
			}
		}
	})
	return all, looped
}

// TestEagerMatchesTransformers runs prefill uncompiled (every op on the
// reference kernels, the MoE blocks dense as written, no moe-route) and
// requires transformers' logits too.
func TestEagerMatchesTransformers(t *testing.T) {
	root := oracleDirs(t)
	for _, name := range []string{"qwen3_moe", "gemma4", "mixtral", "qwen2_moe"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			o := readOracle(t, dir)
			m, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			r := Request{Prompts: o.Prompts, MaxNew: 1}
			padded, capacity, err := r.Shape()
			if err != nil {
				t.Fatal(err)
			}
			B := len(o.Prompts)
			tokens, start, pad := make([]int32, B*padded), make([]int32, B), make([]int, B)
			for b, p := range o.Prompts {
				pad[b] = padded - len(p)
				start[b] = int32(pad[b])
				copy(tokens[b*padded+pad[b]:], p)
			}
			args := []*tensor.Tensor{tensor.FromSlice(tokens, int64(B), int64(padded)), tensor.FromSlice(start, int64(B)), tensor.FromSlice([]int32{0})}
			for _, ty := range m.CacheTypes(int64(B), int64(capacity)) {
				args = append(args, tensor.Zeros(ty.DType, ty.Dims()...))
			}
			for _, p := range m.Params {
				args = append(args, tensor.FromBuffer(p.Buffer))
			}
			out, err := m.step(args, true, false)
			if err != nil {
				t.Fatal(err)
			}
			checkLogits(t, out[0], pad, o)
		})
	}
}
