package models

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Options configure a Generator's compiled steps.
type Options struct {
	Backend string // the backend that runs them ("" is the runtime's default)
	// Device names the device instead (engine.Devices: cpu, pjrt, tpu,
	// gpu). On a device the weights are copied into its memory once, when
	// the Generator is made, and the KV cache stays there between steps.
	Device string
	// Precision is the precision of the products on the device
	// (compile.Precision): "", "default", "high" or "highest".
	Precision string
	Cache     *engine.Cache // where programs are kept (nil: the process's default cache)
	// AllLogits makes prefill return the logits of every prompt token
	// [B, T, V] (Result.PromptLogits), for comparing with a reference.
	AllLogits bool
	// Mesh splits the model over that many devices of Device (ParseMesh:
	// "tp" splits the weights, "dp" the batch; models/shard.go): each
	// device receives only its share of each weight, once.
	Mesh *ir.Mesh
	// Decode chooses how the decode steps run (decodeloop.go): DecodeLoop
	// as one compiled loop, one dispatch per generation; DecodeSteps a
	// dispatch per token, the host choosing each; DecodeAuto ("") the loop
	// on a PJRT backend (--device pjrt, tpu, gpu), where it is faster, and
	// steps on the llvm and reference backends, which run a loop on the
	// reference executor (docs/PERFORMANCE.md). A model with MoE blocks
	// loops too: moe-route rewrites them inside the loop's body.
	Decode string
	// Layers chooses how the steps run the model's layer loops: LayersLoop
	// as the model groups them (Model.Loops), LayersUnroll layer by layer
	// (Model.Unrolled), LayersAuto ("") unrolled on XLA:CPU (--device
	// pjrt), which copies each layer's weights out of their stacks every
	// step (1.9x the decode step of an 8-layer Qwen3-0.6B, docs/MODELS.md),
	// and as loops elsewhere.
	Layers string
}

// Layer modes (Options.Layers).
const (
	LayersAuto   = ""
	LayersLoop   = "loop"
	LayersUnroll = "unroll"
)

// Generator holds a model's two compiled steps: prefill (the padded prompts
// at once) and decode (one token per row), or the decode loop (every decode
// step in one program, Options.Decode) in decode's place. Each compiles once per shape
// signature: prompts are padded to a bucket (a power of two, at least 8),
// and the cache capacity is a bucket too, so different prompt lengths share
// programs and decode never recompiles within a generation.
type Generator struct {
	m       *Model
	weights []*backend.Buffer // m's parameters where the steps run (Function.Upload)
	all     bool
	spare   spareCache
	prefill *engine.Function
	decode  *engine.Function
	loop    *engine.Function // the decode loop, when it runs the decode steps
}

// stepCacheArg is the position of the first cache tensor among a step's
// arguments (after the tokens, the rows' starts and the position).
const stepCacheArg = 3

