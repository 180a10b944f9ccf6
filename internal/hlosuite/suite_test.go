package hlosuite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

func reference(m *ir.Module, f *ir.Func, args []*backend.Buffer) ([]*backend.Buffer, error) {
	return cpu.Run(m, f, args)
}

// TestSuite runs the vendored interpreter suite on the reference executor:
// no test may fail (a wrong result), and at least minPassed pass.
func TestSuite(t *testing.T) {
	files, err := Files([]string{"../../testdata/stablehlo-interpret"})
	if err != nil || len(files) < 100 {
		t.Fatalf("want the vendored suite: %d files, %v", len(files), err)
	}
	var s Summary
	for _, f := range files {
		outs, err := RunFile(f, reference)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			s.Add(o)
			if o.Status == Failed {
				t.Errorf("%s: @%s: %s", o.Pos, o.Name, o.Reason)
			}
		}
	}
	t.Log(s.Line())
	if s.Passed < minPassed {
		t.Errorf("%s: want at least %d passed", s.Line(), minPassed)
	}
}

// minPassed is the count measured on the reference executor (237 of 513
// when the suite was vendored; 243 once while, case and if were read;
// then, each alone: 290 with complex numbers; 252 with convolution,
// reduce_window and select_and_scatter; 313 with u16, u64 and the
// sub-byte types; 284 with triangular_solve, the bit ops, tan,
// round_nearest_afz, reduce_precision, bitcast_convert, map, sorts by one
// integer key and general gathers and scatters; 413 with all of
// them; 446 of 510 with the collectives and interpreter.run_parallel,
// the three functions that only run_parallel runs no longer counted as
// tests; 425 of 513 with fft and 439 with the f8, f6 and f4 types, each
// alone; 472 of 510 with all of them; 480 with maximum/minimum of
// complex values, bitcasts of i1, dynamic_gather and check.expect_close;
// 482 with complex triangular_solve; 489 with interpreter.probe and
// check.expect_serialized_eq; 490 with c128/c64 bitcasts; 491 with
// get_tuple_element; 496 with quantized types; 497 with probes in a
// while's do region): fewer is a regression.
const minPassed = 497

