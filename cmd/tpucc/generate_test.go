package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/models/safetensors"
	"github.com/tpucc/tpucc/tensor"
)

// tinyQwen3 writes a random Qwen3 model directory: 2 layers, hidden 16, 4
// heads of 8 (2 KV heads), vocab 32.
func tinyQwen3(t *testing.T) string { return tinyQwen3Vocab(t, 32) }

func tinyQwen3Vocab(t *testing.T, V int64) string { return tinyQwen3Stored(t, V, nil) }

// tinyQwen3Stored is tinyQwen3Vocab with each weight passed through store
// (nil: kept f32) before it is written.
func tinyQwen3Stored(t *testing.T, V int64, store func(*backend.Buffer) *backend.Buffer) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"model_type": "qwen3", "vocab_size": %d, "hidden_size": 16, "intermediate_size": 24,
"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
"rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "max_position_embeddings": 1024}`, V)
	writeFile(t, dir, "config.json", []byte(cfg))
	rng := rand.New(rand.NewPCG(1, 2))
	var ts []safetensors.Named
	add := func(name string, scale float64, shape ...int64) {
		b := backend.New(ir.Tensor(ir.F32, shape...))
		for i := range b.Len() {
			v := scale * rng.NormFloat64()
			if len(shape) == 1 {
				v += 1
			}
			b.SetFloat64(i, v)
		}
		if store != nil {
			b = store(b)
		}
		ts = append(ts, safetensors.Named{Name: name, Buf: b})
	}
	add("model.embed_tokens.weight", 0.5, V, 16)
	add("model.norm.weight", 0.1, 16)
	add("lm_head.weight", 0.5, V, 16)
	for l := range 2 {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", 0.1, 16)
		add(p+"post_attention_layernorm.weight", 0.1, 16)
		add(p+"self_attn.q_proj.weight", 0.3, 32, 16)
		add(p+"self_attn.k_proj.weight", 0.3, 16, 16)
		add(p+"self_attn.v_proj.weight", 0.3, 16, 16)
		add(p+"self_attn.o_proj.weight", 0.3, 16, 32)
		add(p+"self_attn.q_norm.weight", 0.1, 8)
		add(p+"self_attn.k_norm.weight", 0.1, 8)
		add(p+"mlp.gate_proj.weight", 0.3, 24, 16)
		add(p+"mlp.up_proj.weight", 0.3, 24, 16)
		add(p+"mlp.down_proj.weight", 0.3, 16, 24)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// generate prints one line of ids per prompt and the rates; the .npy files
// hold the same tokens and the logits that chose the first of them.
func TestGenerate(t *testing.T) {
	dir := tinyQwen3(t)
	out := t.TempDir()
	r := tpucc(t, "", "generate", "--model", dir, "--prompt-ids", "1,2,3,4,5", "--prompt-ids", "7,8",
		"--max-new-tokens", "6", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[2], "compile: ") ||
		!strings.HasPrefix(lines[3], "prefill: 7 tokens in ") || !strings.HasPrefix(lines[4], "decode: 10 tokens in ") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	tokens, err := tensor.ReadNPY(filepath.Join(out, "tokens.npy"))
	if err != nil {
		t.Fatal(err)
	}
	logits, err := tensor.ReadNPY(filepath.Join(out, "logits.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if tokens.Type().String() != "i32[2,6]" || logits.Type().String() != "f32[2,32]" {
		t.Fatalf("tokens %s, logits %s", tokens.Type(), logits.Type())
	}
	ids := tokens.Int32s()
	for b := range 2 {
		if got := joinIDs(ids[b*6 : b*6+6]); got != lines[b] {
			t.Errorf("row %d: tokens.npy has %s, printed %s", b, got, lines[b])
		}
		row := logits.Float32s()[b*32 : b*32+32]
		best := 0
		for i, v := range row {
			if v > row[best] {
				best = i
			}
		}
		if int32(best) != ids[b*6] {
			t.Errorf("row %d: the first token is %d, but logits.npy's largest is %d", b, ids[b*6], best)
		}
	}

	// Sampling with a seed is reproducible.
	args := []string{"generate", "--model", dir, "--prompt-ids", "3,1", "--temperature", "0.8", "--top-k", "5", "--top-p", "0.9", "--seed", "7"}
	a, b := tpucc(t, "", args...), tpucc(t, "", args...)
	if a.code != 0 || firstLine(a.stdout) != firstLine(b.stdout) || len(strings.Fields(firstLine(a.stdout))) != 32 {
		t.Errorf("seeded sampling:\n%s\n%s\n%s", a.stdout, b.stdout, a.stderr)
	}
}

// TestGenerateMatmulPrecision: a bf16 checkpoint's products are bf16 by
// default (the activations rounded: its logits move off the f32
// products'), and --precision highest computes them in f32: the
// logits of the same weights stored f32 (bf16 values, widened exactly),
// within 1e-5 of the largest (the kernels may sum in another order).
func TestGenerateMatmulPrecision(t *testing.T) {
	bf16 := func(b *backend.Buffer) *backend.Buffer { return tensor.FromBuffer(b).Convert(ir.BF16).Buffer() }
	dirs := map[string]string{
		"bf16": tinyQwen3Stored(t, 32, bf16),
		"f32":  tinyQwen3Stored(t, 32, func(b *backend.Buffer) *backend.Buffer { return tensor.FromBuffer(bf16(b)).Convert(ir.F32).Buffer() }),
	}
	logits := func(dir string, flags ...string) []float32 {
		out := t.TempDir()
		args := append([]string{"generate", "--model", dirs[dir], "--prompt-ids", "1,2,3,4,5", "--max-new-tokens", "1", "--output-dir", out}, flags...)
		if r := tpucc(t, "", args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		l, err := tensor.ReadNPY(filepath.Join(out, "logits.npy"))
		if err != nil {
			t.Fatal(err)
		}
		return l.Float32s()
	}
	worst := func(a, b []float32) (d, scale float64) {
		for i := range a {
			d = max(d, math.Abs(float64(a[i]-b[i])))
			scale = max(scale, math.Abs(float64(b[i])))
		}
		return d, scale
	}
	f32 := logits("f32")
	if d, scale := worst(logits("bf16", "--precision", "highest"), f32); d > 1e-5*scale {
		t.Errorf("--precision highest: logits %.3g from the f32 checkpoint's (largest %.3g)", d, scale)
	}
	if d, scale := worst(logits("bf16"), f32); d <= 1e-5*scale {
		t.Errorf("bf16 products: logits within %.3g of the f32 products' (largest %.3g): not rounded", d, scale)
	}
}

// TestGenerateDevice: --device pjrt generates on XLA:CPU through PJRT, the
// weights in its memory, the tokens of the default device; so does
// --mesh tp=4, the model split over 4 XLA:CPU devices made for it.
func TestGenerateDevice(t *testing.T) {
	plugin, err := pjrt.CPUPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Dir(plugin))
	dir := tinyQwen3(t)
	args := []string{"generate", "--model", dir, "--prompt-ids", "1,2,3,4,5", "--prompt-ids", "7,8", "--max-new-tokens", "6"}
	want := tpucc(t, "", args...)
	w := strings.Split(want.stdout, "\n")
	for _, extra := range [][]string{nil, {"--mesh", "tp=4"}} {
		got := tpucc(t, "", append(append(args, "--device", "pjrt", "--precision", "highest"), extra...)...)
		g := strings.Split(got.stdout, "\n")
		if want.code != 0 || got.code != 0 || len(g) < 2 || w[0] != g[0] || w[1] != g[1] {
			t.Errorf("--device pjrt %v: exit %d, stdout\n%s\nwant the tokens of\n%s%s", extra, got.code, got.stdout, want.stdout, got.stderr)
		}
	}
}

// --decode loop prints the tokens of --decode steps, greedy and sampled
// (the llvm backend runs the loop on the reference executor).
func TestGenerateDecodeLoop(t *testing.T) {
	dir := tinyQwen3(t)
	for _, extra := range [][]string{nil, {"--temperature", "1.2", "--top-k", "8", "--seed", "3"}} {
		args := append([]string{"generate", "--model", dir, "--prompt-ids", "1,2,3,4,5", "--prompt-ids", "7,8", "--max-new-tokens", "6"}, extra...)
		want := tpucc(t, "", append(args, "--decode", "steps")...)
		got := tpucc(t, "", append(args, "--decode", "loop")...)
		w, g := strings.Split(want.stdout, "\n"), strings.Split(got.stdout, "\n")
		if want.code != 0 || got.code != 0 || len(g) < 2 || len(strings.Fields(g[0])) != 6 || w[0] != g[0] || w[1] != g[1] {
			t.Errorf("%v --decode loop: exit %d, stdout\n%s\nwant the tokens of\n%s%s", extra, got.code, got.stdout, want.stdout, got.stderr)
		}
	}
}

// --layers unroll and --layers loop print the same tokens, on the llvm
// backend and on XLA:CPU (where auto unrolls).
func TestGenerateLayers(t *testing.T) {
	dir := tinyQwen3(t)
	args := []string{"generate", "--model", dir, "--prompt-ids", "1,2,3,4,5", "--prompt-ids", "7,8", "--max-new-tokens", "6"}
	for _, dev := range [][]string{nil, {"--device", "pjrt", "--precision", "highest"}} {
		want := tpucc(t, "", append(append(args, dev...), "--layers", "loop")...)
		got := tpucc(t, "", append(append(args, dev...), "--layers", "unroll")...)
		w, g := strings.Split(want.stdout, "\n"), strings.Split(got.stdout, "\n")
		if want.code != 0 || got.code != 0 || len(g) < 2 || len(strings.Fields(g[0])) != 6 || w[0] != g[0] || w[1] != g[1] {
			t.Errorf("%v --layers unroll: exit %d, stdout\n%s\nwant the tokens of --layers loop\n%s%s", dev, got.code, got.stdout, want.stdout, got.stderr)
		}
	}
}

// generate ends each row at generation_config.json's EOS ids, pads it with
// pad_token_id and stops when every row has finished; --ignore-eos does
// not. (models' TestEOSAgainstTransformers compares the rule with
// transformers.)
func TestGenerateEOS(t *testing.T) {
	dir := tinyQwen3(t)
	args := []string{"generate", "--model", dir, "--prompt-ids", "1,2,3,4,5", "--prompt-ids", "7,8", "--max-new-tokens", "8"}
	full := tpucc(t, "", append(args, "--ignore-eos")...)
	if full.code != 0 {
		t.Fatalf("exit %d: %s", full.code, full.stderr)
	}
	var rows [][]string
	for _, l := range strings.Split(full.stdout, "\n")[:2] {
		rows = append(rows, strings.Fields(l))
	}
	// The EOS ids are row 0's third token and row 1's fifth: every row
	// ends early, at different steps unless the seed is unlucky.
	eos := []string{rows[0][2], rows[1][4]}
	isEOS := func(s string) bool { return slices.Contains(eos, s) }
	steps, want := 0, make([]string, 2)
	for _, r := range rows {
		n := len(r)
		if i := slices.IndexFunc(r, isEOS); i >= 0 {
			n = i + 1
		}
		steps = max(steps, n)
	}
	for b, r := range rows {
		row := slices.Clone(r[:steps])
		if i := slices.IndexFunc(row, isEOS); i >= 0 {
			for j := i + 1; j < steps; j++ {
				row[j] = "31"
			}
		}
		want[b] = strings.Join(row, " ")
	}
	if steps == len(rows[0]) {
		t.Fatalf("no early stop to test: rows %v, eos %v", rows, eos)
	}
	writeFile(t, dir, "generation_config.json", []byte(`{"eos_token_id": [`+strings.Join(eos, ", ")+`], "pad_token_id": 31}`))
	out := t.TempDir()
	r := tpucc(t, "", append(args, "--output-dir", out)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := strings.Split(r.stdout, "\n")[:2]; !slices.Equal(got, want) {
		t.Errorf("with eos %v:\n%s\nwant\n%s", eos, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tokens, err := tensor.ReadNPY(filepath.Join(out, "tokens.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if s := tokens.Type().String(); s != fmt.Sprintf("i32[2,%d]", steps) {
		t.Errorf("tokens.npy is %s, want %d tokens per row", s, steps)
	}
	if again := tpucc(t, "", append(args, "--ignore-eos")...); again.stdout[:strings.Index(again.stdout, "compile")] != full.stdout[:strings.Index(full.stdout, "compile")] {
		t.Errorf("--ignore-eos with generation_config.json:\n%s\nwant\n%s", again.stdout, full.stdout)
	}
}

// --progress reports each shard of a sharded checkpoint as the loader
// finishes with it, and nothing without it (a small checkpoint, stderr not
// a terminal).
func TestGenerateProgress(t *testing.T) {
	dir := tinyQwen3(t)
	ck, err := safetensors.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Shard 1: the embedding and layer 0; shard 2: the rest. The loader
	// takes the embedding, the norm, the head, then layer by layer: shard 1
	// is done after 14 tensors.
	shards := [2][]safetensors.Named{}
	index := map[string]string{}
	for _, name := range ck.Names() {
		b, err := ck.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		s := 1
		if name == "model.embed_tokens.weight" || strings.HasPrefix(name, "model.layers.0.") {
			s = 0
		}
		shards[s] = append(shards[s], safetensors.Named{Name: name, Buf: b.Clone()})
		index[name] = fmt.Sprintf("model-%05d-of-00002.safetensors", s+1)
	}
	ck.Close()
	for s, ts := range shards {
		if err := safetensors.WriteFile(filepath.Join(dir, fmt.Sprintf("model-%05d-of-00002.safetensors", s+1)), ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": index})
	writeFile(t, dir, "model.safetensors.index.json", idx)
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	args := []string{"generate", "--model", dir, "--prompt-ids", "1,2", "--max-new-tokens", "2"}
	r := tpucc(t, "", append(args, "--progress")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "tpucc: loading " + dir + "\n" +
		"tpucc: loaded shard 1/2 model-00001-of-00002.safetensors: 12 tensors, 0.01 MiB; in all 14/25 tensors, 0.01 MiB of 0.02 MiB\n" +
		"tpucc: loaded shard 2/2 model-00002-of-00002.safetensors: 13 tensors, 0.01 MiB; in all 25/25 tensors, 0.02 MiB of 0.02 MiB\n"
	if !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant it to start with\n%s", r.stderr, want)
	}
	if r := tpucc(t, "", args...); strings.Contains(r.stderr, "shard") {
		t.Errorf("without --progress:\n%s", r.stderr)
	}
}

func TestGenerateErrors(t *testing.T) {
	dir := tinyQwen3(t)
	usage := "usage: tpucc generate [flags]; 'tpucc help generate' lists the flags\n"
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--prompt-ids", "1"}, 2, "tpucc generate: --model DIR is required\n" + usage},
		{[]string{"--model", dir}, 2, "tpucc generate: give a prompt with --prompt-ids or --prompt\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1,x"}, 2, "tpucc generate: --prompt-ids 1,x: \"x\" is not a token id\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--max-new-tokens", "0"}, 2, "tpucc generate: --max-new-tokens must be at least 1\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--top-p", "2"}, 2, "tpucc generate: --top-p 2: want a number in [0, 1]\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1,40"}, 1, "prompt 0: token id 40 is outside the vocabulary of 32\n"},
		{[]string{"--model", dir, "--prompt", "hi"}, 1, "open " + filepath.Join(dir, "tokenizer.json") + ": no such file or directory\n"},
		{[]string{"--model", dir, "--prompt-ids", "1", "--device", "x"}, 2, "tpucc generate: --device: unknown device \"x\" (want one of cpu, pjrt, tpu, gpu)\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--device", "pjrt", "--backend", "llvm"}, 2, "tpucc generate: --backend and --device are exclusive\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--mesh", "tp=4"}, 2, "tpucc generate: --mesh tp=4 splits a model over a device's chips: give --device pjrt, tpu or gpu\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--mesh", "tp=4,ep=2", "--device", "pjrt"}, 2, "tpucc generate: --mesh: mesh \"tp=4,ep=2\": axis \"ep\": a model splits over dp (batch) and tp (weights) only\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--decode", "fast"}, 2, "tpucc generate: --decode fast: want loop, steps or auto\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--layers", "flat"}, 2, "tpucc generate: --layers flat: want loop, unroll or auto\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--precision", "fast"}, 2, "tpucc generate: --precision fast: want one of default, high, highest\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1", "--max-new-tokens", "1e8"}, 2, "tpucc generate: --max-new-tokens 1e8: want a non-negative integer\n" + usage},
		{[]string{"--model", dir, "--prompt-ids", "1,2", "--prompt-ids", "3", "--max-new-tokens", "100000000"}, 1, "models: a prompt of 2 tokens and 100000000 new tokens need 100000002 positions, more than the model's max_position_embeddings 1024 (at most 1022 new tokens fit)\n"},
		{[]string{"--model", dir, "--prompt-ids", "1,2", "--max-new-tokens", "1023"}, 1, "models: a prompt of 2 tokens and 1023 new tokens need 1025 positions, more than the model's max_position_embeddings 1024 (at most 1022 new tokens fit)\n"},
	} {
		r := tpucc(t, "", append([]string{"generate"}, c.args...)...)
		stderr := r.stderr
		if i := strings.LastIndex(stderr, "tpucc: loaded "); i >= 0 {
			stderr = stderr[strings.IndexByte(stderr[i:], '\n')+i+1:]
		}
		stderr = strings.TrimPrefix(stderr, "tpucc: loading "+dir+"\n")
		if r.code != c.code || stderr != c.stderr || r.stdout != "" {
			t.Errorf("%v: exit %d\n%s\nwant %d\n%s", c.args, r.code, stderr, c.code, c.stderr)
		}
	}
}

