package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/target"
)

var exportCommand = &command{
	name:    "export",
	summary: "write a Hugging Face model's prefill and decode steps as StableHLO",
	about: `Loads the model directory as generate does and writes its two steps, compiled for --target
(the default pass pipeline for it), as StableHLO text:

  DIR2/prefill.hlo   --seq tokens per row at once, into a cache of --seq slots
  DIR2/decode.hlo    one token per row, into the same cache
  DIR2/signature.json  each step's arguments in order (name and type) and its results

The arguments of both are: tokens i32[batch, T], start i32[batch] (each row's first real
slot: rows are left-padded), pos i32[] (the cache slot of the step's first token), the
KV cache (keys then values of each layer that owns them, f32[batch, kv heads, slots,
head dim]), then the weights in the checkpoint's dtype. The results are the logits of each
row's last token, f32[batch, vocab], then the cache after the step. The weights are
arguments, never constants: the files are small whatever the model's size.

A directory with config.json but no checkpoint exports the model as its configuration
describes it, with weights of --dtype (bf16 by default): nothing needs downloading to
export a large model or see the chips it needs.

--report prints the bytes of the weights and of the KV cache, and for each TPU generation
how many chips hold them (weights and cache only: activations and XLA's workspace are not
counted) and the bytes per chip when both are split evenly over that many chips.

--mesh tp=N (or dp=N, or dp=2,tp=2) splits both steps over devices as generate --mesh does:
the weights Megatron-style over tp, the batch over dp, the KV cache by rows and KV heads;
the StableHLO carries Shardy's shardings for XLA's partitioner. With --target tpu-* and
--emit=executable each step is also compiled through libtpu for --topology (whose chips
must number the mesh's devices) into DIR2/prefill.pjrt and DIR2/decode.pjrt, and --report
adds each step's memory per chip as libtpu laid it out.
`,
	flags: []flagSpec{
		{name: "model", kind: valueFlag, arg: "DIR", doc: "the model directory"},
		{name: "seq", kind: valueFlag, arg: "N", doc: "the sequence length: prefill tokens and cache slots"},
		{name: "batch", kind: valueFlag, arg: "B", doc: "rows per step (default 1)"},
		{name: "target", kind: valueFlag, arg: "T", doc: "the target: " + strings.Join(target.Names(), ", ") + " (default cpu)"},
		{name: "o", kind: valueFlag, arg: "DIR2", doc: "the output directory"},
		{name: "report", kind: boolFlag, doc: "print weight and KV-cache bytes and the chips each TPU generation needs"},
		{name: "dtype", kind: valueFlag, arg: "DT", doc: "with config.json alone (no checkpoint): the weights' dtype, bf16 (default), f16 or f32"},
		{name: "progress", kind: boolFlag, doc: "report each checkpoint shard as it loads (automatic on a terminal or past 1 GiB)"},
		{name: "mesh", kind: valueFlag, arg: "AXES", doc: "split both steps over devices: tp=N splits the weights (Megatron-style), dp=N the batch\n(docs/SHARDING.md); the steps carry Shardy's shardings"},
		{name: "emit", kind: valueFlag, arg: "KIND", doc: "hlo (default): StableHLO text; executable: also compile each step through libtpu for\n--topology, without a TPU, into DIR2/prefill.pjrt and DIR2/decode.pjrt (docs/PJRT.md)"},
		{name: "topology", kind: valueFlag, arg: "T", doc: topologyHelp()},
	},
	run: cmdExport,
}

// stepSignature is one step's entry in signature.json.
type stepSignature struct {
	File    string   `json:"file"`
	Args    []argSig `json:"args"`
	Results []string `json:"results"`
}