// TestOutcomes: a right expectation passes, a wrong one fails with the
// element named, an op tpucc lacks is unsupported by name; // ----- splits
// chunks and positions stay the file's.
func TestOutcomes(t *testing.T) {
	src := `func.func @ok() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.00001, 4.0]> : tensor<2xf32>
  check.expect_eq %0, %0 : tensor<2xf32>
  func.return
}

// -----

func.func @wrong() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = stablehlo.multiply %0, %0 : tensor<2xi64>
  check.expect_eq_const %1, dense<[1, 5]> : tensor<2xi64>
  func.return
}

// -----

func.func @lacking() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %1 = "chlo.erfc"(%0) : (tensor<2xi64>) -> tensor<2xi64>
  check.expect_eq_const %1, dense<[1, 1]> : tensor<2xi64>
  func.return
}
`
	path := filepath.Join(t.TempDir(), "t.mlir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := RunFile(path, reference)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var s Summary
	for _, o := range outs {
		s.Add(o)
		got = append(got, fmt.Sprintf("%s @%s %d %s", strings.TrimPrefix(o.Pos, path), o.Name, o.Status, o.Reason))
	}
	want := []string{
		":1 @ok 0 ",
		":11 @wrong 1 14:3: element 1 is 4, want 5",
		":20 @lacking 2 22:8: error: unsupported op chlo.erfc",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if line := s.Line(); line != "stablehlo-interpret: passed=1 failed=1 unsupported=1 total=3" {
		t.Errorf("summary %q", line)
	}
}

// TestUnsignedMismatch: a wrong u64 result names its elements as unsigned
// numbers, not as the int64 bit patterns the buffers hold.
func TestUnsignedMismatch(t *testing.T) {
	src := `func.func @wrong_u64() {
  %0 = stablehlo.constant dense<[0, 1]> : tensor<2xui64>
  %1 = stablehlo.constant dense<1> : tensor<2xui64>
  %2 = stablehlo.subtract %0, %1 : tensor<2xui64>
  check.expect_eq_const %2, dense<[1, 0]> : tensor<2xui64>
  func.return
}
`
	path := filepath.Join(t.TempDir(), "u.mlir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := RunFile(path, reference)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Status != Failed || outs[0].Reason != "5:3: element 0 is 18446744073709551615, want 1" {
		t.Errorf("got %+v", outs)
	}
}

// TestRunParallel: a run_parallel test passes when the grid's results
// match, and a program that fails on the grid fails the test with the
// process and position named; the function run_parallel runs is not a test.
func TestRunParallel(t *testing.T) {
	src := `module @ok {
  func.func @sum(%x : tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    return %r : tensor<2xi64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@sum], [@sum]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#1, dense<[11, 22]> : tensor<2xi64>
    func.return
  }
}

// -----

module @beyond {
  func.func @sum(%x : tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 2]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<4xi64>
    return %x : tensor<2xi64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@sum], [@sum]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#0, dense<[1, 2]> : tensor<2xi64>
    func.return
  }
}
`
	path := filepath.Join(t.TempDir(), "p.mlir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := RunFile(path, reference)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, fmt.Sprintf("%s @%s %d %s", strings.TrimPrefix(o.Pos, path), o.Name, o.Status, o.Reason))
	}
	want := []string{
		":10 @main 0 ",
		":26 @main 1 28:12: interpreter.run_parallel: process (replica 0, partition 0): " + path +
			":23:10: error: all_gather's replica groups name 2, but the grid of 2 replicas × 1 partitions has 2 replicas",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExpectClose: check.expect_close counts the steps between bit
// patterns of the type (-0 and +0 meet, NaN is close only to NaN), within
// min_ulp_difference and max_ulp_difference (0 and 3 when not written),
// for f16, bf16, f32 and the parts of complex values.
func TestExpectClose(t *testing.T) {
	src := `func.func @f16_two_steps() {
  %0 = stablehlo.constant dense<[5.0, -0.0, 0x7E00]> : tensor<3xf16>
  %1 = stablehlo.constant dense<[5.0078125, 0.0, 0x7E01]> : tensor<3xf16>
  check.expect_close %0, %1, max_ulp_difference = 2 : tensor<3xf16>, tensor<3xf16>
  func.return
}

// -----

func.func @f16_too_far() {
  %0 = stablehlo.constant dense<[5.0, 5.0]> : tensor<2xf16>
  %1 = stablehlo.constant dense<[5.0, 5.0078125]> : tensor<2xf16>
  check.expect_close %0, %1, max_ulp_difference = 1 : tensor<2xf16>, tensor<2xf16>
  func.return
}

// -----

func.func @bf16_too_near() {
  %0 = stablehlo.constant dense<1.0> : tensor<bf16>
  %1 = stablehlo.constant dense<1.0078125> : tensor<bf16>
  check.expect_close %0, %1, max_ulp_difference = 4, min_ulp_difference = 2 : tensor<bf16>, tensor<bf16>
  func.return
}

// -----

func.func @f32_nan() {
  %0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %1 = stablehlo.constant dense<1.0> : tensor<f32>
  check.expect_close %0, %1 : tensor<f32>, tensor<f32>
  func.return
}

// -----

func.func @c64_default() {
  %0 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  %1 = stablehlo.constant dense<(1.0000002, -2.0000005)> : tensor<complex<f32>>
  check.expect_close %0, %1 : tensor<complex<f32>>, tensor<complex<f32>>
  func.return
}
`
	path := filepath.Join(t.TempDir(), "c.mlir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := RunFile(path, reference)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, fmt.Sprintf("@%s %d %s", o.Name, o.Status, o.Reason))
	}
	want := []string{
		"@f16_two_steps 0 ",
		"@f16_too_far 1 13:3: element 1 differs from the expected value by 2 ulps of f16, want 0 to 1",
		"@bf16_too_near 1 22:3: element 0 differs from the expected value by 1 ulps of bf16, want 2 to 4",
		"@f32_nan 1 31:3: element 0: a NaN against a number",
		"@c64_default 0 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProbe: interpreter.probe passes its operand through and records it
// by probe_id, once per execution in order; check.expect_serialized_eq
// compares with the recorded iteration (0 unless written). A probe in a
// while's do region records every iteration, counted on from the probes
// before it: a check of an iteration the loop did not reach fails (the
// check that it was reached, 0 for false). A check of an iteration no
// probe recorded, a probe in another region, and one after a while that
// probes its id are refused.
func TestProbe(t *testing.T) {
	src := `func.func @iterations() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xi32>
  %2 = stablehlo.add %1, %1 : tensor<2xi32>
  %3 = interpreter.probe %2, probe_id = "p" : tensor<2xi32>
  check.expect_serialized_eq %2, probe_id = "p", iter = 1 : tensor<2xi32>
  check.expect_eq_const %3, dense<[2, 4]> : tensor<2xi32>
  func.return
}

// -----

func.func @wrong_iteration() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xi32>
  %2 = stablehlo.add %1, %1 : tensor<2xi32>
  %3 = interpreter.probe %2, probe_id = "p" : tensor<2xi32>
  check.expect_serialized_eq %2, probe_id = "p" : tensor<2xi32>
  func.return
}

// -----

func.func @unrecorded() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<i32>
  check.expect_serialized_eq %1, probe_id = "p", iter = 1 : tensor<i32>
  func.return
}

// -----

func.func @in_loop() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %p = interpreter.probe %a, probe_id = "q" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_serialized_eq %0, probe_id = "q" : tensor<i64>
  func.return
}

// -----

func.func @loop_iterations() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.constant dense<1> : tensor<i64>
  %3 = stablehlo.constant dense<3> : tensor<i64>
  %10 = stablehlo.constant dense<10> : tensor<i64>
  %20 = stablehlo.constant dense<20> : tensor<i64>
  %q = interpreter.probe %3, probe_id = "q" : tensor<i64>
  %r:2 = stablehlo.while(%a = %0, %s = %0) : tensor<i64>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %3 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %t = stablehlo.multiply %a, %10 : tensor<i64>
    %p = interpreter.probe %t, probe_id = "q" : tensor<i64>
    %n = stablehlo.add %a, %1 : tensor<i64>
    stablehlo.return %n, %p : tensor<i64>, tensor<i64>
  }
  check.expect_serialized_eq %3, probe_id = "q" : tensor<i64>
  check.expect_serialized_eq %0, probe_id = "q", iter = 1 : tensor<i64>
  check.expect_serialized_eq %20, probe_id = "q", iter = 3 : tensor<i64>
  check.expect_eq_const %r#1, dense<20> : tensor<i64>
  func.return
}

// -----

func.func @loop_wrong_value() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.constant dense<1> : tensor<i64>
  %2 = stablehlo.constant dense<2> : tensor<i64>
  %r = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %2 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %a, %1 : tensor<i64>
    %p = interpreter.probe %n, probe_id = "q" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_serialized_eq %1, probe_id = "q", iter = 1 : tensor<i64>
  func.return
}

// -----

func.func @loop_not_reached() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %a, %1 : tensor<i64>
    %p = interpreter.probe %n, probe_id = "q" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_serialized_eq %1, probe_id = "q", iter = 1 : tensor<i64>
  func.return
}

// -----

func.func @in_cond() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %p = interpreter.probe %a, probe_id = "q" : tensor<i64>
    %c = stablehlo.compare LT, %p, %0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %a : tensor<i64>
  }
  func.return
}

// -----

func.func @after_loop() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %p = interpreter.probe %a, probe_id = "q" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  %2 = interpreter.probe %1, probe_id = "q" : tensor<i64>
  func.return
}
`
	path := filepath.Join(t.TempDir(), "p.mlir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := RunFile(path, reference)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, fmt.Sprintf("@%s %d %s", o.Name, o.Status, o.Reason))
	}
	want := []string{
		"@iterations 0 ",
		"@wrong_iteration 1 18:3: element 0 is 2, want 1",
		`@unrecorded 2 27:3: error: check.expect_serialized_eq: no interpreter.probe probe_id "p" iteration 1 before it`,
		"@in_loop 1 43:3: element 0 is 0, want 1", // the loop never ran: no iteration 0
		"@loop_iterations 0 ",
		"@loop_wrong_value 1 88:3: element 0 is 1, want 2",
		"@loop_not_reached 1 106:3: element 0 is 0, want 1",
		"@in_cond 2 116:10: error: unsupported interpreter.probe inside a region other than the do region of a while in the function body",
		`@after_loop 2 137:8: error: unsupported interpreter.probe "q" after a while that probes it (its iteration is not known)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
