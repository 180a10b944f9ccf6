package models

import (
	"fmt"
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// The decode loop runs every decode step of a generation as one compiled
// program: a while loop around the model's one-token step that chooses
// each next token inside the program (greedy or sampled, with draw's
// numbers), writes it into an i32 [B, N] buffer carried through the loop,
// and stops when N tokens are written or every row has met an EOS. A
// generation is then one dispatch after prefill instead of one per token.

// Decode modes (Options.Decode).
const (
	DecodeAuto  = ""      // the loop on a PJRT device (pjrt, tpu, gpu), steps elsewhere
	DecodeLoop  = "loop"  // one compiled loop for all decode steps
	DecodeSteps = "steps" // a dispatch per token, the host choosing each
)

// loopArgs are the decode loop's tensor arguments before the cache (whose
// first tensor is at loopCacheArg) and the weights; three static arguments
// follow the weights: the sampler's temperature, top-k and top-p.
var loopArgs = [...]string{"out", "next", "start", "pos", "done", "seed", "eos", "pad"}

const loopCacheArg = len(loopArgs)

// loopProgram is the decode loop as the runtime compiles it.
type loopProgram struct {
	m    *Model
	name string
}

// loopTypes are the decode loop's tensor argument types for B rows, n
// steps, the ids in eos and a cache of capacity slots (loopArgs' order,
// then the cache and the weights).
func (m *Model) loopTypes(B, n, eos, capacity int64) []ir.Type {
	ts := []ir.Type{ir.Tensor(ir.I32, B, n), ir.Tensor(ir.I32, B), ir.Tensor(ir.I32, B), ir.Tensor(ir.I32),
		ir.Tensor(ir.I1, B), ir.Tensor(ir.U32, 2), ir.Tensor(ir.I32, eos), ir.Tensor(ir.I32)}
	ts = append(ts, m.CacheTypes(B, capacity)...)
	for _, p := range m.Params {
		ts = append(ts, p.Type)
	}
	return ts
}

// loopStatics are the sampler's settings as the loop's static arguments:
// they shape the program (top-k's k) and are constants in it.
func loopStatics(s Sampler) []engine.Arg {
	var out []engine.Arg
	for _, v := range []any{s.Temperature, s.TopK, s.TopP} {
		a, err := engine.StaticArg(v)
		if err != nil {
			panic(err) // float64 and int are static kinds
		}
		out = append(out, a)
	}
	return out
}

func (p loopProgram) split(args []engine.Arg) ([]ir.Type, Sampler, error) {
	n := len(args) - 3
	if n < loopCacheArg {
		return nil, Sampler{}, fmt.Errorf("models: the decode loop takes at least %d arguments, got %d", loopCacheArg+3, len(args))
	}
	types := make([]ir.Type, n)
	for i, a := range args[:n] {
		if a.IsStatic() {
			return nil, Sampler{}, fmt.Errorf("models: argument %d of the decode loop is static", i)
		}
		types[i] = a.Type
	}
	t, k, pp := args[n].Static, args[n+1].Static, args[n+2].Static
	temp, ok1 := t.(float64)
	topK, ok2 := k.(int)
	topP, ok3 := pp.(float64)
	if !ok1 || !ok2 || !ok3 {
		return nil, Sampler{}, fmt.Errorf("models: the decode loop's statics are (%T, %T, %T), want (float64, int, float64)", t, k, pp)
	}
	return types, Sampler{Temperature: temp, TopK: topK, TopP: topP}, nil
}

func (p loopProgram) Trace(args []engine.Arg) (*ir.Module, error) {
	types, s, err := p.split(args)
	if err != nil {
		return nil, err
	}
	names := slices.Concat(loopArgs[:], p.m.StepNames()[3:])
	if len(names) != len(types) {
		return nil, fmt.Errorf("models: the decode loop takes %d tensor arguments, got %d", len(names), len(types))
	}
	return tensor.Trace(p.name, names, types, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return p.m.decodeLoop(ts, s)
	})
}

func (p loopProgram) Eager(args []engine.Arg) ([]*backend.Buffer, error) {
	_, s, err := p.split(args)
	if err != nil {
		return nil, err
	}
	bufs := make([]*backend.Buffer, len(args)-3)
	for i := range bufs {
		bufs[i] = args[i].Tensor
	}
	return tensor.Eval(p.name, bufs, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return p.m.decodeLoop(ts, s)
	})
}

// decodeLoop runs the decode steps on ts (loopTypes' order): out [B, N]
// holds Pad; next [B] are the tokens chosen last (from prefill's logits),
// at slot pos of every row's cache; done [B] marks rows already finished.
// Its results are the steps run (i32[]), out with each step's tokens in
// its column, and the cache after the last step. A finished row's tokens
// are pad, fed to the step as the host does, and its later tokens stay
// pad whatever the step computes for it.
func (m *Model) decodeLoop(ts []*tensor.Tensor, s Sampler) (res []*tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	nc := len(m.CacheTypes(1, 1))
	out, next, start, pos, done, seed, eos, pad := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7]
	caches, weights := ts[loopCacheArg:loopCacheArg+nc], ts[loopCacheArg+nc:]
	B, N := out.Shape()[0], out.Shape()[1]
	one := tensor.Scalar(1, ir.I32)
	init := append([]*tensor.Tensor{tensor.Scalar(0, ir.I32), next, done, out}, caches...)
	cond := func(c []*tensor.Tensor) *tensor.Tensor {
		running := c[2].Not().Convert(ir.I32).Max(0).Gt(tensor.Scalar(0, ir.I32))
		return c[0].Lt(tensor.Scalar(float64(N), ir.I32)).And(running)
	}
	body := func(c []*tensor.Tensor) []*tensor.Tensor {
		i, tok, fin, buf := c[0], c[1], c[2], c[3]
		args := append([]*tensor.Tensor{tok.Reshape(B, 1), start, pos.Add(i)}, c[4:]...)
		stepped, err := m.step(append(args, weights...), false, false)
		if err != nil {
			panic(err) // m.step's errors are *tensor.Error: decodeLoop's Recover returns them
		}
		chosen := pickTraced(stepped[0], s, seed, i.Add(one))
		chosen = tensor.Where(fin, pad.BroadcastTo(B), chosen)
		fin = fin.Or(isEOS(chosen, eos))
		buf = buf.DynamicUpdateSlice(chosen.Reshape(B, 1), []*tensor.Tensor{tensor.Scalar(0, ir.I32), i})
		return append([]*tensor.Tensor{i.Add(one), chosen, fin, buf}, stepped[1:]...)
	}
	final := tensor.While(cond, body, init...)
	return append([]*tensor.Tensor{final[0], final[3]}, final[4:]...), nil
}

