package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/models/tokenizer"
	"github.com/tpucc/tpucc/tensor"
)

var generateCommand = &command{
	name:    "generate",
	summary: "generate tokens with a Hugging Face model directory",
	about:   generateAbout(),
	flags: []flagSpec{
		{name: "model", kind: valueFlag, arg: "DIR", doc: "the model directory"},
		{name: "prompt-ids", kind: listFlag, arg: "IDS", doc: "a prompt as comma-separated token ids; may be repeated"},
		{name: "prompt", kind: listFlag, arg: "TEXT", doc: "a prompt as text (needs DIR/tokenizer.json); may be repeated"},
		{name: "max-new-tokens", kind: valueFlag, arg: "N", doc: "tokens to generate per prompt (default 32)"},
		{name: "temperature", kind: valueFlag, arg: "T", doc: "sample at temperature T (default 0: greedy)"},
		{name: "top-k", kind: valueFlag, arg: "K", doc: "when sampling, keep the K most likely tokens (default 0: all)"},
		{name: "top-p", kind: valueFlag, arg: "P", doc: "when sampling, keep the most likely tokens up to probability P (default 1)"},
		{name: "seed", kind: valueFlag, arg: "N", doc: "the sampling seed (default 0)"},
		{name: "progress", kind: boolFlag, doc: "report each checkpoint shard as it loads (automatic on a terminal or past 1 GiB) and every 256 new tokens (automatic on a terminal or from 1024)"},
		{name: "ignore-eos", kind: boolFlag, doc: "generate --max-new-tokens tokens even past an end-of-sequence id"},
		{name: "output-dir", kind: valueFlag, arg: "DIR", doc: "write tokens.npy and logits.npy into DIR"},
		{name: "decode", kind: valueFlag, arg: "MODE", doc: "loop: every decode step in one compiled loop, one dispatch; steps: a dispatch per token; auto (default): loop on --device pjrt, tpu or gpu, else steps"},
		{name: "layers", kind: valueFlag, arg: "MODE", doc: "loop: the steps run the model's repeating layers as loops over stacked weights; unroll: layer by layer; auto (default): unroll on --device pjrt (XLA:CPU copies a layer's weights out of a stack every step), else loop"},
		backendFlag,
		deviceFlag,
		precisionFlag,
		meshFlag,
	},
	run: cmdGenerate,
}

// generateAbout is generate's help. The families it names come from
// models/hf's one list of what loads, so the help cannot fall behind it.
func generateAbout() string {
	return fill("Loads a Hugging Face text model directory (config.json and its safetensors checkpoint) "+
		"of model_type "+hf.SupportedText()+", compiles its prefill and decode steps, and generates "+
		"--max-new-tokens tokens for each prompt. Several prompts (--prompt-ids or --prompt, repeated) "+
		"form one batch: they are left-padded to a common length and run together.", 95) + `

The longest prompt and --max-new-tokens together may not exceed config.json's
max_position_embeddings: where transformers warns and goes on, generate refuses, naming how many
new tokens fit.

It prints one line of new token ids per prompt (and, for --prompt, the decoded text on the
next line), then the prefill and decode rates in tokens per second; compilation is timed
apart. With --output-dir it also writes DIR/tokens.npy (i32 [batch, new tokens]) and
DIR/logits.npy (f32 [batch, vocab]: the logits that chose the first new token). A long
generation (--max-new-tokens of 1024 or more, --progress, or stderr a terminal) says on stderr
"tpucc: generated N of M new tokens" every 256 tokens.

A row ends at an end-of-sequence id, as in transformers' generate: the eos_token_id of
DIR/generation_config.json (an id or a list; config.json's when it has none). A finished
row's later places print its pad_token_id (or the first EOS id), and generation stops when
every row has finished, so rows may be shorter than --max-new-tokens. --ignore-eos
generates --max-new-tokens tokens whatever is emitted. generation_config.json's sampling
defaults are not read: the flags below choose.

Without --temperature the choice is greedy (what transformers' generate does without
sampling); with it tokens are sampled, after --top-k and --top-p, from --seed.

--decode loop runs every decode step as one compiled loop that chooses the tokens itself (the
same tokens as --decode steps, sampled ones too): one dispatch per generation instead of one
per token. It is the default on PJRT devices, where it is faster (MoE models too: their
experts are routed inside the loop); the CPU backends run a loop on the reference executor, so
there the default is steps. --layers unroll runs the layers one by one instead of as loops over
stacked weights: the default on --device pjrt, whose XLA:CPU copies a loop's weights every step. The ids are printed when generation
ends either way; with the loop, no progress lines appear during decode.
--prompt needs DIR/tokenizer.json (BPE, as Qwen's, Llama's, Mistral's and Gemma's).
`
}

