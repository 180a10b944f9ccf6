// Command mlp runs the two-layer perceptron of examples/mlp.tir, written in
// Go against package tensor (models.MLP), on seeded random inputs and prints
// its checksum, eagerly and compiled on a device:
//
//	go run ./examples/go/mlp                  # the default device: the TPU on a TPU VM, else the CPU
//	go run ./examples/go/mlp --device cpu     # this CPU, with tpucc's own CPU backend
//	go run ./examples/go/mlp --device pjrt    # XLA:CPU through PJRT (make pjrt-cpu-plugin),
//	                                          # or the plugin TPUCC_PJRT_PLUGIN names
//	go run ./examples/go/mlp --device tpu     # libtpu (pip install libtpu) on a TPU VM
//	go run ./examples/go/mlp --device gpu --precision highest  # an NVIDIA GPU, f32 products
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/examples/go/models"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// weight draws a [fanIn, ...] weight uniform in [-1, 1)/sqrt(fanIn).
func weight(seed int64, shape ...int64) *tensor.Tensor {
	return tensor.Random(seed, ir.F32, shape...).Mul(tensor.Scalar(1/math.Sqrt(float64(shape[0])), ir.F32))
}

func main() {
	device := flag.String("device", "", "the device compiled code runs on: cpu, pjrt, tpu, gpu (default: a TPU if the machine has one, else cpu)")
	precision := flag.String("precision", "", "the precision of the matrix products on the device: default, high, highest")
	flag.Parse()
	x := tensor.Random(1, ir.F32, 64, 1024)
	w1 := weight(2, 1024, 4096)
	b1 := tensor.Random(3, ir.F32, 4096)
	w2 := weight(4, 4096, 1024)

	// Eager: op by op on the CPU reference kernels.
	y := models.MLP(x, w1, b1, w2)
	fmt.Printf("mlp eager: %s checksum %.6f\n", y.Type(), models.Checksum(y))

	// Compiled: traced once for these shapes, optimised, and run as one program
	// (a later call with the same shapes reuses it).
	fast, err := compile.New(models.MLP, compile.Name("mlp"), compile.CacheDir(""), compile.Device(*device),
		compile.Precision(*precision))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
	out, err := fast.Call(x, w1, b1, w2)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mlp:", err)
		os.Exit(1)
	}
	z := out[0]
	on := *device
	if on == "" {
		on = "the default device"
	}
	fmt.Printf("mlp compiled on %s: %s checksum %.6f\n", on, z.Type(), models.Checksum(z))
}