// isEOS marks the tokens [B] that are one of eos [E].
func isEOS(tokens, eos *tensor.Tensor) *tensor.Tensor {
	B, E := tokens.Shape()[0], eos.Shape()[0]
	hit := tokens.Reshape(B, 1).BroadcastTo(B, E).Eq(eos.Reshape(1, E).BroadcastTo(B, E))
	return hit.Convert(ir.I32).Max(1).Gt(tensor.Scalar(0, ir.I32))
}

// pickTraced chooses a token from each row of logits [B, V] as
// Sampler.pick does, in the program: the first largest logit when greedy;
// sampling, the candidates sorted by top_k (all V of them without a top-k,
// ties in id order as pick's stable sort), softmax, the top-p cut, and the
// first candidate whose cumulative probability passes draw's number for
// (seed, row, step) times the kept probability.
func pickTraced(logits *tensor.Tensor, s Sampler, seed, step *tensor.Tensor) *tensor.Tensor {
	if !s.sampling() {
		return logits.Argmax(1)
	}
	B, V := logits.Shape()[0], logits.Shape()[1]
	k := V
	if s.TopK > 0 && int64(s.TopK) < V {
		k = int64(s.TopK)
	}
	z := logits.Div(tensor.Scalar(s.Temperature, ir.F32).BroadcastTo(B, V))
	vals, ids := z.TopK(int(k))
	top := vals.Slice([]int64{0, 0}, []int64{B, 1}, nil).BroadcastTo(B, k)
	p := vals.Sub(top).Exp()
	p = p.Div(p.SumKeep(1).BroadcastTo(B, k))
	keep := tensor.Full(1, ir.I1, B, k)
	if s.TopP > 0 && s.TopP < 1 {
		// A candidate is kept while the probability before it is short of
		// top-p: pick keeps up to the first that reaches it.
		before := p.Cumsum(1).Sub(p)
		keep = before.Lt(tensor.Scalar(s.TopP, ir.F32).BroadcastTo(B, k))
		p = tensor.Where(keep, p, tensor.Zeros(ir.F32, B, k))
	}
	u := drawTraced(seed, step, B).Mul(p.Sum(1)).Reshape(B, 1).BroadcastTo(B, k)
	// The first candidate whose cumulative probability exceeds u is the
	// number of candidates whose cumulative probability does not; rounding
	// past the last kept candidate picks it.
	j := p.Cumsum(1).Le(u).Convert(ir.I32).Sum(1)
	last := keep.Convert(ir.I32).Sum(1).Sub(tensor.Scalar(1, ir.I32).BroadcastTo(B))
	j = j.Minimum(last)
	at := tensor.Iota(ir.I32, 1, B, k).Eq(j.Reshape(B, 1).BroadcastTo(B, k))
	return tensor.Where(at, ids, tensor.Zeros(ir.I32, B, k)).Sum(1)
}

// drawTraced is draw for every row of B at step (i32[]) and seed (u32[2]:
// the low half, then the high), as f32 [B].
func drawTraced(seed, step *tensor.Tensor, B int64) *tensor.Tensor {
	u32 := func(v float64) *tensor.Tensor { return tensor.Scalar(v, ir.U32) }
	lo := seed.Slice([]int64{0}, []int64{1}, nil).Reshape()
	hi := seed.Slice([]int64{1}, []int64{2}, nil).Reshape()
	h := fmixTraced(lo.Add(step.Convert(ir.U32).Mul(u32(drawStep))))
	h = fmixTraced(hi.Xor(h)).BroadcastTo(B)
	rows := tensor.Iota(ir.U32, 0, B).Mul(u32(drawRow).BroadcastTo(B))
	h = fmixTraced(h.Add(rows))
	return h.Div(u32(256).BroadcastTo(B)).Convert(ir.F32).Mul(tensor.Scalar(1.0/(1<<24), ir.F32).BroadcastTo(B))
}

// fmixTraced is fmix32 on u32 tensors; the IR has no shifts, and a logical
// right shift of an unsigned integer is its division by a power of two.
func fmixTraced(h *tensor.Tensor) *tensor.Tensor {
	c := func(v float64) *tensor.Tensor { return tensor.Scalar(v, ir.U32).BroadcastTo(h.Shape()...) }
	h = h.Xor(h.Div(c(1 << 16)))
	h = h.Mul(c(0x85ebca6b))
	h = h.Xor(h.Div(c(1 << 13)))
	h = h.Mul(c(0xc2b2ae35))
	return h.Xor(h.Div(c(1 << 16)))
}