type argSig struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func cmdExport(e *env, p *parsed) error {
	x, err := exportFlags(p)
	if err != nil {
		return err
	}
	m, err := exportModel(e, x.dir, p.value("dtype", ""), p.flag("progress"))
	if err != nil {
		return err
	}
	defer m.Close()
	// As generate: no position past what the model was made for.
	if limit := int64(m.Config.MaxPositions); x.seq > limit {
		return fmt.Errorf("--seq %d: more slots than the model's max_position_embeddings %d", x.seq, limit)
	}
	st := exportSteps{sigs: map[string]stepSignature{}, files: map[string]string{}, artifacts: map[string]*pjrt.Artifact{}}
	for _, s := range []struct {
		name   string
		tokens int64
	}{{"prefill", x.seq}, {"decode", 1}} {
		if err := st.add(e, x, m, s.name, s.tokens); err != nil {
			return err
		}
	}
	if err := st.write(x); err != nil {
		return err
	}
	out := x.bc.out
	fmt.Fprintf(e.stdout, "wrote %s, %s and %s\n", filepath.Join(out, "prefill.hlo"), filepath.Join(out, "decode.hlo"), filepath.Join(out, "signature.json"))
	if len(st.artifacts) > 0 {
		fmt.Fprintf(e.stdout, "wrote %s and %s\n", filepath.Join(out, "prefill.pjrt"), filepath.Join(out, "decode.pjrt"))
	}
	if p.flag("report") {
		writeReport(e.stdout, m, x.batch, x.seq)
		io.WriteString(e.stdout, st.compiled)
	}
	return nil
}

// exportConfig is what export's flags ask for, checked before the model
// is read, so that a mistyped flag costs no checkpoint load.
type exportConfig struct {
	dir, target string
	seq, batch  int64
	bc          *buildConfig
	mesh        *ir.Mesh
}

// exportFlags reads and checks export's flags.
func exportFlags(p *parsed) (*exportConfig, error) {
	x := &exportConfig{dir: p.value("model", ""), target: p.value("target", "cpu")}
	out := p.value("o", "")
	if x.dir == "" || out == "" {
		return nil, usagef("--model DIR and -o DIR2 are required")
	}
	var err error
	x.seq, err = strconv.ParseInt(p.value("seq", ""), 10, 64)
	if err != nil || x.seq < 1 {
		return nil, usagef("--seq %q: want a positive number of tokens", p.value("seq", ""))
	}
	x.batch, err = strconv.ParseInt(p.value("batch", "1"), 10, 64)
	if err != nil || x.batch < 1 {
		return nil, usagef("--batch %q: want a positive number of rows", p.value("batch", ""))
	}
	tgt, err := engine.LookupTarget(x.target)
	if err != nil {
		return nil, usagef("--target: %v", err)
	}
	x.bc = &buildConfig{target: tgt, out: out}
	if err := checkEmit(x.bc, p.value("emit", "hlo"), p.value("topology", "")); err != nil {
		return nil, err
	}
	if spec := p.value("mesh", ""); spec != "" {
		if x.mesh, err = models.ParseMesh(spec); err != nil {
			return nil, usagef("--mesh: %v", err)
		}
	}
	return x, nil
}

// exportSteps collects the exported steps: their signatures, the files
// to write and, with --emit executable, the compiled artifacts.
type exportSteps struct {
	sigs      map[string]stepSignature
	files     map[string]string
	artifacts map[string]*pjrt.Artifact
	compiled  string // each step's compiled memory per chip, for --report
}

