package oracle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/llvm"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// tracedLoop is a Go program with loops that are not unrolled, traced
// through tensor.While, tensor.Switch or tensor.Scan.
type tracedLoop struct {
	name   string
	types  []ir.Type
	f      func([]*tensor.Tensor) []*tensor.Tensor
	inputs [][]*backend.Buffer // nil: cpu.RandomInputs with loopSeeds
}

func i32(v int64) *backend.Buffer { return backend.FromInts(ir.Tensor(ir.I32), v) }

func tracedLoops() []tracedLoop {
	f32 := func(d ...int64) ir.Type { return ir.Tensor(ir.F32, d...) }
	one := tensor.Scalar(1, ir.I32)
	return []tracedLoop{
		{name: "counted", types: []ir.Type{f32(8), f32(8)}, f: func(ts []*tensor.Tensor) []*tensor.Tensor {
			// x -> tanh(x*b + 0.5) seven times; b is captured, so carried.
			return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
				return c[0].Lt(tensor.Scalar(7, ir.I32))
			}, func(c []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{c[0].Add(one), c[1].Mul(ts[1]).Add(tensor.Scalar(0.5, ir.F32)).Tanh()}
			}, tensor.Scalar(0, ir.I32), ts[0])
		}},
		{name: "collatz", types: []ir.Type{ir.Tensor(ir.I32)}, f: func(ts []*tensor.Tensor) []*tensor.Tensor {
			// Steps from n to 1: the trip count is the data's, and a
			// Switch on the parity picks the step.
			two := tensor.Scalar(2, ir.I32)
			return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
				return c[1].Gt(one)
			}, func(c []*tensor.Tensor) []*tensor.Tensor {
				v := tensor.Switch(c[1].Rem(two), c[1:], func(o []*tensor.Tensor) []*tensor.Tensor {
					return []*tensor.Tensor{o[0].Div(two)}
				}, func(o []*tensor.Tensor) []*tensor.Tensor {
					return []*tensor.Tensor{o[0].Mul(tensor.Scalar(3, ir.I32)).Add(one)}
				})
				return []*tensor.Tensor{c[0].Add(one), v[0]}
			}, tensor.Scalar(0, ir.I32), ts[0])
		}, inputs: [][]*backend.Buffer{{i32(27)}, {i32(97)}, {i32(1)}, {i32(6)}}},
		{name: "nested", types: []ir.Type{f32(4), ir.Tensor(ir.I32)}, f: func(ts []*tensor.Tensor) []*tensor.Tensor {
			// The inner loop runs i+k times in outer step i (k may be
			// negative: zero trips), then an index picks a branch.
			return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
				return c[0].Lt(tensor.Scalar(3, ir.I32))
			}, func(c []*tensor.Tensor) []*tensor.Tensor {
				lim := c[0].Add(ts[1])
				in := tensor.While(func(d []*tensor.Tensor) *tensor.Tensor {
					return d[0].Lt(lim)
				}, func(d []*tensor.Tensor) []*tensor.Tensor {
					return []*tensor.Tensor{d[0].Add(one), d[1].Mul(tensor.Scalar(0.75, ir.F32)).Sin()}
				}, tensor.Scalar(0, ir.I32), c[1])
				v := tensor.Switch(c[0], in[1:], func(o []*tensor.Tensor) []*tensor.Tensor {
					return []*tensor.Tensor{o[0].Exp()}
				}, func(o []*tensor.Tensor) []*tensor.Tensor {
					return []*tensor.Tensor{o[0].Neg()}
				})
				return []*tensor.Tensor{c[0].Add(one), v[0]}
			}, tensor.Scalar(0, ir.I32), ts[0])
		}},
		{name: "scan_rnn", types: []ir.Type{f32(1, 8), f32(6, 8, 8), f32(6, 8)}, f: func(ts []*tensor.Tensor) []*tensor.Tensor {
			// h = tanh(h W_l + b_l) over stacked weights, each step's sum
			// stacked as an output: a model's layers as a loop.
			h, ys := tensor.Scan(func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
				h := c[0].MatMul(x[0]).Add(x[1].Reshape(1, 8)).Tanh()
				return []*tensor.Tensor{h}, []*tensor.Tensor{h.Sum(1)}
			}, []*tensor.Tensor{ts[0]}, ts[1], ts[2])
			return append(h, ys...)
		}},
	}
}