// fill breaks text into lines of at most width bytes at spaces.
func fill(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// Token progress: a line every progressEvery new tokens, shown with
// --progress, on a terminal, or from longGeneration tokens on.
const (
	progressEvery  = 256
	longGeneration = 1024
)

// generateArgs are generate's flags, checked.
type generateArgs struct {
	dir     string
	ids     [][]int32
	text    []string
	maxNew  int
	sampler models.Sampler
	decode  string // models.Options.Decode
	layers  string // models.Options.Layers
	// f32Products keeps a bf16 checkpoint's products in f32
	// (--precision highest; models.Model.F32Products).
	f32Products bool
}

func parseGenerate(p *parsed) (*generateArgs, error) {
	a := &generateArgs{dir: p.value("model", "")}
	if a.dir == "" {
		return nil, usagef("--model DIR is required")
	}
	for _, s := range p.list("prompt-ids") {
		ids, err := parseIDs(s)
		if err != nil {
			return nil, err
		}
		a.ids = append(a.ids, ids)
	}
	a.text = p.list("prompt")
	if len(a.ids) == 0 && len(a.text) == 0 {
		return nil, usagef("give a prompt with --prompt-ids or --prompt")
	}
	if len(a.ids) > 0 && len(a.text) > 0 {
		return nil, usagef("--prompt-ids and --prompt cannot be mixed")
	}
	var err error
	ints := []struct {
		name string
		dst  *int
		def  string
	}{{"max-new-tokens", &a.maxNew, "32"}, {"top-k", &a.sampler.TopK, "0"}}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(p.value(f.name, f.def)); err != nil || *f.dst < 0 {
			return nil, usagef("--%s %s: want a non-negative integer", f.name, p.value(f.name, f.def))
		}
	}
	if a.maxNew < 1 {
		return nil, usagef("--max-new-tokens must be at least 1")
	}
	switch d := p.value("decode", "auto"); d {
	case "auto":
	case models.DecodeLoop, models.DecodeSteps:
		a.decode = d
	default:
		return nil, usagef("--decode %s: want loop, steps or auto", d)
	}
	switch l := p.value("layers", "auto"); l {
	case "auto":
	case models.LayersLoop, models.LayersUnroll:
		a.layers = l
	default:
		return nil, usagef("--layers %s: want loop, unroll or auto", l)
	}
	// --precision highest keeps every product f32 on the CPU backends too,
	// as JAX's "highest" does: a bf16 checkpoint's activations are not
	// rounded (precisionValue checks the value).
	a.f32Products = p.value("precision", "") == "highest"
	if a.sampler.Seed, err = strconv.ParseUint(p.value("seed", "0"), 10, 64); err != nil {
		return nil, usagef("--seed %s: want a non-negative integer", p.value("seed", ""))
	}
	floats := []struct {
		name   string
		dst    *float64
		def    string
		lo, hi float64
	}{{"temperature", &a.sampler.Temperature, "0", 0, 1e9}, {"top-p", &a.sampler.TopP, "1", 0, 1}}
	for _, f := range floats {
		v, err := strconv.ParseFloat(p.value(f.name, f.def), 64)
		if err != nil || !(v >= f.lo && v <= f.hi) {
			return nil, usagef("--%s %s: want a number in [%g, %g]", f.name, p.value(f.name, f.def), f.lo, f.hi)
		}
		*f.dst = v
	}
	return a, nil
}

// parseIDs reads "1,2,3".
func parseIDs(s string) ([]int32, error) {
	var ids []int32
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || v < 0 {
			return nil, usagef("--prompt-ids %s: %q is not a token id", s, f)
		}
		ids = append(ids, int32(v))
	}
	return ids, nil
}

