package compile_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// stepLoss is lossFn with the trained w first and a static scale.
func stepLoss(w, x, y *tensor.Tensor, scale float64) *tensor.Tensor {
	return lossFn(x, w, y).Mul(tensor.Scalar(scale, ir.F32))
}

// TestTrainStep: three AdamW steps of a traced Go loss agree with the step
// train.Step builds from the same trace, run on the reference executor;
// the program is compiled once for the three. Its cache is its own: the
// process's shared one (CacheDir("")) keeps the program between runs of the
// test (go test -count=N), and a later run's step would find it in memory.
func TestTrainStep(t *testing.T) {
	opt := train.NewAdamW(0.05)
	opt.ClipNorm = 1
	s, err := compile.TrainStep(stepLoss, opt, compile.Device("cpu"), memory())
	if err != nil {
		t.Fatal(err)
	}
	w0 := tensor.Random(2, ir.F32, 4, 2)
	if err := s.Init(w0); err != nil {
		t.Fatal(err)
	}
	lossMod, err := tensor.Trace("loss", []string{"w", "x", "y"}, []ir.Type{w0.Type(), ir.Tensor(ir.F32, 3, 4), ir.Tensor(ir.F32, 3, 2)},
		func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
			return []*tensor.Tensor{stepLoss(ts[0], ts[1], ts[2], 0.5)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := train.Step(lossMod, 1, opt)
	if err != nil {
		t.Fatal(err)
	}
	zeros := func() *backend.Buffer { return backend.New(w0.Type()) }
	state := []*backend.Buffer{w0.Buffer(), zeros(), zeros()}
	for step := range 3 {
		x, y := tensor.Random(int64(10+step), ir.F32, 3, 4), tensor.Random(int64(20+step), ir.F32, 3, 2)
		want, err := cpu.Run(ref, ref.Funcs[0], append(append([]*backend.Buffer{}, state...),
			tensor.FromSlice([]int32{int32(step)}).Buffer(), x.Buffer(), y.Buffer()))
		if err != nil {
			t.Fatal(err)
		}
		loss, err := s.Run(x, y, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if d := near(loss, tensor.FromBuffer(want[0]), 1e-5); d != "" {
			t.Fatalf("step %d: loss: %s", step, d)
		}
		if d := near(s.Params()[0], tensor.FromBuffer(want[1]), 1e-5); d != "" {
			t.Fatalf("step %d: parameters: %s", step, d)
		}
		state = want[1:]
	}
	if st := s.Stats(); st.Compiles != 1 || st.Calls != 3 {
		t.Errorf("%d compiles and %d calls; want 1 and 3", st.Compiles, st.Calls)
	}
	if math.IsNaN(float64(s.Params()[0].Float32s()[0])) {
		t.Error("NaN parameters")
	}
}

// TestTrainStepErrors: what TrainStep, Init and Run refuse.
func TestTrainStepErrors(t *testing.T) {
	if _, err := compile.TrainStep(func(a *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) { return a, a }, train.NewSGD(1)); err == nil ||
		!strings.Contains(err.Error(), "returns 2 tensors; a training step needs exactly one, the scalar loss") {
		t.Errorf("two results: %v", err)
	}
	s, err := compile.TrainStep(stepLoss, train.NewSGD(0.1), compile.CacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(); err == nil || !strings.HasSuffix(err.Error(), ": Run before Init") {
		t.Errorf("Run before Init: %v", err)
	}
	if err := s.Init(tensor.FromSlice([]int32{1}, 1)); err == nil || !strings.HasSuffix(err.Error(), "parameter 0 is i32[1]; a trained parameter is a concrete f32 tensor") {
		t.Errorf("i32 parameter: %v", err)
	}
	w, x, y := tensor.Random(1, ir.F32, 4, 2), tensor.Random(2, ir.F32, 3, 4), tensor.Random(3, ir.F32, 3, 2)
	if err := s.Init(w, x, y, y); err == nil || !strings.Contains(err.Error(), "Init got 4 parameters") {
		t.Errorf("the static parameter trained: %v", err)
	}
	if err := s.Init(w); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(x, y); err == nil || !strings.Contains(err.Error(), "takes 4 arguments, got 3") {
		t.Errorf("a missing batch argument: %v", err)
	}
	if _, err := s.Run(x, tensor.Random(3, ir.F32, 3, 5), 1.0); err == nil {
		t.Error("a shape error while tracing is not an error")
	}
}

// TestTrainStepSharedCache: steps of one loss sharing a cache share a
// compiled program only when their programs are the same: a second step
// with the same optimizer finds it in memory, one with another learning
// rate compiles its own (the cache keys on the step's program, which holds
// the optimizer's constants).
func TestTrainStepSharedCache(t *testing.T) {
	shared := memory()
	w0 := tensor.Random(2, ir.F32, 4, 2)
	x, y := tensor.Random(10, ir.F32, 3, 4), tensor.Random(20, ir.F32, 3, 2)
	for i, c := range []struct {
		lr                float64
		compiles, memHits int64
	}{{0.05, 1, 0}, {0.05, 0, 1}, {0.01, 1, 0}} {
		s, err := compile.TrainStep(stepLoss, train.NewAdamW(c.lr), compile.Device("cpu"), shared)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Init(w0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(x, y, 0.5); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Compiles != c.compiles || st.MemoryHits != c.memHits {
			t.Errorf("step %d (lr %g): %d compiles and %d memory hits; want %d and %d", i, c.lr, st.Compiles, st.MemoryHits, c.compiles, c.memHits)
		}
	}
}