// add traces, shards and compiles the step name over tokens new tokens.
func (st *exportSteps) add(e *env, x *exportConfig, m *models.Model, name string, tokens int64) error {
	fmt.Fprintf(e.stderr, "tpucc: compiling %s for %s\n", name, x.target)
	types := m.StepTypes(x.batch, tokens, x.seq)
	mod, err := m.Trace(name, types, false)
	if err != nil {
		return err
	}
	if x.mesh != nil {
		if err := m.ShardStep(mod, x.mesh); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	exe, _, err := engine.Compile(mod, engine.Config{Target: x.target})
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	st.files[name+".hlo"] = exe.HLO
	if x.bc.emit == "executable" {
		a, stats, err := compileExecutable(e, x.bc, mod.Entry(), exe.HLO)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		st.artifacts[name+".pjrt"] = a
		if stats != nil {
			st.compiled += name + ": " + compiledMemory(*stats, x.bc.target, x.bc.topology, shardMesh(mod.Entry()))
		}
	}
	sig := stepSignature{File: name + ".hlo"}
	for i, n := range m.StepNames() {
		sig.Args = append(sig.Args, argSig{Name: n, Type: types[i].String()})
	}
	for _, r := range exe.Entry.Results {
		sig.Results = append(sig.Results, ir.Type{DType: r.DType, Shape: r.Shape}.String())
	}
	st.sigs[name] = sig
	return nil
}

// write writes the steps' files, signature.json and artifacts into -o.
func (st *exportSteps) write(x *exportConfig) error {
	js, err := json.MarshalIndent(st.sigs, "", "  ")
	if err != nil {
		return err
	}
	st.files["signature.json"] = string(js) + "\n"
	out := x.bc.out
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, text := range st.files {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return writeArtifacts(x.bc, out, st.artifacts)
}

// writeArtifacts writes each step's executable into dir, signed as tpucc
// build signs one.
func writeArtifacts(c *buildConfig, dir string, artifacts map[string]*pjrt.Artifact) error {
	if len(artifacts) == 0 {
		return nil
	}
	key, _, err := signingKey()
	if err != nil {
		return err
	}
	for name, a := range artifacts {
		at := *c
		at.out = filepath.Join(dir, name)
		if err := writeExecutable(&at, a, key); err != nil {
			return err
		}
	}
	return nil
}

// writeReport prints the memory the model needs and the chips of each TPU
// generation that hold it.
func writeReport(w io.Writer, m *models.Model, batch, seq int64) {
	var weights, cache int64
	for _, p := range m.Params {
		n, _ := p.Type.NumElements()
		weights += n * int64(p.Type.DType.Size())
	}
	for _, t := range m.CacheTypes(batch, seq) {
		n, _ := t.NumElements()
		cache += n * int64(t.DType.Size())
	}
	fmt.Fprintf(w, "weights: %d bytes (%s, %s)\n", weights, humanBytes(weights), m.Params[0].Type.DType)
	fmt.Fprintf(w, "kv cache: %d bytes (%s; batch %d, %d slots, %s)\n", cache, humanBytes(cache), batch, seq, m.CacheDType())
	fmt.Fprintf(w, "%-8s  %10s  %5s  %14s  %14s\n", "target", "HBM/chip", "chips", "weights/chip", "kv/chip")
	for _, t := range target.Targets() {
		if t.Kind != target.KindTPU {
			continue
		}
		chips := (weights + cache + t.Memory - 1) / t.Memory
		chips = max(chips, 1)
		fmt.Fprintf(w, "%-8s  %10s  %5d  %14d  %14d\n", t.Name(), humanBytes(t.Memory), chips, (weights+chips-1)/chips, (cache+chips-1)/chips)
	}
}

// exportModel loads dir, or, when it has config.json but no checkpoint,
// makes the abstract model of its configuration with weights of dtype.
func exportModel(e *env, dir, dtype string, progress bool) (*models.Model, error) {
	_, errSingle := os.Stat(filepath.Join(dir, "model.safetensors"))
	_, errIndex := os.Stat(filepath.Join(dir, "model.safetensors.index.json"))
	if errSingle == nil || errIndex == nil {
		if dtype != "" {
			return nil, usagef("--dtype is for a directory without a checkpoint; %s has one", dir)
		}
		return loadModel(e, dir, progress)
	}
	dt := map[string]ir.DType{"": ir.BF16, "bf16": ir.BF16, "f16": ir.F16, "f32": ir.F32}
	d, ok := dt[dtype]
	if !ok {
		return nil, usagef("--dtype %s: want bf16, f16 or f32", dtype)
	}
	c, err := hf.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "tpucc: %s has no checkpoint: exporting %s as config.json describes it, with %s weights\n", dir, c.Arch, d)
	return models.Abstract(c, d)
}