// NewGenerator compiles nothing yet: each step compiles at its first call
// with a new signature (or in Prepare).
func NewGenerator(m *Model, o Options) (*Generator, error) {
	useLoop, err := o.loop()
	if err != nil {
		return nil, err
	}
	if unroll, err := o.unroll(); err != nil {
		return nil, err
	} else if unroll {
		if m, err = m.Unrolled(); err != nil {
			return nil, err
		}
	}
	g := &Generator{m: m, all: o.AllLogits}
	arch := m.Config.Arch
	// The steps consume the KV cache they are given and return the next one
	// (JAX's donate_argnums): the cache is updated where it lies, on a
	// device and on the llvm backend, rather than copied every step.
	var donate []int
	for i := range m.CacheTypes(1, 1) {
		donate = append(donate, stepCacheArg+i)
	}
	if o.Mesh != nil && o.Device == "" {
		return nil, fmt.Errorf("models: a mesh (%s) splits a model over a device's chips: name the device (Options.Device)", meshString(o.Mesh))
	}
	opts := func(name string, logitsRank int) engine.Options {
		eo := engine.Options{Name: name, Backend: o.Backend, Device: o.Device, Precision: o.Precision,
			Cache: o.Cache, NoAutoDynamic: true, RecompileLimit: -1, Donate: donate, KeepOnDevice: o.Device != ""}
		if o.Mesh != nil {
			eo.Mesh = o.Mesh
			eo.Shardings, eo.ResultShardings = m.stepShardings(o.Mesh, logitsRank)
		}
		return eo
	}
	prefillRank := 2
	if o.AllLogits {
		prefillRank = 3
	}
	if useLoop {
		lo := opts(arch+".decode_loop", 2)
		if o.Mesh != nil {
			lo.Shardings, lo.ResultShardings = m.loopShardings(o.Mesh)
		}
		lo.Donate = nil
		for i := range donate {
			lo.Donate = append(lo.Donate, loopCacheArg+i)
		}
		if g.loop, err = engine.NewFunction(loopProgram{m, arch + ".decode_loop"}, lo); err != nil {
			return nil, err
		}
	}
	if g.prefill, err = engine.NewFunction(stepProgram{m, arch + ".prefill", o.AllLogits, true}, opts(arch+".prefill", prefillRank)); err != nil {
		return nil, err
	}
	if g.decode, err = engine.NewFunction(stepProgram{m, arch + ".decode", false, false}, opts(arch+".decode", 2)); err != nil {
		return nil, err
	}
	weightArg := stepCacheArg + len(m.CacheTypes(1, 1))
	for i, p := range m.Params {
		w, err := g.prefill.UploadArg(weightArg+i, p.Buffer)
		if err != nil {
			return nil, fmt.Errorf("copying %s to the device: %w", p.Name, err)
		}
		g.weights = append(g.weights, w)
	}
	return g, nil
}

// Request is one generation over a batch of prompts.
type Request struct {
	Prompts  [][]int32 // token ids; lengths may differ, none may be empty
	MaxNew   int       // tokens to generate per prompt: with the longest prompt, at most the model's max_position_embeddings
	Sampler  Sampler
	Capacity int // cache slots; 0 picks the bucket of the padded prompt length + MaxNew - 1
	// EOS ends a row, as transformers' generate does: a row that emits one
	// of these ids is finished, its later places hold Pad, and generation
	// stops when every row is finished (Result.Tokens is then shorter
	// than MaxNew).
	EOS []int
	Pad int32
	// Progress, when set, is called after each new token of every row is
	// chosen with the count so far (1 to MaxNew), between decode steps;
	// with the decode loop, after the first token and once after the loop.
	Progress func(done int)
}

// Result is what Generate produced.
type Result struct {
	Tokens [][]int32 // [B][N] new tokens: N is MaxNew, or fewer when every row met an EOS
	// FirstLogits are the logits that chose the first new token, f32 [B, V].
	FirstLogits *tensor.Tensor
	// PromptLogits are every prompt token's logits [B, Tpad, V] (left-padded
	// like the prompts) when the Generator was made with AllLogits.
	PromptLogits *tensor.Tensor
	Pad          []int // padding in front of each row's prompt
	// Time spent in prefill and in decode steps (compiles excluded when
	// Prepare ran first), and the tokens each processed.
	PrefillTime, DecodeTime     time.Duration
	PrefillTokens, DecodeTokens int
}

// bucket is the smallest power of two ≥ n and ≥ 8.
func bucket(n int) int {
	b := 8
	for b < n {
		b *= 2
	}
	return b
}

// Shape returns the padded prompt length and the cache capacity Generate
// uses for r.
func (r Request) Shape() (padded, capacity int, err error) {
	longest := 0
	for i, p := range r.Prompts {
		if len(p) == 0 {
			return 0, 0, fmt.Errorf("models: prompt %d is empty", i)
		}
		longest = max(longest, len(p))
	}
	if len(r.Prompts) == 0 {
		return 0, 0, fmt.Errorf("models: no prompts")
	}
	if r.MaxNew < 1 {
		return 0, 0, fmt.Errorf("models: max new tokens is %d, want at least 1", r.MaxNew)
	}
	padded = bucket(longest)
	capacity = r.Capacity
	if capacity == 0 {
		capacity = bucket(padded + r.MaxNew - 1)
	}
	if capacity < padded+r.MaxNew-1 {
		return 0, 0, fmt.Errorf("models: a cache of %d slots cannot hold %d prompt slots and %d new tokens", capacity, padded, r.MaxNew)
	}
	return padded, capacity, nil
}