// TestLoopTraced traces Go programs with tensor.While, tensor.Switch and
// tensor.Scan (a counted loop, a data-dependent trip count, nested loops
// with a case, a scan over stacked weights), runs each as traced on the
// reference executor, compiled by the default pipeline on XLA:CPU and on
// the llvm backend, and compares both with the reference within the
// oracle's tolerance. On llvm the loops must be compiled, not run on the
// reference executor.
func TestLoopTraced(t *testing.T) {
	h := harness(t)
	b, err := backend.Lookup("llvm")
	if err != nil {
		t.Fatal(err)
	}
	var checks []*check
	for _, p := range tracedLoops() {
		names := make([]string, len(p.types))
		for i := range names {
			names[i] = fmt.Sprintf("x%d", i)
		}
		g := func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) { return p.f(ts), nil }
		inputs := p.inputs
		if inputs == nil {
			m, err := tensor.Trace(p.name, names, p.types, g)
			if err != nil {
				t.Fatal(err)
			}
			for _, seed := range loopSeeds[:3] {
				inputs = append(inputs, cpu.RandomInputs(m.Entry(), seed))
			}
		}
		for k, in := range inputs {
			m, err := tensor.Trace(p.name, names, p.types, g)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if !strings.Contains(ir.Print(m), "= while ") {
				t.Fatalf("%s traced without a while:\n%s", p.name, ir.Print(m))
			}
			checks = append(checks, &check{name: fmt.Sprintf("%s (inputs %d)", p.name, k), key: fmt.Sprintf("traced_%s_%d", p.name, k),
				m: m, inputs: in, about: fmt.Sprintf("traced Go program %s, inputs %d", p.name, k),
				repro: "go test ./internal/oracle -run TestLoopTraced  # " + p.name})
		}
	}
	failed := runLoopChecks(t, h, b, checks)
	t.Logf("%d traced loop checks on XLA:CPU and llvm, %d failed", len(checks), failed)
}

// runLoopChecks runs checks on the executor against XLA:CPU (runAll), then
// those that ran there on the llvm backend against the executor, with no
// while or case left to the executor; it returns how many failed.
func runLoopChecks(t *testing.T, h *xlacheck.Harness, b backend.Backend, checks []*check) int {
	t.Helper()
	failed := runAll(t, h, checks)
	for _, c := range checks {
		if c.want == nil {
			continue // prepare failed; runAll reported it
		}
		if msgs := llvmAgrees(b, c, "while", "case"); msgs != nil {
			failed++
			t.Errorf("%s on llvm: %s\nprogram:\n%s", c.name, strings.Join(msgs, "\n  "), ir.Print(c.m))
		}
	}
	return failed
}

// llvmAgrees compiles c's program for the cpu target, runs it on the llvm
// backend and compares its results with the reference's; it also requires
// that no instruction of the ops named (while, case, ...) ran on the
// reference executor.
func llvmAgrees(b backend.Backend, c *check, ops ...string) []string {
	m, err := tir.Parse(c.name+".tir", []byte(ir.Print(c.m))) // compiling rewrites its module
	if err != nil {
		return []string{fmt.Sprintf("frontend/tir.Parse of the printed program: %v", err)}
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
	if err != nil {
		return []string{fmt.Sprintf("engine.Compile: %v", err)}
	}
	x, err := b.Compile(&backend.Program{Module: exe.Module, Entry: exe.Entry, Target: "cpu"})
	if err != nil {
		return []string{fmt.Sprintf("compile: %v", err)}
	}
	var msgs []string
	for _, fb := range x.(*llvm.Executable).Fallbacks() {
		for _, op := range ops {
			if strings.Contains(fb, ": "+op+" ") {
				msgs = append(msgs, fb)
			}
		}
	}
	got, err := x.Run(c.inputs)
	if err != nil {
		return append(msgs, fmt.Sprintf("run: %v", err))
	}
	return append(msgs, c.compareResults(got)...)
}