// encodePrompts appends the --prompt texts, encoded by the model's
// tokenizer, to the prompts; the tokenizer is returned to decode the
// results (nil when no text was given, so a model without one still runs
// on token ids).
func (a *generateArgs) encodePrompts() (*tokenizer.Tokenizer, error) {
	if len(a.text) == 0 {
		return nil, nil
	}
	tok, err := tokenizer.Load(filepath.Join(a.dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	for _, s := range a.text {
		ids, err := tok.Encode(s)
		if err != nil {
			return nil, err
		}
		a.ids = append(a.ids, toInt32(ids))
	}
	return tok, nil
}

// checkVocab refuses a token id the model has no embedding for, before
// anything is compiled: the embedding's take would clamp it silently.
func (a *generateArgs) checkVocab(vocab int) error {
	for i, ids := range a.ids {
		for _, id := range ids {
			if int(id) >= vocab {
				return fmt.Errorf("prompt %d: token id %d is outside the vocabulary of %d", i, id, vocab)
			}
		}
	}
	return nil
}

func cmdGenerate(e *env, p *parsed) error {
	a, err := parseGenerate(p)
	if err != nil {
		return err
	}
	precision, err := precisionValue(p)
	if err != nil {
		return err
	}
	mesh, err := meshValue(p)
	if err != nil {
		return err
	}
	// The backend or device is opened (and a name checked) before the
	// checkpoint is read.
	if _, err := openRunBackend("generate", p.value("backend", ""), p.value("device", "")); err != nil {
		return err
	}
	tok, err := a.encodePrompts()
	if err != nil {
		return err
	}
	m, err := loadModel(e, a.dir, p.flag("progress"))
	if err != nil {
		return err
	}
	defer m.Close()
	m.F32Products = a.f32Products
	if err := a.checkVocab(m.Config.Vocab); err != nil {
		return err
	}
	g, err := models.NewGenerator(m, models.Options{Backend: p.value("backend", ""), Device: p.value("device", ""), Precision: precision,
		Decode: a.decode, Layers: a.layers, Mesh: mesh})
	if err != nil {
		return err
	}
	req := models.Request{Prompts: a.ids, MaxNew: a.maxNew, Sampler: a.sampler}
	if !p.flag("ignore-eos") {
		gen, err := hf.LoadGeneration(a.dir)
		if err != nil {
			return err
		}
		req.EOS, req.Pad = gen.EOS, int32(gen.Pad)
	}
	if err := g.Check(req); err != nil {
		return err
	}
	if p.flag("progress") || isTerminal(e.stderr) || a.maxNew >= longGeneration {
		req.Progress = func(n int) {
			if n%progressEvery == 0 && n < a.maxNew {
				fmt.Fprintf(e.stderr, "tpucc: generated %d of %d new tokens\n", n, a.maxNew)
			}
		}
	}
	fmt.Fprintf(e.stderr, "tpucc: compiling prefill and decode\n")
	t0 := time.Now()
	if err := g.Prepare(req); err != nil {
		return err
	}
	compile := time.Since(t0)
	res, err := g.Generate(req)
	if err != nil {
		return err
	}
	for _, row := range res.Tokens {
		fmt.Fprintln(e.stdout, joinIDs(row))
		if tok != nil {
			text, err := tok.Decode(toInt(row), true)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%q\n", text)
		}
	}
	fmt.Fprintf(e.stdout, "compile: %.2f s\n", compile.Seconds())
	fmt.Fprintf(e.stdout, "prefill: %d tokens in %.3f s, %.1f tokens/s\n", res.PrefillTokens, res.PrefillTime.Seconds(), rate(res.PrefillTokens, res.PrefillTime))
	fmt.Fprintf(e.stdout, "decode: %d tokens in %.3f s, %.1f tokens/s\n", res.DecodeTokens, res.DecodeTime.Seconds(), rate(res.DecodeTokens, res.DecodeTime))
	if dir := p.value("output-dir", ""); dir != "" {
		return writeGenerated(dir, res)
	}
	return nil
}

// largeCheckpoint is the size from which loading reports each shard
// without --progress.
const largeCheckpoint = 1 << 30

// loadModel loads dir, saying on stderr what it does (a large checkpoint
// takes a while): with progress, when stderr is a terminal, or when the
// checkpoint is large, a line per shard loaded.
func loadModel(e *env, dir string, progress bool) (*models.Model, error) {
	fmt.Fprintf(e.stderr, "tpucc: loading %s\n", dir)
	progress = progress || isTerminal(e.stderr)
	t0 := time.Now()
	m, err := models.LoadProgress(dir, func(p hf.Progress) {
		if progress || p.TotalBytes >= largeCheckpoint {
			fmt.Fprintf(e.stderr, "tpucc: loaded shard %d/%d %s: %d tensors, %s; in all %d/%d tensors, %s of %s\n",
				p.Shard, p.Shards, filepath.Base(p.File), p.Tensors, humanBytes(p.Bytes),
				p.DoneTensors, p.TotalTensors, humanBytes(p.DoneBytes), humanBytes(p.TotalBytes))
		}
	})
	if err != nil {
		return nil, err
	}
	var bytes int64
	for _, p := range m.Params { // by type: a stacked weight is not made until it is read
		n, _ := p.Type.NumElements()
		bytes += n * int64(p.Type.DType.Size())
	}
	if s := m.Config.UnloadedText(); s != "" {
		fmt.Fprintf(e.stderr, "tpucc: %s\n", s)
	}
	fmt.Fprintf(e.stderr, "tpucc: loaded %s: %d layers, %d weights, %s (%s) in %.2f s\n",
		m.Config.Arch, len(m.Config.Layers), len(m.Params), humanBytes(bytes), m.Weights.DType, time.Since(t0).Seconds())
	return m, nil
}

// isTerminal tells whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeGenerated writes DIR/tokens.npy and DIR/logits.npy.
func writeGenerated(dir string, res *models.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	B, n := len(res.Tokens), len(res.Tokens[0])
	flat := make([]int32, 0, B*n)
	for _, row := range res.Tokens {
		flat = append(flat, row...)
	}
	if err := tensor.WriteNPY(filepath.Join(dir, "tokens.npy"), tensor.FromSlice(flat, int64(B), int64(n))); err != nil {
		return err
	}
	return tensor.WriteNPY(filepath.Join(dir, "logits.npy"), res.FirstLogits)
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, v := range ids {
		s[i] = strconv.Itoa(int(v))
	}
	return strings.Join(s, " ")
}

func toInt32(ids []int) []int32 {
	out := make([]int32, len(ids))
	for i, v := range ids {
		out[i] = int32(v)
	}
	return out
}

func toInt(ids []int32) []int {
	out := make([]int, len(ids))
	for i, v := range ids {
		out[i] = int(v)
	}
	return out
}

// humanBytes writes n in MiB or GiB.
func humanBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}