// shape is r.Shape, refusing a request whose positions run past the
// model's max_position_embeddings. transformers only warns there; tpucc
// refuses, since past it the rotary tables and the cache grow beyond what
// the model was made for and a long request's cache would grow without
// bound (issue 29: --max-new-tokens 1e8 took over 8 GB).
func (g *Generator) shape(r Request) (padded, capacity int, err error) {
	if padded, capacity, err = r.Shape(); err != nil {
		return 0, 0, err
	}
	limit := g.m.Config.MaxPositions
	if limit < 1 {
		return 0, 0, fmt.Errorf("models: the config's max_position_embeddings is %d, want at least 1", limit)
	}
	longest := 0
	for _, p := range r.Prompts {
		longest = max(longest, len(p))
	}
	if room := limit - longest; r.MaxNew > room {
		return 0, 0, fmt.Errorf("models: a prompt of %d tokens and %d new tokens need %d positions, more than the model's max_position_embeddings %d (at most %d new tokens fit)",
			longest, r.MaxNew, longest+r.MaxNew, limit, max(room, 0))
	}
	return padded, capacity, nil
}

// Check reports why Generate would refuse r (an empty prompt, no room in
// the cache or past max_position_embeddings) without compiling anything.
func (g *Generator) Check(r Request) error {
	_, _, err := g.shape(r)
	return err
}

// Prepare compiles the prefill and decode (or decode loop) programs r
// needs, so that Generate's timings are of running only.
func (g *Generator) Prepare(r Request) error {
	padded, capacity, err := g.shape(r)
	if err != nil {
		return err
	}
	B := int64(len(r.Prompts))
	if _, err := g.prefill.Lower(shapeArgs(g.m.StepTypes(B, int64(padded), int64(capacity)))); err != nil {
		return err
	}
	if g.loop != nil {
		if r.MaxNew > 1 {
			args := shapeArgs(g.m.loopTypes(B, int64(r.MaxNew-1), int64(max(len(r.EOS), 1)), int64(capacity)))
			_, err = g.loop.Lower(append(args, loopStatics(r.Sampler)...))
		}
		return err
	}
	_, err = g.decode.Lower(shapeArgs(g.m.StepTypes(B, 1, int64(capacity))))
	return err
}

func shapeArgs(types []ir.Type) []engine.Arg {
	args := make([]engine.Arg, len(types))
	for i, t := range types {
		args[i] = engine.ShapeArg(t)
	}
	return args
}

// Stats are the two steps' cache counters.
func (g *Generator) Stats() (prefill, decode engine.Stats) {
	return g.prefill.Stats(), g.decode.Stats()
}

// LoopStats are the decode loop's cache counters (zero when the decode
// steps run one by one).
func (g *Generator) LoopStats() engine.Stats {
	if g.loop == nil {
		return engine.Stats{}
	}
	return g.loop.Stats()
}