// export writes both steps and their signature; --report counts the bytes.
func TestExport(t *testing.T) {
	dir := tinyQwen3(t)
	out := filepath.Join(t.TempDir(), "exp")
	r := tpucc(t, "", "export", "--model", dir, "--seq", "16", "--batch", "2", "--target", "tpu-v6e", "-o", out, "--report")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "wrote " + filepath.Join(out, "prefill.hlo") + ", " + filepath.Join(out, "decode.hlo") + " and " + filepath.Join(out, "signature.json") + `
weights: 26048 bytes (0.02 MiB, f32)
kv cache: 8192 bytes (0.01 MiB; batch 2, 16 slots, f32)
target      HBM/chip  chips    weights/chip         kv/chip
tpu-v4     32.00 GiB      1           26048            8192
tpu-v5e    16.00 GiB      1           26048            8192
tpu-v5p    95.00 GiB      1           26048            8192
tpu-v6e    32.00 GiB      1           26048            8192
tpu-v7x   192.00 GiB      1           26048            8192
`
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	var sigs map[string]stepSignature
	b, err := os.ReadFile(filepath.Join(out, "signature.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sigs); err != nil {
		t.Fatal(err)
	}
	dec := sigs["decode"]
	// tokens, start, pos, the 2 layers' stacked k and v, 3 top-level and 11
	// stacked layer weights (the layers are one loop).
	if len(dec.Args) != 3+2+3+11 || dec.Args[0] != (argSig{"tokens", "i32[2,1]"}) || dec.Args[3] != (argSig{"cache.0.k", "f32[2,2,2,16,8]"}) ||
		dec.Args[len(dec.Args)-1].Name != "layers.0:2.Down" || len(dec.Results) != 3 || dec.Results[0] != "f32[2,32]" || sigs["prefill"].Args[0].Type != "i32[2,16]" {
		t.Errorf("signature.json:\n%s", b)
	}
	for _, f := range []string{"prefill.hlo", "decode.hlo"} {
		hlo, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.HasPrefix(string(hlo), "module @jit_"+strings.TrimSuffix(f, ".hlo")) {
			t.Errorf("%s: %v\n%.200s", f, err, hlo)
		}
	}
	r = tpucc(t, "", "export", "--model", dir, "--seq", "0", "-o", out)
	r.want(t, 2, "", "tpucc export: --seq \"0\": want a positive number of tokens")
}

// byteLevelTokenizer is a byte-level BPE tokenizer.json (GPT-2's split)
// whose vocabulary is the 256 bytes and the merges "h e" (256) and "l l"
// (257).
func byteLevelTokenizer() []byte {
	vocab := map[string]int{}
	n := 0
	for b := range 256 {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae) {
			r = rune(256 + n)
			n++
		}
		vocab[string(r)] = b
	}
	vocab["he"], vocab["ll"] = 256, 257
	level := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
	f := map[string]any{"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": []any{},
		"normalizer": nil, "pre_tokenizer": level, "post_processor": nil, "decoder": level,
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": vocab, "merges": []string{"h e", "l l"}}}
	b, _ := json.Marshal(f)
	return b
}

// --prompt encodes with the directory's tokenizer.json: "hello" is he, ll,
// o, the same tokens as --prompt-ids 256,257,111; the decoded text follows
// each line of ids.
func TestGeneratePromptText(t *testing.T) {
	dir := tinyQwen3Vocab(t, 258)
	writeFile(t, dir, "tokenizer.json", byteLevelTokenizer())
	text := tpucc(t, "", "generate", "--model", dir, "--prompt", "hello", "--max-new-tokens", "4")
	ids := tpucc(t, "", "generate", "--model", dir, "--prompt-ids", "256,257,111", "--max-new-tokens", "4")
	if text.code != 0 || ids.code != 0 {
		t.Fatalf("exit %d %d: %s %s", text.code, ids.code, text.stderr, ids.stderr)
	}
	tl, il := strings.Split(text.stdout, "\n"), strings.Split(ids.stdout, "\n")
	if tl[0] != il[0] || len(strings.Fields(tl[0])) != 4 {
		t.Fatalf("--prompt gave\n%s\n--prompt-ids gave\n%s", text.stdout, ids.stdout)
	}
	var toks []string
	for _, f := range strings.Fields(tl[0]) {
		n, _ := strconv.Atoi(f)
		switch {
		case n == 256:
			toks = append(toks, "he")
		case n == 257:
			toks = append(toks, "ll")
		case n >= '!' && n <= '~':
			toks = append(toks, string(rune(n)))
		default:
			toks = nil
		}
		if toks == nil {
			break
		}
	}
	if toks != nil {
		if want := strconv.Quote(strings.Join(toks, "")); tl[1] != want {
			t.Errorf("decoded text %s, want %s", tl[1], want)
		}
	} else if _, err := strconv.Unquote(tl[1]); err != nil {
		t.Errorf("the line after the ids is not the quoted text: %s", tl[1])
	}
}

// A directory with config.json alone exports the configured model with
// weights of --dtype; --dtype beside a checkpoint is a usage error.
func TestExportConfigOnly(t *testing.T) {
	dir := tinyQwen3(t)
	cfgOnly := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfgOnly, "config.json", cfg)
	out := filepath.Join(t.TempDir(), "exp")
	r := tpucc(t, "", "export", "--model", cfgOnly, "--seq", "16", "--batch", "2", "-o", out, "--report")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The checkpoint's 6512 weights, in bf16, and a bf16 KV cache (the
	// model multiplies in bf16): half TestExport's f32 one.
	lines := strings.Split(r.stdout, "\n")
	if len(lines) < 3 || lines[1] != "weights: 13024 bytes (0.01 MiB, bf16)" || lines[2] != "kv cache: 4096 bytes (0.00 MiB; batch 2, 16 slots, bf16)" {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if want := "tpucc: " + cfgOnly + " has no checkpoint: exporting qwen3 as config.json describes it, with bf16 weights"; firstLine(r.stderr) != want {
		t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, want)
	}
	r = tpucc(t, "", "export", "--model", cfgOnly, "--seq", "16", "--dtype", "f8", "-o", out)
	r.want(t, 2, "", "tpucc export: --dtype f8: want bf16, f16 or f32")
	r = tpucc(t, "", "export", "--model", dir, "--seq", "16", "--dtype", "f32", "-o", out)
	r.want(t, 2, "", "tpucc export: --dtype is for a directory without a checkpoint; "+dir+" has one")
}

