package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"

	"github.com/tpucc/tpucc/backend/cpu"
)

// The MKL peer: torch's f32 matmul (MKL's sgemm in torch's x86 wheels),
// run by bench/cpu/mkl.py with .venv-hf's interpreter, where torch is
// installed (make venv-hf; bench/models reaches torch the same way), on as
// many threads as tpucc's kernels (runtime.NumCPU()).
const mklPython = ".venv-hf/bin/python"

// mklInfo is what the MKL peer said of itself: its torch and whether
// torch.backends.mkl.is_available(); "" until it ran.
var mklInfo string

// mklPeer times torch.matmul of m x k by k x n (rhsT: by the transpose of
// an n x k weight) and returns its median seconds; 0 when .venv-hf is
// missing (the MKL columns and matmul_vs_mkl are then left out: NaN).
func mklPeer(m, k, n int64, rhsT bool, repeat int) float64 {
	if _, err := os.Stat(mklPython); err != nil {
		if mklInfo == "" {
			mklInfo = fmt.Sprintf("MKL peer: %s is missing (make venv-hf): not measured", mklPython)
			fmt.Println(mklInfo)
		}
		return 0
	}
	args := []string{"bench/cpu/mkl.py", fmt.Sprint(m), fmt.Sprint(k), fmt.Sprint(n),
		"--repeat", fmt.Sprint(repeat), "--threads", fmt.Sprint(runtime.NumCPU())}
	if rhsT {
		args = append(args, "--rhs-t")
	}
	out, err := exec.Command(mklPython, args...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%s: %v: %s", args[0], err, ee.Stderr)
	}
	check(err)
	var r struct {
		MedianS float64 `json:"median_s"`
		MKL     bool    `json:"mkl"`
		Torch   string  `json:"torch"`
	}
	check(json.Unmarshal(out, &r))
	if mklInfo == "" {
		mklInfo = fmt.Sprintf("MKL peer: torch %s, torch.backends.mkl.is_available()=%v, %d threads", r.Torch, r.MKL, runtime.NumCPU())
		fmt.Println(mklInfo)
	}
	return r.MedianS
}

// prefillShapes are a prefill's products x · Wᵀ (512 tokens, width 1024,
// W stored [N, K] as Hugging Face stores it): Qwen3-0.6B's MLP
// projection and its vocabulary head (151936 columns, a 622 MB weight).
var prefillShapes = [][3]int64{{512, 1024, 3072}, {512, 1024, 151936}}

// prefillRow is one prefill product's median seconds on each side.
type prefillRow struct {
	shape                [3]int64
	tpucc, mkl, openblas float64
}

// measurePrefill times the prefill products on tpucc, MKL and OpenBLAS
// (numpy), in rounds like the workloads' (the order reversed every other
// round), with at most 3 rounds of 3 runs for the vocabulary head, whose
// MKL run takes seconds here.
func measurePrefill(name string) []prefillRow {
	var rows []prefillRow
	for _, s := range prefillShapes {
		m, k, n := s[0], s[1], s[2]
		mod := parse("prefill", fmt.Sprintf("func @prefill(%%x: f32[%d,%d], %%w: f32[%d,%d]) -> f32[%d,%d] {\n  %%y = dot_general %%x, %%w {lhs_contract=[1], rhs_contract=[1]} : f32[%d,%d]\n  return %%y\n}\n",
			m, k, n, k, m, n, m, n))
		args := cpu.RandomInputs(mod.Entry(), 1)
		exe := compileOn(mod, name)
		rep, rounds := *repeat, max(*nRounds, 1)
		if m*k*n > 1<<32 {
			rep, rounds = min(rep, 3), min(rounds, 3)
		}
		steps := []func(*prefillRow){func(r *prefillRow) { r.tpucc = timeRun(exe, args, nil, rep, true) }}
		if !*skipPeers {
			sh := []string{fmt.Sprint(m), fmt.Sprint(k), fmt.Sprint(n)}
			steps = append(steps,
				func(r *prefillRow) { r.mkl = mklPeer(m, k, n, true, rep) },
				func(r *prefillRow) {
					r.openblas = peer(append(append([]string{"bench/cpu/peers.py", "gemm"}, sh...), "--rhs-t", "--repeat", fmt.Sprint(rep)))
				})
		}
		var got []prefillRow
		for i := range rounds {
			var r prefillRow
			for j := range steps {
				if i%2 == 1 {
					j = len(steps) - 1 - j
				}
				steps[j](&r)
			}
			got = append(got, r)
		}
		row := prefillRow{shape: s}
		pick := func(f func(prefillRow) float64) float64 {
			var v []float64
			for _, r := range got {
				v = append(v, f(r))
			}
			return median(v)
		}
		row.tpucc = pick(func(r prefillRow) float64 { return r.tpucc })
		row.mkl = pick(func(r prefillRow) float64 { return r.mkl })
		row.openblas = pick(func(r prefillRow) float64 { return r.openblas })
		rows = append(rows, row)
	}
	return rows
}

// printPrefill prints the prefill products' rows: times, GFLOP/s, and each
// peer's time over tpucc's (above 1: tpucc is faster).
func printPrefill(rows []prefillRow) {
	fmt.Printf("\nprefill products x·Wᵀ (W stored [N, K]), medians:\n")
	fmt.Printf("%-18s %12s %12s %12s %10s %10s %14s\n", "M x K x N", "tpucc", "MKL", "OpenBLAS", "GFLOP/s", "MKL/tpucc", "OpenBLAS/tpucc")
	for _, r := range rows {
		flops := 2 * float64(r.shape[0]*r.shape[1]*r.shape[2])
		fmt.Printf("%-18s %12s %12s %12s %10.1f %10.3f %14.3f\n", fmt.Sprintf("%dx%dx%d", r.shape[0], r.shape[1], r.shape[2]),
			ms(r.tpucc), ms(r.mkl), ms(r.openblas), flops/r.tpucc/1e9, ratio(r.mkl, r.tpucc), ratio(r.openblas, r.tpucc))
	}
}

// ratio is a / b, NaN when a peer was not measured (0).
func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return math.NaN()
	}
	return a / b
}
