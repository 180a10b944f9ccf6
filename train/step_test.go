package train_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/train"
)

const tinyLoss = `func @loss(%w: f32[3], %x: f32[3], %n: i32[]) -> f32[] {
  %y = mul %w, %x
  %s = reduce_sum %y {axes=[0]} : f32[]
  return %s
}
`

// TestStepSignature pins the step's contract: params, per-parameter state, the step
// count, the batch; the loss first, then the new params and state.
func TestStepSignature(t *testing.T) {
	cases := []struct {
		opt  train.Optimizer
		want string
	}{
		{train.NewAdamW(1e-3), "func @step(%w: f32[3], %w_exp_avg: f32[3], %w_exp_avg_sq: f32[3], %step: i32[], %x: f32[3], %n: i32[]) -> (f32[], f32[3], f32[3], f32[3]) {"},
		{train.Optimizer{Kind: train.SGD, LR: 0.1, Momentum: 0.9}, "func @step(%w: f32[3], %w_momentum_buffer: f32[3], %step: i32[], %x: f32[3], %n: i32[]) -> (f32[], f32[3], f32[3]) {"},
		{train.NewSGD(0.1), "func @step(%w: f32[3], %step: i32[], %x: f32[3], %n: i32[]) -> (f32[], f32[3]) {"},
	}
	for _, c := range cases {
		m, err := tir.Parse("tiny.tir", []byte(tinyLoss))
		if err != nil {
			t.Fatal(err)
		}
		sm, err := train.Step(m, 1, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		text := ir.Print(sm)
		if got, _, _ := strings.Cut(text, "\n"); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.opt.Kind, got, c.want)
		}
		if strings.Contains(text, "%ct0") {
			t.Errorf("%s: the loss's cotangent is still a parameter:\n%s", c.opt.Kind, text)
		}
	}
}

func TestStepErrors(t *testing.T) {
	bad := train.NewAdamW(1e-3)
	bad.Beta2 = 1
	cases := []struct {
		name, src string
		n         int
		opt       train.Optimizer
		want      string
	}{
		{"two", "func @f(%w: f32[2]) -> (f32[], f32[]) {\n  %s = reduce_sum %w {axes=[0]} : f32[]\n  return %s, %s\n}\n", 1, train.NewSGD(0.1),
			"two.tir:1:1: error: @f returns (f32[], f32[]); a training step needs one float scalar, the loss"},
		{"int", "func @f(%w: f32[2], %k: i32[2]) -> f32[] {\n  %s = reduce_sum %w {axes=[0]} : f32[]\n  return %s\n}\n", 2, train.NewSGD(0.1),
			"int.tir:1:21: error: parameter %k is i32[2]; the step trains f32 parameters"},
		{"count", tinyLoss, 4, train.NewSGD(0.1),
			"count.tir:1:1: error: @loss has 3 parameters; cannot train the first 4"},
		{"betas", tinyLoss, 1, bad, "train: invalid betas (0.9, 1): each in [0, 1)"},
		{"schedule", tinyLoss, 1, train.Optimizer{Kind: train.SGD, LR: 0.1, Schedule: train.Schedule{Warmup: 3}},
			"train: invalid schedule: warm-up 3 steps, total 0"},
		{"nesterov", tinyLoss, 1, train.Optimizer{Kind: train.SGD, LR: 0.1, Nesterov: true}, "train: Nesterov momentum requires a momentum"},
	}
	for _, c := range cases {
		m, err := tir.Parse(c.name+".tir", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = train.Step(m, c.n, c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}

// TestScheduleRates: the rate of each step count is torch's LambdaLR over
// transformers' get_cosine_schedule_with_warmup(opt, 2, 5), whose learning rates
// for steps 0..6 (printed by torch, lr 1) are exactly 0, 0.5, 1, 0.75, 0.25, 0,
// 0.25: its cosine is not clamped at the total and rises again past it. With SGD
// on Σw (gradient 1) a step moves w by exactly its rate.
func TestScheduleRates(t *testing.T) {
	m, err := tir.Parse("tiny.tir", []byte(tinyLoss))
	if err != nil {
		t.Fatal(err)
	}
	opt := train.NewSGD(1)
	opt.Schedule = train.Schedule{Warmup: 2, Total: 5}
	sm, err := train.Step(m, 1, opt)
	if err != nil {
		t.Fatal(err)
	}
	w, x := backend.New(ir.Tensor(ir.F32, 3)), backend.New(ir.Tensor(ir.F32, 3))
	for i := range 3 {
		x.SetFloat64(i, 1)
	}
	for s, want := range []float64{0, 0.5, 1, 0.75, 0.25, 0, 0.25} {
		count := backend.New(ir.Scalar(ir.I32))
		count.SetInt64(0, int64(s))
		out, err := cpu.Run(sm, sm.Entry(), []*backend.Buffer{w, count, x, backend.New(ir.Scalar(ir.I32))})
		if err != nil {
			t.Fatal(err)
		}
		if got := -out[1].Float64At(0); math.Abs(got-want) > 1e-7 {
			t.Errorf("step %d: rate %g, torch's %g", s, got, want)
		}
	}
}