// Generate runs prefill over the left-padded prompts, then MaxNew-1 decode
// steps (a call each, or one call of the decode loop), choosing each token
// with r.Sampler.
func (g *Generator) Generate(r Request) (*Result, error) {
	padded, capacity, err := g.shape(r)
	if err != nil {
		return nil, err
	}
	B := len(r.Prompts)
	tokens := make([]int32, B*padded)
	start := make([]int32, B)
	res := &Result{Tokens: make([][]int32, B), Pad: make([]int, B)}
	for b, p := range r.Prompts {
		res.Pad[b] = padded - len(p)
		start[b] = int32(res.Pad[b])
		copy(tokens[b*padded+res.Pad[b]:], p)
		res.PrefillTokens += len(p)
	}
	var weights []engine.Arg
	for _, w := range g.weights {
		weights = append(weights, engine.TensorArg(w))
	}
	cache := g.spare.take(g.m.CacheTypes(int64(B), int64(capacity)))
	defer g.spare.put(cache)
	startArg := engine.TensorArg(tensor.FromSlice(start, int64(B)).Buffer())
	st := g.newSteps(cache, startArg, weights)
	t0 := time.Now()
	logits, err := st.prefill(tokens, B, padded)
	if err != nil {
		return nil, err
	}
	res.PrefillTime = time.Since(t0)
	last := tensor.FromBuffer(logits)
	if g.all {
		res.PromptLogits = last
		V := last.Shape()[2]
		last = last.Slice([]int64{0, int64(padded) - 1, 0}, []int64{int64(B), int64(padded), V}, nil).Reshape(int64(B), V)
	}
	res.FirstLogits = last
	finished := make([]bool, B)
	next := make([]int32, B)
	for step := range r.MaxNew {
		if step > 0 {
			if g.loop != nil {
				if err := g.decodeLoop(r, res, cache, weights, startArg, next, finished, padded); err != nil {
					return nil, err
				}
				return res, nil
			}
			t1 := time.Now()
			lb, err := st.decode(next, padded+step-1)
			if err != nil {
				return nil, err
			}
			res.DecodeTime += time.Since(t1)
			res.DecodeTokens += B
			last = tensor.FromBuffer(lb)
		}
		r.choose(res, last.Float32s(), step, next, finished)
		if r.Progress != nil {
			r.Progress(step + 1)
		}
		if !slices.Contains(finished, false) {
			break
		}
	}
	return res, nil
}

// choose appends each row's token at step, chosen from rows (the logits
// [B, V]) by the sampler, to res and next; a finished row's is Pad, and a
// row that emits an EOS is finished.
func (r Request) choose(res *Result, rows []float32, step int, next []int32, finished []bool) {
	B := len(next)
	V := len(rows) / B
	for b := range B {
		tok := r.Pad
		if !finished[b] {
			tok = int32(r.Sampler.pick(rows[b*V:(b+1)*V], b, step))
			finished[b] = slices.Contains(r.EOS, int(tok))
		}
		next[b] = tok
		res.Tokens[b] = append(res.Tokens[b], tok)
	}
}

// decodeLoop runs the decode steps after the first token (next, chosen
// from prefill's logits) as one call of the decode loop and appends their
// tokens to res: as many as the loop ran steps, which is fewer than
// MaxNew-1 when every row finished. Progress is called once, at the end:
// there is nothing between the steps to report from.
func (g *Generator) decodeLoop(r Request, res *Result, cache []*backend.Buffer, weights []engine.Arg, startArg engine.Arg, next []int32, finished []bool, padded int) error {
	B, n := len(next), r.MaxNew-1
	args := loopInputs(r, next, finished, padded, startArg)
	for _, c := range cache {
		args = append(args, engine.TensorArg(c))
	}
	args = append(append(args, weights...), loopStatics(r.Sampler)...)
	t1 := time.Now()
	got, err := g.loop.Call(args)
	if err != nil {
		return err
	}
	steps := int(tensor.FromBuffer(got[0]).Int32s()[0])
	toks := tensor.FromBuffer(got[1]).Int32s()
	res.DecodeTime = time.Since(t1)
	res.DecodeTokens = B * steps
	copy(cache, got[2:])
	for b := range B {
		res.Tokens[b] = append(res.Tokens[b], toks[b*n:b*n+steps]...)
	}
	if r.Progress != nil {
		r.Progress(1 + steps)
	}
	return nil
}

