package models

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/tensor"
)

// steps calls one generation's prefill and decode steps. Where the steps
// run in host memory (the cpu device), each call hands the KV cache back as
// the storage of the cache it returns (engine.Function.CallInto: the
// donated cache is updated where it lies and stays the same buffer), and
// every decode step writes its logits into the storage of the step
// before's: a decode step takes no fresh memory for its results (a batch-64
// step's logits are 39 MB for Qwen3's vocabulary). Its token and position
// arguments are rewritten in place too.
type steps struct {
	g     *Generator
	cache []*backend.Buffer // updated as the steps return it
	args  []engine.Arg      // tokens, start, pos, the cache, the weights
	// into is the storage handed to the next decode step: the last
	// logits (nil before the first) and the cache; nil where results are
	// not written into storage (on a device).
	into     []*backend.Buffer
	tok, pos *backend.Buffer // the decode step's, once made
}

func (g *Generator) newSteps(cache []*backend.Buffer, start engine.Arg, weights []engine.Arg) *steps {
	s := &steps{g: g, cache: cache, args: make([]engine.Arg, 0, stepCacheArg+len(cache)+len(weights))}
	s.args = append(s.args, engine.Arg{}, start, engine.Arg{})
	for _, c := range cache {
		s.args = append(s.args, engine.TensorArg(c))
	}
	s.args = append(s.args, weights...)
	if g.decode.InHostMemory() {
		s.into = append([]*backend.Buffer{nil}, cache...)
	}
	return s
}

// prefill runs the prefill step over tokens [B, T] from slot 0 and returns
// its logits, in new storage (the result keeps them).
func (s *steps) prefill(tokens []int32, B, T int) (*backend.Buffer, error) {
	s.args[0] = engine.TensorArg(tensor.FromSlice(tokens, int64(B), int64(T)).Buffer())
	s.args[2] = engine.TensorArg(tensor.FromSlice([]int32{0}).Buffer())
	var into []*backend.Buffer
	if s.into != nil && s.g.prefill.InHostMemory() {
		into = append([]*backend.Buffer{nil}, s.cache...)
	}
	return s.call(s.g.prefill, into)
}

// decode runs a decode step on the tokens next [B] at slot pos and returns
// its logits, which the next decode step overwrites.
func (s *steps) decode(next []int32, pos int) (*backend.Buffer, error) {
	if s.tok == nil {
		s.tok = tensor.FromSlice(next, int64(len(next)), 1).Buffer()
		s.pos = tensor.FromSlice([]int32{int32(pos)}).Buffer()
		s.args[0], s.args[2] = engine.TensorArg(s.tok), engine.TensorArg(s.pos)
	} else {
		copy(backend.Elems[int32](s.tok), next)
		backend.Elems[int32](s.pos)[0] = int32(pos)
	}
	logits, err := s.call(s.g.decode, s.into)
	if err == nil && s.into != nil {
		s.into[0] = logits
	}
	return logits, err
}

// call runs f with the cache args and hands the next call the cache f
// returned.
func (s *steps) call(f *engine.Function, into []*backend.Buffer) (*backend.Buffer, error) {
	out, err := f.CallInto(into, s.args)
	if err != nil {
		return nil, err
	}
	copy(s.cache, out[1:])
	for i, c := range out[1:] {
		s.args[stepCacheArg+i] = engine.TensorArg(c)
	}
	return out[0], nil
}
