package pjrt

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

// incModule is y = x + 1 with x aliased to the result, as the lowering
// writes a donated argument whose type matches a result.
const incModule = `module @jit_inc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %0 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
`

// sumModule sums x, a donor that no result can take (jax.buffer_donor).
const sumModule = `module @jit_sum attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {jax.buffer_donor = true}) -> tensor<f32> {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
}
`

func executeOne(t *testing.T, exe *LoadedExecutable, x *Buffer, donate []int) *Buffer {
	t.Helper()
	out, err := exe.ExecuteDonating([]*Buffer{x}, donate)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out[0].Close() })
	return out[0]
}

func readF32s(t *testing.T, b *Buffer) string {
	t.Helper()
	got, err := b.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func deleted(t *testing.T, b *Buffer) bool {
	t.Helper()
	d, err := b.Deleted()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDonationReusesMemory: a donated argument aliased to the result gives
// the result its device memory and is deleted; the same program called
// without donating leaves its argument intact in memory of its own.
func TestDonationReusesMemory(t *testing.T) {
	c := cpuClient(t)
	before := c.p.Live()
	exe, err := c.Compile(incModule, []ir.Type{vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()

	x, err := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	xp, err := x.devicePointer()
	if err != nil {
		t.Fatal(err)
	}
	kept := executeOne(t, exe, x, nil)
	if deleted(t, x) {
		t.Fatal("an argument not donated was deleted")
	}
	if got, want := readF32s(t, x), string(f32s(1, 2, 3, 4)); got != want {
		t.Errorf("argument after a call without donation: % x, want % x", got, want)
	}
	if kp, _ := kept.devicePointer(); kp == xp {
		t.Error("a result without donation shares its argument's memory")
	}

	y := executeOne(t, exe, x, []int{0})
	if !deleted(t, x) {
		t.Error("a donated argument was not deleted by the call")
	}
	yp, err := y.devicePointer()
	if err != nil {
		t.Fatal(err)
	}
	if yp != xp {
		t.Errorf("result at %#x, donated argument was at %#x: memory not reused", yp, xp)
	}
	if got, want := readF32s(t, y), string(f32s(2, 3, 4, 5)); got != want {
		t.Errorf("x+1 = % x, want % x", got, want)
	}
	if _, err := exe.Execute([]*Buffer{x}); err == nil {
		t.Error("executing on a donated buffer: no error")
	}
	x.Close()
	kept.Close()
	y.Close()
	exe.Close()
	if got := c.p.Live(); got != before {
		t.Errorf("%d live handles after closing all, want %d", got, before)
	}
}

// TestBufferDonorWithoutResult: a program with a donor that no result can
// take compiles and runs, donating or not, and the numbers are right.
func TestBufferDonorWithoutResult(t *testing.T) {
	c := cpuClient(t)
	exe, err := c.Compile(sumModule, []ir.Type{vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	x, err := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got, want := readF32s(t, executeOne(t, exe, x, nil)), string(f32s(10)); got != want || deleted(t, x) {
		t.Fatalf("sum without donation = % x (argument deleted: %v), want % x", got, deleted(t, x), want)
	}
	if got, want := readF32s(t, executeOne(t, exe, x, []int{0})), string(f32s(10)); got != want {
		t.Errorf("sum with donation = % x, want % x", got, want)
	}
	// XLA may use a donor as scratch memory or leave it; the pinned
	// XLA:CPU plugin leaves it (not deleted). Either way a buffer the
	// plugin did not delete keeps its values.
	if !deleted(t, x) {
		if got, want := readF32s(t, x), string(f32s(1, 2, 3, 4)); got != want {
			t.Errorf("donor left undeleted holds % x, want % x", got, want)
		}
	}
}

const addDonorModule = `module @jit_add attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

// TestDonatedAndUsedAgain: one buffer given twice, donated at one position,
// is refused by the plugin with an error (no abort) and left as it was.
func TestDonatedAndUsedAgain(t *testing.T) {
	c := cpuClient(t)
	exe, err := c.Compile(addDonorModule, []ir.Type{vec4(), vec4()}, DefaultCompileOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	x, err := c.FromHost(vec4(), f32s(1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	_, err = exe.ExecuteDonating([]*Buffer{x, x}, []int{0})
	if err == nil || !strings.Contains(err.Error(), "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call") {
		t.Fatalf("a buffer donated and used again in one call: %v", err)
	}
	if got, want := readF32s(t, x), string(f32s(1, 2, 3, 4)); deleted(t, x) || got != want {
		t.Errorf("after the refused call the buffer holds % x (deleted %v), want % x", got, deleted(t, x), want)
	}
	out, err := exe.Execute([]*Buffer{x, x})
	if err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	if got, want := readF32s(t, out[0]), string(f32s(2, 4, 6, 8)); got != want || deleted(t, x) {
		t.Errorf("x+x without donation = % x (argument deleted %v), want % x", got, deleted(t, x), want)
	}
}