// loopInputs are the decode loop's arguments before the cache (loopArgs):
// a token buffer of Pad for the MaxNew-1 steps, the first new tokens next,
// the rows' starts, the first decode slot padded, the rows finished by
// the first token, the seed, the EOS ids and Pad.
func loopInputs(r Request, next []int32, finished []bool, padded int, start engine.Arg) []engine.Arg {
	B, n := len(next), r.MaxNew-1
	out := make([]int32, B*n)
	for i := range out {
		out[i] = r.Pad
	}
	eos := []int32{-1} // no token is -1: the loop's eos tensor is never empty
	if len(r.EOS) > 0 {
		eos = eos[:0]
		for _, e := range r.EOS {
			eos = append(eos, int32(e))
		}
	}
	arg := func(t *tensor.Tensor) engine.Arg { return engine.TensorArg(t.Buffer()) }
	return []engine.Arg{arg(tensor.FromSlice(out, int64(B), int64(n))), arg(tensor.FromSlice(next, int64(B))), start,
		arg(tensor.FromSlice([]int32{int32(padded)})), arg(tensor.FromSlice(finished, int64(B))),
		arg(tensor.FromSlice([]uint32{uint32(r.Sampler.Seed), uint32(r.Sampler.Seed >> 32)}, 2)),
		arg(tensor.FromSlice(eos, int64(len(eos)))), arg(tensor.FromSlice([]int32{r.Pad}))}
}

// loop reports whether the decode steps run as one compiled loop.
func (o Options) loop() (bool, error) {
	switch o.Decode {
	case DecodeLoop:
		return true, nil
	case DecodeSteps:
		return false, nil
	case DecodeAuto:
		name, err := o.backendName()
		return strings.HasPrefix(name, "pjrt"), err
	}
	return false, fmt.Errorf("models: decode %q: want %q, %q or %q (automatic)", o.Decode, DecodeLoop, DecodeSteps, DecodeAuto)
}

// unroll resolves o.Layers: whether the steps run the layers unrolled.
func (o Options) unroll() (bool, error) {
	switch o.Layers {
	case LayersLoop:
		return false, nil
	case LayersUnroll:
		return true, nil
	case LayersAuto:
		name, err := o.backendName()
		return name == "pjrt", err
	}
	return false, fmt.Errorf("models: layers %q: want %q, %q or %q (automatic)", o.Layers, LayersLoop, LayersUnroll, LayersAuto)
}

// backendName is the backend o runs on: o.Backend, else its device's.
func (o Options) backendName() (string, error) {
	if o.Backend != "" {
		return o.Backend, nil
	}
	return engine.DeviceBackend(o.Device)
}

// spareCache keeps the KV cache of the last generation for the next one of
// the same shape, as a static cache: the steps update the cache in place
// (donated), and fresh storage cost the prefill a page fault per 4 KiB it
// first wrote (about 2.5 ms a layer for Qwen3-0.6B's 512-token prefill).
// Reused storage is zeroed first, so a generation starts from the same
// cache as on new storage.
type spareCache struct {
	sync.Mutex
	bufs []*backend.Buffer
}

// take returns zeroed buffers of types ts: the spare ones when they have
// these types (no other generation then shares them) and lie in host
// memory, else new ones. A cache left on a device is not reused: zeroing
// its host copy would leave the device's storage as it was.
func (s *spareCache) take(ts []ir.Type) []*backend.Buffer {
	s.Lock()
	bufs := s.bufs
	s.bufs = nil
	s.Unlock()
	same := len(bufs) == len(ts)
	for i := 0; same && i < len(ts); i++ {
		same = bufs[i].Type().Equal(ts[i]) && bufs[i].Device() == nil
	}
	if !same {
		bufs = make([]*backend.Buffer, len(ts))
		for i, t := range ts {
			bufs[i] = backend.New(t)
		}
		return bufs
	}
	for _, b := range bufs {
		clear(b.Bytes())
	}
	return bufs
}

// ReleaseCache drops the KV cache the Generator keeps from its last
// generation (see spareCache); the next generation makes a new one.
func (g *Generator) ReleaseCache() { g.spare.put(nil) }

// put keeps bufs for the next generation. A cache in a device's memory is
// released instead (take would not reuse it), rather than held until the
// garbage collector finds it.
func (s *spareCache) put(bufs []*backend.Buffer) {
	if slices.ContainsFunc(bufs, func(b *backend.Buffer) bool { return b.Device() != nil }) {
		for _, b := range bufs {
			if d := b.Device(); d != nil {
				d.Close()
			}
		}
		bufs = nil
	}
	s.Lock()
	s.bufs = bufs
	s.Unlock()
}