// A long generation says how far it has come every 256 tokens on stderr
// (with --progress here; automatic from 1024 tokens or on a terminal), and
// nothing for a short one.
func TestGenerateTokenProgress(t *testing.T) {
	dir := tinyQwen3(t)
	args := []string{"generate", "--model", dir, "--prompt-ids", "1,2", "--max-new-tokens", "600", "--ignore-eos"}
	r := tpucc(t, "", append(args, "--progress")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := "tpucc: compiling prefill and decode\ntpucc: generated 256 of 600 new tokens\ntpucc: generated 512 of 600 new tokens\n"
	if !strings.HasSuffix(r.stderr, want) {
		t.Errorf("stderr:\n%s\nwant it to end with\n%s", r.stderr, want)
	}
	if n := len(strings.Fields(firstLine(r.stdout))); n != 600 {
		t.Errorf("%d tokens, want 600", n)
	}
	if r := tpucc(t, "", args...); strings.Contains(r.stderr, "generated") {
		t.Errorf("without --progress:\n%s", r.stderr)
	}
}

// generate's help names every model_type the loader takes, from the one
// list (issue 28: it named three families while eleven loaded).
func TestGenerateHelpFamilies(t *testing.T) {
	r := tpucc(t, "", "help", "generate")
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(r.stdout, func(c rune) bool { return c == ' ' || c == '\n' || c == ',' }) {
		words[w] = true
	}
	for _, arch := range append(slices.Clone(hf.Architectures), hf.Wrappers...) {
		if !words[arch] {
			t.Errorf("tpucc help generate does not name %s:\n%s", arch, r.stdout)
		}
	}
}

// max_position_embeddings 0 is refused when config.json is read, naming
// the file and the field.
func TestGenerateZeroPositions(t *testing.T) {
	dir := tinyQwen3(t)
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "config.json", []byte(strings.Replace(string(b), `"max_position_embeddings": 1024`, `"max_position_embeddings": 0`, 1)))
	r := tpucc(t, "", "generate", "--model", dir, "--prompt-ids", "1")
	want := path + `: field "max_position_embeddings": must be positive` + "\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) || r.stdout != "" {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with %s", r.code, r.stderr, want)
	}
}

// export refuses a sequence longer than max_position_embeddings (1024 here)
// after reading the config, before compiling.
func TestExportMaxPositions(t *testing.T) {
	dir := tinyQwen3(t)
	r := tpucc(t, "", "export", "--model", dir, "--seq", "1025", "-o", t.TempDir())
	want := "--seq 1025: more slots than the model's max_position_embeddings 1024\n"
	if r.code != 1 || !strings.HasSuffix(r.stderr, want) || strings.Contains(r.stderr, "compiling") {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with %s", r.code, r.stderr, want)
	}
}
